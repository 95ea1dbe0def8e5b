"""Downstream metrics (QA, fact verification, text-to-SQL): hand-computed values, edge
cases, and cross-checks against sacrebleu, rouge-score and scikit-learn."""

from __future__ import annotations

import math

import pytest

from target_core.metrics.answers import (
    answer_text,
    corpus_bleu,
    differing_words,
    rouge_l,
    sentence_bleu,
)
from target_core.metrics.downstream import (
    SQL_FLAGS,
    DownstreamOutcome,
    aggregate_downstream,
    difficulty_order,
    generation_summary,
    per_query_downstream,
    task_metrics,
)
from target_core.metrics.facts import (
    FACT_LABELS,
    fact_correct,
    fact_scores,
    gold_label,
    map_prediction,
)

# Two answer pairs, scored by hand below (13a tokens are the words: no punctuation).
H1, R1 = "the cat sat on the mat", "the cat is on the mat"
H2, R2 = "a b c d", "a b c d e f"

# H1 vs R1, 6 tokens each:
#   1-grams: the, the, cat, on, mat match; sat does not       -> 5/6
#   2-grams: "the cat", "on the", "the mat" of 5              -> 3/5
#   3-grams: "on the mat" of 4                                -> 1/4
#   4-grams: none of 3; exp smoothing, first zero order: 1 / (2^1 · 3) = 1/6
#   BP = 1 (c = r = 6); BLEU = (5/6 · 3/5 · 1/4 · 1/6)^(1/4) = (1/48)^(1/4) = 0.379918
BLEU_1 = 100 * (1 / 48) ** 0.25
# H1+H2 vs R1+R2 as a corpus (H2 is R2's first 4 tokens: 4/4, 3/3, 2/2, 1/1 matches),
# counts pooled:   p1 = 9/10, p2 = 6/8, p3 = 3/6, p4 = 1/4 (a match: no smoothing)
#   c = 10, r = 12 -> BP = exp(1 - 12/10) = exp(-0.2) = 0.818731
#   BLEU = 0.818731 · (0.9 · 0.75 · 0.5 · 0.25)^(1/4) = 0.818731 · 0.538957 = 0.441260
BLEU_12 = 100 * math.exp(-0.2) * (0.9 * 0.75 * 0.5 * 0.25) ** 0.25


# --- answers -----------------------------------------------------------------------------

def test_answer_text_of_every_reference_shape() -> None:
    assert answer_text("Paris") == "Paris"
    assert answer_text(None) == ""
    assert answer_text(3) == "3"
    assert answer_text(3.0) == "3"
    assert answer_text(2.5) == "2.5"
    assert answer_text(True) == "True"
    assert answer_text(["a", 2.0, None, "b"]) == "a, 2, b"
    assert answer_text(("x",)) == "x"
    assert answer_text([]) == ""


def test_corpus_bleu_hand_computed() -> None:
    assert corpus_bleu([H1], [R1]) == pytest.approx(BLEU_1)
    assert corpus_bleu([H1, H2], [R1, R2]) == pytest.approx(BLEU_12)
    assert corpus_bleu([H1, H2], [R1, R2]) == pytest.approx(44.126, abs=1e-3)
    assert corpus_bleu(["a b c d e"], ["a b c d e"]) == pytest.approx(100.0)
    assert corpus_bleu(["x y z w"], ["a b c d"]) == 0.0


def test_corpus_bleu_matches_sacrebleu() -> None:
    import sacrebleu

    hyps = [H1, H2, "Paris is the capital.", "", "42"]
    refs = [R1, R2, "The capital is Paris.", "nothing", "42 people"]
    assert corpus_bleu(hyps, refs) == sacrebleu.corpus_bleu(hyps, [refs]).score


def test_corpus_bleu_edges() -> None:
    assert corpus_bleu([], []) == 0.0
    # No hypothesis has a 4-gram: sacrebleu's corpus BLEU (no effective order) gives 0.
    assert corpus_bleu(["the cat"], ["the cat sat"]) == 0.0
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        corpus_bleu(["a", "b"], ["a"])


