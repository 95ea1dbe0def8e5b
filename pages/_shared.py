"""UI helpers shared by the pages: settings, the sidebar dataset picker, cached loads.

Only Streamlit glue lives here; every computation is a target_core call.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import streamlit as st

from target_core.config import Settings, load_settings
from target_core.costs import ChatCostEstimate, generation_cost
from target_core.datasets import DatasetInfo, discover, list_datasets, load_dataset, open_lookup
from target_core.engine.store import RunStore
from target_core.errors import TargetError
from target_core.types import VIEW_PRESETS, Dataset, GenerationConfig, TableLookup, TableView
from target_core.views.datasets import DatasetSummary, summarize

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")


def plain(text: object) -> str:
    """Escape Markdown (and Streamlit's :color[] / emoji syntax) so text renders inert."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", "  \n")


def frame() -> None:
    """Make sure the page runs inside app.py's navigation; call first on every page.

    Streamlit falls back to its legacy `pages/` directory mode for a session whose
    first request deep-links into a freshly started server: the page file then runs
    without app.py (no navigation, no shared sidebar) until some session calls
    st.navigation. Switching the flag off and rerunning routes through app.py; pages
    hash by url_path in both modes, so the rerun lands on the same page. That can only
    happen on a session's first run, before any widget was used, so the rerun loses
    nothing; rerouting at most once per session keeps it that way (AppTest resets the
    flag before every run, and a second rerun would swallow a button click).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        if not st.session_state.get("_target_rerouted"):
            st.session_state["_target_rerouted"] = True
            st.rerun()


@st.cache_resource(show_spinner=False)
def settings() -> Settings:
    return load_settings()


def store() -> RunStore:
    """The workspace's run store (a new connection per script run: sqlite connections
    must not cross Streamlit's threads)."""
    return RunStore.in_workspace(settings().workspace)


def _dataset_names() -> list[str]:
    return [name for name, entry in discover(settings()).items() if entry.kind != "hub"]


@st.cache_data(show_spinner="Counting datasets…", ttl=60)
def dataset_infos() -> list[DatasetInfo]:
    """Every local dataset with counts (or the error that stops it loading)."""
    return list_datasets(settings())


def pick_dataset() -> str | None:
    """The sidebar's dataset selector, kept in the URL as ?dataset=NAME."""
    try:
        names = _dataset_names()
    except TargetError as exc:
        st.sidebar.error(str(exc))
        return None
    if not names:
        st.sidebar.warning("No datasets found. Add a folder on TARGET_DATASETS.")
        return None
    return url_selectbox("Dataset", names, param="dataset", key="dataset", where=st.sidebar,
                         default="demo-qa")


@st.cache_resource(show_spinner="Loading dataset…", max_entries=8)
def _load(name: str, workspace: str) -> Dataset:
    return load_dataset(name, settings())


def load_by_name(name: str) -> Dataset:
    """Load a dataset (cached); raises TargetError."""
    return _load(name, str(settings().workspace))


def lookup_by_name(name: str) -> TableLookup:
    """A dataset's queries and tables for showing a few of them: large corpora that
    loaded before are read table by table instead of in full; raises TargetError."""
    return open_lookup(name, settings())


def dataset_or_stop(name: str | None) -> Dataset:
    """Load the dataset, or show the error and stop the page."""
    if name is None:
        st.info("Pick a dataset in the sidebar.")
        st.stop()
    try:
        return load_by_name(name)
    except TargetError as exc:
        st.error(f"Cannot load dataset '{name}': {exc}")
        st.stop()


@st.cache_data(show_spinner="Measuring tables…", max_entries=32)
def _summary(_dataset: Dataset, fingerprint: str, view: dict[str, object]) -> DatasetSummary:
    return summarize(_dataset, TableView.from_dict(view))


def summary(dataset: Dataset, view: TableView) -> DatasetSummary:
    """Per-table sizes under `view`, cached per (dataset fingerprint, view)."""
    return _summary(dataset, dataset.fingerprint, view.to_dict())


@st.cache_data(show_spinner="Estimating tokens…", max_entries=32)
def _chat_estimate(_dataset: Dataset, fingerprint: str, generation: dict[str, object],
                   top_k: int, n_queries: int, model: str) -> ChatCostEstimate:
    return generation_cost(_dataset, GenerationConfig.from_dict(generation), top_k=top_k,
                           n_queries=n_queries, model=model)


def chat_estimate(dataset: Dataset, generation: GenerationConfig, *, top_k: int,
                  n_queries: int, model: str) -> ChatCostEstimate:
    """The generation cost estimate, cached: it counts the tokens of every table."""
    return _chat_estimate(dataset, dataset.fingerprint, generation.to_dict(), top_k,
                          n_queries, model)


def grid_height(n_rows: int, max_rows: int = 10) -> int:
    """Pixel height for a dataframe showing up to `max_rows` rows without empty filler."""
    return 38 + 35 * max(1, min(n_rows, max_rows))


def view_picker(key: str, default: str = "default") -> TableView:
    """Widgets for a TableView: a preset, then adjustable title, rows and format."""
    presets = list(VIEW_PRESETS)
    preset = st.selectbox("Table view preset", presets, index=presets.index(default),
                          key=f"{key}-preset",
                          help="How a table becomes text for retrievers and prompts.")
    base = VIEW_PRESETS[preset]
    cols = st.columns(5)
    title = cols[0].toggle("Page title", base.title, key=f"{key}-{preset}-title")
    section = cols[1].toggle("Section title", base.section_title, key=f"{key}-{preset}-section")
    table_id = cols[2].toggle("Table id", base.table_id, key=f"{key}-{preset}-tid")
    modes = ["all rows", "first N rows", "header only"]
    mode_index = 0 if base.rows is None else (2 if base.rows == 0 else 1)
    mode = cols[3].selectbox("Rows", modes, index=mode_index, key=f"{key}-{preset}-rows")
    fmt = cols[4].selectbox("Format", ["markdown", "csv", "json"],
                            index=["markdown", "csv", "json"].index(base.format),
                            key=f"{key}-{preset}-format")
    rows: int | None = None if mode == "all rows" else 0
    if mode == "first N rows":
        rows = int(st.number_input("N rows", min_value=1, max_value=100_000,
                                   value=base.rows or 20, key=f"{key}-{preset}-n"))
    return TableView(title=title, section_title=section, table_id=table_id, rows=rows,
                     format=fmt)


def url_selectbox(label: str, options: list, *, param: str, key: str,
                  where: object = None, default: object = None, **kwargs: object) -> object:
    """A selectbox kept in the URL as ?param=VALUE.

    The URL wins on a session's first visit and whenever it changed since this widget
    last wrote it (a link, the back button); otherwise the widget keeps its own state.
    Putting the URL value in the widget key instead would make a new widget on every
    change and lose every second choice.
    """
    by_text = {str(o): o for o in options}
    url = st.query_params.get(param)
    echoed = f"_url-{key}"
    if (url is not None and url != st.session_state.get(echoed) and url in by_text) \
            or st.session_state.get(key) not in options:
        fallback = default if default in options else options[0]
        st.session_state[key] = by_text.get(url, fallback) if url is not None else fallback
    value = (where or st).selectbox(label, options, key=key, **kwargs)
    st.query_params[param] = str(value)
    st.session_state[echoed] = str(value)
    return value


def pick_run(runs: list, key: str) -> str:
    """The sidebar's run selector over `runs` (RunRecords), kept in the URL as ?run=ID."""
    labels = {r.run_id: f"{r.run_id} · {r.config.dataset} · {r.config.label} · "
              f"{r.config.view.label} · k={r.config.top_k}" for r in runs}
    return url_selectbox("Run", list(labels), param="run", key=key, where=st.sidebar,
                         format_func=labels.get)


def query_url(run_id: str, query_id: str) -> str:
    """The Query page's link to one query of one run (relative to the app's root)."""
    return "query?" + urlencode({"run": run_id, "query": query_id})
