"""Attribution of wrong answers to retrieval or generation, and downstream score against
gold rank: hand-built stores whose cells, splits, bins and correlations are known, checked
against scipy, and one end-to-end pair of runs on the bundled demo-fact data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats

from target_core.analysis.attribution import (
    NOT_RETRIEVED_RANK,
    AttributionError,
    attribution,
    rank_quality,
)
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import QueryResult, RunStore
from target_core.errors import TargetError
from target_core.run_config import GenerationConfig, RunConfig

ROOT = Path(__file__).resolve().parent.parent

METRIC = {"qa": "sentence_bleu", "fact": "fact_correct", "sql": "execution_match"}
HEURISTIC = GenerationConfig("heuristic")
ORACLE = GenerationConfig("heuristic", context="oracle")


def _result(qid: str, position: int, ranks: tuple[int | None, ...], score: float | None,
            task: str) -> QueryResult:
    """One gold table per entry of `ranks` (None: never ranked); `score` is the task's
    per-query downstream metric (None: a retrieval-only result)."""
    gold = [("db", f"{qid}-{i}") for i in range(len(ranks))]
    metrics = {"mrr": 0.0} | ({} if score is None else {METRIC[task]: score})
    return QueryResult(query_id=qid, position=position, ranked=[], gold=gold,
                       gold_ranks=dict(zip(gold, ranks, strict=True)), metrics=metrics,
                       ms=1.0)


def _add_run(store: RunStore, rows: dict[str, tuple[tuple[int | None, ...], float | None]],
             *, generation: GenerationConfig | None = HEURISTIC, task: str = "fact",
             fingerprint: str = "fp", top_k: int = 10, finish: bool = True) -> str:
    config = RunConfig(f"demo-{task}", "bm25", top_k=top_k, generation=generation)
    run, _ = store.start_run(config, dataset_fingerprint=fingerprint, task=task,
                             n_queries=len(rows), versions={})
    store.save_results(run.run_id, [_result(q, i, ranks, score, task)
                                    for i, (q, (ranks, score)) in enumerate(rows.items())])
    if finish:
        store.finish_run(run.run_id, {})
    return run.run_id


# q1 gold at 1, right · q2 gold at 3, wrong · q3 never ranked, right · q4 gold at 12
# (beyond top_k), wrong · q5 one of two golds missing, wrong · q6 golds at 2 and 4, right
MAIN = {"q1": ((1,), 1.0), "q2": ((3,), 0.0), "q3": ((None,), 1.0), "q4": ((12,), 0.0),
        "q5": ((1, None), 0.0), "q6": ((2, 4), 1.0)}
# q6 absent (not common), q7 extra; q2, q5 fixed by the gold tables, q3 broken by them
ORACLE_ROWS = {"q1": ((1,), 1.0), "q2": ((3,), 1.0), "q3": ((None,), 0.0),
               "q4": ((12,), 0.0), "q5": ((1, None), 1.0), "q7": ((1,), 1.0)}


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite")


def test_two_by_two_cells(store: RunStore) -> None:
    run = _add_run(store, MAIN)
    result = attribution(store, run)
    assert (result.k, result.correct_rule, result.n_queries) == (10, "fact_correct = 1", 6)
    assert result.retrieved_correct == ["q1", "q6"]
    assert result.retrieved_wrong == ["q2"]
    assert result.missed_correct == ["q3"]
    assert result.missed_wrong == ["q4", "q5"]
    assert result.counts == {"retrieved_correct": 2, "retrieved_wrong": 1,
                             "missed_correct": 1, "missed_wrong": 2}
    assert result.oracle is None  # no oracle run in the store: not an error
    assert (result.task, result.generator, result.dataset) == ("fact", "heuristic",
                                                               "demo-fact")


def test_k_follows_context_k_and_can_be_given(store: RunStore) -> None:
    run = _add_run(store, MAIN, generation=GenerationConfig("heuristic", context_k=3))
    result = attribution(store, run)
    assert result.k == 3
    assert result.retrieved_correct == ["q1"] and result.missed_correct == ["q3", "q6"]
    assert result.retrieved_wrong == ["q2"]
    narrow = attribution(store, run, k=1)
    assert narrow.retrieved_wrong == [] and narrow.missed_wrong == ["q2", "q4", "q5"]
    wide = _add_run(store, MAIN, generation=GenerationConfig("heuristic", context_k=20),
                    top_k=5)
    assert attribution(store, wide).k == 5  # the generator never sees beyond top_k
    for bad in (0, 11):
        with pytest.raises(AttributionError, match=f"k {bad} must be between 1"):
            attribution(store, run, k=bad)


def test_qa_threshold_and_sql_rule(store: RunStore) -> None:
    rows = {"a": ((1,), 25.0), "b": ((1,), 19.9), "c": ((None,), 20.0), "d": ((2,), 0.0)}
    run = _add_run(store, rows, task="qa")
    result = attribution(store, run)
    assert result.correct_rule == "sentence_bleu >= 20"
    assert (result.retrieved_correct, result.retrieved_wrong) == (["a"], ["b", "d"])
    assert result.missed_correct == ["c"]
    lenient = attribution(store, run, bleu_threshold=10)
    assert lenient.correct_rule == "sentence_bleu >= 10"
    assert lenient.retrieved_correct == ["a", "b"]
    sql = _add_run(store, {"s1": ((1,), 1.0), "s2": ((1,), 0.0)}, task="sql")
    sql_result = attribution(store, sql)
    assert sql_result.correct_rule == "execution_match = 1"
    assert sql_result.retrieved_correct == ["s1"] and sql_result.retrieved_wrong == ["s2"]


def test_split_against_an_oracle_run(store: RunStore) -> None:
    oracle = _add_run(store, ORACLE_ROWS, generation=ORACLE)
    run = _add_run(store, MAIN)
    split = attribution(store, run).oracle
    assert split is not None and split.oracle_run_id == oracle
    assert (split.n_common, split.n_wrong) == (5, 3)  # q6 and q7 are not common
    assert split.retrieval_caused == ["q2", "q5"]
    assert split.generation_caused == ["q4"]
    assert split.oracle_worse == ["q3"]
    assert len(split.retrieval_caused) + len(split.generation_caused) == split.n_wrong
    assert attribution(store, run, oracle_run_id=oracle).oracle == split


def test_oracle_discovery_takes_the_newest_matching_complete_run(store: RunStore) -> None:
    run = _add_run(store, MAIN)
    _add_run(store, ORACLE_ROWS, generation=ORACLE)  # older
    newest = _add_run(store, ORACLE_ROWS | {"q2": ((3,), 0.0)}, generation=ORACLE)
    _add_run(store, ORACLE_ROWS, generation=ORACLE, finish=False)  # still running
    _add_run(store, ORACLE_ROWS, generation=GenerationConfig("openai:gpt-4o",
                                                              context="oracle"))
    _add_run(store, ORACLE_ROWS, generation=ORACLE, fingerprint="changed")
    _add_run(store, ORACLE_ROWS, generation=GenerationConfig("heuristic", context="none"))
    _add_run(store, {"other": ((1,), 1.0)}, generation=ORACLE, top_k=5)  # no common query
    split = attribution(store, run).oracle
    assert split is not None and split.oracle_run_id == newest
    assert split.retrieval_caused == ["q5"] and split.generation_caused == ["q2", "q4"]


def test_a_wrong_explicit_oracle_run_is_refused(store: RunStore) -> None:
    run = _add_run(store, MAIN)
    others = {
        "is not an oracle-context run": _add_run(store, ORACLE_ROWS, top_k=5),
        "uses generator openai:gpt-4o": _add_run(
            store, ORACLE_ROWS, generation=GenerationConfig("openai:gpt-4o",
                                                            context="oracle")),
        "not on the same dataset": _add_run(store, ORACLE_ROWS, generation=ORACLE,
                                            fingerprint="changed"),
        "is the run itself": run,
        "no query in common": _add_run(store, {"x": ((1,), 1.0)}, generation=ORACLE),
    }
    for reason, other in others.items():
        with pytest.raises(AttributionError, match=reason) as info:
            attribution(store, run, oracle_run_id=other)
        assert other in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(TargetError, match="unknown run 'nope'"):
        attribution(store, run, oracle_run_id="nope")


def test_runs_without_retrieved_context_are_refused(store: RunStore) -> None:
    retrieval_only = _add_run(store, {q: (r, None) for q, (r, _) in MAIN.items()},
                              generation=None)
    with pytest.raises(AttributionError, match=f"run {retrieval_only} has no generator"):
        attribution(store, retrieval_only)
    with pytest.raises(AttributionError, match="no per-query downstream score"):
        rank_quality(store, retrieval_only)
    for context in ("oracle", "none"):
        other = _add_run(store, MAIN, generation=GenerationConfig("heuristic",
                                                                   context=context))
        with pytest.raises(AttributionError, match=f"run {other} gives the generator "
                                                   f"{context} context"):
            attribution(store, other)
    retrieval_task = _add_run(store, {"r": ((1,), None)}, generation=None, task="retrieval")
    with pytest.raises(AttributionError, match="retrieval"):
        rank_quality(store, retrieval_task)


# best gold ranks and BLEU: bins 1 {a, b}, 2 {c}, 3-5 {d, e}, 6-10 {f, g}, not retrieved
# {h (rank 11), i (never), j (rank 40, its other gold never)}
RANKED = {"a": ((1,), 60.0), "b": ((4, 1), 40.0), "c": ((2,), 30.0), "d": ((3,), 20.0),
          "e": ((5, None), 0.0), "f": ((6,), 10.0), "g": ((10,), 20.0), "h": ((11,), 0.0),
          "i": ((None,), 5.0), "j": ((None, 40), 0.0)}


def test_rank_bins_and_spearman(store: RunStore) -> None:
    run = _add_run(store, RANKED, task="qa")
    result = rank_quality(store, run)
    assert (result.metric, result.n) == ("sentence_bleu", 10)
    got = {b.label: (b.n, b.mean, b.query_ids) for b in result.bins}
    assert got == {"1": (2, 50.0, ["a", "b"]), "2": (1, 30.0, ["c"]),
                   "3-5": (2, 10.0, ["d", "e"]), "6-10": (2, 15.0, ["f", "g"]),
                   "not retrieved": (3, pytest.approx(5 / 3), ["h", "i", "j"])}
    assert [(b.low, b.high) for b in result.bins] == [(1, 1), (2, 2), (3, 5), (6, 10),
                                                      (None, None)]
    ranks = [1, 1, 2, 3, 5, 6, 10] + [NOT_RETRIEVED_RANK] * 3
    expected = stats.spearmanr(ranks, [s for _, s in RANKED.values()])
    assert result.rho == pytest.approx(expected.statistic, abs=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, abs=1e-12)
    assert result.rho < 0  # better ranks, better answers
    data = json.loads(json.dumps(result.to_dict()))
    assert data["bins"][0] == {"label": "1", "low": 1, "high": 1, "n": 2, "mean": 50.0,
                               "query_ids": ["a", "b"]}


def test_spearman_hand_values_and_undefined_cases(store: RunStore) -> None:
    monotone = {f"q{r}": ((r,), 1.0 - r / 10) for r in range(1, 6)}
    assert rank_quality(store, _add_run(store, monotone, task="fact")).rho == pytest.approx(
        -1.0)
    rising = {f"q{r}": ((r,), r * 10.0) for r in range(1, 6)}
    assert rank_quality(store, _add_run(store, rising, task="qa")).rho == pytest.approx(1.0)
    constant = {f"q{r}": ((r,), 1.0) for r in range(1, 6)}
    flat = rank_quality(store, _add_run(store, constant, task="sql"))
    assert (flat.rho, flat.p_value, flat.n) == (None, None, 5)
    same_rank = rank_quality(store, _add_run(store, {f"q{i}": ((None,), float(i))
                                                     for i in range(4)}, task="qa"))
    assert same_rank.rho is None and same_rank.bins[-1].n == 4
    assert [b.mean for b in same_rank.bins[:4]] == [None] * 4
    two = rank_quality(store, _add_run(store, {"a": ((1,), 1.0), "b": ((2,), 0.0)}))
    assert two.rho is None and two.n == 2


def test_attribution_to_dict_is_json_safe(store: RunStore) -> None:
    _add_run(store, ORACLE_ROWS, generation=ORACLE)
    data = json.loads(json.dumps(attribution(store, _add_run(store, MAIN)).to_dict()))
    assert data["counts"]["missed_wrong"] == 2 and data["correct_rule"] == "fact_correct = 1"
    assert data["oracle"]["retrieval_caused"] == ["q2", "q5"]


def test_demo_fact_end_to_end(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "workspace")
    store = RunStore.in_workspace(settings.workspace)
    runs = {context: run_retrieval(
        RunConfig("demo-fact", "bm25", limit=60,
                  generation=GenerationConfig("heuristic", context=context)),
        settings=settings, store=store).run.run_id for context in ("oracle", "retrieved")}
    result = attribution(store, runs["retrieved"])
    assert sum(result.counts.values()) == result.n_queries == 60
    split = result.oracle
    assert split is not None and split.oracle_run_id == runs["oracle"]
    assert split.n_common == 60
    wrong = result.counts["retrieved_wrong"] + result.counts["missed_wrong"]
    assert split.n_wrong == wrong
    assert len(split.retrieval_caused) + len(split.generation_caused) == wrong
    quality = rank_quality(store, runs["retrieved"])
    assert sum(b.n for b in quality.bins) == 60
    # the CLI prints the same figures
    env = {**os.environ, "TARGET_WORKSPACE": str(settings.workspace)}
    done = subprocess.run([sys.executable, "-m", "target_core", "attribution",
                           runs["retrieved"], "--json"], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    data = json.loads(done.stdout)
    assert data["attribution"]["counts"] == result.counts
    assert data["attribution"]["oracle"]["oracle_run_id"] == runs["oracle"]
    assert [b["n"] for b in data["rank_quality"]["bins"]] == [b.n for b in quality.bins]
    text = subprocess.run([sys.executable, "-m", "target_core", "attribution",
                           runs["retrieved"]], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=True).stdout
    assert "generation-caused" in text and "Spearman" in text
    refused = subprocess.run([sys.executable, "-m", "target_core", "attribution",
                              runs["oracle"]], capture_output=True, text=True, env=env,
                             cwd=ROOT)
    assert refused.returncode == 2 and "oracle context" in refused.stderr


def test_rank_quality_chart_draws_every_bin(store: RunStore) -> None:
    """Regression: bins "1" and "2" made plotly pick a numeric axis on which "3-5",
    "6-10" and "not retrieved" were not drawn."""
    from target_core.figures.failures import rank_quality_bars

    figure = rank_quality_bars(rank_quality(store, _add_run(store, RANKED, task="qa")))
    full = figure
    assert full.layout.xaxis.type == "category"
    assert list(full.data[0].x) == ["1", "2", "3-5", "6-10", "not retrieved"]
    assert list(full.layout.xaxis.categoryarray) == list(full.data[0].x)
    assert [t for t in full.data[0].text] == ["n = 2", "n = 1", "n = 2", "n = 2", "n = 3"]
