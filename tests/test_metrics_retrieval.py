"""Retrieval metrics: hand-computed values, edge cases, and a cross-check against trec_eval."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    capped_gold_at_k,
    capped_recall,
    db_hit_at_1,
    default_ks,
    gold_ranks,
    hit_at_k,
    latency_summary,
    macro_average,
    metric_names,
    micro_recall,
    ndcg_at_k,
    overlap_at_k,
    per_query_metrics,
    recall_at_k,
    recall_curve,
    reciprocal_rank,
)

G1, G2, G3 = ("db1", "gold1"), ("db1", "gold2"), ("db2", "gold3")
X, Y, Z, W = ("db1", "x"), ("db2", "y"), ("db3", "z"), ("db1", "w")
R2, R3, R5 = 1 / math.log2(2 + 1), 1 / math.log2(3 + 1), 1 / math.log2(5 + 1)
"""The DCG discounts 1/log2(r + 1) of ranks 2, 3 and 5 (rank 1's is 1): 0.63093, 0.5, 0.38685."""

# Gold at ranks 2 and 5 of a six-table list.
RANKED = [X, G1, Y, Z, G2, W]
GOLD = (G1, G2)


def outcome(retrieved, gold, *, query_id="q", database="db1", ms=None) -> QueryOutcome:
    return QueryOutcome(query_id=query_id, retrieved=list(retrieved), gold=tuple(gold),
                        gold_database=database, ms=ms)


# --- per-query functions: hand-computed ------------------------------------------------

def test_gold_at_ranks_2_and_5() -> None:
    assert gold_ranks(RANKED, GOLD) == {G1: 2, G2: 5}
    # k=1: rank 1 is X, not gold.
    assert overlap_at_k(RANKED, GOLD, 1) == 0
    assert recall_at_k(RANKED, GOLD, 1) == 0.0
    assert hit_at_k(RANKED, GOLD, 1) == 0
    assert ndcg_at_k(RANKED, GOLD, 1) == 0.0
    # k=3: G1 (rank 2) is in, G2 (rank 5) is not: 1 of 2 gold.
    assert overlap_at_k(RANKED, GOLD, 3) == 1
    assert recall_at_k(RANKED, GOLD, 3) == 0.5
    assert hit_at_k(RANKED, GOLD, 3) == 1
    # nDCG@3 = (1/log2 3) / (1 + 1/log2 3): ideal puts both gold at ranks 1, 2.
    assert ndcg_at_k(RANKED, GOLD, 3) == pytest.approx(R2 / (1 + R2), abs=1e-12)
    # k=5: both in.
    assert recall_at_k(RANKED, GOLD, 5) == 1.0
    assert overlap_at_k(RANKED, GOLD, 5) == 2
    # RR: first gold at rank 2 -> 1/2.
    assert reciprocal_rank(RANKED, GOLD) == 0.5
    # nDCG@10 = (1/log2 3 + 1/log2 6) / (1 + 1/log2 3) = 1.017783 / 1.630930 = 0.624051
    expected = (R2 + R5) / (1 + R2)
    assert ndcg_at_k(RANKED, GOLD, 10) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.624051, abs=1e-6)


def test_return_types_are_fixed() -> None:
    assert type(overlap_at_k(RANKED, GOLD, 3)) is int
    assert type(hit_at_k(RANKED, GOLD, 3)) is int
    assert type(db_hit_at_1(RANKED, "db1")) is int
    assert type(recall_at_k(RANKED, GOLD, 5)) is float  # 2/2, still a float
    assert type(reciprocal_rank([X], GOLD)) is float  # 0.0, not 0
    assert type(ndcg_at_k([X], GOLD, 10)) is float


def test_no_gold_retrieved_gives_zero_everywhere() -> None:
    ranked = [X, Y, Z]
    assert gold_ranks(ranked, GOLD) == {G1: None, G2: None}
    assert overlap_at_k(ranked, GOLD, 3) == 0
    assert recall_at_k(ranked, GOLD, 3) == 0.0
    assert hit_at_k(ranked, GOLD, 3) == 0
    assert reciprocal_rank(ranked, GOLD) == 0.0
    assert ndcg_at_k(ranked, GOLD, 10) == 0.0


def test_nothing_retrieved() -> None:
    assert recall_at_k([], GOLD, 5) == 0.0
    assert hit_at_k([], GOLD, 5) == 0
    assert reciprocal_rank([], GOLD) == 0.0
    assert ndcg_at_k([], GOLD, 10) == 0.0
    assert db_hit_at_1([], "db1") == 0


