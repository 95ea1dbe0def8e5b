"""The Overview's tables fit a 1,500-pixel screen (issue 28, item 4): one dataset at a
time, view variants folded under their base run, short verdict cells, a short caption."""

from __future__ import annotations

from pathlib import Path

import pytest

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.read_models.overview import (
    dataset_table,
    fold_variants,
    leaderboard_view,
    newest_dataset,
)
from target_core.run_config import RunConfig
from target_core.table_view import TableView

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bm25 and tfidf on demo-qa with an ablation variant and a haystack run of bm25,
    then bm25 on demo-sql: the newest run."""
    path = tmp_path_factory.mktemp("overview") / "ws"
    settings = load_settings(path)
    for config in (RunConfig("demo-qa", "bm25", limit=12),
                   RunConfig("demo-qa", "tfidf", limit=12),
                   RunConfig("demo-qa", "bm25", TableView(rows=0), limit=12),
                   RunConfig("demo-qa", "bm25", limit=12, haystack="5@demo-fact"),
                   RunConfig("demo-qa", "tfidf", TableView(rows=0), limit=12),
                   RunConfig("demo-sql", "bm25", limit=12)):
        run_retrieval(config, settings=settings)
    return path


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, workspace: Path):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TARGET_WORKSPACE", str(workspace))
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    st.cache_data.clear()

    def start(**params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
        at.switch_page("pages/overview.py")
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, at.exception
        return at

    return start


def test_variants_fold_under_their_base_run(workspace: Path) -> None:
    store = RunStore.in_workspace(workspace)
    runs = [r for r in store.list_runs() if r.config.dataset == "demo-qa"]
    folding = fold_variants(runs)
    # bm25's header-only and haystack runs fold under bm25; tfidf's header-only too
    assert sorted(r.config.label for r in folding.runs) == ["bm25", "tfidf"]
    assert folding.folded == {"bm25": 2, "tfidf": 1} and folding.hidden == 3
    # a variant without its base run is the only row of its configuration: it stays
    alone = [r for r in runs if r.config.retriever == "tfidf"
             and r.config.view == TableView(rows=0)]
    assert fold_variants(alone).runs == alone and not fold_variants(alone).folded
    assert newest_dataset(store.list_runs()) == "demo-sql"

    shown, bold = dataset_table(leaderboard_view(store, folding.runs), "demo-qa",
                                folding.folded)
    assert list(shown.columns[:3]) == ["retriever", "view", "R@10"]
    assert list(shown["view"]) == ["default (+2 variants)", "default (+1 variants)"]
    assert shown.shape == bold.shape and not bold["retriever"].any()
    assert set(shown["R@10 vs best"]) <= {"best", "≠ best", "n.s."}
    assert all(cell == "–" or cell.endswith(("McNemar", "perm."))
               for cell in shown["R@10 p (Holm)"])


def test_the_overview_shows_one_dataset_the_newest_runs_first(app) -> None:
    at = app()
    picker = at.selectbox(key="overview-dataset")
    assert picker.value == "demo-sql" and picker.options == ["demo-qa", "demo-sql"]
    (board,) = at.dataframe[:1]
    assert "R@1" in board.value.columns and "R@10" not in board.value.columns
    assert set(board.value["retriever"]) == {"bm25"}


def test_a_dataset_link_restores_it_and_the_session_remembers_it(app) -> None:
    at = app(dataset="demo-qa")
    assert at.selectbox(key="overview-dataset").value == "demo-qa"
    assert "R@10" in at.dataframe[0].value.columns
    at.switch_page("pages/run.py").run()
    at.query_params.clear()  # the sidebar's page links carry no parameters
    at.switch_page("pages/overview.py").run()
    assert not at.exception
    assert at.selectbox(key="overview-dataset").value == "demo-qa"


def test_a_bad_dataset_link_is_named(app) -> None:
    at = app(dataset="demo-q")
    (error,) = at.error
    message = error.value.replace("\\", "")  # markdown escapes
    assert "Unknown dataset 'demo-q'" in message and "(?dataset=demo-q)" in message
    assert "among the datasets with complete runs" in message
    assert not at.dataframe


def test_variants_are_folded_until_asked_for(app) -> None:
    at = app(dataset="demo-qa")
    board = at.dataframe[0].value
    assert len(board) == 2 and "default (+2 variants)" in set(board["view"])
    assert any("3 view variant(s) folded" in c.value for c in at.caption)
    at.toggle(key="overview-variants").set_value(True).run()
    assert not at.exception
    board = at.dataframe[0].value
    assert len(board) == 5  # bm25 and tfidf, two header-only, one haystack
    assert "bm25 + 5 distractors" in set(board["retriever"])
    assert not any(view.endswith("variants)") for view in board["view"])


def test_the_caption_is_one_short_line_and_the_rest_in_an_expander(app) -> None:
    at = app(dataset="demo-qa")
    caption = next(c.value for c in at.caption if "vs best" in c.value)
    assert len(caption) < 250, caption
    (expander,) = [e for e in at.expander if e.label == "How to read this table"]
    assert "McNemar" in expander.markdown[0].value
