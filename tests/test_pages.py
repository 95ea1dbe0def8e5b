"""The dashboard driven with Streamlit's AppTest: every dataset renders, deep links reopen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jobs_support import wait_for_jobs
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def test_home_lists_every_dataset_with_a_link(app) -> None:
    at = app(page="pages/home.py")
    assert at.title[0].value == "TARGET Explorer"
    frame = at.dataframe[0].value
    assert {"demo-qa", "demo-fact", "demo-sql", "handmade-qa"} <= set(frame["name"])
    row = frame.set_index("name").loc["handmade-qa"]
    # counts are text (blank when a dataset fails to load)
    assert row["tables"] == "4" and row["browse"] == "datasets?dataset=handmade-qa"


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.parametrize("name", ["demo-qa", "demo-fact", "demo-sql", "handmade-qa"])
def test_datasets_page_renders_each_dataset(app, name: str) -> None:
    at = app(dataset=name)
    assert at.sidebar.selectbox(key="dataset").value == name
    assert name in at.title[0].value
    assert int(_metric(at, "Tables").replace(",", "")) > 0
    assert not at.error


def test_counts_of_handmade_dataset(app) -> None:
    at = app(dataset="handmade-qa")
    assert _metric(at, "Tables") == "4" and _metric(at, "Queries") == "3"
    assert _metric(at, "Databases") == "0"
    assert _metric(at, "Median rows") == "2"


def test_table_deep_link_opens_table(app) -> None:
    at = app(dataset="handmade-qa", section="Tables", table="wiki/Lakes_of_Norland_0")
    subheaders = [s.value for s in at.subheader]
    assert any("Lakes\\_of\\_Norland\\_0" in s for s in subheaders), subheaders
    code = "\n".join(c.value for c in at.code)
    assert "| Orin | 87 | 102 |" in code  # default view: markdown, all rows
    assert "Section: Largest lakes\nTable: Lakes_of_Norland_0\nLake,Area (km2)" in code


def test_query_deep_link_shows_gold_tables(app) -> None:
    at = app(dataset="handmade-qa", section="Queries", query="q3")
    subheaders = " ".join(s.value for s in at.subheader)
    assert "2019\\_Norland\\_Marathon\\_0" in subheaders
    assert "2020\\_Norland\\_Marathon\\_0" in subheaders


def test_unknown_table_in_link_is_an_error_not_a_crash(app) -> None:
    at = app(dataset="handmade-qa", section="Tables", table="wiki/Nope")
    assert not at.exception and not at.dataframe  # more in test_links.py
    assert at.error and "'wiki/Nope'" in at.error[0].value


def test_view_toggle_changes_token_counts(app) -> None:
    at = app(dataset="handmade-qa")
    before = _metric(at, "Median tokens")
    at.selectbox(key="datasets-preset").set_value("header-only").run()
    assert not at.exception
    assert _metric(at, "Median tokens") != before


@pytest.fixture
def app_with_runs(app, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import RunConfig

    settings = load_settings(tmp_path / "ws")
    runs = [run_retrieval(RunConfig("demo-qa", spec, limit=40), settings=settings).run
            for spec in ("bm25", "tfidf")]
    return app, runs


def test_overview_shows_leaderboard_and_curves(app_with_runs) -> None:
    app, _ = app_with_runs
    at = app(page="pages/overview.py")
    assert at.title[0].value == "Overview"
    board = at.dataframe[0].value
    assert at.selectbox(key="overview-dataset").value == "demo-qa"
    assert {"retriever", "view", "R@10"} <= set(board.columns) and len(board) == 2
    assert not at.error


def test_overview_without_runs_says_what_to_do(app) -> None:
    at = app(page="pages/overview.py")
    assert "No complete runs yet" in at.info[0].value


def test_query_page_deep_link(app_with_runs) -> None:
    app, runs = app_with_runs
    from target_core.engine.store import RunStore

    store = RunStore.in_workspace(Path(os.environ["TARGET_WORKSPACE"]))
    second = store.query_metrics(runs[0].run_id)[1][0]
    at = app(page="pages/query.py", run=runs[0].run_id, query=second)
    assert at.title[0].value == "Query " + second.replace("-", "\\-")
    assert at.sidebar.selectbox[0].value == runs[0].run_id
    frames = [d.value for d in at.dataframe]
    assert list(frames[0].columns) == ["table", "where", "found", "title"]
    assert "score" in frames[1].columns
    assert not at.error


def _launch(at: AppTest) -> None:
    next(b for b in at.button if b.label == "Launch").click().run()


def test_run_page_launches_a_run(app, tmp_path: Path) -> None:
    at = app(page="pages/run.py", dataset="handmade-qa")
    at.multiselect(key="run-specs").set_value(["bm25"])
    _launch(at)
    assert not at.exception and not at.error, at.error
    assert "1 job(s) launched" in at.success[0].value
    # the run works in a worker process: the page shows the job, and it completes
    assert any("bm25 on handmade" in m.value for m in at.main.markdown), at.main.markdown
    (job,) = wait_for_jobs(tmp_path / "ws")
    assert job.status == "done" and job.pid is None
    from target_core.engine.store import RunStore

    (run,) = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert run.status == "complete" and run.config.dataset == "handmade-qa"
    assert job.run_id == run.run_id
    at.run()
    assert at.dataframe[-1].value["run"].tolist() == [f"query?run={run.run_id}"]
    # the note outlives the redraws that follow the job (it vanished on the first)
    assert "1 job(s) launched" in at.success[0].value
    # every page's sidebar lists the job, linked to its run (a new session: AppTest runs
    # app.py's shell on a session's first run only)
    sidebar = [m.value for m in app(page="pages/home.py").sidebar.markdown]
    assert any(job.run_id in line for line in sidebar), sidebar
    # the same configuration again: the stored run is shown, nothing runs
    _launch(at)
    assert any(run.run_id in i.value and "complete already" in i.value for i in at.info)
    assert len(RunStore.in_workspace(tmp_path / "ws").list_runs()) == 1
    # a fresh run is asked for: both kept, numbered in the list
    at.checkbox(key="run-fresh").check().run()
    _launch(at)
    wait_for_jobs(tmp_path / "ws")
    runs = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert len(runs) == 2
    at.run()
    table = at.dataframe[-1].value
    assert sorted(table["repeat"]) == ["1 of 2", "2 of 2"]


@pytest.fixture
def app_with_generation(app, tmp_path: Path):
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import GenerationConfig, RunConfig

    settings = load_settings(tmp_path / "ws")
    runs = {name: run_retrieval(RunConfig(name, "bm25", limit=30,
                                          generation=GenerationConfig("heuristic")),
                                settings=settings).run
            for name in ("demo-qa", "demo-fact", "demo-sql")}
    return app, runs


def test_query_page_shows_each_kind_of_generated_answer(app_with_generation) -> None:
    from target_core.engine.store import RunStore

    app, runs = app_with_generation
    store = RunStore.in_workspace(Path(os.environ["TARGET_WORKSPACE"]))
    headings = {"demo-qa": "Generated answer", "demo-fact": "Fact label",
                "demo-sql": "Generated SQL"}
    for name, run in runs.items():
        first = store.query_metrics(run.run_id)[0][0]
        at = app(page="pages/query.py", run=run.run_id, query=first)
        assert headings[name] in [s.value for s in at.subheader], name
        assert not at.error, name
        if name == "demo-sql":
            code = [c.value for c in at.code]
            assert at.session_state["query-filter"] == "all queries"
            assert any("SELECT" in c.upper() for c in code) and len(code) >= 2
            assert (at.success or at.warning), "the error class is shown"
        if name == "demo-fact":
            assert {m.label for m in at.metric} >= {"Predicted", "Gold", "Verdict"}


def test_query_page_filters_wrong_answers(app_with_generation) -> None:
    app, runs = app_with_generation
    at = app(page="pages/query.py", run=runs["demo-sql"].run_id)
    assert "wrong answer" in at.sidebar.radio(key="query-filter").options
    # AppTest compares a selectbox's value with its option labels (our format_func adds
    # the ✗ / ≠ marks), so hand it back a label before rerunning
    box = at.sidebar.selectbox[1]
    box.set_value(box.options[0])
    at.sidebar.radio(key="query-filter").set_value("wrong answer").run()
    assert not at.exception
    labels = at.sidebar.selectbox[1].options
    assert labels and all("≠" in label for label in labels)


def test_overview_has_downstream_columns(app_with_generation) -> None:
    app, _ = app_with_generation
    at = app(page="pages/overview.py")
    picker = at.selectbox(key="overview-dataset")
    assert {"demo-sql", "demo-qa", "demo-fact"} <= set(picker.options)
    for dataset, column in (("demo-sql", "EX"), ("demo-qa", "SB"), ("demo-fact", "F1")):
        at.selectbox(key="overview-dataset").set_value(dataset).run()
        board = at.dataframe[0].value  # one dataset at a time
        assert column in board.columns and at.query_params["dataset"] == dataset
        assert "bm25 → heuristic" in set(board["retriever"])
    # on QA, GTR's answer metrics have a table of their own: the leaderboard fits
    at.selectbox(key="overview-dataset").set_value("demo-qa").run()
    assert {"R-1 P", "reply tokens"} <= set(at.dataframe[1].value.columns)
    assert "SB" in at.dataframe[0].value.columns
    assert "R-1 P" not in at.dataframe[0].value.columns


def test_run_page_gtr_t_preset_and_a_generation_run(app, tmp_path: Path) -> None:
    at = app(page="pages/run.py", dataset="demo-sql")
    gtr = next(b for b in at.button if b.label == "GTR-T preset")
    gtr.click().run()
    assert at.multiselect(key="run-specs").value == ["dense:minilm"]
    assert at.selectbox(key="run-preset").value == "gtr-csv"
    assert at.selectbox(key="run-generator").value == "heuristic"  # no API key here
    assert at.radio(key="run-sql-schema").value == "tables"
    at.multiselect(key="run-specs").set_value(["bm25"])
    at.number_input(key="run-limit").set_value(6)
    _launch(at)
    assert not at.exception and not at.error, at.error
    from target_core.engine.store import RunStore

    (job,) = wait_for_jobs(tmp_path / "ws")
    assert job.status == "done"
    (run,) = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert run.config.generation is not None
    assert run.config.generation.sql_schema == "tables" and run.config.view.format == "csv"
    assert "execution_accuracy" in run.metrics and run.n_done == 6


def test_query_page_previous_and_next_stay_in_the_filter(app, tmp_path: Path) -> None:
    """Regression: previous/next were links that opened a new tab and lost the filter."""
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.read_models.query import failed_query_ids
    from target_core.run_config import RunConfig

    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("demo-sql", "bm25", top_k=5, limit=60),
                        settings=settings).run
    failed = failed_query_ids(RunStore.in_workspace(settings.workspace), run)
    assert len(failed) >= 3
    at = app("pages/query.py", run=run.run_id, query=failed[0])
    at.sidebar.radio(key="query-filter").set_value("missed by retrieval").run()
    picker = f"query-id-{run.run_id}-missed by retrieval"
    at.selectbox(key=picker).set_value(failed[0]).run()
    assert at.button(key="query-previous").disabled
    at.button(key="query-next").click().run()
    assert at.selectbox(key=picker).value == failed[1]
    assert at.sidebar.radio(key="query-filter").value == "missed by retrieval"
    assert at.title[0].value.replace("\\", "") == f"Query {failed[1]}"
    at.button(key="query-previous").click().run()
    assert at.selectbox(key=picker).value == failed[0]
