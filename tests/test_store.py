"""RunStore: resume semantics, transactional batches, schema guard, clear errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from target_core.engine.store import QueryResult, RunStore, StoreError, config_key
from target_core.errors import UnknownNameError
from target_core.run_config import RunConfig
from target_core.table_view import TableView

CONFIG = RunConfig(dataset="demo-qa", retriever="bm25", top_k=5)


def _start(store: RunStore, config: RunConfig = CONFIG, fingerprint: str = "fp"):
    return store.start_run(config, dataset_fingerprint=fingerprint, task="qa", n_queries=3,
                           versions={"python": "3"})


def _result(query_id: str, position: int) -> QueryResult:
    key = ("wiki", f"t{position}")
    return QueryResult(query_id=query_id, position=position, ranked=[(key, 1.5), (("w", "x"), 1)],
                       gold=[key], gold_ranks={key: 1}, metrics={"hit@1": 1.0}, ms=0.5)


def test_new_run_then_resume_then_new_after_complete(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run, resumed = _start(store)
    assert not resumed and run.status == "running" and run.n_done == 0
    again, resumed = _start(store)
    assert resumed and again.run_id == run.run_id
    store.finish_run(run.run_id, {"mrr": 0.5})
    fresh, resumed = _start(store)
    assert not resumed and fresh.run_id != run.run_id
    assert store.get_run(run.run_id).metrics == {"mrr": 0.5}


def test_different_config_or_dataset_content_is_a_different_run(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    first, _ = _start(store)
    other_view, resumed = _start(store, RunConfig("demo-qa", "bm25", TableView(rows=0), 5))
    assert not resumed and other_view.run_id != first.run_id
    changed_data, resumed = _start(store, fingerprint="other")
    assert not resumed
    assert config_key(CONFIG, "fp") != config_key(CONFIG, "other")


def test_results_round_trip_in_query_order(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = _start(store)
    store.save_results(run.run_id, [_result("q2", 1), _result("q1", 0)])
    results = list(store.iter_results(run.run_id))
    assert [r.query_id for r in results] == ["q1", "q2"]
    assert results[0].ranked == [(("wiki", "t0"), 1.5), (("w", "x"), 1)]
    assert results[0].gold_ranks == {("wiki", "t0"): 1}
    assert store.done_query_ids(run.run_id) == {"q1", "q2"}
    assert store.get_run(run.run_id).n_done == 2
    assert store.get_result(run.run_id, "q2").position == 1


def test_query_scores_give_metrics_and_best_gold_rank_without_the_ranked_list(
        tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = _start(store)
    two_gold = QueryResult("q3", 2, [], [("d", "a"), ("d", "b")],
                           {("d", "a"): 7, ("d", "b"): 3}, {"hit@1": 0.0}, 1.0)
    never = QueryResult("q4", 3, [], [("d", "a")], {("d", "a"): None}, {"hit@1": 0.0}, 1.0)
    results = [_result("q1", 0), two_gold, never]
    store.save_results(run.run_id, results)
    scores = store.query_scores(run.run_id)
    assert [(s.query_id, s.best_rank) for s in scores] == [("q1", 1), ("q3", 3), ("q4", None)]
    assert [s.best_rank for s in scores] == [r.best_rank for r in results]
    assert scores[0].metrics == {"hit@1": 1.0}


def test_outcomes_are_the_results_outcomes_read_without_the_rest(tmp_path: Path) -> None:
    """store.outcomes (the recall curves' lean read) equals each stored result's
    outcome(), for several gold tables, a table in two databases and a generation."""
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = _start(store)
    two_gold = QueryResult("q3", 2, [(("d", "b"), 2.0), (("e", "a"), 1.0), (("d", "a"), 0.5)],
                           [("d", "a"), ("d", "b")], {("d", "a"): 3, ("d", "b"): 1},
                           {"hit@1": 1.0}, 1.0, generation={"answer": "x", "error": ""})
    store.save_results(run.run_id, [_result("q2", 1), two_gold, _result("q1", 0)])
    got = store.outcomes(run.run_id)
    assert got == [r.outcome() for r in store.iter_results(run.run_id)]
    assert [o.query_id for o in got] == ["q1", "q2", "q3"]
    assert got[2].retrieved == (("d", "b"), ("e", "a"), ("d", "a"))
    assert got[2].gold_ranks == (3, 1)  # in gold order


def test_failed_results_are_those_that_failed_at_k(tmp_path: Path) -> None:
    """store.failed_results (failure analysis's read) keeps exactly the results whose
    failed_at(k) holds, in query order: an unranked gold, one of two gold tables beyond
    k, no gold table at all (never failed), a hit at k and one just past it."""
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = _start(store)
    a, b = ("d", "a"), ("d", "b")
    results = [QueryResult("unranked", 0, [], [a], {a: None}, {}, 1.0),
               QueryResult("one-of-two", 1, [], [a, b], {a: 1, b: 4}, {}, 1.0),
               QueryResult("no-gold", 2, [], [], {}, {}, 1.0),
               QueryResult("at-k", 3, [], [a], {a: 3}, {}, 1.0),
               QueryResult("past-k", 4, [], [a], {a: 4}, {}, 1.0)]
    store.save_results(run.run_id, results)
    stored = list(store.iter_results(run.run_id))
    for k in (1, 3, 4, 10):
        assert store.failed_results(run.run_id, k) == [r for r in stored if r.failed_at(k)]
    assert [r.query_id for r in store.failed_results(run.run_id, 3)] == [
        "unranked", "one-of-two", "past-k"]
    assert store.count_results(run.run_id) == 5


def test_a_failing_batch_writes_nothing(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = _start(store)
    bad = QueryResult("q3", 2, [], [], {}, {"x": object()}, 1.0)  # not JSON-serializable
    with pytest.raises(TypeError):
        store.save_results(run.run_id, [_result("q1", 0), bad])
    assert store.done_query_ids(run.run_id) == set()


def test_unknown_run_suggests(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = _start(store)
    with pytest.raises(UnknownNameError) as info:
        store.get_run(run.run_id[:-1] + "z")
    assert info.value.suggestion == run.run_id


def test_list_filters_and_delete(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    a, _ = _start(store)
    b, _ = _start(store, RunConfig("demo-sql", "tfidf"), fingerprint="fp-sql")
    store.fail_run(b.run_id, "boom")
    assert [r.run_id for r in store.list_runs(dataset="demo-sql")] == [b.run_id]
    assert store.get_run(b.run_id).error == "boom"
    assert [r.run_id for r in store.list_runs(status="running")] == [a.run_id]
    store.delete_run(a.run_id)
    assert [r.run_id for r in store.list_runs()] == [b.run_id]


def test_not_a_database_and_newer_schema_are_clear_errors(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not sqlite at all, definitely not" * 100)
    with pytest.raises(StoreError, match="cannot open the run store"):
        RunStore(bogus)
    path = tmp_path / "runs.sqlite"
    RunStore(path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    connection.close()
    with pytest.raises(StoreError, match="newer"):
        RunStore(path)
    assert RunStore(tmp_path / "ok.sqlite").integrity_check() == "ok"