def test_gold_beyond_k_counts_only_for_reciprocal_rank() -> None:
    ranked = [X, Y, G1]  # G1 at rank 3
    assert recall_at_k(ranked, (G1,), 2) == 0.0
    assert hit_at_k(ranked, (G1,), 2) == 0
    assert ndcg_at_k(ranked, (G1,), 2) == 0.0
    assert reciprocal_rank(ranked, (G1,)) == pytest.approx(1 / 3)  # no cutoff
    # nDCG@3 = (1/log2 4) / 1 = 0.5
    assert ndcg_at_k(ranked, (G1,), 3) == pytest.approx(R3) == pytest.approx(0.5)


def test_k_larger_than_the_list() -> None:
    assert recall_at_k([G1], (G1,), 10) == 1.0
    assert hit_at_k([G1], (G1,), 100) == 1
    assert ndcg_at_k([G1], (G1,), 10) == 1.0
    # Two gold, one retrieved at rank 1: nDCG@10 = 1 / (1 + 1/log2 3)
    assert ndcg_at_k([G1], GOLD, 10) == pytest.approx(1 / (1 + R2), abs=1e-12)


def test_more_gold_than_k_uses_min_gold_k_for_the_ideal() -> None:
    gold = (G1, G2, G3)
    ranked = [G1, G2, X]
    # recall@2 = 2/3, but nDCG@2 = (1 + 1/log2 3) / (1 + 1/log2 3) = 1: the ideal top 2.
    assert recall_at_k(ranked, gold, 2) == pytest.approx(2 / 3)
    assert ndcg_at_k(ranked, gold, 2) == pytest.approx(1.0, abs=1e-12)
    # nDCG@3 = (1 + 1/log2 3) / (1 + 1/log2 3 + 1/log2 4)
    assert ndcg_at_k(ranked, gold, 3) == pytest.approx((1 + R2) / (1 + R2 + R3), abs=1e-12)


def test_gold_order_does_not_matter() -> None:
    assert recall_at_k(RANKED, (G2, G1), 3) == recall_at_k(RANKED, (G1, G2), 3)
    assert ndcg_at_k(RANKED, (G2, G1), 10) == pytest.approx(ndcg_at_k(RANKED, GOLD, 10))
    assert list(gold_ranks(RANKED, (G2, G1))) == [G2, G1]  # keys keep gold's order


def test_db_hit_at_1_is_the_database_of_the_top_table() -> None:
    # The top table is in the gold database but is not itself gold: still a hit (TARGET).
    assert db_hit_at_1([X, G3], "db1") == 1
    # Gold table at rank 2 but the top table is from another database: a miss.
    assert db_hit_at_1([Y, G1], "db1") == 0
    assert db_hit_at_1([G3], "db2") == 1


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3", None])
def test_bad_k_raises(k) -> None:
    for metric in (recall_at_k, overlap_at_k, hit_at_k, ndcg_at_k):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            metric(RANKED, GOLD, k)


def test_numpy_integer_k_is_accepted() -> None:
    assert recall_at_k(RANKED, GOLD, np.int64(3)) == 0.5


def test_empty_gold_raises() -> None:
    for call in (lambda: recall_at_k(RANKED, (), 3), lambda: reciprocal_rank(RANKED, ()),
                 lambda: gold_ranks(RANKED, ()), lambda: ndcg_at_k(RANKED, (), 10)):
        with pytest.raises(ValueError, match="at least one"):
            call()


def test_repeated_keys_raise() -> None:
    # A repeated table would push every later one down a rank: input must be duplicate-free.
    with pytest.raises(ValueError, match=r"retrieved lists table \('db1', 'x'\) more than once"):
        recall_at_k([X, Y, X, G1], (G1,), 5)
    with pytest.raises(ValueError, match="gold lists table"):
        recall_at_k([G1], (G1, G1), 5)
    # The same table_id in two databases is two tables.
    assert recall_at_k([("a", "t"), ("b", "t")], (("b", "t"),), 2) == 1.0


# --- QueryOutcome, per-query rows, aggregation -----------------------------------------

def test_query_outcome_validates_and_ranks_once() -> None:
    o = outcome(RANKED, GOLD, ms=3)
    assert o.retrieved == tuple(RANKED) and o.gold_ranks == (2, 5) and o.ms == 3.0
    with pytest.raises(ValueError, match="query 'q7': retrieved lists"):
        outcome([X, X], GOLD, query_id="q7")
    with pytest.raises(ValueError, match="query 'q': gold must name"):
        outcome([X], ())
    for ms in (-1.0, math.nan, math.inf, "5"):
        with pytest.raises(ValueError, match="ms must be"):
            outcome([X], GOLD, ms=ms)


