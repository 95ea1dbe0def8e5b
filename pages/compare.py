"""Compare: two or more runs on one dataset, query by query: means with confidence
intervals, paired tests with win/tie/loss, gold ranks side by side and the flipped
queries with links to the Query page. ?runs=BASELINE,OTHER,...&k=K reopens it."""

from __future__ import annotations

import streamlit as st

from pages._ui import resources, shell, url, widgets
from pages._ui.text import plain
from target_core.analysis.compare import compare_runs
from target_core.analysis.figures import ci_forest, rank_scatter, run_names, win_tie_loss_bars
from target_core.analysis.report import (
    DEFINITIONS,
    flipped_table,
    headline_table,
    paired_tests_table,
    report_html,
)
from target_core.analysis.significance import outcomes_frame
from target_core.errors import TargetError
from target_core.metrics.retrieval import default_ks

shell.frame()
st.title("Compare")
store = resources.store()
complete = store.list_runs(status="complete")  # newest first
by_dataset: dict[str, list] = {}
for record in complete:
    by_dataset.setdefault(record.config.dataset, []).append(record)
eligible = sorted(name for name, runs in by_dataset.items() if len(runs) >= 2)
if not eligible:
    st.info("Compare needs at least two complete runs on one dataset. Launch them on the "
            "Run page, or with `python -m target_core run --dataset demo-qa --retriever "
            "bm25` and `--retriever tfidf`.")
    st.page_link("pages/run.py", label="Go to Run", icon=":material/play_arrow:")
    st.stop()


by_id = {r.run_id: r for r in complete}
# The URL wins over the widgets' state on the first visit and whenever it changed since
# this page last wrote it (a link, the back button); otherwise the widgets keep their
# state, so the page's own echo in the URL never resets them.
params, from_link = url.linked(("dataset", "runs", "k"), key="compare")
wanted_runs = [r for r in (params["runs"] or "").split(",") if r]
linked = next((by_id[r].config.dataset for r in wanted_runs if r in by_id), None)
wanted_dataset = linked or params["dataset"]
if from_link or st.session_state.get("compare-dataset") not in eligible:
    st.session_state["compare-dataset"] = (wanted_dataset if wanted_dataset in eligible
                                           else eligible[0])
dataset = st.sidebar.selectbox("Dataset", eligible, key="compare-dataset",
                               help="Datasets with at least two complete runs.")

candidates = by_dataset[dataset]
labels = {r.run_id: f"{r.config.label} · {r.config.view.label} · k={r.config.top_k} · "
          f"{r.run_id}" for r in candidates}
runs_key = f"compare-runs-{dataset}"
if from_link or runs_key not in st.session_state:
    st.session_state[runs_key] = ([r for r in wanted_runs if r in labels]
                                  or [r.run_id for r in reversed(candidates[:2])])
st.session_state[runs_key] = [r for r in st.session_state[runs_key] if r in labels]
selected = st.multiselect("Runs (the first is the baseline)", list(labels),
                          format_func=labels.get, key=runs_key)
written = {"dataset": dataset, "runs": ",".join(selected), "k": params["k"]}
if len(selected) < 2:
    url.echo(written, key="compare")
    st.info("Pick at least two runs.")
    st.stop()

runs = [by_id[r] for r in selected]
ks = sorted(set.intersection(*(set(default_ks(r.config.top_k)) for r in runs)))
fallback_k = [k for k in ks if k in (1, 3, 5, 10)][-1:] or ks[-1:]
if from_link or st.session_state.get("compare-k") not in ks:
    wanted_k = params["k"] or ""
    st.session_state["compare-k"] = (int(wanted_k) if wanted_k.isdigit()
                                     and int(wanted_k) in ks else fallback_k[0])
k = st.sidebar.selectbox("k (hit@k)", ks, key="compare-k",
                         help="The cutoff of hit@k and of the flipped queries.")
written["k"] = str(k)
url.echo(written, key="compare")

try:
    comparison = compare_runs(store, selected, k=k)
    outcomes = outcomes_frame(store, selected, comparison.k)
except TargetError as exc:
    st.error(str(exc))
    st.stop()

names = run_names(runs)
st.caption(f"{plain(comparison.dataset)} · {comparison.n_queries} queries answered by "
           f"every run · hit@{comparison.k} · baseline: {plain(names[selected[0]])}")
for pair in comparison.pairs:
    if pair.warning:
        st.warning(f"{plain(names[pair.other])}: {plain(pair.warning)}",
                   icon=":material/warning:")

st.subheader("Headline")
st.dataframe(headline_table(comparison, names), hide_index=True, width="stretch")
st.plotly_chart(ci_forest(comparison, names=names), width="stretch")

st.subheader("Paired tests against the baseline")
st.dataframe(paired_tests_table(comparison, names), hide_index=True, width="stretch",
             column_config={"sig.": st.column_config.TextColumn(
                 "sig.", help="✱: p < 0.05 (Holm-adjusted with more than two runs)")})
st.plotly_chart(win_tie_loss_bars(comparison, names=names), width="stretch")
with st.expander("How these are computed"):
    st.markdown(plain(DEFINITIONS))

st.subheader("Gold ranks per query")
st.caption("Best rank of any gold table in each run; a marker stands for every query with "
           "the same pair of ranks (hover for their ids). Dotted lines: k. Below the "
           "diagonal the compared run ranks the gold table higher.")
columns = st.columns(min(2, len(comparison.pairs)))
for i, pair in enumerate(comparison.pairs):
    columns[i % len(columns)].plotly_chart(
        rank_scatter(outcomes, pair.baseline, pair.other, names=names), width="stretch",
        key=f"compare-scatter-{pair.other}")


st.subheader("Flipped queries")
st.caption(f"Found within k = {comparison.k} by one run and missed by the other, largest "
           "change of reciprocal rank first. The links open the query in each run.")
for pair in comparison.pairs:
    table = flipped_table(pair, names)
    table["open baseline"] = [url.query_url(pair.baseline, q) for q in table["query_id"]]
    table["open compared"] = [url.query_url(pair.other, q) for q in table["query_id"]]
    st.markdown(f"**{plain(names[pair.other])}** vs **{plain(names[pair.baseline])}**: "
                f"{len(pair.flipped)} flipped")
    if table.empty:
        continue
    st.dataframe(table, hide_index=True, width="stretch", height=widgets.grid_height(len(table)),
                 key=f"compare-flipped-{pair.other}", column_config={
                     "open baseline": st.column_config.LinkColumn(
                         "baseline", display_text="open query",
                         help=f"This query in {plain(names[pair.baseline])} on the Query page"),
                     "open compared": st.column_config.LinkColumn(
                         "compared", display_text="open query",
                         help=f"This query in {plain(names[pair.other])} on the Query page")})

st.subheader("Download")
cols = st.columns(2)
stem = f"compare-{comparison.dataset}-{'-vs-'.join(selected)}"
cols[0].download_button(
    "HTML report (standalone, offline)", data=lambda: report_html(comparison, outcomes, runs),
    file_name=f"{stem}.html", mime="text/html", on_click="ignore",
    icon=":material/description:")
cols[1].download_button(
    "Per-query outcomes (CSV)", data=lambda: outcomes.to_csv(index=False),
    file_name=f"{stem}.csv", mime="text/csv", on_click="ignore", icon=":material/table:")
