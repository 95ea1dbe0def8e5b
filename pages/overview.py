"""Overview: the leaderboard in the layout of TARGET's Table 2 and recall@k curves as in
its Figure 2, over the stored runs, one dataset at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from pages._ui import jobs, resources, shell, slices, url
from pages._ui.text import code, plain
from target_core.actions.experiments import launch_baselines
from target_core.errors import TargetError
from target_core.read_models.cells import text_widths
from target_core.read_models.overview import (
    VsBest,
    complete_runs,
    curves_view,
    dataset_table,
    failed_runs_note,
    fold_variants,
    leaderboard_significance_ids,
    leaderboard_view,
    newest_dataset,
    row_choices,
    select_runs,
    significance_of,
    slice_view,
    split_answer_extras,
)
from target_core.read_models.reproduce import (
    PAPER_DATASETS,
    REPRODUCTION_FORMATS,
    corpus_note,
    default_dataset,
    default_paper,
    reproduction_curves,
    reproduction_table,
    stored_reproduction,
)
from target_core.read_models.resources import RunRecord


@st.cache_data(show_spinner="Testing against the best runs…", max_entries=16)
def _vs_best(workspace: str, run_ids: tuple[str, ...]) -> dict[str, VsBest]:
    """Keyed on the leaderboard's run ids: complete runs never change."""
    return significance_of(resources.store(), run_ids)


def leaderboard_columns(widths: dict[str, int]) -> dict[str, Any]:
    """Widths that show every label and verdict whole (read_models.cells.text_widths)."""
    width = widths.__getitem__
    config: dict[str, Any] = {
        c: st.column_config.TextColumn(c, width=width(c)) for c in ("retriever", "view")}
    for column in widths:
        if column.endswith(" vs best"):
            config[column] = st.column_config.TextColumn(
                column, width=width(column), help="Against the best row of the column: "
                "\"≠ best\" (Holm p < 0.05) or \"n.s.\"; the next column has the p-values "
                "and the test.")
        elif column.endswith(" p (Holm)"):
            config[column] = st.column_config.TextColumn(
                column, width=width(column), help="The unadjusted p (which no other row "
                "changes), then the Holm-adjusted p the verdict uses, and the test: "
                "McNemar's exact test, or perm. (the paired randomization test, a "
                "permutation test).")
    return config


def vs_best(runs: Sequence[RunRecord]) -> dict[str, VsBest]:
    return _vs_best(str(resources.settings().workspace), leaderboard_significance_ids(runs))


shell.frame()
NO_GENERATOR = "none (retrieval only)"


def reproduction() -> None:
    """TARGET's Table 2 baselines on one of our datasets, beside the paper's figures."""
    cols = st.columns(4)
    name = url.url_selectbox("Dataset", resources.dataset_names(), param="dataset",
                             key="repro-dataset", where=cols[0], kind="dataset",
                             stick="dataset",
                             default=default_dataset(resources.dataset_infos()))
    try:
        dataset = resources.lookup_by_name(name)
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
    options: dict[str, Any] = {"generator": generator, "limit": limit or None, "ours": ours}
    done, missing = stored_reproduction(store, dataset, **options)
    if missing and st.button(f"Run the {len(missing)} missing baseline(s)", type="primary",
                             key="repro-run"):
        try:  # one job per baseline: they work on in worker processes
            launch_baselines(resources.settings(), dataset, **options)
        except TargetError as exc:
            st.error(str(exc))
            return
        st.rerun()  # the sidebar, drawn before the click, then lists the new jobs
    jobs.job_list(dataset.name, key="repro")  # the page redraws when they end
    if missing:
        st.caption("Not run yet: " + ", ".join(b.method for b in missing))
    st.caption(corpus_note(dataset.name, dataset.n_tables, limit or len(dataset.queries),
                           paper))
    if not done:
        st.info("None of the paper's baselines has run on this dataset with these settings.")
        return
    table = reproduction_table(done, paper)
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={
                     **{c: st.column_config.TextColumn(alignment="right")
                        for c in REPRODUCTION_FORMATS},
                     "note": None, "follows": None,  # sentences: listed below, whole
                     "run": None,  # the link shows it
                     "open": st.column_config.LinkColumn(
                         "run", display_text=r"run=([^&]+)", help="The run's queries")})
    st.caption("R: TARGET's Table 2 recall (R@10; database-level R@1 for text-to-SQL); ms: "
               "mean retrieval time per query (the paper's seconds × 1000); answers: "
               "sacreBLEU, P/R/F1 or EX (Δ on SB, F1 or EX). The paper's figures are typed "
               "in from its Table 2.")
    if notes := [(m, n) for m, n in zip(table["method"], table["note"], strict=True) if n]:
        st.markdown("\n".join(f"- **{plain(method)}**: {plain(note)}" for method, note in notes))
    with st.expander("The code each row follows"):
        st.markdown("\n".join(f"- **{plain(method)}**: {code(follows)}"
                              for method, follows in zip(table["method"], table["follows"],
                                                         strict=True)))
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
jobs.under_way()  # runs queued or running: how many, linked to their Run pages
if failed_note := failed_runs_note(store):
    st.warning(failed_note, icon=":material/error:")
