"""Leaderboard (Table 2 layout), recall curves, and the Query page's drill-down logic."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from target_core.analysis.leaderboard import (
    headline_recall_columns,
    latest_complete,
    leaderboard,
    recall_curves,
)
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.read_models.overview import display_table
from target_core.read_models.query import (
    failed_query_ids,
    matched_terms,
    outcome_view,
    query_terms,
    term_cells,
)
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Table


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ws")
    settings = load_settings(path)
    for config in (RunConfig("demo-qa", "bm25", limit=60),
                   RunConfig("demo-qa", "bm25", TableView(title=False, section_title=False),
                             limit=60),
                   RunConfig("demo-qa", "tfidf", limit=60),
                   RunConfig("demo-sql", "bm25", top_k=5, limit=40)):
        run_retrieval(config, settings=settings)
    run_retrieval(RunConfig("demo-qa", "bm25", limit=60), settings=settings)  # a rerun
    return path


def test_leaderboard_layout_and_best(workspace: Path) -> None:
    store = RunStore.in_workspace(workspace)
    runs = store.list_runs()
    assert len(latest_complete(runs)) == 4  # the rerun replaces the first bm25 run
    board = leaderboard(runs)
    assert list(board.table.index) == [("bm25", "default"), ("bm25", "no-title"),
                                       ("tfidf", "default")]
    assert list(board.table.columns) == [("demo-qa", "R@10"), ("demo-qa", "ms"),
                                         ("demo-sql", "R@1"), ("demo-sql", "R@1 tables"),
                                         ("demo-sql", "ms")]
    # text-to-SQL's R@1 is TARGET's database-level hit; table-level recall@1 beside it
    sql = next(r for r in runs if r.config.dataset == "demo-sql")
    assert board.table.loc[("bm25", "default"), ("demo-sql", "R@1")] == sql.metrics["db_hit@1"]
    assert board.table.loc[("bm25", "default"), ("demo-sql", "R@1 tables")] == \
        sql.metrics["recall_micro@1"]  # TARGET's recall is micro-averaged
    assert board.recall_metrics[("demo-sql", "R@1")] == "db_hit@1"
    assert headline_recall_columns(board) == [("demo-qa", "R@10"), ("demo-sql", "R@1")]
    recall = board.table[("demo-qa", "R@10")]
    assert board.best[("demo-qa", "R@10")].tolist() == (recall == recall.max()).tolist()
    assert recall[("bm25", "default")] > recall[("bm25", "no-title")]
    shown = display_table(board)
    assert shown.loc[("tfidf", "default"), ("demo-sql", "R@1")] == "–"
    assert len(board.runs) == 4


def test_runs_differing_only_in_k_get_rows_of_their_own(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    five, ten = (run_retrieval(RunConfig("demo-qa", "bm25", top_k=k, limit=20),
                               settings=settings).run for k in (5, 10))
    other = run_retrieval(RunConfig("demo-fact", "bm25", top_k=5, limit=20),
                          settings=settings).run
    board = leaderboard(RunStore.in_workspace(tmp_path).list_runs())
    assert list(board.table.index) == [("bm25", "default"), ("bm25", "default · k=10"),
                                       ("bm25", "default · k=5")]
    assert board.runs == {("demo-qa", "bm25", "default · k=5"): five.run_id,
                          ("demo-qa", "bm25", "default · k=10"): ten.run_id,
                          ("demo-fact", "bm25", "default"): other.run_id}
    assert board.table.loc[("bm25", "default · k=5"), ("demo-qa", "R@5")] == \
        five.metrics["recall@5"]


def test_recall_curves_are_monotone_and_end_at_recall_at_k(workspace: Path) -> None:
    store = RunStore.in_workspace(workspace)
    runs = [r for r in latest_complete(store.list_runs()) if r.config.dataset == "demo-qa"]
    curves = recall_curves(store, runs)
    for run in runs:
        part = curves[curves["run_id"] == run.run_id]
        assert list(part["k"]) == list(range(1, 11))
        assert part["recall"].is_monotonic_increasing
        assert part["recall"].iloc[-1] == pytest.approx(run.metrics["recall@10"])


def test_outcome_view_and_failed_neighbours(workspace: Path) -> None:
    store = RunStore.in_workspace(workspace)
    run = next(r for r in store.list_runs() if r.config.view.label == "no-title")
    dataset = load_dataset("demo-qa", load_settings(workspace))
    failed = failed_query_ids(store, run)
    assert len(failed) >= 3
    middle = failed[1]
    view = outcome_view(store, dataset, run.run_id, middle)
    assert not view.found and view.previous_failed == failed[0]
    assert view.next_failed == failed[2] and view.n_failed == len(failed)
    assert list(view.ranked["rank"]) == list(range(1, len(view.ranked) + 1))
    assert not view.ranked["gold"].any()
    assert len(view.gold) == len(view.query.gold)
    assert all(w.startswith(("rank", "not ranked")) for w in view.gold["where"])


def test_the_query_page_reads_a_runs_scores_once(workspace: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The Query page's filters, neighbours and order read the run's scores through the
    memo (analysis.memo.run_scores): decoded once per run, not three times per visit."""
    from target_core.analysis import memo

    store = RunStore.in_workspace(workspace)
    run = next(r for r in store.list_runs() if r.config.view.label == "no-title")
    dataset = load_dataset("demo-qa", load_settings(workspace))
    memo.clear_all()
    reads: list[str] = []
    real = RunStore.query_scores
    monkeypatch.setattr(RunStore, "query_scores",
                        lambda self, run_id: reads.append(run_id) or real(self, run_id))
    for _ in range(2):  # a visit, then a revisit
        failed = failed_query_ids(store, run)
        outcome_view(store, dataset, run.run_id, failed[1])
    assert reads == [run.run_id]