@pytest.mark.parametrize(("top_k", "ks"), [
    (1, (1,)), (2, (1, 2)), (3, (1, 3)), (5, (1, 3, 5)), (7, (1, 3, 5, 7)),
    (10, (1, 3, 5, 10)), (100, (1, 3, 5, 10, 100)),
])
def test_default_ks(top_k: int, ks: tuple[int, ...]) -> None:
    assert default_ks(top_k) == ks


def test_per_query_metrics_row() -> None:
    row = per_query_metrics(outcome(RANKED, GOLD, database="db2"), default_ks(10))
    assert row == pytest.approx({
        "recall@1": 0.0, "overlap@1": 0.0, "hit@1": 0.0, "capped_gold@1": 1.0,
        "recall@3": 0.5, "overlap@3": 1.0, "hit@3": 1.0, "capped_gold@3": 2.0,
        "recall@5": 1.0, "overlap@5": 2.0, "hit@5": 1.0, "capped_gold@5": 2.0,
        "recall@10": 1.0, "overlap@10": 2.0, "hit@10": 1.0, "capped_gold@10": 2.0,
        "mrr": 0.5, "ndcg@10": (R2 + R5) / (1 + R2),
        "db_hit@1": 0.0,  # top table X is in db1, the query's database is db2
        "n_gold": 2.0,
    }, abs=1e-12)
    assert all(type(v) is float for v in row.values())


def crafted_run() -> list[QueryOutcome]:
    """q1: 1 gold, found at rank 1. q2: 3 gold, one found at rank 2. q3: 1 gold, missed."""
    return [
        outcome([G1, X, Y], (G1,), query_id="q1", database="db1", ms=1.0),
        outcome([X, G3, Y], (G1, G2, G3), query_id="q2", database="db2", ms=2.0),
        outcome([Y, Z, W], (G2,), query_id="q3", database="db1", ms=10.0),
    ]


def test_macro_and_micro_recall_differ() -> None:
    metrics = aggregate_retrieval(crafted_run(), (1, 3), task="qa")
    # recall@1 per query: 1, 0, 0 -> macro 1/3; overlaps 1+0+0 over |gold| 1+3+1 -> micro 1/5
    assert metrics["recall@1"] == pytest.approx(1 / 3)
    assert metrics["recall_micro@1"] == pytest.approx(1 / 5)
    # recall@3 per query: 1, 1/3, 0 -> macro (4/3)/3 = 4/9; micro (1+1+0)/5 = 2/5
    assert metrics["recall@3"] == pytest.approx(4 / 9)
    assert metrics["recall_micro@3"] == pytest.approx(2 / 5)
    # hit@3: 1, 1, 0 -> 2/3; hit@1: 1, 0, 0 -> 1/3
    assert metrics["hit@3"] == pytest.approx(2 / 3)
    assert metrics["hit@1"] == pytest.approx(1 / 3)
    # RR: 1, 1/2, 0 -> mrr 1/2
    assert metrics["mrr"] == pytest.approx(0.5)
    # nDCG@10: q1 1; q2 (1/log2 3) / (1 + 1/log2 3 + 1/log2 4); q3 0
    assert metrics["ndcg@10"] == pytest.approx((1 + R2 / (1 + R2 + R3)) / 3, abs=1e-12)
    # times 1, 2, 10: mean 13/3, p50 2, p95 at position (3-1)*0.95 = 1.9: 2 + 0.9*8 = 9.2
    assert metrics["retrieval_ms_mean"] == pytest.approx(13 / 3)
    assert metrics["retrieval_ms_p50"] == pytest.approx(2.0)
    assert metrics["retrieval_ms_p95"] == pytest.approx(9.2)
    assert "db_hit@1" not in metrics
    assert list(metrics) == metric_names((1, 3), task="qa")


def test_db_hit_at_1_is_reported_for_sql_only() -> None:
    metrics = aggregate_retrieval(crafted_run(), (1,), task="sql")
    # top tables G1 (db1 = db1: hit), X (db1 != db2: miss), Y (db2 != db1: miss) -> 1/3
    assert metrics["db_hit@1"] == pytest.approx(1 / 3)
    assert list(metrics) == metric_names((1,), task="sql")
    assert list(metrics)[:5] == ["recall@1", "recall_micro@1", "capped_recall@1", "hit@1",
                                 "mrr"]


