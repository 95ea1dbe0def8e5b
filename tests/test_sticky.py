"""State that sticks: the dataset and run the user chose follow them across pages. The
sidebar's page links carry no parameters, so a page opened from them shows the session's
latest choice; a link's own parameters still win."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.run_config import RunConfig


def _go(at: AppTest, page: str, **params: str) -> AppTest:
    """Open `page` as the sidebar's page link does: its own parameters only."""
    at.switch_page(page)
    at.query_params.clear()
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _dataset(at: AppTest) -> str:
    return at.sidebar.selectbox(key="dataset").value


def _run(at: AppTest, key: str) -> str:
    return at.sidebar.selectbox(key=key).value


def test_the_dataset_follows_the_user_across_pages(app: Callable) -> None:
    at = app("pages/datasets.py", dataset="demo-sql")
    assert _dataset(at) == "demo-sql"
    _go(at, "pages/home.py")
    for page in ("pages/run.py", "pages/ablations.py", "pages/datasets.py"):
        assert _dataset(_go(at, page)) == "demo-sql", page
    at.sidebar.selectbox(key="dataset").select("demo-fact").run()
    assert _dataset(_go(at, "pages/run.py")) == "demo-fact"
    # a link's parameter wins over the session's choice
    assert _dataset(_go(at, "pages/datasets.py", dataset="demo-qa")) == "demo-qa"
    assert _dataset(_go(at, "pages/run.py")) == "demo-qa"


def test_the_run_follows_the_user_and_the_dataset(app: Callable, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")  # the app fixture's workspace

    def run(dataset: str, spec: str) -> str:
        return run_retrieval(RunConfig(dataset, spec, limit=10), settings=settings).run.run_id

    qa_bm25, qa_tfidf, sql_bm25 = run("demo-qa", "bm25"), run("demo-qa", "tfidf"), \
        run("demo-sql", "bm25")
    at = app("pages/query.py", run=qa_bm25)
    assert _run(at, "query-run") == qa_bm25
    assert _run(_go(at, "pages/failures.py"), "failures-run") == qa_bm25
    # the run's dataset became the current one
    assert _dataset(_go(at, "pages/datasets.py")) == "demo-qa"
    # another dataset picked: the run pages open that dataset's newest run
    at.sidebar.selectbox(key="dataset").select("demo-sql").run()
    assert _run(_go(at, "pages/query.py"), "query-run") == sql_bm25
    at.sidebar.selectbox(key="query-run").select(qa_tfidf).run()
    assert _run(_go(at, "pages/failures.py"), "failures-run") == qa_tfidf
    assert _dataset(_go(at, "pages/run.py")) == "demo-qa"
