"""Failures: why a run's queries missed their gold tables (a taxonomy with definitions,
counts, examples and links to each query), and for runs with a generator, whether a
wrong answer came from retrieval or from generation. ?run=RUN_ID&category=NAME&k=K
reopens it."""

from __future__ import annotations

import streamlit as st

from pages._ui import resources, shell, url, widgets
from pages._ui.embedding_map import category_map_section
from pages._ui.text import code, plain
from target_core.errors import TargetError
from target_core.figures.failures import category_bars, rank_quality_bars, tag_heatmap
from target_core.read_models.cells import wrapped_row_height
from target_core.read_models.failures import (
    ALL,
    CATEGORIES,
    aggregates_view,
    attribution_view,
    cases_frame,
    definitions,
    failures_report,
    notes,
    present_categories,
    window_share,
)
from target_core.read_models.probe import notes_by_query
from target_core.read_models.runs import failed_banner, runs_with_results
from target_core.tasks.failure import FAILURE_RULE
from target_core.wording import counted

shell.frame()
st.title("Failures")
store = resources.store()
runs = runs_with_results(store)
if not runs:
    url.missing_runs("run")
    st.info("No runs yet. Launch one on the Run page, or with "
            "`python -m target_core run --dataset demo-qa --retriever bm25 --no-title`.")
    st.stop()

run_id = widgets.pick_run(runs, key="failures-run")
run = store.get_run(run_id)
if (banner := failed_banner(run)) is not None:
    st.error(banner)
url.read_int("k", 0, minimum=1, maximum=run.config.top_k)  # a malformed ?k= stops here
k = url.url_selectbox("k", list(range(1, run.config.top_k + 1)), param="k",
                      key=f"failures-k-{run_id}", where=st.sidebar,
                      default=min(run.config.top_k, 10), kind="k",
                      help=f"Retrieval failure: {FAILURE_RULE}.")

try:
    dataset = resources.lookup_by_name(run.config.dataset)  # a large corpus: its index
    report = failures_report(store, dataset, run_id, k, resources.settings())
except TargetError as exc:
    st.error(str(exc))
    st.stop()
url.read_choice("category", present_categories(report),  # before any of the run shows
                among=f"the categories of this run's failed queries at k = {k}")

st.caption(f"{plain(run.config.label)} on {plain(run.config.dataset)} · view "
           f"{plain(run.config.view.label)} · top-k {run.config.top_k} · run {run_id}")
cols = st.columns(3)
cols[0].metric("Queries", report.n_queries)
cols[1].metric(f"Missed a gold table within k = {k}", report.n_failed,
               help=f"Retrieval failure: {FAILURE_RULE}.")
cols[2].metric("Failure rate", f"{report.n_failed / report.n_queries:.1%}")
for note in report.notes:
    st.info(note)
if not report.cases:
    st.success("Every query has all its gold tables within k.")
    st.stop()


if (share := window_share(report, run)) is not None:  # dense runs: issue 27's figure
    st.caption(f"Evidence beyond the embedding window: {share}.")
st.plotly_chart(category_bars(report), width="stretch")
with st.expander("Definitions", expanded=False):  # whole sentences: a list, not a grid
    st.markdown("\n".join(f"- {code(name)} ({counted(count, 'query')}): "
                          f"{definition}" for name, count, definition in definitions(report)))
heatmap = tag_heatmap(report)
if heatmap is not None:
    st.plotly_chart(heatmap, width="stretch")
    st.caption("The demo datasets tag each query with the failure it was built to "
               "provoke (`failure_mode`): each tag should land in its category.")

st.subheader("What recurs")  # aggregate explanations: missing terms, winner features
recurring = aggregates_view(store, dataset, report)
scope = st.selectbox("Among", [ALL, *present_categories(report)],
                     key=f"failures-scope-{run_id}-{k}",
                     format_func=lambda n: f"{n} ({report.counts.get(n, report.n_failed)})")
halves = st.columns(2)
halves[0].caption("Query terms the gold table's indexed text lacks, by failed queries")
halves[0].dataframe(recurring.terms(scope), hide_index=True, width="stretch",
                    column_config={"share": st.column_config.NumberColumn(format="percent")})