def test_aggregate_names_follow_design() -> None:
    names = metric_names(default_ks(20), task="sql")
    assert names == [
        "recall@1", "recall@3", "recall@5", "recall@10", "recall@20",
        "recall_micro@1", "recall_micro@3", "recall_micro@5", "recall_micro@10",
        "recall_micro@20", "capped_recall@1", "capped_recall@3", "capped_recall@5",
        "capped_recall@10", "capped_recall@20", "hit@1", "hit@3", "hit@5", "hit@10",
        "hit@20", "mrr", "ndcg@10",
        "db_hit@1", "retrieval_ms_mean", "retrieval_ms_p50", "retrieval_ms_p95"]


def test_stored_rows_reaggregate_to_the_run_metrics() -> None:
    run = crafted_run()
    rows = [per_query_metrics(o, (1, 3)) for o in run]
    metrics = aggregate_retrieval(run, (1, 3), task="sql")
    for name in ("recall@1", "recall@3", "hit@3", "mrr", "ndcg@10", "db_hit@1"):
        assert macro_average(r[name] for r in rows) == pytest.approx(metrics[name], abs=1e-12)
    assert micro_recall([r["overlap@3"] for r in rows],
                        [r["n_gold"] for r in rows]) == pytest.approx(metrics["recall_micro@3"])
    for k in (1, 3):
        assert capped_recall([r[f"overlap@{k}"] for r in rows],
                             [r[f"capped_gold@{k}"] for r in rows]
                             ) == pytest.approx(metrics[f"capped_recall@{k}"])


def target_capped_recall(lists, golds) -> float:
    """TARGET 0.1.3's loop (tasks/AbsTask.py `_update_retrieval_metrics`), restated."""
    overlap = capped = 0
    for retrieved, gold in zip(lists, golds, strict=True):
        overlap += len(set(gold) & set(retrieved))
        capped += min(len(set(gold)), len(retrieved))
    return overlap / capped


def test_capped_recall_hand_computed() -> None:
    """qa: 3 gold, a 2-table list; qb: nothing retrieved; qc: 2 gold, a 4-table list.

    k=1: overlaps 1 + 0 + 1 = 2 over capped min(3,1) + min(1,0) + min(2,1) = 2 -> 1.0
         (recall_micro@1 = 2/6). k=3: overlaps 1 + 0 + 2 = 3 over min(3,2) + 0 +
         min(2,3) = 4 -> 3/4 (recall_micro@3 = 3/6). k=5 counts the same lists: 3/4."""
    lists = [[G1, X], [], [G2, G1, X, Y]]
    golds = [(G1, G2, G3), (G2,), (G1, G2)]
    pairs = list(zip(lists, golds, strict=True))
    run = [outcome(r, g, query_id=f"q{i}") for i, (r, g) in enumerate(pairs)]
    metrics = aggregate_retrieval(run, (1, 3, 5), task="qa")
    assert metrics["capped_recall@1"] == 1.0 and metrics["recall_micro@1"] == 2 / 6
    assert metrics["capped_recall@3"] == 3 / 4 and metrics["recall_micro@3"] == 3 / 6
    assert metrics["capped_recall@5"] == 3 / 4
    # TARGET's own rule on the lists it would have written at k = 1 and k = 3
    for k in (1, 3):
        assert metrics[f"capped_recall@{k}"] == target_capped_recall(
            [r[:k] for r in lists], golds)
    assert [capped_gold_at_k(len(g), len(r), 3) for r, g in pairs] == [2, 0, 2]
    rows = [per_query_metrics(o, (3,)) for o in run]
    assert [r["capped_gold@3"] for r in rows] == [2.0, 0.0, 2.0]


def test_capped_recall_edges() -> None:
    nothing = [outcome([], (G1,), query_id="a"), outcome([], (G2, G3), query_id="b")]
    assert aggregate_retrieval(nothing, (1,), task="qa")["capped_recall@1"] == 0.0
    assert capped_recall([0, 0], [0, 0]) == 0.0  # TARGET would divide by zero
    # full lists and one gold table each: capped recall is micro recall
    metrics = aggregate_retrieval(crafted_run(), (3,), task="qa")
    assert metrics["capped_recall@3"] == metrics["recall_micro@3"] == 2 / 5
    with pytest.raises(ValueError, match="2 overlaps but 1 capped"):
        capped_recall([1, 0], [1])
    with pytest.raises(ValueError, match="no queries"):
        capped_recall([], [])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        capped_gold_at_k(1, 1, 0)
    with pytest.raises(ValueError, match="at least one gold table"):
        capped_gold_at_k(0, 1, 1)