if not runs:
    st.info("No complete runs yet. Launch some on the Run page, or with "
            "`python -m target_core run --dataset demo-qa --retriever bm25`.")
    st.page_link("pages/run.py", label="Go to Run", icon=":material/play_arrow:")
    st.stop()

datasets = sorted({r.config.dataset for r in runs})
cols = st.columns([2, 4, 2])
name = str(url.url_selectbox("Dataset", datasets, param="dataset", key="overview-dataset",
                         where=cols[0], default=newest_dataset(runs), kind="dataset",
                         among="the datasets with complete runs", stick="overview-dataset",
                         help="One dataset at a time; it opens on the newest run's."))
every_variant = cols[2].toggle(
    "Show every view variant", key="overview-variants",
    help="Ablation (table view) and haystack (distractor) runs are folded under their "
    "base run (default view, no distractors) unless shown here.")
of_dataset = [r for r in runs if r.config.dataset == name]
folding = fold_variants(of_dataset)
shown_runs = of_dataset if every_variant else folding.runs
retrievers, views = row_choices(shown_runs)
chosen_retrievers = cols[1].multiselect(
    "Retrievers", retrievers, default=retrievers,
    key=f"overview-retrievers-{name}-{every_variant}",
    help="The rows shown are the family of the \"vs best\" tests: a row left out "
    "changes no other row's adjusted p.")
chosen_views = (views if len(views) < 2 else cols[2].multiselect(
    "Table views", views, default=views, key=f"overview-views-{name}-{every_variant}"))
selected = select_runs(shown_runs, [name], [r.task for r in of_dataset[:1]],
                       chosen_retrievers, chosen_views)
slices.check_link([name], "the chosen dataset")  # a bad ?slice= stops here

board = leaderboard_view(store, selected, vs_best)
table, bold = dataset_table(board, name, None if every_variant else folding.folded)
st.subheader("Leaderboard")
folded_note = ("" if every_variant or not folding.hidden else
               f" {folding.hidden} view variant(s) folded under their base row.")
st.caption("Best of each column in bold; \"vs best\" tests each row's recall against the "
           "best row's on the same queries." + (f" {board.family_note}." if board.family_note
                                               else "") + folded_note)
with st.expander("How to read this table"):
    st.markdown(
        "Rows: retriever (→ generator) and table view (and k, for runs that differ only in "
        "k); \"(+N variants)\" counts the ablation and haystack runs folded under a base "
        "row (\"Show every view variant\" lists them). R@c is TARGET's recall, as "
        "everywhere here (gold tables found within c / gold tables, over all queries): "
        "R@10 for QA and fact verification; for text-to-SQL R@1 is database-level as in "
        "TARGET's Table 2 (the top table's database is the gold database) and \"R@1 "
        "tables\" the table-level recall@1; ms = mean retrieval time per query; SB = "
        "corpus sacreBLEU, P/R/F1 = weighted fact-verification scores, EX = execution "
        "accuracy, VES = BIRD's valid efficiency score; for QA, GTR's answer metrics: "
        "R-1/R-2/R-L P = ROUGE-1/2/L precision, SAS (MiniLM cosine) = semantic answer "
        "similarity by MiniLM embeddings (SAS proper uses a cross-encoder), truthful = the "
        "newest judge's rating, reply tokens (o200k) and response ms per answer. Oracle "
        "and no-context runs have no retrieval columns: their generator did not read the "
        "retrieved tables. \"heuristic\" is the offline baseline generator (no model). "
        "The newest complete run of each configuration counts.\n\n"
        "\"vs best\": each row's per-query recall against the best row of its column on "
        "the same queries (exact McNemar test when every per-query recall is 0 or 1, else "
        "a paired randomization test), Holm-adjusted over the rows shown (choose them with "
        "the filters above; runs not shown never count); \"≠ best\" means Holm p < 0.05, "
        "\"n.s.\" not significant. \"p (Holm)\": the unadjusted p, then the adjusted one, "
        "and the test (perm.: the paired randomization test, a permutation test). The "
        "Compare page tests hit@k and MRR per pair instead, so its "
        "p-values for the same two runs differ.")
if table.empty:
    st.info("No runs match the filters.")
else:
    (table, bold), (answers, answers_bold) = split_answer_extras(table, bold)
    for frame, mask in ((table, bold), (answers, answers_bold)):
        if frame.empty:
            continue
        if frame is answers:
            st.caption("GTR's answer metrics of the rows with a generator (in bold the "
                       "best; reply tokens are not ranked).")
        styled = frame.style.apply(
            lambda column, mask=mask: ["font-weight: 700" if b else ""
                                       for b in mask[column.name]])
        st.dataframe(styled, hide_index=True, width="stretch",
                     column_config=leaderboard_columns(text_widths(frame, bold=mask)))

st.subheader("Recall@k")
curves = curves_view(store, selected, name)
st.plotly_chart(curves.figure, width="stretch")
st.caption(f"Mean recall@k (the mean over queries of each query's recall; R@k sums "
           f"over gold tables) for k = 1…top-k of each run (TARGET's Figure 2); the paper "
           f"reports this dataset's task at k = {curves.paper_cutoff}.")
slices.slice_section(
    name, lambda metadata, field: slice_view(store, selected, name, metadata, field),
    key=f"overview-slice-{name}")
