"""Overview: the leaderboard in the layout of TARGET's Table 2 and recall@k curves as in
its Figure 2, over the stored runs; filter by dataset and task."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from pages._ui import jobs, resources, shell, slices, url
from target_core.analysis.paper import PAPER_DATASETS
from target_core.analysis.significance import VsBest
from target_core.engine.reproduce import launch_missing, stored_reproduction
from target_core.engine.store import RunRecord
from target_core.errors import TargetError
from target_core.views.overview import (
    complete_runs,
    curves_view,
    failed_runs_note,
    leaderboard_significance_ids,
    leaderboard_view,
    overview_filters,
    row_choices,
    select_runs,
    significance_of,
    slice_view,
)
from target_core.views.reproduce import (
    REPRODUCTION_FORMATS,
    corpus_note,
    default_paper,
    reproduction_curves,
    reproduction_table,
)


@st.cache_data(show_spinner="Testing against the best runs…", max_entries=16)
def _vs_best(workspace: str, run_ids: tuple[str, ...]) -> dict[str, VsBest]:
    """Keyed on the leaderboard's run ids: complete runs never change."""
    return significance_of(resources.store(), run_ids)


def vs_best(runs: Sequence[RunRecord]) -> dict[str, VsBest]:
    return _vs_best(str(resources.settings().workspace), leaderboard_significance_ids(runs))


shell.frame()
NO_GENERATOR = "none (retrieval only)"


def reproduction() -> None:
    """TARGET's Table 2 baselines on one of our datasets, beside the paper's figures."""
    cols = st.columns(4)
    name = url.url_selectbox("Dataset", resources.dataset_names(), param="dataset",
                             key="repro-dataset", where=cols[0], kind="dataset",
                             stick="dataset")
    try:
        dataset = resources.load_by_name(name)
    except TargetError as exc:
        st.error(str(exc))
        return
    papers = list(PAPER_DATASETS)
    paper = url.url_selectbox("Compared with the paper's", papers, param="paper",
                              key=f"repro-paper-{name}", where=cols[1],
                              default=default_paper(dataset.task), among="the paper's datasets",
                              follow=False)  # the paper belongs to the dataset chosen
    chosen = cols[2].selectbox("Generator", [NO_GENERATOR, "heuristic", "openai"],
                               key="repro-generator", accept_new_options=True,
                               help="Answers every query too: the downstream columns and "
                               "the No context row. heuristic is the offline baseline.")
    limit = int(cols[3].number_input("Queries (0 = all)", 0, len(dataset.queries), 0,
                                     key="repro-limit"))
    ours = st.toggle("Our stronger settings too", key="repro-ours",
                     help="Adds rows of our own settings beside TARGET's: bm25 and tfidf "
                     "over every cell, embeddings with the page and section titles.")
    generator = None if chosen == NO_GENERATOR else chosen
    options = {"generator": generator, "limit": limit or None, "ours": ours}
    done, missing = stored_reproduction(store, dataset, **options)
    if missing and st.button(f"Run the {len(missing)} missing baseline(s)", type="primary",
                             key="repro-run"):
        try:  # one job per baseline: they work on in worker processes
            launch_missing(resources.settings(), dataset, **options)
        except TargetError as exc:
            st.error(str(exc))
            return
        st.rerun()  # the sidebar, drawn before the click, then lists the new jobs
    jobs.job_list(dataset.name, key="repro")  # the page redraws when they end
    if missing:
        st.caption("Not run yet: " + ", ".join(b.method for b in missing))
    st.caption(corpus_note(dataset.name, len(dataset.tables), limit or len(dataset.queries),
                           paper))
    if not done:
        st.info("None of the paper's baselines has run on this dataset with these settings.")
        return
    st.dataframe(reproduction_table(done, paper), hide_index=True, width="stretch",
                 column_config={
                     **{c: st.column_config.TextColumn(alignment="right")
                        for c in REPRODUCTION_FORMATS},
                     "note": st.column_config.TextColumn(width="large"),
                     "open": st.column_config.LinkColumn("open", display_text="queries")})
    st.caption("R: TARGET's Table 2 recall (R@10; database-level R@1 for text-to-SQL); ms: "
               "mean retrieval time per query (the paper's seconds × 1000); answers: "
               "sacreBLEU, P/R/F1 or EX (Δ on SB, F1 or EX). The paper's figures are typed "
               "in from its Table 2.")
    st.plotly_chart(reproduction_curves(store, done), width="stretch")
    st.caption("Figure 2 on this dataset: mean recall@k (the mean over queries of each "
               "query's recall, not R@k) of each baseline for k = 1…10. The "
               "paper draws its curve (FeTaQA) without printing its values, so only ours "
               "is shown.")