def test_percentiles_interpolate_linearly() -> None:
    # sorted 1, 2, 3, 4, 10: p50 at position 4*0.5 = 2 -> 3;
    # p95 at position 4*0.95 = 3.8 -> 4 + 0.8*(10 - 4) = 8.8; mean 20/5 = 4
    assert latency_summary([10, 2, 4, 1, 3]) == pytest.approx(
        {"retrieval_ms_mean": 4.0, "retrieval_ms_p50": 3.0, "retrieval_ms_p95": 8.8})
    assert latency_summary([7.5]) == {"retrieval_ms_mean": 7.5, "retrieval_ms_p50": 7.5,
                                      "retrieval_ms_p95": 7.5}
    with pytest.raises(ValueError, match="no retrieval times"):
        latency_summary([])


def test_timing_needs_all_times_or_none() -> None:
    untimed = [outcome([G1], (G1,), query_id=f"q{i}") for i in range(2)]
    metrics = aggregate_retrieval(untimed, (1,), task="qa")
    assert list(metrics) == metric_names((1,), task="qa", timed=False)
    mixed = [*untimed, outcome([G1], (G1,), ms=1.0)]
    with pytest.raises(ValueError, match="2 of 3 query outcomes have no retrieval time"):
        aggregate_retrieval(mixed, (1,), task="qa")


def test_aggregation_errors() -> None:
    with pytest.raises(ValueError, match="no query outcomes"):
        aggregate_retrieval([], (1,), task="qa")
    with pytest.raises(ValueError, match="no query outcomes"):
        recall_curve([], 10)
    with pytest.raises(ValueError, match="at least one cutoff"):
        aggregate_retrieval(crafted_run(), (), task="qa")
    with pytest.raises(ValueError, match="k must be a positive integer"):
        aggregate_retrieval(crafted_run(), (0, 1), task="qa")
    with pytest.raises(ValueError, match="unknown task 'sq'"):
        aggregate_retrieval(crafted_run(), (1,), task="sq")
    with pytest.raises(ValueError, match="max_k must be a positive integer"):
        recall_curve(crafted_run(), 0)
    with pytest.raises(ValueError, match="no per-query values"):
        macro_average([])
    with pytest.raises(ValueError, match="2 overlaps but 1 gold sizes"):
        micro_recall([1, 0], [1])


def test_recall_curve_by_hand() -> None:
    # recall@k per query: q1 1 from k=1; q2 1/3 from k=2; q3 0 -> curve (1, 4/3, 4/3, 4/3)/3
    curve = recall_curve(crafted_run(), 4)
    assert curve == pytest.approx([1 / 3, 4 / 9, 4 / 9, 4 / 9])
    assert len(recall_curve(crafted_run(), 50)) == 50


# --- cross-checks on random rankings ---------------------------------------------------

def random_run(n_queries: int, seed: int) -> list[QueryOutcome]:
    """Rankings of 0-25 tables out of 40 in 4 databases, 1-4 gold tables each; gold is
    planted at random ranks so every metric sees hits, misses and hits beyond k."""
    rng = random.Random(seed)
    corpus = [(f"db{i % 4}", f"t{i}") for i in range(40)]
    run = []
    for q in range(n_queries):
        gold = tuple(rng.sample(corpus, rng.randint(1, 4)))
        others = [t for t in corpus if t not in gold]
        ranked = rng.sample(others, rng.randint(0, 20))
        for key in gold:
            if rng.random() < 0.6:
                ranked.insert(rng.randint(0, len(ranked)), key)
        run.append(outcome(ranked, gold, query_id=f"q{q}", database=gold[0][0],
                           ms=rng.uniform(0.1, 50)))
    return run