def test_term_matching_uses_retriever_tokens() -> None:
    table = Table("d", "Lakes_0", ("Lake", "Depth (m)"), (("Vessa", 48), ("Orin Lake", None)),
                  {"title": "Lakes of Norland"})
    terms = query_terms("How deep is the Orin lake?")
    assert terms == {"deep", "orin", "lake"}
    header, cells = term_cells(table, terms)
    assert header == {0} and cells == {(1, 0)}
    assert matched_terms(table, terms) == (["lake", "orin"], ["deep"])


def test_query_flags_mark_misses_and_wrong_answers(tmp_path: Path) -> None:
    from target_core.read_models.query import query_flags
    from target_core.run_config import GenerationConfig

    settings = load_settings(tmp_path)
    store = RunStore.in_workspace(tmp_path)
    plain = run_retrieval(RunConfig("demo-sql", "bm25", limit=30), settings=settings).run
    answered = run_retrieval(RunConfig("demo-sql", "bm25", limit=30,
                                       generation=GenerationConfig("heuristic")),
                             settings=settings).run
    assert query_flags(store, plain).right is None  # no generator: nothing to be wrong
    flags = query_flags(store, answered)
    results = {r.query_id: r for r in store.iter_results(answered.run_id)}
    # found = every gold table within k (TARGET's recall), not just one of them
    assert flags.found == {q: r.metrics["recall@10"] == 1.0 for q, r in results.items()}
    assert any(r.metrics["hit@10"] == 1.0 and not flags.found[q] for q, r in results.items())
    assert flags.right == {q: r.generation["sql"]["error_class"] == "correct"
                           for q, r in results.items()}
    assert not all(flags.right.values()) and any(flags.right.values())


def test_text_to_sql_is_tested_on_the_database_level_hit(tmp_path: Path) -> None:
    from target_core.analysis.significance import significant_vs_best

    settings = load_settings(tmp_path)
    for retriever in ("bm25", "tfidf"):
        run_retrieval(RunConfig("demo-sql", retriever, top_k=5, limit=60), settings=settings)
    store = RunStore.in_workspace(tmp_path)
    tested = significant_vs_best(store, store.list_runs())
    assert {t.metric for t in tested.values()} == {"db_hit@1"}
    assert {t.test for t in tested.values()} == {"", "mcnemar"}  # 0/1 per query


def test_shading_matches_words_and_whole_numbers_only() -> None:
    """Regression: "GPA above 3.4" shaded every cell containing the digit 3 or 4."""
    terms = query_terms("How many students have a GPA above 3.4 in room B?")
    assert terms == {"students", "gpa", "above", "3.4", "room"}  # no "b", no "3", no "4"
    table = Table("u", "students", ("name", "gpa", "room"),
                  (("Ann", 3.35, "B 3"), ("Bo", 3.4, "C4"), ("Cy", 3.40, 4), ("Di", 34, "room 3")))
    header, cells = term_cells(table, terms)
    assert header == {1, 2}
    assert cells == {(1, 1), (2, 1), (3, 2)}  # 3.4 and 3.40; "room 3" has the word room


def test_run_labels_lead_with_what_tells_runs_apart(workspace: Path) -> None:
    """Regression: the sidebar showed "20261123-104706-cf879e · demo-" (the id first)."""
    from target_core.read_models.runs import run_label

    run = RunStore.in_workspace(workspace).list_runs()[0]
    label = run_label(run)
    assert label.startswith(f"{run.config.dataset} · {run.config.label} · ")
    assert label.endswith(run.run_id)
    assert ("k=" in label) == (run.config.top_k != 10)
    assert (run.config.view.label in label) == (run.config.view.label != "default")


def test_label_times_are_short_for_today() -> None:
    from target_core.read_models.runs import made_at

    noon = time.mktime((2026, 11, 23, 12, 0, 0, 0, 0, -1))
    assert made_at(noon - 3600, now=noon) == "11:00"
    assert made_at(noon - 86_400, now=noon) == "Nov 22 12:00"
    assert made_at(noon - 365 * 86_400, now=noon) == "Nov 23 12:00"  # another year
