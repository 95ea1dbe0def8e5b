"""Aggregate explanations of failures: missing query terms and winner features, counted
by hand on a four-query case, the view's text deciding what is missing, the Failures
page's CSV carrying them, and a demo run."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from target_core.analysis.failure_aggregates import ALL, WINNER_FEATURES, failure_explanations
from target_core.analysis.failures import analyse_failures
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import QueryResult, RunStore
from target_core.read_models.failures import aggregates_view
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Dataset, Query, Table

A = Table("db1", "Games_2001", ("Nation", "Gold"), (("Avia", 3),),
          {"title": "2001 Games medal table"})
B = Table("db1", "Games_2005", ("Nation", "Gold"), (("Cosa", 4),),
          {"title": "2005 Games medal table"})
C = Table("db2", "Rivers", ("River", "Length"), (("Arn", 10),), {"title": "Rivers of Norland"})
D = Table("db2", "Lakes", ("Lake", "Area"), (("Mora", 5),), {"title": "Lakes of Norland"})
E = Table("db3", "Films", ("Film", "Year"), (("Dawn", 1999),), {"title": "Film awards"})
QUERIES = (
    Query("q1", "Which nation won most gold at the 2001 Games", "", (A.key,), "db1"),
    Query("q2", "How long is the river Arn", "", (C.key,), "db2"),
    Query("q3", "Film awards of 1999", "", (E.key,), "db3"),
    Query("q4", "Which lake won gold", "", (D.key,), "db2"),
)
DATASET = Dataset("hand", "qa", (A, B, C, D, E), QUERIES)
RANKED = {"q1": [B, A, E], "q2": [D, E, C], "q3": [E, A, B], "q4": [A, B, D]}


DEFAULT = TableView()


def _add(store: RunStore, view: TableView = DEFAULT) -> str:
    run, _ = store.start_run(RunConfig("hand", "bm25", view=view, top_k=3),
                             dataset_fingerprint=DATASET.fingerprint, task="qa",
                             n_queries=4, versions={})
    results = []
    for i, query in enumerate(QUERIES):
        ranked = RANKED[query.query_id]
        ranks = {g: next(r for r, t in enumerate(ranked, 1) if t.key == g) for g in query.gold}
        results.append(QueryResult(query.query_id, i, [(t.key, 1.0 / r) for r, t in
                                                       enumerate(ranked, 1)],
                                   list(query.gold), ranks, {}, 1.0))
    store.save_results(run.run_id, results)
    store.finish_run(run.run_id, {})
    return run.run_id


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite")


def test_missing_terms_and_winner_features_counted_by_hand(store: RunStore) -> None:
    report = analyse_failures(store, DATASET, _add(store), k=1)
    assert [c.query_id for c in report.cases] == ["q1", "q2", "q4"]
    explained, aggregates = failure_explanations(store, DATASET, report)
    # q1: A's text has nation, gold, 2001, games but not "won"; winner B is its sibling
    assert explained["q1"].missing_terms == ("won",)
    assert explained["q1"].winner == B.key
    assert explained["q1"].features == tuple(WINNER_FEATURES)  # all four
    assert explained["q1"].title_words == ("games",)
    # q2: "river" (header) and "arn" (cell) are in C; Lakes of Norland shares db2 only
    assert explained["q2"].missing_terms == ("long",)
    assert explained["q2"].features == ("same-database",)
    # q4: D lacks "won" and "gold"; the winner A is from another database, unlike D
    assert explained["q4"].missing_terms == ("won", "gold")
    assert explained["q4"].winner == A.key and explained["q4"].features == ()
    scopes = {a.scope: a for a in aggregates}
    assert list(scopes)[0] == ALL and scopes[ALL].n_queries == 3
    assert scopes[ALL].missing_terms == [("won", 2), ("gold", 1), ("long", 1)]
    assert scopes[ALL].features == {"shares-title-words": 1, "same-database": 2,
                                    "same-title-family": 1, "similar-header": 1}
    # q1 and q2 are sibling confusions (a same-database table above the gold), q4 is not
    assert scopes["sibling-confusion"].n_queries == 2
    assert scopes["sibling-confusion"].missing_terms == [("long", 1), ("won", 1)]
    assert scopes["sibling-confusion"].features["same-database"] == 2
    assert scopes["weak-lexical-overlap"].missing_terms == [("gold", 1), ("long", 1),
                                                            ("won", 1)]
    assert scopes["weak-lexical-overlap"].features["same-database"] == 1


def test_missing_terms_follow_the_runs_view(store: RunStore) -> None:
    """Without the title, A's text loses "2001" and "games": q1 misses them too."""
    untitled = TableView(title=False, section_title=False)
    report = analyse_failures(store, DATASET, _add(store, untitled), k=1)
    explained, _ = failure_explanations(store, DATASET, report)
    assert explained["q1"].missing_terms == ("won", "2001", "games")