def test_cross_check_against_trec_eval() -> None:
    """Per-query recall@k, P@k (= overlap@k / k), success@k (= hit@k), RR and nDCG@10
    against trec_eval (pytrec_eval), on 200 seeded random rankings."""
    import pytrec_eval

    ks = (1, 3, 5, 10)
    run = [o for o in random_run(220, seed=7) if o.retrieved][:200]
    assert len(run) == 200  # trec_eval drops a query with an empty ranking

    def doc(key):
        return f"{key[0]}/{key[1]}"

    qrels = {o.query_id: {doc(g): 1 for g in o.gold} for o in run}
    # Strictly decreasing scores, so trec_eval's order is exactly the given one.
    trec_run = {o.query_id: {doc(t): float(len(o.retrieved) - i)
                             for i, t in enumerate(o.retrieved)} for o in run}
    cut = ",".join(map(str, ks))
    measures = {f"recall.{cut}", f"P.{cut}", f"success.{cut}", "recip_rank", "ndcg_cut.10"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(trec_run)
    assert len(reference) == 200

    for o in run:
        ref, row = reference[o.query_id], per_query_metrics(o, ks)
        for k in ks:
            assert recall_at_k(o.retrieved, o.gold, k) == pytest.approx(ref[f"recall_{k}"],
                                                                        abs=1e-9)
            assert overlap_at_k(o.retrieved, o.gold, k) / k == pytest.approx(ref[f"P_{k}"],
                                                                              abs=1e-9)
            assert hit_at_k(o.retrieved, o.gold, k) == ref[f"success_{k}"]
            assert row[f"recall@{k}"] == pytest.approx(ref[f"recall_{k}"], abs=1e-9)
            assert row[f"hit@{k}"] == ref[f"success_{k}"]
        assert reciprocal_rank(o.retrieved, o.gold) == pytest.approx(ref["recip_rank"],
                                                                     abs=1e-9)
        assert ndcg_at_k(o.retrieved, o.gold, 10) == pytest.approx(ref["ndcg_cut_10"],
                                                                   abs=1e-9)
        assert row["mrr"] == pytest.approx(ref["recip_rank"], abs=1e-9)
        assert row["ndcg@10"] == pytest.approx(ref["ndcg_cut_10"], abs=1e-9)

    # The vectorized averages equal trec_eval's per-query values averaged (macro).
    metrics = aggregate_retrieval(run, ks, task="sql")
    for name, trec_name in [*((f"recall@{k}", f"recall_{k}") for k in ks),
                            *((f"hit@{k}", f"success_{k}") for k in ks),
                            ("mrr", "recip_rank"), ("ndcg@10", "ndcg_cut_10")]:
        mean = np.mean([reference[o.query_id][trec_name] for o in run])
        assert metrics[name] == pytest.approx(mean, abs=1e-9), name


def naive_recall(retrieved, gold, k) -> float:
    """A deliberately plain second implementation: count gold in the first k."""
    return len([t for t in retrieved[:k] if t in gold]) / len(gold)


def test_vectorized_aggregates_match_the_per_query_functions() -> None:
    run = random_run(300, seed=11)  # includes empty rankings
    ks = (1, 2, 3, 5, 10, 25)
    metrics = aggregate_retrieval(run, ks, task="sql")
    for k in ks:
        per_query = [recall_at_k(o.retrieved, o.gold, k) for o in run]
        assert per_query == pytest.approx([naive_recall(o.retrieved, o.gold, k) for o in run])
        assert metrics[f"recall@{k}"] == pytest.approx(np.mean(per_query), abs=1e-12)
        overlaps = sum(overlap_at_k(o.retrieved, o.gold, k) for o in run)
        assert metrics[f"recall_micro@{k}"] == pytest.approx(
            overlaps / sum(len(o.gold) for o in run), abs=1e-12)
        assert metrics[f"hit@{k}"] == pytest.approx(
            np.mean([hit_at_k(o.retrieved, o.gold, k) for o in run]), abs=1e-12)
    assert metrics["mrr"] == pytest.approx(
        np.mean([reciprocal_rank(o.retrieved, o.gold) for o in run]), abs=1e-12)
    assert metrics["ndcg@10"] == pytest.approx(
        np.mean([ndcg_at_k(o.retrieved, o.gold, 10) for o in run]), abs=1e-12)
    assert metrics["db_hit@1"] == pytest.approx(
        np.mean([db_hit_at_1(o.retrieved, o.gold_database) for o in run]), abs=1e-12)
    ms = [o.ms for o in run]
    assert metrics["retrieval_ms_p95"] == pytest.approx(np.percentile(ms, 95))
    assert metrics["retrieval_ms_mean"] == pytest.approx(np.mean(ms))


def test_recall_curve_matches_recall_at_every_k() -> None:
    run = random_run(200, seed=3)
    curve = recall_curve(run, 30)
    expected = aggregate_retrieval(run, range(1, 31), task="qa")
    assert curve == pytest.approx([expected[f"recall@{k}"] for k in range(1, 31)], abs=1e-12)
    assert all(a <= b for a, b in zip(curve, curve[1:], strict=False))

