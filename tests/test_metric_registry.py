"""The retrieval metric registry (issue 30, item 1): every registered metric on a
hand-worked example, a query alone and a whole run computing the same values from the
one definition, and adding a metric as one module plus its registration, taken from
docs/metrics.md's worked example and run through a real retrieval run."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from docs_examples import EXTENDING, code_blocks, page_module

from target_core.config import Settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import ConfigError, UnknownNameError
from target_core.metrics.labels import definition, label, metric_of
from target_core.metrics.measures import METRICS
from target_core.metrics.measures.base import RankBatch, RetrievalMetric
from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    metric_names,
    per_query_metrics,
    per_query_rows,
    pooled_target_metrics,
)
from target_core.registry import DuplicateNameError
from target_core.run_config import RunConfig
from target_core.tasks import TASKS

ROOT = Path(__file__).resolve().parent.parent
G1, G2, G3 = ("db1", "gold1"), ("db1", "gold2"), ("db2", "gold3")
X, Y, Z, W = ("db1", "x"), ("db2", "y"), ("db3", "z"), ("db1", "w")
R2, R3 = 1 / math.log2(3), 1 / math.log2(4)
KS = (1, 3)


def example() -> list[QueryOutcome]:
    """q1: its one gold at rank 1. q2: three gold, one at rank 2, in database db2 whose
    top table is in db1. q3: its gold missed. q4: nothing retrieved."""
    return [QueryOutcome("q1", [G1, X, Y], (G1,), "db1"),
            QueryOutcome("q2", [X, G3, Y], (G1, G2, G3), "db2"),
            QueryOutcome("q3", [Y, Z, W], (G2,), "db1"),
            QueryOutcome("q4", [], (G1,), "db1")]


PER_QUERY = {  # key -> value of q1..q4, worked by hand
    "recall@1": [1, 0, 0, 0], "recall@3": [1, 1 / 3, 0, 0],
    "hit@1": [1, 0, 0, 0], "hit@3": [1, 1, 0, 0],
    "mrr": [1, 1 / 2, 0, 0],
    "ndcg@10": [1, R2 / (1 + R2 + R3), 0, 0],  # q2: gain 1/log2(3) over ideal 3 gold
    "db_hit@1": [1, 0, 0, 0],
    "overlap@1": [1, 0, 0, 0], "overlap@3": [1, 1, 0, 0], "n_gold": [1, 3, 1, 1],
    "capped_gold@1": [1, 1, 1, 0], "capped_gold@3": [1, 3, 1, 0],  # min(|G|, |top-k|)
}
POOLED = {"recall_micro@1": 1 / 6, "recall_micro@3": 2 / 6,  # Σ overlap / Σ |G| = 6
          "capped_recall@1": 1 / 3, "capped_recall@3": 2 / 5}  # Σ overlap / Σ capped


@pytest.mark.parametrize("name", METRICS.names())
def test_every_metric_on_the_hand_worked_example(name: str) -> None:
    metric = METRICS.get(name)
    keys = metric.keys(KS)
    worked = {**{k: float(np.mean(v)) for k, v in PER_QUERY.items()}, **POOLED}
    assert set(keys) <= set(worked), f"add {name} to the hand-worked example"
    run = aggregate_retrieval(example(), KS, task="sql")
    rows = [per_query_metrics(o, KS) for o in example()]
    for key in keys:
        assert run[key] == pytest.approx(worked[key], abs=1e-15), key
        if metric.pooled is None:
            assert [r[key] for r in rows] == pytest.approx(PER_QUERY[key], abs=1e-15)
            # the mean of the stored per-query values is the run's number, exactly
            assert float(np.mean([r[key] for r in rows])) == run[key]
    if metric.pooled is not None:
        pooled = pooled_target_metrics(rows, KS)
        assert {key: pooled[key] for key in keys} == {key: run[key] for key in keys}
        for part in metric.pooled:
            for k in metric.cutoffs(KS):
                assert [r[part.key(k)] for r in rows] == PER_QUERY[part.key(k)]


def random_outcomes(n: int, seed: int) -> list[QueryOutcome]:
    """1-12 gold tables planted at random ranks (several within 10, out of rank order),
    some lists as returned with repeats: every path of every metric."""
    rng = random.Random(seed)
    corpus = [(f"db{i % 4}", f"t{i}") for i in range(60)]
    outcomes = []
    for q in range(n):
        gold = tuple(rng.sample(corpus, rng.randint(1, 12)))
        ranked = rng.sample([t for t in corpus if t not in gold], rng.randint(0, 20))
        for key in gold:
            if rng.random() < 0.7:
                ranked.insert(rng.randint(0, min(len(ranked), 10)), key)
        returned = ranked + ranked[:2] if rng.random() < 0.2 else None
        outcomes.append(QueryOutcome(f"q{q}", ranked, gold, gold[0][0], returned=returned))
    return outcomes


@pytest.mark.parametrize("name", METRICS.names())
def test_a_query_alone_and_a_whole_run_compute_the_same_values(name: str) -> None:
    metric = METRICS.get(name)
    outcomes = random_outcomes(200, seed=5)
    ks = (1, 3, 5, 10)
    whole = RankBatch.of(outcomes)
    rows = [per_query_metrics(o, ks) for o in outcomes]
    assert per_query_rows(outcomes, ks) == rows  # the runner scores its batches at once
    run = aggregate_retrieval(outcomes, ks, task="sql")
    cut = np.asarray(metric.cutoffs(ks), dtype=np.float64)
    if metric.pooled is None:
        values = metric.per_query(whole, cut)
        alone = np.array([[r[key] for key in metric.keys(ks)] for r in rows])
        assert values.shape == (len(outcomes), len(cut))
        assert np.array_equal(values, alone)  # bit for bit, not approximately
        assert [run[key] for key in metric.keys(ks)] == values.mean(axis=0).tolist()
    else:
        pooled = pooled_target_metrics(rows, ks)
        assert [run[key] for key in metric.keys(ks)] == [pooled[key] for key in metric.keys(ks)]
        for part in metric.pooled:
            assert np.array_equal(whole.part(part, cut),
                                  [[r[part.key(k)] for k in cut] for r in rows])


@pytest.mark.parametrize("name", METRICS.names())
def test_every_metric_is_named_labelled_and_defined_once(name: str) -> None:
    metric = METRICS.get(name)
    for key in metric.keys(KS):
        found = METRICS.of_key(key)
        assert found is not None and found[0] is metric
        assert definition(key) == metric.definition != ""
        for task in (None, *TASKS):
            assert metric_of(label(key, task), task) == key
    reported = [t for t in TASKS if set(metric.keys(KS)) <= set(metric_names(KS, task=t))]
    assert reported == [t for t in TASKS if metric.reported_for(t)]
    assert metric.higher_is_better


def test_registry_refuses_a_second_name_and_suggests_on_a_typo() -> None:
    with pytest.raises(DuplicateNameError, match="'recall' is registered twice"):
        METRICS.register(METRICS.get("recall"))
    with pytest.raises(UnknownNameError, match="did you mean 'ndcg'"):
        METRICS.get("ndgc")
    with pytest.raises(ConfigError, match="values or pooled"):
        RetrievalMetric("empty", "no computation")
    assert METRICS.of_key("ndcg@5") is None and METRICS.of_key("mrr@3") is None
    assert METRICS.of_key("recall") is None and METRICS.of_key("overlap@3") is None


# --- adding a metric: docs/extending/metric.md's worked example, as written there ------

def _docs_example() -> ModuleType:
    """The module docs/extending/metric.md shows."""
    page = EXTENDING / "metric.md"
    return page_module("docs_precision", code_blocks(page)[0], page)


@pytest.fixture
def precision() -> Iterator[RetrievalMetric]:
    metric = METRICS.register(_docs_example().METRIC)
    try:
        yield metric
    finally:
        METRICS.unregister(metric.name)


def test_adding_a_metric_is_one_module_and_its_registration(
        precision: RetrievalMetric, settings: Settings) -> None:
    assert metric_names(KS, task="qa")[:-3][-2:] == ["precision@1", "precision@3"]
    run = aggregate_retrieval(example(), KS, task="qa")
    # overlap@1: 1, 0, 0, 0 over k = 1; overlap@3: 1, 1, 0, 0 over k = 3
    assert run["precision@1"] == pytest.approx(1 / 4)
    assert run["precision@3"] == pytest.approx(2 / 12)
    assert per_query_metrics(example()[1], KS)["precision@3"] == pytest.approx(1 / 3)
    assert label("precision@3") == "P@3" and metric_of("P@3") == "precision@3"
    assert definition("precision@5") == "the mean over queries of |gold ∩ top k| / k"

    # a real run stores it per query and reports it, with no other change anywhere
    record = run_retrieval(RunConfig("demo-qa", "bm25"), settings=settings).run
    assert {"precision@1", "precision@10"} <= set(record.metrics)
    stored = [m for _, m in RunStore.in_workspace(settings.workspace).query_metrics(record.run_id)]
    assert stored and all("precision@10" in row for row in stored)
    assert record.metrics["precision@10"] == pytest.approx(
        np.mean([row["precision@10"] for row in stored]))


def test_the_throwaway_metric_is_gone_after_the_test() -> None:
    assert "precision" not in METRICS
    assert not any(key.startswith("precision") for key in metric_names(KS, task="qa"))
