"""Overview: the leaderboard in the layout of TARGET's Table 2 and recall@k curves as in
its Figure 2, over the stored runs; filter by dataset and task."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages import _shared as ui
from target_core.analysis.significance import VsBest, significant_vs_best
from target_core.views.overview import (
    PAPER_CUTOFF,
    Leaderboard,
    display_table,
    distinct_retrievals,
    latest_complete,
    leaderboard,
    recall_curves,
)
from target_core.views.plots import recall_at_k_curves


@st.cache_data(show_spinner="Testing against the best runs…", max_entries=16)
def vs_best(workspace: str, run_ids: tuple[str, ...]) -> dict[str, VsBest]:
    """Keyed on the leaderboard's run ids: complete runs never change."""
    store = ui.store()
    return significant_vs_best(store, [store.get_run(r) for r in run_ids])


def with_markers(board: Leaderboard, shown: pd.DataFrame, tested: dict[str, VsBest]
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The display table with a "vs best" column after each recall column, and the
    bold mask widened to match."""
    shown, best = shown.copy(), board.best.copy()
    for dataset, metric in [c for c in board.table.columns if c[1].startswith("R@")]:
        cells = [tested[rid].marker if (rid := board.runs.get((dataset, *row))) in tested
                 else "–" for row in board.table.index]
        if all(c == "–" for c in cells):
            continue
        column = (dataset, f"{metric} vs best")
        at = list(shown.columns).index((dataset, metric)) + 1
        shown.insert(at, column, cells)
        best.insert(at, column, False)
    return shown, best


ui.frame()
st.title("Overview")
store = ui.store()
runs = [r for r in store.list_runs() if r.status == "complete"]
if not runs:
    st.info("No complete runs yet. Launch some on the Run page, or with "
            "`python -m target_core run --dataset demo-qa --retriever bm25`.")
    st.page_link("pages/run.py", label="Go to Run", icon=":material/play_arrow:")
    st.stop()

cols = st.columns(2)
datasets = sorted({r.config.dataset for r in runs})
tasks = sorted({r.task for r in runs})
chosen_tasks = cols[1].multiselect("Tasks", tasks, default=tasks, key="overview-tasks")
in_task = sorted({r.config.dataset for r in runs if r.task in chosen_tasks})
chosen = cols[0].multiselect("Datasets", in_task, default=in_task, key="overview-datasets")
selected = [r for r in runs if r.config.dataset in chosen and r.task in chosen_tasks]

board = leaderboard(selected)
st.subheader("Leaderboard")
st.caption("Rows: retriever (→ generator) and table view (and k, for runs of one dataset "
           "that differ only in k). R@10 for QA and fact "
           "verification, R@1 for text-to-SQL (TARGET's Table 2); ms = mean retrieval time "
           "per query; SB = corpus sacreBLEU, P/R/F1 = weighted fact-verification scores, "
           "EX = execution accuracy. Oracle and no-context runs have no retrieval columns: "
           "their generator did not read the retrieved tables. \"heuristic\" is the offline "
           "baseline generator (no model). Best of each column in bold. "
           "The newest complete run of each configuration counts. \"vs best\": each "
           "row's per-query recall against the best row of its column on the same "
           "queries (exact McNemar test when every per-query recall is 0 or 1, else a "
           "paired randomization test), Holm-adjusted over the column's rows; "
           "\"≠ best\" means p < 0.05, \"n.s.\" not significant.")
if board.table.empty:
    st.info("No runs match the filters.")
else:
    rows = tuple(sorted(r.run_id for r in latest_complete(selected)))
    shown, bold = with_markers(board, display_table(board),
                               vs_best(str(ui.settings().workspace), rows))
    styled = shown.style.apply(
        lambda column: ["font-weight: 700" if b else "" for b in bold[column.name]])
    st.dataframe(styled, width="stretch")

st.subheader("Recall@k")
if chosen:
    name = st.selectbox("Dataset", chosen, key="overview-curve-dataset")
    latest = [r for r in latest_complete(selected) if r.config.dataset == name]
    curves = recall_curves(store, distinct_retrievals(latest))
    st.plotly_chart(recall_at_k_curves(curves), width="stretch")
    task = latest[0].task if latest else "qa"
    st.caption(f"Macro recall@k for k = 1…top-k of each run (TARGET's Figure 2); the paper "
               f"reports this dataset's task at k = {PAPER_CUTOFF.get(task, 10)}.")
