"""Links never lie: every page checks every URL parameter it reads. An unknown or
malformed value shows an error naming the parameter and the value, and nothing else of
the page's data (no table, chart or metric of some other run, dataset or query)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from jobs_support import wait_for_jobs
from streamlit.testing.v1 import AppTest

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.run_config import GenerationConfig, RunConfig
from target_core.table_view import TableView


def _unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def refused(at: AppTest, param: str, value: str) -> str:
    """Assert the page stopped on ?param=value with its error and no data; the error."""
    assert not at.exception, at.exception
    errors = [_unescaped(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert f"?{param}={value})" in errors[0], errors[0]
    assert not at.dataframe, "a table of other data is shown"
    assert not at.table and not at.metric
    assert not at.get("plotly_chart"), "a chart of other data is shown"
    return errors[0]


def opened(at: AppTest) -> None:
    assert not at.exception and not at.error, [e.value for e in at.error]


UNKNOWN = "nonexistent"


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings(tmp_path / "ws")


@pytest.fixture
def runs(app, settings) -> dict[str, str]:
    """Two complete runs on demo-qa (40 queries); bm25 without titles misses some."""
    untitled = TableView(title=False, section_title=False)
    return {"bm25": run_retrieval(RunConfig("demo-qa", "bm25", limit=40, view=untitled),
                                  settings=settings).run.run_id,
            "tfidf": run_retrieval(RunConfig("demo-qa", "tfidf", limit=40),
                                   settings=settings).run.run_id}


# --- pages over a dataset ------------------------------------------------------------------

@pytest.mark.parametrize("page", ["pages/datasets.py", "pages/run.py", "pages/ablations.py"])
def test_unknown_dataset(app: Callable, page: str) -> None:
    message = refused(app(page, dataset="demo-q"), "dataset", "demo-q")
    assert "Did you mean 'demo-qa'" in message
    assert not app(page, dataset="handmade-qa").error  # a known one opens


def test_absent_dataset_keeps_the_default(app: Callable) -> None:
    at = app("pages/datasets.py")
    opened(at)
    assert at.sidebar.selectbox(key="dataset").value == "demo-qa"


@pytest.mark.parametrize("param, value", [("section", "Nope"), ("table", "wiki/Nope"),
                                          ("table", UNKNOWN), ("query", "q9"),
                                          ("query", UNKNOWN)])
def test_datasets_page_parameters(app: Callable, param: str, value: str) -> None:
    params = {"dataset": "handmade-qa", "section": "Tables", param: value}
    message = refused(app("pages/datasets.py", **params), param, value)
    assert "handmade-qa" in message or param == "section"


def test_datasets_page_suggests_the_closest_query(app: Callable) -> None:
    message = refused(app("pages/datasets.py", dataset="handmade-qa", section="Queries",
                          query="q"), "query", "q")
    assert "Known (3): 'q1', 'q2', 'q3'." in message


@pytest.mark.parametrize("params, param, value", [
    ({"retriever": "bm2"}, "retriever", "bm2"),
    ({"top_k": "abc"}, "top_k", "abc"),
    ({"top_k": "0"}, "top_k", "0"),
    ({"top_k": "1000"}, "top_k", "1000"),
    ({"limit": "-5"}, "limit", "-5"),
    ({"limit": "x"}, "limit", "x"),
    ({"limit": "4"}, "limit", "4"),  # handmade-qa has 3 queries
])
def test_ablations_page_parameters(app: Callable, params: dict, param: str,
                                   value: str) -> None:
    message = refused(app("pages/ablations.py", dataset="handmade-qa", **params), param, value)
    if param == "retriever":
        assert "Did you mean 'bm25'" in message
    else:
        assert message.startswith(f"Invalid {param} '{value}'")


def test_ablations_page_accepts_good_numbers(app: Callable) -> None:
    at = app("pages/ablations.py", dataset="handmade-qa", retriever="tfidf", top_k="5",
             limit="2")
    opened(at)
    assert at.number_input(key="ablation-top-k").value == 5
    assert at.number_input(key="ablation-limit").value == 2


@pytest.mark.parametrize("params, param, value", [
    ({"mode": "nope"}, "mode", "nope"),
    ({"mode": "reproduce", "dataset": "demo-q"}, "dataset", "demo-q"),
    ({"mode": "reproduce", "dataset": "demo-qa", "paper": "Spyder"}, "paper", "Spyder"),
])
def test_overview_parameters(app: Callable, params: dict, param: str, value: str) -> None:
    refused(app("pages/overview.py", **params), param, value)


def test_overview_reproduction_link_opens(app: Callable) -> None:
    at = app("pages/overview.py", mode="reproduce", dataset="demo-qa", paper="OTTQA")
    assert not at.exception and not at.error


def test_home_has_no_parameters_and_opens(app: Callable) -> None:
    opened(app("pages/home.py", run=UNKNOWN))


# --- pages over runs -----------------------------------------------------------------------

def test_query_page_parameters(app: Callable, runs: dict[str, str], settings) -> None:
    run = runs["bm25"]
    message = refused(app("pages/query.py", run=UNKNOWN), "run", UNKNOWN)
    assert run in message and runs["tfidf"] in message
    refused(app("pages/query.py", run=run[:-1] + "x"), "run", run[:-1] + "x")
    message = refused(app("pages/query.py", run=run, query="qa-9999"), "query", "qa-9999")
    assert "Did you mean" in message and "more." in message  # 40 queries: not all listed
    assert message.count("'qa-") <= 1 + 3 + 10  # the value, suggestions, ten known
    first = RunStore.in_workspace(settings.workspace).query_metrics(run)[0][0]
    message = refused(app("pages/query.py", run=run, query=first, table="wiki/Nope"),
                      "table", "wiki/Nope")
    assert f"not among the gold and retrieved tables of query {first}" in message


def test_query_page_table_defaults_to_the_gold_table(app: Callable,
                                                     runs: dict[str, str]) -> None:
    run = runs["bm25"]
    at = app("pages/query.py", run=run)
    opened(at)
    assert _preview(at) == at.dataframe[0].value["table"].iloc[0]
    # another query in the sidebar: its own gold table, not the previous query's
    box = at.sidebar.selectbox[1]
    box.set_value(box.options[5]).run()
    opened(at)
    gold = at.dataframe[0].value["table"].iloc[0]
    assert _preview(at) == gold and at.query_params["table"] in (gold, [gold])


def _preview(at: AppTest) -> str:
    return next(s.value for s in at.selectbox if s.key.startswith("query-table-"))


def test_failures_page_parameters(app: Callable, runs: dict[str, str]) -> None:
    run = runs["bm25"]
    refused(app("pages/failures.py", run=UNKNOWN), "run", UNKNOWN)
    for k in ("abc", "0", "11", "-1"):
        message = refused(app("pages/failures.py", run=run, k=k), "k", k)
        assert message.startswith(f"Invalid k '{k}'")
    message = refused(app("pages/failures.py", run=run, category="sibling-confusin"),
                      "category", "sibling-confusin")
    assert "at k = 10" in message and "not among" in message
    opened(app("pages/failures.py", run=run, k="5"))


def test_compare_page_parameters(app: Callable, runs: dict[str, str]) -> None:
    both = f"{runs['bm25']},{runs['tfidf']}"
    page = "pages/compare.py"
    message = refused(app(page, runs=f"{runs['bm25']},{UNKNOWN}"), "runs", UNKNOWN)
    assert runs["tfidf"] in message
    refused(app(page, runs=both, dataset="demo-q"), "dataset", "demo-q")
    refused(app(page, runs=both, dataset="handmade-qa"), "dataset", "handmade-qa")
    refused(app(page, runs=both, k="abc"), "k", "abc")
    refused(app(page, runs=both, k="-3"), "k", "-3")
    message = refused(app(page, runs=both, k="7"), "k", "7")
    assert "1, 3, 5, 10" in message or "10" in message
    opened(app(page, runs=both, k="5"))


# --- the benchmark builder -----------------------------------------------------------------

BUILDER = "pages/benchmark_builder.py"


def _sample_air(app: Callable, settings) -> None:
    """Sample the draft 'air' on the page (one query per airline template) and wait for
    its job: sampling works in a worker process."""
    at = app(BUILDER)
    at.selectbox(key="bg-database").set_value("airline")
    at.number_input(key="bg-n").set_value(1)
    at.text_input(key="bg-name").set_value("air")
    next(b for b in at.button if b.label == "Sample and write questions").click().run()
    opened(at)
    wait_for_jobs(settings.workspace)


def test_benchmark_builder_parameters(app: Callable, settings) -> None:
    page = BUILDER
    _sample_air(app, settings)
    run = run_retrieval(RunConfig("demo-sql", "bm25", limit=10,
                                  generation=GenerationConfig("heuristic")),
                        settings=settings).run.run_id
    message = refused(app(page, draft="ai"), "draft", "ai")
    assert "Did you mean 'air'" in message
    for pair in ("999999", "abc", "-1"):
        refused(app(page, draft="air", pair=pair), "pair", pair)
    refused(app(page, run=UNKNOWN), "run", UNKNOWN)
    at = app(page, draft="air", pair="1", run=run)
    opened(at)


def test_a_reviewed_pair_opens_under_every_status(app: Callable, settings) -> None:
    from target_core.benchgen.draft import Draft

    page = BUILDER
    _sample_air(app, settings)
    with Draft.open(settings.workspace, "air") as draft:
        target = draft.pairs()[2]
        draft.review(target.pair_id, "rejected")
    at = app(page, draft="air", pair=str(target.pair_id))
    opened(at)
    assert at.text_area(key=f"bg-edit-air-{target.pair_id}").value == target.question


# --- inside a session: a value left by an earlier choice is stale, not a link ---------------

def test_switching_dataset_drops_the_previous_table_quietly(app: Callable) -> None:
    at = app("pages/datasets.py", dataset="handmade-qa", section="Tables",
             table="wiki/Lakes_of_Norland_0")
    opened(at)
    at.sidebar.selectbox(key="dataset").set_value("demo-qa").run()
    opened(at)
    assert at.title[0].value == "demo-qa" and "table" not in at.query_params


def test_switching_run_keeps_the_query_page_open(app: Callable, runs: dict[str, str],
                                                 settings) -> None:
    other = run_retrieval(RunConfig("handmade-qa", "bm25"), settings=settings).run.run_id
    at = app("pages/query.py", run=runs["bm25"])
    opened(at)
    at.sidebar.selectbox(key="query-run").set_value(other).run()  # none of its queries
    opened(at)
    assert at.query_params["query"] in ("q1", ["q1"])
    assert at.query_params["run"] in (other, [other])


def test_switching_run_on_failures_keeps_k_in_range(app: Callable, settings) -> None:
    wide = run_retrieval(RunConfig("handmade-qa", "bm25", top_k=20),
                         settings=settings).run.run_id
    narrow = run_retrieval(RunConfig("handmade-qa", "tfidf", top_k=3),
                           settings=settings).run.run_id
    at = app("pages/failures.py", run=wide, k="15")
    opened(at)
    at.sidebar.selectbox(key="failures-run").set_value(narrow).run()
    opened(at)
    assert at.query_params["k"] in ("3", ["3"])


# --- the All runs page and the metadata slices ----------------------------------------------

@pytest.mark.parametrize("params, param, value", [
    ({"dataset": "demo-q"}, "dataset", "demo-q"),
    ({"k": "abc"}, "k", "abc"),
    ({"k": "0"}, "k", "0"),
    ({"k": "11"}, "k", "11"),  # the runs' top-k is 10
    ({"field": "difficulti"}, "field", "difficulti"),
    ({"field": "difficulty", "value": "impossible"}, "value", "impossible"),
    ({"outcome": "most"}, "outcome", "most"),
])
def test_matrix_page_parameters(app: Callable, runs: dict[str, str], params: dict,
                                param: str, value: str) -> None:
    message = refused(app("pages/matrix.py", **{"dataset": "demo-qa", **params}), param,
                      value)
    if param == "field":
        assert "Did you mean 'difficulty'" in message
    if param == "k":
        assert message.startswith(f"Invalid k '{value}'")
    opened(app("pages/matrix.py", dataset="demo-qa", k="5", field="failure_mode",
               value="sibling", outcome="split"))


def test_slice_parameter_on_overview_and_compare(app: Callable, runs: dict[str, str]) -> None:
    message = refused(app("pages/overview.py", slice="difficulti"), "slice", "difficulti")
    assert "Did you mean 'difficulty'" in message
    both = f"{runs['bm25']},{runs['tfidf']}"
    refused(app("pages/compare.py", runs=both, slice="nope"), "slice", "nope")
    at = app("pages/compare.py", runs=both, slice="failure_mode")
    opened(at)
    assert at.selectbox(key="compare-slice-demo-qa").value == "failure_mode"


@pytest.mark.parametrize("page, param, value", [
    ("pages/query.py", "run", "abc123"), ("pages/failures.py", "run", "abc123"),
    ("pages/compare.py", "runs", "abc123,def456")])
def test_an_empty_workspace_names_the_runs_a_link_asked_for(app: Callable, page: str,
                                                            param: str, value: str) -> None:
    at = app(page, **{param: value})
    assert not at.exception
    errors = [_unescaped(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("No runs yet"), errors
    assert all(run in errors[0] for run in value.split(",")), errors[0]
    assert at.info  # how to make runs, as before
    assert not app(page).error  # no link: the hint alone


def test_query_links_are_query_link_each() -> None:
    """The matrix's links, encoded the run's part once, equal query_link's one by one
    (spaces, &, =, #, %, +, slashes, non-ASCII), and None stays None."""
    from target_core.read_models.links import query_link, query_links

    ids = ["q1", "a b&c=d", "x#y%z+w", "ä/ü?", "", None]
    for run_id in ("20261127-1", "run &=#+/ ä"):
        assert query_links(run_id, ids) == [
            None if q is None else query_link(run_id, q) for q in ids]
