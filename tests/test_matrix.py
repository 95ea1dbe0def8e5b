"""The All runs view: one row per query, one column per run, the last gold rank coloured
by outcome and linked to the Query page, sorted by disagreement, filtered by metadata and
outcome (read_models/matrix.py), and the page driven with AppTest."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from target_core.engine.store import QueryResult, RunStore
from target_core.read_models.matrix import UNRANKED_TEXT, matrix_choices, run_matrix
from target_core.run_config import GenerationConfig, RunConfig
from target_core.table_view import TableView
from target_core.types import Query


def _result(qid: str, position: int, ranks: list[int | None]) -> QueryResult:
    gold = [("db", f"t-{qid}-{i}") for i in range(len(ranks))]
    return QueryResult(query_id=qid, position=position, ranked=[], gold=gold,
                       gold_ranks=dict(zip(gold, ranks, strict=True)),
                       metrics={"recall@10": 1.0}, ms=1.0)


def _add_run(store: RunStore, retriever: str, ranks: dict[str, list[int | None]],
             status: str = "complete", generation: GenerationConfig | None = None) -> str:
    run, _ = store.start_run(RunConfig("hand", retriever, generation=generation),
                             dataset_fingerprint="x",
                             task="qa", n_queries=len(ranks), versions={})
    store.save_results(run.run_id, [_result(q, i, r) for i, (q, r) in enumerate(ranks.items())])
    if status == "complete":
        store.finish_run(run.run_id, {"recall@10": 1.0})
    time.sleep(0.002)  # distinct creation times
    return run.run_id


QUERIES = [Query(f"q{i}", f"question {i}", "a", (("db", "t"),), "db",
                 difficulty="hard" if i in (2, 4) else "easy",
                 meta={"failure_mode": "sibling" if i < 3 else None})
           for i in range(1, 7)]


@pytest.fixture
def hand(tmp_path: Path) -> tuple[RunStore, dict[str, str]]:
    """Three runs over q1-q5 (q6 answered by none; dense did not answer q5):

    query  bm25        tfidf        dense      found  spread (not ranked = 21)
    q1     1           2            1          3/3    1
    q2     3           not ranked   12         1/3    18
    q3     not ranked  1            2          2/3    20
    q4     20 (20, 2)  not (4, -)   1 (1, 1)   1/3    20
    q5     1           1            -          2/2    0
    """
    store = RunStore(tmp_path / "runs.sqlite")
    ids = {"bm25": _add_run(store, "bm25", {"q1": [1], "q2": [3], "q3": [None],
                                            "q4": [20, 2], "q5": [1]}),
           "tfidf": _add_run(store, "tfidf", {"q1": [2], "q2": [None], "q3": [1],
                                              "q4": [4, None], "q5": [1]}),
           "dense": _add_run(store, "dense:minilm", {"q1": [1], "q2": [12], "q3": [2],
                                                     "q4": [1, 1]})}
    _add_run(store, "hybrid", {"q1": [1]}, status="running")  # not complete: left out
    # answers that did not read their retrieval: no column (nothing, or bm25's ranks again)
    _add_run(store, "no-context", {"q1": [None]},
             generation=GenerationConfig("heuristic", context="none"))
    _add_run(store, "bm25", {"q1": [1], "q2": [3], "q3": [None], "q4": [20, 2], "q5": [1]},
             generation=GenerationConfig("heuristic", context="oracle"))
    return store, ids


def test_hand_worked_matrix(hand) -> None:
    store, ids = hand
    choices = matrix_choices(store, "hand", QUERIES)
    assert [r.run_id for r in choices.runs] == [ids["bm25"], ids["dense"], ids["tfidf"]]
    assert choices.fields == ["difficulty", "failure_mode"]
    assert (choices.max_k, choices.default_k) == (10, 10)
    matrix = run_matrix(store, choices, k=10)
    frame = matrix.frame
    assert matrix.columns == ["bm25", "dense:minilm", "tfidf"]
    assert list(frame["query_id"]) == ["q3", "q4", "q2", "q1", "q5"]
    assert list(frame["disagreement"]) == [1, 1, 1, 0, 0]
    assert list(frame["found"]) == [2, 1, 1, 3, 2]
    assert list(frame["missed"]) == [1, 2, 2, 0, 0]
    assert list(frame["spread"]) == [20, 20, 18, 1, 0]
    assert frame["bm25"].fillna(0).tolist() == [0, 20, 3, 1, 1]  # 0 here: not ranked
    assert frame["bm25"].isna().tolist() == [True, False, False, False, False]
    assert frame["tfidf"].isna().tolist() == [False, True, True, False, False]
    assert str(frame["bm25"].dtype) == "Int64"
    assert list(matrix.kinds.loc[0]) == ["unranked", "found", "top"]  # q3
    assert list(matrix.kinds.loc[4]) == ["top", "absent", "top"]  # q5
    assert matrix.n_total == 5
    assert matrix.links.loc[0, "bm25"] == f"query?run={ids['bm25']}&query=q3"
    assert matrix.links.loc[4, "dense:minilm"] is None
    # at k = 2, q2's rank 3 misses too and q1's tfidf rank 2 still counts as found
    tight = run_matrix(store, choices, k=2)
    row = tight.frame.set_index("query_id")
    assert row.at["q2", "found"] == 0 and row.at["q1", "found"] == 3


def test_filters(hand) -> None:
    store, _ = hand
    choices = matrix_choices(store, "hand", QUERIES)

    def ids(**filters: str) -> list[str]:
        return list(run_matrix(store, choices, k=10, **filters).frame["query_id"])

    assert ids(outcome="split") == ["q3", "q4", "q2"]
    assert ids(outcome="some-missed") == ["q3", "q4", "q2"]
    assert ids(outcome="all-found") == ["q1", "q5"]
    assert ids(outcome="all-missed") == []
    assert ids(field="difficulty", value="hard") == ["q4", "q2"]
    assert ids(field="failure_mode", value="(none)") == ["q3", "q4", "q5"]
    assert ids(field="failure_mode", value="sibling", outcome="all-found") == ["q1"]
    matrix = run_matrix(store, choices, k=10, outcome="all-missed")
    assert matrix.empty and matrix.n_total == 5
    with pytest.raises(ValueError, match="outcome"):
        run_matrix(store, choices, k=10, outcome="most")
    with pytest.raises(ValueError, match="field"):
        run_matrix(store, choices, k=10, field="nope", value="x")


def test_display_shows_ranks_on_colours_and_never_none(hand) -> None:
    store, ids = hand
    matrix = run_matrix(store, matrix_choices(store, "hand", QUERIES), k=10)
    shown = matrix.display()
    assert list(shown.index) == ["q3", "q4", "q2", "q1", "q5"]
    assert list(shown.columns) == ["found", "bm25", "dense:minilm", "tfidf", "question",
                                   "difficulty", "failure_mode"]
    assert list(shown["found"]) == ["2/3", "1/3", "1/3", "3/3", "2/2"]
    html = matrix.display_styler().to_html()
    assert "None" not in html and "nan" not in html and "<NA>" not in html
    assert f">{UNRANKED_TEXT}<" in html and "query?run=" not in html.split("</style>")[1]
    assert "background-color: #15803d" in html  # a rank-1 cell
    assert len(matrix.display(limit=2)) == 2
    csv = matrix.csv()
    assert csv.splitlines()[0].startswith("query_id,found,missed,disagreement,spread,bm25")
    assert "q3,2,1,1,20.0,,2,1," in csv


def test_no_runs_and_no_metadata(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    choices = matrix_choices(store, "hand", QUERIES)
    assert choices.runs == [] and choices.default_k == 10
    matrix = run_matrix(store, choices, k=10)
    assert matrix.empty and matrix.columns == []
    _add_run(store, "bm25", {"q1": [1]})
    bare = [Query("q1", "question", "a", (("db", "t"),), "db")]
    choices = matrix_choices(store, "hand", bare)
    assert choices.fields == [] and choices.values("difficulty") == []
    assert list(run_matrix(store, choices, k=1).frame["query_id"]) == ["q1"]


# --- the page ------------------------------------------------------------------------------

@pytest.fixture
def page_runs(app, tmp_path: Path) -> dict[str, str]:
    """bm25 and tfidf on handmade-qa (3 queries) find every gold table at rank 1; a
    stored header-only bm25 run ranks none; a no-context run is no column at all."""
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval

    settings = load_settings(tmp_path / "ws")
    runs = {spec: run_retrieval(RunConfig("handmade-qa", spec), settings=settings).run.run_id
            for spec in ("bm25", "tfidf", "no-context")}
    store = RunStore.in_workspace(settings.workspace)
    blind, _ = store.start_run(RunConfig("handmade-qa", "bm25", view=TableView(rows=0)),
                               dataset_fingerprint="x", task="qa", n_queries=3, versions={})
    store.save_results(blind.run_id, [_result(f"q{i}", i, [None]) for i in (1, 2, 3)])
    store.finish_run(blind.run_id, {"recall@10": 0.0})
    return runs | {"blind": blind.run_id}


def test_page_without_runs_says_so(app) -> None:
    at = app("pages/matrix.py", dataset="handmade-qa")
    assert at.title[0].value == "All runs"
    assert at.info[0].value.startswith("No complete runs of handmade")
    assert not at.dataframe


def test_page_shows_every_run_and_links_each_cell(app, page_runs) -> None:
    at = app("pages/matrix.py", dataset="handmade-qa")
    assert not at.error
    grid = at.dataframe[0].value
    # a column per run that retrieved; the no-context run has none
    assert list(grid.columns[1:4]) == ["bm25 · default", "bm25 · header-only",
                                       "tfidf · default"]
    assert list(grid.index) == ["q1", "q2", "q3"]  # every query split 2 found / 1 missed
    assert list(grid["found"]) == ["2/3"] * 3
    assert grid.loc["q2", "bm25 · default"] == f"query?run={page_runs['bm25']}&query=q2"
    link = grid.loc["q1", "tfidf · default"]
    params = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    query_page = app("pages/query.py", **params)
    assert query_page.title[0].value == "Query q1"
    assert query_page.sidebar.selectbox(key="query-run").value == page_runs["tfidf"]
    assert at.sidebar.selectbox(key="matrix-k-handmade-qa").value == 10


def test_page_filters_from_the_url_and_writes_them_back(app, page_runs) -> None:
    at = app("pages/matrix.py", dataset="handmade-qa", field="difficulty", value="easy",
             outcome="split", k="3")
    assert not at.error
    assert list(at.dataframe[0].value.index) == ["q2"]
    at.selectbox(key="matrix-outcome").set_value("all-found").run()
    assert not at.error and at.query_params["outcome"] in ("all-found", ["all-found"])
    assert "No query matches these filters." in [i.value for i in at.info]
    at.selectbox(key="matrix-field-handmade-qa").set_value("").run()
    assert not at.error and "value" not in at.query_params
