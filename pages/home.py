"""Home: what the tool is for, and every dataset with its counts and a link to browse it."""

from __future__ import annotations

import time

import streamlit as st

from pages._ui import resources, shell
from target_core.actions.runs import demo_suite
from target_core.errors import TargetError
from target_core.read_models.home import datasets_frame

shell.frame()
st.title("TARGET Explorer")
st.markdown(
    "Find out **why table retrieval fails**. Pick a dataset, see what text each table "
    "becomes under a *table view* (title on or off, header only, first N rows, markdown, "
    "CSV or JSON) and what that costs in tokens, and browse the queries with their gold "
    "tables. Datasets follow TARGET's folder format; Spider folders and TARGET's hub "
    "datasets load too.")

st.subheader("Start here")
st.markdown(
    "Run the demo suite: bm25, tfidf, dense:minilm and hybrid on each demo dataset, with "
    "the offline heuristic generator (12 runs, offline, in the background). Then open the "
    "Overview, or the Failures page to see why queries missed their tables.")
cols = st.columns([1, 1, 3])
if cols[0].button("Run the demo suite", type="primary", key="home-demo-suite"):
    try:
        launched = demo_suite(resources.settings(), spawn=False)
    except TargetError as exc:
        st.error(str(exc))
    else:  # run again: the sidebar, drawn before the click, lists the new jobs, then
        # starts their workers (jobs.sidebar)
        st.session_state["home-suite-launched"] = (
            f"{time.strftime('%H:%M:%S')} · {launched}")
        st.rerun()
# the note stays (timed): the page redraws whenever a job ends, and a vanished note is unread
if launched_note := st.session_state.get("home-suite-launched"):
    st.success(launched_note)
cols[1].page_link("pages/overview.py", label="Go to Overview", icon=":material/leaderboard:")

try:
    infos = resources.dataset_infos()
except TargetError as exc:  # e.g. two datasets with one name: say which, fix, reload
    st.error(str(exc))
    st.stop()
st.subheader("Datasets")
st.dataframe(
    datasets_frame(infos), hide_index=True, width="stretch",
    column_config={"browse": st.column_config.LinkColumn("browse", display_text="open"),
                   "error": st.column_config.TextColumn("error", width="medium"),
                   **{c: st.column_config.TextColumn(c, alignment="right")
                      for c in ("tables", "passages", "queries", "databases")}},
)
st.page_link("pages/datasets.py", label="Add your own dataset: a folder on this server or "
             "an uploaded archive (Datasets page, **Add a dataset**)", icon=":material/add:")
st.caption("Folders in the format of docs/data/index.md (TARGET's), BEIR folders, or "
           "`target-explorer datasets add PATH`; folders listed on TARGET_DATASETS "
           "appear too.")
