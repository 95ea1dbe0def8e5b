"""VES (BIRD's valid efficiency score): the formula by hand, the outlier rule, wrong queries
counting 0, read-only timing, and a real heuristic run on demo-sql that stores `ves` per
query and as the run's mean."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from conftest import make_sqlite
from target_core.errors import ConfigError
from target_core.metrics.downstream import DownstreamOutcome, aggregate_downstream
from target_core.metrics.ves import (
    MIN_SECONDS,
    drop_outliers,
    reward,
    time_ratio,
    ves,
    ves_of_timing,
)
from target_core.sql import SqlLimits
from target_core.sql.timing import SqlTimingError, query_seconds, time_pair


def test_hand_worked_four_queries() -> None:
    """Four queries, each timed twice (gold s, predicted s):

    q1 correct, gold (0.4, 0.4), pred (0.1, 0.1): ratios 4, 4 -> R = √4 = 2
    q2 correct, gold (0.1, 0.3), pred (0.1, 0.1): ratios 1, 3 -> mean 2 -> R = √2
        (the root of the mean ratio, not the mean of roots: (1 + √3)/2 ≈ 1.366)
    q3 correct, gold (0.1, 0.1), pred (0.4, 0.4): ratios 0.25 -> R = 0.5
    q4 wrong (its times do not matter)          -> R = 0
    VES = 100 · (2 + √2 + 0.5 + 0) / 4 = 100 · 3.9142136 / 4 = 97.855339
    """
    rewards = [reward((0.4, 0.4), (0.1, 0.1), correct=True),
               reward((0.1, 0.3), (0.1, 0.1), correct=True),
               reward((0.1, 0.1), (0.4, 0.4), correct=True),
               reward((0.1, 0.1), (0.001, 0.001), correct=False)]
    assert rewards == pytest.approx([2.0, math.sqrt(2), 0.5, 0.0])
    assert ves([100 * r for r in rewards]) == pytest.approx(97.855339, abs=1e-6)
    # wrong queries stay in the denominator (BIRD's compute_ves), so VES <= the mean over
    # the correct ones only: 100 · 3.9142136 / 3 = 130.47
    assert ves([100 * r for r in rewards]) < 100 * sum(rewards) / 3


def test_outliers_beyond_three_sigma_are_dropped() -> None:
    # nineteen ratios of 1 and one of 100: mean 5.95, σ = √(19·4.95² + 94.05²)/√20
    # = 21.58, mean + 3σ = 70.7 < 100, so 100 goes and the mean of the rest is 1
    ratios = [1.0] * 19 + [100.0]
    mean, sigma = np.mean(ratios), np.std(ratios)
    assert mean + 3 * sigma < 100
    assert drop_outliers(ratios) == [1.0] * 19
    gold = tuple([0.2] * 19 + [10.0])
    pred = tuple([0.2] * 20)
    assert time_ratio(gold, pred) == pytest.approx(1.0)
    timing = ves_of_timing(gold, pred)
    assert timing.kept == 19 and timing.repeats == 20 and timing.score == pytest.approx(100)
    assert timing.gold_ms == pytest.approx(1000 * (0.2 * 19 + 10) / 20)
    # a spread within 3σ keeps everything
    assert drop_outliers([1.0, 2.0, 3.0]) == [1.0, 2.0, 3.0]


def test_edge_cases() -> None:
    # σ = 0 keeps every ratio (BIRD's strict test would keep none and score 0)
    assert drop_outliers([2.0, 2.0, 2.0]) == [2.0, 2.0, 2.0]
    assert reward((0.2,), (0.05,), correct=True) == pytest.approx(2.0)
    # a zero reading is raised to MIN_SECONDS
    assert time_ratio((0.0,), (0.0,)) == 1.0
    assert time_ratio((2 * MIN_SECONDS,), (0.0,)) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        time_ratio((), ())
    with pytest.raises(ValueError):
        time_ratio((1.0,), (1.0, 1.0))
    with pytest.raises(ValueError):
        ves([])


def test_time_pair_alternates_predicted_then_gold_with_an_injected_timer() -> None:
    calls: list[str] = []

    def timer(name: str, seconds: float):
        def run() -> float:
            calls.append(name)
            return seconds
        return run

    timing = time_pair(timer("gold", 0.3), timer("pred", 0.1), repeats=3)
    assert calls == ["pred", "gold"] * 3
    assert timing.gold_s == (0.3,) * 3 and timing.pred_s == (0.1,) * 3
    assert ves_of_timing(timing.gold_s, timing.pred_s).reward == pytest.approx(math.sqrt(3))
    with pytest.raises(ConfigError):
        time_pair(timer("gold", 1), timer("pred", 1), repeats=0)


def test_query_seconds_is_read_only_and_bounded(tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "t.sqlite", ["CREATE TABLE t (x INTEGER)",
                                             "INSERT INTO t VALUES (1), (2), (3)"])
    limits = SqlLimits(timeout_s=0.5, row_cap=10)
    ticks = iter([10.0, 10.25])
    assert query_seconds(db, "SELECT x FROM t", limits=limits,
                         clock=lambda: next(ticks)) == pytest.approx(0.25)
    assert query_seconds(db, "SELECT x FROM t", limits=limits) >= 0
    with pytest.raises(SqlTimingError, match="not authorized"):
        query_seconds(db, "DELETE FROM t", limits=limits)
    with pytest.raises(SqlTimingError):
        query_seconds(db, "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
                          "SELECT count(*) FROM c", limits=SqlLimits(timeout_s=0.2))
    import sqlite3
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM t").fetchone() == (3,)


def test_run_level_ves_is_the_mean_and_needs_every_query() -> None:
    def outcome(qid: str, match: bool, score: float | None, failed: bool = False
                ) -> DownstreamOutcome:
        return DownstreamOutcome(qid, "sql", "easy", "" if failed else "SELECT 1",
                                 "SELECT 1", sql_flags={"execution_match": match},
                                 ves=score, failed=failed)

    metrics = aggregate_downstream([outcome("a", True, 200.0), outcome("b", True, 50.0),
                                    outcome("c", False, 0.0), outcome("d", False, 7.0, True)],
                                   "sql")
    assert metrics["ves"] == pytest.approx(250 / 4)  # a failed generation counts 0
    assert metrics["ves/easy"] == pytest.approx(250 / 4)
    assert metrics["execution_accuracy"] == 0.5
    # a run scored before VES existed has no ves (never a made-up 0)
    old = aggregate_downstream([outcome("a", True, None), outcome("b", False, 0.0)], "sql")
    assert "ves" not in old and old["execution_accuracy"] == 0.5


def test_a_heuristic_demo_sql_run_stores_ves(tmp_path: Path, monkeypatch) -> None:
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import GenerationConfig, RunConfig

    monkeypatch.setenv("TARGET_VES_REPEATS", "2")
    settings = load_settings(tmp_path)
    outcome = run_retrieval(RunConfig("demo-sql", "bm25",
                                      generation=GenerationConfig("heuristic")),
                            settings=settings)
    metrics = outcome.run.metrics
    results = list(RunStore.in_workspace(tmp_path).iter_results(outcome.run.run_id))
    scores = [r.metrics["ves"] for r in results]
    assert metrics["ves"] == pytest.approx(np.mean(scores))
    assert 0 < metrics["execution_accuracy"] < 1 and metrics["ves"] > 0
    for result in results:
        timing = result.generation["sql"]["ves"]
        if result.metrics["execution_match"]:
            assert timing["repeats"] == 2 and timing["gold_ms"] > 0 and timing["pred_ms"] > 0
            assert result.metrics["ves"] == pytest.approx(100 * timing["reward"], abs=1e-4)
            assert result.metrics["ves"] > 0
        else:
            assert result.metrics["ves"] == 0 and timing["repeats"] == 0


def test_pages_show_ves_beside_ex(app, tmp_path: Path, monkeypatch) -> None:
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import GenerationConfig, RunConfig

    monkeypatch.setenv("TARGET_VES_REPEATS", "2")
    settings = load_settings(tmp_path / "ws")
    made = [run_retrieval(RunConfig("demo-sql", spec, limit=30,
                                    generation=GenerationConfig("heuristic")),
                          settings=settings).run for spec in ("bm25", "tfidf")]
    bm25, tfidf = (run.run_id for run in made)
    assert all("ves" in run.metrics for run in made)

    runs_page = app("pages/run.py", dataset="demo-sql")
    frame = next(d.value for d in runs_page.dataframe if "answers" in d.value.columns)
    assert "VES" in frame.columns and frame["VES"].str.match(r"^\d+\.\d\d$").all()

    overview = app("pages/overview.py")
    columns = {c for d in overview.dataframe for c in map(str, d.value.columns)}
    assert any("VES" in c for c in columns), columns

    compare = app("pages/compare.py", runs=f"{bm25},{tfidf}")
    tests = next(d.value for d in compare.dataframe if "test" in d.value.columns)
    assert "randomization" in set(tests.loc[tests["metric"] == "ves", "test"])

    scores = RunStore.in_workspace(tmp_path / "ws").query_scores(bm25)
    right = next(s.query_id for s in scores if s.metrics.get("execution_match"))
    query = app("pages/query.py", run=bm25, query=right)
    if query.title[0].value != f"Query {right}":
        query.sidebar.radio(key="query-filter").set_value("all queries").run()
        query.sidebar.selectbox(key=f"query-id-{bm25}-all queries").set_value(right).run()
    captions = [c.value.replace("\\", "") for c in query.caption]  # markdown escapes
    assert any(c.startswith("VES ") and "R = √(t_gold / t_pred)" in c and "predicted" in c
               for c in captions), captions