def test_sentence_bleu() -> None:
    assert sentence_bleu(H1, R1) == pytest.approx(BLEU_1)
    assert sentence_bleu("a b c d e", "a b c d e") == pytest.approx(100.0)
    # Effective order: 1- and 2-grams only, both 100%; BP = exp(1 - 3/2) = 0.606531.
    assert sentence_bleu("the cat", "the cat sat") == pytest.approx(100 * math.exp(-0.5))
    assert sentence_bleu("", "the cat") == 0.0


def test_rouge_l_hand_computed_and_against_rouge_score() -> None:
    from rouge_score import rouge_scorer

    # LCS(H1, R1) = "the cat on the mat" = 5 tokens; P = R = 5/6, so F = 5/6.
    assert rouge_l(H1, R1) == pytest.approx(5 / 6)
    # LCS 4: P = 4/4, R = 4/6, F = 2 · 1 · (2/3) / (1 + 2/3) = 0.8
    assert rouge_l(H2, R2) == pytest.approx(0.8)
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    for hyp, ref in [(H1, R1), (H2, R2), ("Paris, France!", "paris")]:
        assert rouge_l(hyp, ref) == scorer.score(ref, hyp)["rougeL"].fmeasure


def test_rouge_l_edges_and_stemming() -> None:
    assert rouge_l("", "the cat") == 0.0
    assert rouge_l("the cat", "") == 0.0
    assert rouge_l("!!!", "!!!") == 0.0  # no [a-z0-9] token
    assert rouge_l("The CAT.", "the cat") == 1.0
    assert rouge_l("running cats", "run cat") == 0.0
    # Porter stemming (nltk, no data download): running -> run, cats -> cat.
    assert rouge_l("running cats", "run cat", stemmer=True) == 1.0


def test_differing_words_marks_shared_tokens() -> None:
    hyp, ref = differing_words("The cat sat on the mat", "the cat is on the MAT")
    assert hyp == [("The", True), ("cat", True), ("sat", False), ("on", True),
                   ("the", True), ("mat", True)]
    assert ref == [("the", True), ("cat", True), ("is", False), ("on", True),
                   ("the", True), ("MAT", True)]
    hyp, ref = differing_words("1990", "It was 1990 .")
    assert hyp == [("1990", True)]
    assert ref == [("It", False), ("was", False), ("1990", True), (".", False)]
    assert differing_words("", "a") == ([], [("a", False)])


# --- facts -------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "label"), [
    ("True", 1),
    ("FALSE.", 0),
    ("Not Enough Information", -1),
    ("The statement is not true", 1),  # TARGET's naive substring rule
    ("True or false? False.", 1),
    ("", -1),
])
def test_map_prediction(text: str, label: int) -> None:
    assert map_prediction(text) == label
    assert label in FACT_LABELS


def test_gold_label() -> None:
    assert [gold_label(v) for v in (True, False, None, "True", "false", "NEI", 1, 0, -1)] \
        == [1, 0, -1, 1, 0, -1, 1, 0, -1]
    with pytest.raises(ValueError):
        gold_label(2)
    with pytest.raises(TypeError):
        gold_label(1.0)


def test_fact_correct() -> None:
    assert fact_correct(1, 1) == 1.0
    assert fact_correct(-1, -1) == 1.0
    assert fact_correct(0, -1) == 0.0
    with pytest.raises(ValueError):
        fact_correct(1, 2)


GOLDS = [1, 1, 1, 0, 0, 0]
PREDS = [1, 1, 0, 0, -1, 1]
# Per label L (support s_L = #gold == L, n = 6):
#   L = 1:  s = 3, predicted 3 times (0, 1, 5), TP 2 -> P = 2/3, R = 2/3, F = 2/3
#   L = 0:  s = 3, predicted 2 times (2, 3),    TP 1 -> P = 1/2, R = 1/3,
#           F = 2 · (1/2)(1/3) / (1/2 + 1/3) = (1/3) / (5/6) = 2/5
#   L = -1: s = 0, predicted once (4),          TP 0 -> P = 0, R = 0/0 -> 0, F = 0
# weighted (3/6, 3/6, 0/6):  P = (2/3 + 1/2)/2 = 7/12, R = (2/3 + 1/3)/2 = 1/2 = accuracy,
#                            F = (2/3 + 2/5)/2 = 8/15
# macro over {1, 0, -1}:    F = (2/3 + 2/5 + 0)/3 = 16/45;  NEI rate = 1/6
# without the NEI prediction (query 4): golds 1 1 1 0 0, preds 1 1 0 0 1
#   L = 1: s = 3, TP 2 -> R = 2/3;  L = 0: s = 2, TP 1 -> R = 1/2
#   weighted R = 3/5 · 2/3 + 2/5 · 1/2 = 3/5 (= 3 right of 5 answered)
FACT_EXPECTED = {"fact_accuracy": 0.5, "fact_precision": 7 / 12, "fact_recall": 0.5,
                 "fact_f1": 8 / 15, "fact_macro_f1": 16 / 45, "fact_nei_rate": 1 / 6,
                 "fact_recall_excl_nei": 3 / 5}