halves[1].caption("What the winner (the best-ranked non-gold table) has, by failed queries")
features = recurring.features(scope)
halves[1].dataframe(features, hide_index=True, width="stretch",
                    column_config={"share": st.column_config.NumberColumn(format="percent"),
                                   "meaning": None})  # whole, below
if not features.empty:
    halves[1].caption(" ".join(f"{code(feature)}: {meaning}" for feature, meaning
                               in zip(features["feature"], features["meaning"], strict=True)))

st.subheader("Drill down")
names = present_categories(report)
category = url.url_selectbox("Category", names, param="category",
                             key=f"failures-cat-{run_id}-{k}",
                             among=f"the categories of this run's failed queries at k = {k}",
                             format_func=lambda n: f"{n} ({report.counts[n]})")
st.caption(plain(CATEGORIES[category]))
cases = cases_frame(report, category)
if query_notes := notes_by_query(notes(store, run.config.dataset)):  # saved probes
    cases["note"] = [query_notes.get(q, "") for q in report.frame(category)["query_id"]]
WRAPPED = {"query": 240, "why": 300, "also in": 160}  # wide text wraps: rows grow to fit
row_px = wrapped_row_height(cases, WRAPPED)
st.dataframe(cases, hide_index=True, width="stretch", row_height=row_px,
             height=widgets.grid_height(len(cases), 12, row_px or 35),
             column_config={
                 "open": st.column_config.LinkColumn("query_id", display_text=r"query=(.+)$",
                                                     help="Open the query in this run"),
                 **{c: st.column_config.TextColumn(width=w) for c, w in WRAPPED.items()},
                 "best gold rank": st.column_config.TextColumn("best rank", alignment="right")})

downloads = st.columns(2)
downloads[0].download_button("Download all failed queries (CSV)",
                             recurring.export.to_csv(index=False).encode(),
                             file_name=f"failures-{run_id}-k{k}.csv", mime="text/csv")
downloads[1].download_button("Download what recurs (CSV)",
                             recurring.frame.to_csv(index=False).encode(),
                             file_name=f"failures-{run_id}-k{k}-aggregates.csv", mime="text/csv")
category_map_section(run, report, category)  # where its questions and golds fall

try:
    attributed = attribution_view(store, run, k)
except TargetError as exc:
    st.subheader("Retrieval or generation?")
    st.warning(str(exc))
    st.stop()
if attributed is None:  # retrieval only
    st.stop()
st.subheader("Retrieval or generation?")
split = attributed.split
if split is not None:
    st.caption(plain(attributed.caption or ""))
    st.dataframe(attributed.table, hide_index=True)
    if attributed.misses is not None:
        st.caption(attributed.misses.note)
    if split.oracle is None:
        st.info("Run the same generator with oracle context (the gold tables) to split the "
                "wrong answers into retrieval- and generation-caused.")
    else:
        o = split.oracle
        cols = st.columns(3)
        cols[0].metric("Retrieval-caused", len(o.retrieval_caused),
                       help="Wrong with the retrieved tables, right with the gold tables.")
        cols[1].metric("Generation-caused", len(o.generation_caused),
                       help="Wrong with the gold tables too.")
        cols[2].metric("Oracle worse", len(o.oracle_worse),
                       help="Right with the retrieved tables, wrong with the gold ones.")
        st.caption(f"Against oracle run {o.oracle_run_id}: {counted(o.n_wrong, 'wrong answer')} "
                   f"among {counted(o.n_common, 'query')} in common.")
        examples = attributed.examples
        if not examples.empty:
            st.dataframe(examples, hide_index=True, width="stretch",
                         height=widgets.grid_height(len(examples), 8), column_config={
                             "open": st.column_config.LinkColumn("open",
                                                                 display_text="query")})
st.plotly_chart(rank_quality_bars(attributed.quality), width="stretch")
st.caption("Downstream score by the best rank of a gold table (TARGET's error analysis); "
           "a negative rho means better-ranked gold goes with better answers.")
