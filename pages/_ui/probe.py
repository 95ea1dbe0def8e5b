"""The Query page's "What if?" section: edit the query or change the table view, then see
every stored retriever's rank of each gold table (analysis/probe.py), and save the probe
as a note on the query (engine/notes.py). Widgets -> one target_core call -> render."""

from __future__ import annotations

import streamlit as st

from pages._ui import resources
from pages._ui.text import plain
from target_core.actions.query import probe, save_note
from target_core.errors import TargetError
from target_core.read_models.probe import (
    VIEW_CHANGES,
    Probe,
    note_text,
    notes,
    notes_frame,
    probe_caption,
    probe_frame,
)
from target_core.read_models.resources import RunRecord, RunStore


def probe_section(store: RunStore, run: RunRecord, query_id: str, query_text: str) -> None:
    """The section, after "Why this ranking?"."""
    st.subheader("What if?")
    st.caption("Edit the query, or change each run's table view, and see where every "
               "stored retriever of this dataset ranks each gold table, beside the rank "
               "its run stored. Lexical retrievers rank every table; dense ones rank every "
               "table under a view a run embedded, otherwise among the gold and top-k "
               "tables, embedded for the probe.")
    where = f"{run.run_id}-{query_id}"
    with st.form(key=f"probe-form-{where}"):
        text = st.text_input("Query text", value=query_text, key=f"probe-text-{where}")
        cols = st.columns([2, 1])
        change = cols[0].selectbox("Table view", VIEW_CHANGES, key=f"probe-view-{where}",
                                   help="Each run's own view, changed this way.")
        rows = cols[1].number_input("N (first N rows)", min_value=1, max_value=10_000,
                                    value=5, key=f"probe-rows-{where}")
        asked = st.form_submit_button("Probe")
    if asked:
        try:
            with st.spinner("Re-ranking with every stored retriever…"):
                dataset = resources.load_by_name(run.config.dataset)
                st.session_state[f"probe-result-{where}"] = probe(
                    store, dataset, resources.settings(), query_id, text, change, int(rows))
        except TargetError as exc:
            st.error(f"The probe failed: {exc}")
    result: Probe | None = st.session_state.get(f"probe-result-{where}")
    if result is not None:
        st.caption(plain(probe_caption(result)))
        st.dataframe(probe_frame(result), hide_index=True, width="stretch",
                     column_config={"note": st.column_config.TextColumn(width="medium")})
        with st.form(key=f"probe-note-{where}"):
            note = st.text_area("Note", value=note_text(result), key=f"probe-note-text-{where}")
            if st.form_submit_button("Save as a note on this query"):
                try:
                    save_note(store, run.config.dataset, query_id, note, result.to_dict())
                    st.success("Saved: it shows here and in the Failures page's drill-down.")
                except TargetError as exc:
                    st.error(str(exc))
    saved = notes(store, run.config.dataset, query_id)
    if saved:
        st.markdown("**Notes on this query**")
        st.dataframe(notes_frame(saved)[["saved", "note"]], hide_index=True, width="stretch")