def test_fact_scores_hand_computed_and_against_sklearn() -> None:
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    scores = fact_scores(GOLDS, PREDS)
    assert list(scores) == list(FACT_EXPECTED)
    assert scores == pytest.approx(FACT_EXPECTED)
    p, r, f, _ = precision_recall_fscore_support(GOLDS, PREDS, average="weighted",
                                                 zero_division=0)
    assert (scores["fact_precision"], scores["fact_recall"], scores["fact_f1"]) == (p, r, f)
    assert scores["fact_accuracy"] == accuracy_score(GOLDS, PREDS)
    assert scores["fact_macro_f1"] == f1_score(GOLDS, PREDS, average="macro", zero_division=0)
    kept = [i for i, p in enumerate(PREDS) if p != -1]
    _, r_kept, _, _ = precision_recall_fscore_support(
        [GOLDS[i] for i in kept], [PREDS[i] for i in kept], average="weighted",
        zero_division=0)
    assert scores["fact_recall_excl_nei"] == r_kept


def test_fact_scores_edges() -> None:
    assert fact_scores([], []) == {}
    assert fact_scores([1, 0], [1, 0]) == pytest.approx(
        {"fact_accuracy": 1.0, "fact_precision": 1.0, "fact_recall": 1.0, "fact_f1": 1.0,
         "fact_macro_f1": 1.0, "fact_nei_rate": 0.0, "fact_recall_excl_nei": 1.0})
    assert "fact_recall_excl_nei" not in fact_scores([1, 0], [-1, -1])  # nothing answered
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        fact_scores([1, 0], [1])
    with pytest.raises(ValueError):
        fact_scores([1], [5])


# --- per query and aggregation -----------------------------------------------------------

def qa(query_id: str, prediction: str, reference, difficulty=None, **kw) -> DownstreamOutcome:
    return DownstreamOutcome(query_id, "qa", difficulty, prediction, reference, **kw)


def test_per_query_qa() -> None:
    row = per_query_downstream(qa("q1", H1, R1))
    assert row == pytest.approx({"sentence_bleu": BLEU_1, "rouge_l": 5 / 6})
    assert per_query_downstream(qa("q2", "a, 2", ["a", 2.0]))["sentence_bleu"] \
        == pytest.approx(100.0)
    assert per_query_downstream(qa("q3", "", R1, failed=True)) \
        == {"sentence_bleu": 0.0, "rouge_l": 0.0}


def test_aggregate_qa_with_difficulties_and_a_failure() -> None:
    outcomes = [qa("q1", H1, R1, "easy", ms=40), qa("q2", H2, R2, "hard", ms=10),
                qa("q3", "", "x y", "hard", failed=True, ms=30), qa("q4", H2, R2, ms=20)]
    metrics = aggregate_downstream(outcomes[:3], "qa")
    # The failed answer adds no n-gram but its 2 reference tokens: r = 14, c = 10, so
    # BP = exp(1 - 14/10) = exp(-0.4) and the precisions stay those of BLEU_12.
    # hard alone: H2 (all matches) + the failure: c = 4, r = 8 -> BP = exp(1 - 2) = 1/e.
    assert metrics == pytest.approx({
        "sacrebleu": 100 * math.exp(-0.4) * (0.9 * 0.75 * 0.5 * 0.25) ** 0.25,
        "rouge_l": (5 / 6 + 0.8 + 0.0) / 3,
        "generation_ms_p50": 30.0,
        "generation_ms_p90": 38.0,  # sorted 10, 30, 40: i + f = 2 · 0.9 = 1.8 -> 30 + 0.8 · 10
        "generation_cached": 0.0, "generation_errors": 1.0,
        "n_generated": 3.0,
        "sacrebleu/easy": BLEU_1,
        "rouge_l/easy": 5 / 6,
        "sacrebleu/hard": 100 / math.e,
        "rouge_l/hard": 0.4,
    })
    assert list(metrics)[:2] == list(task_metrics("qa"))
    assert list(metrics)[-4:] == ["sacrebleu/easy", "rouge_l/easy", "sacrebleu/hard",
                                  "rouge_l/hard"]
    # Latency p50/p90 of [10, 20, 30, 40]: i + f = 3 · 0.5 = 1.5 -> 25; 3 · 0.9 = 2.7 -> 37.
    metrics = aggregate_downstream(outcomes, "qa")
    assert (metrics["generation_ms_p50"], metrics["generation_ms_p90"]) \
        == pytest.approx((25.0, 37.0))
    assert metrics["sacrebleu"] == pytest.approx(
        corpus_bleu([H1, H2, "", H2], [R1, R2, "x y", R2]))