st.title("Overview")
store = resources.store()
MODES = {"leaderboard": "Leaderboard", "reproduce": "Reproduce TARGET's Table 2"}
mode = url.url_selectbox("Show", list(MODES), param="mode", key="overview-mode",
                         widget="radio", horizontal=True, format_func=MODES.get,
                         label_visibility="collapsed", kind="mode")
if mode == "reproduce":
    reproduction()
    st.stop()
runs = complete_runs(store)
if failed_note := failed_runs_note(store):
    st.warning(failed_note, icon=":material/error:")
if not runs:
    st.info("No complete runs yet. Launch some on the Run page, or with "
            "`python -m target_core run --dataset demo-qa --retriever bm25`.")
    st.page_link("pages/run.py", label="Go to Run", icon=":material/play_arrow:")
    st.stop()

cols = st.columns(2)
filters = overview_filters(runs)
chosen_tasks = cols[1].multiselect("Tasks", filters.tasks, default=filters.tasks,
                                   key="overview-tasks")
in_task = filters.datasets(chosen_tasks)
chosen = cols[0].multiselect("Datasets", in_task, default=in_task, key="overview-datasets")
retrievers, views = row_choices(select_runs(runs, chosen, chosen_tasks))
cols = st.columns(2)
chosen_retrievers = cols[0].multiselect(
    "Retrievers", retrievers, default=retrievers, key="overview-retrievers",
    help="The rows shown are the family of the \"vs best\" tests: a row left out "
    "changes no other row's adjusted p.")
chosen_views = cols[1].multiselect("Table views", views, default=views,
                                   key="overview-views")
selected = select_runs(runs, chosen, chosen_tasks, chosen_retrievers, chosen_views)
slices.check_link(chosen, "the chosen datasets")  # a bad ?slice= stops here

board = leaderboard_view(store, selected, vs_best)
st.subheader("Leaderboard")
st.caption("Rows: retriever (→ generator) and table view (and k, for runs of one dataset "
           "that differ only in k). R@c is TARGET's recall, as everywhere here (gold tables "
           "found within c / gold tables, over all queries): R@10 for QA and fact "
           "verification; for text-to-SQL "
           "R@1 is database-level as in TARGET's Table 2 (the top table's database is the "
           "gold database) and \"R@1 tables\" the table-level recall@1; ms = mean retrieval time "
           "per query; SB = corpus sacreBLEU, P/R/F1 = weighted fact-verification scores, "
           "EX = execution accuracy, VES = BIRD's valid efficiency score; for QA, GTR's answer "
           "metrics: R-1/R-2/R-L P = ROUGE-1/2/L precision, SAS (MiniLM cosine) = semantic "
           "answer similarity by MiniLM embeddings (SAS proper uses a cross-encoder), "
           "truthful = the newest judge's rating, reply tokens (o200k) and response ms per "
           "answer. Oracle and no-context runs have no retrieval columns: "
           "their generator did not read the retrieved tables. \"heuristic\" is the offline "
           "baseline generator (no model). Best of each column in bold. "
           "The newest complete run of each configuration counts. \"vs best\": each "
           "row's per-query recall against the best row of its column on the same "
           "queries (exact McNemar test when every per-query recall is 0 or 1, else a "
           "paired randomization test), Holm-adjusted over the rows shown for that dataset "
           "(choose them with the filters above; runs not shown never count); "
           "\"≠ best\" means Holm p < 0.05, \"n.s.\" not significant; each marker names its "
           "test (the metric is the column's recall). \"p (Holm)\": the unadjusted p, "
           "then the Holm-adjusted one. The Compare page tests hit@k and MRR "
           "per pair instead, so "
           "its p-values for the same two runs differ."
           + (f" {board.family_note}." if board.family_note else ""))
if board.empty:
    st.info("No runs match the filters.")
else:
    styled = board.shown.style.apply(
        lambda column: ["font-weight: 700" if b else "" for b in board.bold[column.name]])
    st.dataframe(styled, width="stretch")

st.subheader("Recall@k")
if chosen:
    name = st.selectbox("Dataset", chosen, key="overview-curve-dataset")
    curves = curves_view(store, selected, name)
    st.plotly_chart(curves.figure, width="stretch")
    st.caption(f"Mean recall@k (the mean over queries of each query's recall; R@k sums "
               f"over gold tables) for k = 1…top-k of each run (TARGET's Figure 2); the paper "
               f"reports this dataset's task at k = {curves.paper_cutoff}.")
    slices.slice_section(
        name, lambda metadata, field: slice_view(store, selected, name, metadata, field),
        key=f"overview-slice-{name}")