def test_the_pages_csv_carries_the_explanations(store: RunStore) -> None:
    report = analyse_failures(store, DATASET, _add(store), k=1)
    view = aggregates_view(store, DATASET, report)
    export = pd.read_csv(io.StringIO(view.export.to_csv(index=False)), dtype=str,
                         keep_default_na=False)
    assert list(export["query_id"]) == ["q1", "q2", "q4"]
    assert list(export["missing terms"]) == ["won", "long", "won gold"]
    assert list(export["winner"]) == ["db1/Games_2005", "db2/Lakes", "db1/Games_2001"]
    assert export["winner features"][1] == "same-database"
    aggregates = pd.read_csv(io.StringIO(view.frame.to_csv(index=False)))
    won = aggregates[(aggregates["scope"] == ALL) & (aggregates["item"] == "won")]
    assert won[["kind", "queries", "failed queries"]].values.tolist() == [
        ["missing term", 2, 3]]
    assert won["share"].iloc[0] == pytest.approx(2 / 3, abs=1e-4)
    assert view.terms()["term"].tolist() == ["won", "gold", "long"]
    features = view.features("sibling-confusion")
    assert features.set_index("feature")["queries"]["same-database"] == 2


def test_demo_sql_run(tmp_path: Path) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path)})
    store = RunStore.in_workspace(settings.workspace)
    run_id = run_retrieval(RunConfig("demo-sql", "bm25"), settings=settings,
                           store=store).run.run_id
    dataset = load_dataset("demo-sql", settings)
    report = analyse_failures(store, dataset, run_id)
    explained, aggregates = failure_explanations(store, dataset, report)
    assert set(explained) == {c.query_id for c in report.cases}
    everything = aggregates[0]
    assert everything.scope == ALL and everything.n_queries == report.n_failed
    assert [a.scope for a in aggregates[1:]] == [n for n, c in report.counts.items() if c]
    # a term's count is the failed queries lacking it, never more than the scope
    for agg in aggregates:
        for term, n in agg.missing_terms:
            lacking = [c for c in report.cases if agg.scope in (ALL, *c.categories)
                       and term in explained[c.query_id].missing_terms]
            assert len(lacking) == n <= agg.n_queries
    # text-to-SQL: the winner shares the gold's database in some failures, not all
    assert 0 < everything.features["same-database"] < report.n_failed


def test_failures_page_shows_what_recurs(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    run_id = run_retrieval(RunConfig("demo-sql", "bm25"), settings=settings).run.run_id
    at = app("pages/failures.py", run=run_id)
    assert not at.error and "What recurs" in [h.value for h in at.subheader]
    assert at.selectbox(key=f"failures-scope-{run_id}-10").value == ALL
    frames = [d.value for d in at.dataframe]
    terms = next(f for f in frames if list(f.columns) == ["term", "queries", "share"])
    assert terms["term"].iloc[0] == "list" and terms["queries"].iloc[0] == 5
    features = next(f for f in frames if "feature" in f.columns)
    assert features.set_index("feature")["queries"]["same-database"] == 11
    at.selectbox(key=f"failures-scope-{run_id}-10").set_value("wrong-database").run()
    features = next(d.value for d in at.dataframe if "feature" in d.value.columns)
    assert features.set_index("feature")["queries"]["same-database"] == 0