def test_aggregate_without_difficulty_or_times() -> None:
    metrics = aggregate_downstream([qa("q1", H1, R1), qa("q2", H2, R2)], "qa")
    assert metrics == pytest.approx({"sacrebleu": BLEU_12, "rouge_l": (5 / 6 + 0.8) / 2,
                                     "generation_cached": 0.0, "generation_errors": 0.0,
                                     "n_generated": 2.0})


FACT_TEXTS = ["True", "The claim is true.", "False", "FALSE.", "", "It is true"]
FACT_GOLDS = [True, "TRUE", 1, False, "false", False]  # -> GOLDS


def test_fact_per_query_and_aggregate() -> None:
    outcomes = [DownstreamOutcome(f"f{i}", "fact", None, text, gold, failed=(text == ""))
                for i, (text, gold) in enumerate(zip(FACT_TEXTS, FACT_GOLDS, strict=True))]
    rows = [per_query_downstream(o) for o in outcomes]
    assert [r["fact_pred"] for r in rows] == [float(p) for p in PREDS]
    assert [r["fact_correct"] for r in rows] == [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    metrics = aggregate_downstream(outcomes, "fact")
    assert metrics == pytest.approx({**FACT_EXPECTED, "generation_cached": 0.0,
                                     "generation_errors": 1.0, "n_generated": 6.0})
    assert sum(r["fact_correct"] for r in rows) / 6 == metrics["fact_accuracy"]


def test_fact_per_difficulty() -> None:
    outcomes = [DownstreamOutcome("a", "fact", "medium", "true", True),
                DownstreamOutcome("b", "fact", "medium", "false", True),
                DownstreamOutcome("c", "fact", "easy", "true", True)]
    metrics = aggregate_downstream(outcomes, "fact")
    assert metrics["fact_accuracy"] == pytest.approx(2 / 3)
    assert metrics["fact_accuracy/easy"] == 1.0
    assert metrics["fact_accuracy/medium"] == 0.5
    # medium: gold {1, 1}, pred {1, 0}: weighted F1 = F_1 = 2 · 1 · 0.5 / 1.5 = 2/3
    assert metrics["fact_f1/medium"] == pytest.approx(2 / 3)
    names = list(metrics)
    assert names.index("fact_nei_rate/easy") < names.index("fact_accuracy/medium")


def sql(query_id: str, difficulty, flags, **kw) -> DownstreamOutcome:
    return DownstreamOutcome(query_id, "sql", difficulty, kw.pop("prediction", "SELECT 1"),
                             "SELECT 1", sql_flags=flags, **kw)


def test_sql_per_query_and_aggregate() -> None:
    everything = dict.fromkeys(SQL_FLAGS, True)
    outcomes = [
        sql("s1", "easy", everything, ms=10),
        sql("s2", "easy", {"execution_match": True}, ms=20),
        sql("s3", "hard", everything, prediction="", failed=True, ms=30),
        sql("s4", "medium", {"execution_match": True, "alt_interpretation": True}, ms=40),
        sql("s5", None, None),
        sql("s6", "extra", {"exact_set_match": True}),
    ]
    assert per_query_downstream(outcomes[1]) == {
        "execution_match": 1.0, "execution_match_strict": 0.0, "alt_interpretation": 0.0,
        "exact_set_match": 0.0}
    assert set(per_query_downstream(outcomes[2]).values()) == {0.0}  # failed: all wrong
    metrics = aggregate_downstream(outcomes, "sql")
    assert metrics == pytest.approx({
        "execution_accuracy": 3 / 6,         # s1, s2, s4
        "execution_accuracy_strict": 1 / 6,  # s1 (s3 failed)
        "alt_interpretation_rate": 2 / 6,    # s1, s4
        "exact_set_match": 2 / 6,            # s1, s6
        "generation_ms_p50": 25.0,
        "generation_ms_p90": 37.0,
        "generation_cached": 0.0, "generation_errors": 1.0,
        "n_generated": 6.0,
        "execution_accuracy/easy": 1.0, "execution_accuracy_strict/easy": 0.5,
        "alt_interpretation_rate/easy": 0.5, "exact_set_match/easy": 0.5,
        "execution_accuracy/medium": 1.0, "execution_accuracy_strict/medium": 0.0,
        "alt_interpretation_rate/medium": 1.0, "exact_set_match/medium": 0.0,
        "execution_accuracy/hard": 0.0, "execution_accuracy_strict/hard": 0.0,
        "alt_interpretation_rate/hard": 0.0, "exact_set_match/hard": 0.0,
        "execution_accuracy/extra": 0.0, "execution_accuracy_strict/extra": 0.0,
        "alt_interpretation_rate/extra": 0.0, "exact_set_match/extra": 1.0,
    })
    levels = [name.split("/")[1] for name in metrics if "/" in name]
    assert list(dict.fromkeys(levels)) == ["easy", "medium", "hard", "extra"]
    assert list(metrics)[:4] == list(task_metrics("sql"))


def test_difficulty_order_and_generation_summary() -> None:
    assert difficulty_order({"zeta", "hard", "alpha", "easy"}) == ["easy", "hard", "alpha",
                                                                    "zeta"]
    assert generation_summary([10, 20, 30, 40]) == {"generation_ms_p50": 25.0,
                                                    "generation_ms_p90": 37.0}
    assert generation_summary([]) == {}


def test_outcome_and_aggregate_errors() -> None:
    with pytest.raises(ValueError, match="unknown downstream task"):
        DownstreamOutcome("q", "retrieval", None, "", "")
    with pytest.raises(ValueError, match="failed generation has an empty prediction"):
        qa("q", "partial", "x", failed=True)
    with pytest.raises(ValueError, match="unknown SQL flags"):
        sql("q", None, {"execution_mtch": True})
    with pytest.raises(ValueError, match="sql_flags are for the sql task"):
        qa("q", "a", "a", sql_flags={"execution_match": True})
    with pytest.raises(ValueError, match="ms must be"):
        qa("q", "a", "a", ms=-1)
    with pytest.raises(ValueError, match="'q'"):
        DownstreamOutcome("q", "fact", None, "true", 3)
    with pytest.raises(ValueError, match="no outcomes"):
        aggregate_downstream([], "qa")
    with pytest.raises(ValueError, match="is a 'qa' outcome, not 'sql'"):
        aggregate_downstream([qa("q", "a", "a")], "sql")
    with pytest.raises(ValueError, match="unknown downstream task"):
        aggregate_downstream([qa("q", "a", "a")], "retrieval")


def test_latency_percentiles_count_real_calls_only() -> None:
    """Seed 002 reports P50/P90 of the model's latency: a reply from the response cache
    (0.6 ms) is no call. Regression: a 2-query run with one cached reply reported p50 43 ms
    = (0.6 + 85) / 2."""
    outcomes = [DownstreamOutcome("q1", "qa", None, H1, R1, ms=85.0),
                DownstreamOutcome("q2", "qa", None, H2, R2, ms=0.6, cached=True)]
    metrics = aggregate_downstream(outcomes, "qa")
    assert metrics["generation_ms_p50"] == metrics["generation_ms_p90"] == 85.0
    assert metrics["generation_cached"] == 1.0
    assert metrics["generation_cached_ms_p50"] == 0.6
    only_cached = aggregate_downstream([outcomes[1]], "qa")
    assert "generation_ms_p50" not in only_cached and only_cached["generation_cached"] == 1.0
