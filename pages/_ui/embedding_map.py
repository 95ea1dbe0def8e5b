"""The embedding map section of the Query page (one question) and of the Failures page
(one failure category): the run's tables projected to 2-D with the marked points. The section
opens on a toggle (it loads the whole dataset); a map already on disk is then drawn at
once, otherwise a button computes it (seconds on the demo
data, 80 s for t-SNE at 10,000 tables), since the first projection should not hold up
every page view (benchmarks/embedding_map.py). Widgets -> one
target_core.read_models.embedding_map call -> render."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from pages._ui import resources
from target_core.errors import TargetError
from target_core.read_models.embedding_map import (
    BORROWED_EMBEDDER,
    METHODS,
    FailureReport,
    MapView,
    NoEmbeddingsError,
    borrowed_note,
    can_borrow,
    category_map_view,
    map_is_cached,
    query_map_view,
    with_distractors,
)
from target_core.read_models.resources import RunRecord
from target_core.types import Dataset, TableLookup

LABELS = {"tsne": "t-SNE", "pca": "PCA"}


@st.cache_data(show_spinner="Projecting the run's vectors…", max_entries=32)
def _query_map(run_id: str, query_id: str, method: str, borrow: bool, workspace: str
               ) -> MapView:
    dataset, lookup = _inputs(run_id)
    return query_map_view(resources.store(), dataset, lookup, resources.settings(), run_id,
                          query_id, method=method, borrow=borrow)


@st.cache_data(show_spinner="Projecting the run's vectors…", max_entries=32)
def _category_map(run_id: str, k: int, category: str, method: str, borrow: bool,
                  workspace: str, _report: FailureReport) -> MapView:
    dataset, lookup = _inputs(run_id)
    return category_map_view(resources.store(), dataset, lookup, resources.settings(),
                             _report, category, method=method, borrow=borrow)


def _inputs(run_id: str) -> tuple[Dataset, TableLookup]:
    """The run's dataset and, for titles, the same with a haystack run's distractors."""
    run = resources.store().get_run(run_id)
    dataset = resources.load_by_name(run.config.dataset)
    return dataset, with_distractors(dataset, run.config.haystack, resources.settings())


def _ready(run: RunRecord, key: str) -> tuple[str, bool] | None:
    """(method, borrow) when the map can be drawn now (cached, or asked for); None after
    saying why not. A lexical run (no vectors of its own) is offered dense:minilm's
    vectors of the same texts."""
    method = st.radio("Projection", list(METHODS), horizontal=True, key=f"map-method-{key}",
                      format_func=LABELS.get, help=" · ".join(
                          f"{LABELS[m]}: {text}" for m, text in METHODS.items()))
    settings = resources.settings()
    borrow = False
    try:
        dataset = resources.load_by_name(run.config.dataset)
        try:
            cached = map_is_cached(resources.store(), dataset, settings, run.run_id,
                                   method=method)
        except NoEmbeddingsError as exc:
            if not can_borrow(run):
                st.info(str(exc).capitalize() + ".")
                return None
            # the map below is drawn from another run's vectors: say whose, not "none"
            st.info(borrowed_note(run.config.retriever))
            borrow = True
            cached = map_is_cached(resources.store(), dataset, settings, run.run_id,
                                   method=method, borrow=True)
    except TargetError as exc:
        st.warning(f"No map: {exc}")
        return None
    asked = f"map-asked-{run.run_id}-{method}-{borrow}"
    if not cached and not st.session_state.get(asked):
        st.caption("The map is computed once per run's vectors and questions, then cached "
                   "in the workspace: t-SNE takes about 8 s on demo-qa and 80 s at 10,000 "
                   "tables on 2 cores, PCA about 2 s (mostly embedding the questions).")
        label = (f"Map it with dense:{BORROWED_EMBEDDER} vectors of the same texts "
                 f"({LABELS[method]})" if borrow else f"Compute the {LABELS[method]} map")
        if st.button(label, key=f"map-go-{key}"):
            st.session_state[asked] = True
            st.rerun()  # drawn again without the button and its note, with the map
        return None
    return method, borrow


def _render(make: Callable[[], MapView]) -> None:
    try:
        view = make()
    except TargetError as exc:
        st.warning(f"No map: {exc}")
        return
    st.plotly_chart(view.figure, width="stretch")
    st.caption(view.caption)


def _shown(key: str, label: str) -> bool:
    """Whether the user asked for the map. Off until then, since drawing it needs the
    whole dataset loaded (the pages otherwise read tables through the corpus index); the
    choice stays on for the session as the user moves between questions."""
    return st.toggle(label, key=f"map-on-{key}")


def query_map_section(run: RunRecord, query_id: str) -> None:
    """The map of one question of `run`: its gold and retrieved tables."""
    if not _shown("query", "Embedding map: this question, its gold and retrieved tables"):
        return
    with st.container(border=True):
        if (ready := _ready(run, "query")) is not None:
            method, borrow = ready
            _render(lambda: _query_map(run.run_id, query_id, method, borrow,
                                       str(resources.settings().workspace)))


def category_map_section(run: RunRecord, report: FailureReport, category: str) -> None:
    """The map of a failure category: its questions and their gold tables."""
    if not _shown("failures", f"Embedding map: where the {category} questions and their "
                  "gold tables fall"):
        return
    with st.container(border=True):
        if (ready := _ready(run, "failures")) is not None:
            method, borrow = ready
            _render(lambda: _category_map(run.run_id, report.k, category, method, borrow,
                                          str(resources.settings().workspace), report))
