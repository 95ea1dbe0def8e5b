"""Compare: two or more runs on one dataset, query by query: means with confidence
intervals, paired tests with win/tie/loss, gold ranks side by side and the flipped
queries with links to the Query page; runs that differ only in their prompt set read as
a prompt-set comparison; QA runs add GTR's Figure 3 (answer quality against reply
length). ?runs=BASELINE,OTHER,...&k=K reopens it."""

from __future__ import annotations

import streamlit as st

from pages._ui import resources, shell, slices, url, widgets
from pages._ui.text import plain
from target_core.errors import TargetError
from target_core.figures.report import report_html
from target_core.read_models.compare import (
    DEFINITIONS,
    QUALITY_METRICS,
    CompareChoices,
    compare_choices,
    compare_figures,
    compare_slices,
    compare_view,
    headline_table,
    paired_tests_table,
    quality_metrics,
    quality_scatter,
)
from target_core.read_models.params import ParamError, check_choice, parse_int
from target_core.tasks.failure import FAILURE_RULE


def check_link(choices: CompareChoices, dataset: str | None, run_ids: list[str],
               k: str | None) -> None:
    """Stop on a link's dataset, run or k that cannot be compared here, naming it."""
    try:
        if dataset is not None:
            check_choice("dataset", dataset, choices.eligible,
                         among="the datasets with two or more complete runs")
        name = dataset or choices.dataset_of(run_ids)
        known = (list(choices.labels(name)) if name else
                 [r.run_id for runs in choices.by_dataset.values() for r in runs])
        for run_id in run_ids:
            check_choice("runs", run_id, known, kind="run",
                         among=f"the complete runs of {name}" if name else "the complete runs")
        if k is not None:
            parse_int("k", k, minimum=1)
    except ParamError as exc:
        url.stop(str(exc))


shell.frame()
st.title("Compare")
store = resources.store()
# The URL is read first: a group of same-content datasets is shown under the name asked for.
params, from_link = url.linked(("dataset", "runs", "k"), key="compare")
choices = compare_choices(store, params["dataset"])
if not choices.eligible:
    url.missing_runs("runs", [r.run_id for r in store.list_runs()])
    st.info("Compare needs at least two complete runs on one dataset. Launch them on the "
            "Run page, or with `python -m target_core run --dataset demo-qa --retriever "
            "bm25` and `--retriever tfidf`.")
    st.page_link("pages/run.py", label="Go to Run", icon=":material/play_arrow:")
    st.stop()

# The URL wins over the widgets' state on the first visit and whenever it changed since
# this page last wrote it (a link, the back button); otherwise the widgets keep their
# state, so the page's own echo in the URL never resets them.
wanted_runs = url.read_list("runs")
link = from_link and url.from_link()  # a link, not this page's own echo: checked
if link:
    check_link(choices, params["dataset"], wanted_runs, params["k"])
wanted_dataset = choices.dataset_of(wanted_runs) or params["dataset"]
if from_link or st.session_state.get("compare-dataset") not in choices.eligible:
    st.session_state["compare-dataset"] = (wanted_dataset if wanted_dataset in choices.eligible
                                           else choices.eligible[0])
dataset = st.sidebar.selectbox("Dataset", choices.eligible, key="compare-dataset",
                               help="Datasets with at least two complete runs.")

labels = choices.labels(dataset)
runs_key = f"compare-runs-{dataset}"
if from_link or runs_key not in st.session_state:
    st.session_state[runs_key] = ([r for r in wanted_runs if r in labels]
                                  or choices.default_runs(dataset))
st.session_state[runs_key] = [r for r in st.session_state[runs_key] if r in labels]
selected = st.multiselect("Runs (the first is the baseline)", list(labels),
                          format_func=lambda r: labels.get(r, r), key=runs_key)
written = {"dataset": dataset, "runs": ",".join(selected), "k": params["k"]}
if len(selected) < 2:
    url.echo(written, key="compare")
    st.info("Pick at least two runs.")
    st.stop()

ks = choices.shared_ks(selected)
if from_link or st.session_state.get("compare-k") not in ks:
    wanted_k = params["k"] or ""
    if link and wanted_k and int(wanted_k) not in ks:
        url.stop(f"Invalid k '{wanted_k}' in the link (?k={wanted_k}): these runs report "
                 f"hit@k for k in {', '.join(map(str, ks))}.")
    st.session_state["compare-k"] = (int(wanted_k) if wanted_k.isdigit()
                                     and int(wanted_k) in ks else choices.default_k(selected))
k = st.sidebar.selectbox("k (hit@k)", ks, key="compare-k",
                         help="The cutoff of hit@k and of the flipped queries.")
written["k"] = str(k)
url.echo(written, key="compare")
slices.check_link([dataset], dataset)  # a bad ?slice= stops here

try:
    view = compare_view(store, selected, k, dataset)
except TargetError as exc:
    st.error(str(exc))
    st.stop()

comparison, outcomes, names, runs = view.comparison, view.outcomes, view.names, view.runs
figures = compare_figures(view)
if view.heading:
    st.subheader(plain(view.heading))
    st.caption("The same pipeline, view, k and queries: only the prompts the generator was "
               "sent differ.")
st.caption(f"{plain(comparison.dataset)} · {comparison.n_queries} queries answered by "
           f"every run · hit@{comparison.k} · baseline: {plain(names[selected[0]])}")
for pair in comparison.pairs:
    if pair.warning:
        st.warning(f"{plain(names[pair.other])}: {plain(pair.warning)}",
                   icon=":material/warning:")

st.subheader("Headline")
headline = headline_table(comparison, names)
st.dataframe(headline, hide_index=True, width="stretch",  # the ids are in the picker
             column_order=[c for c in headline.columns if c != "run_id"])
st.plotly_chart(figures.forest, width="stretch")

st.subheader("Paired tests against the baseline")
st.dataframe(paired_tests_table(comparison, names), hide_index=True, width="stretch",
             column_config={"sig.": st.column_config.TextColumn(
                 "sig.", help="✱: p < 0.05 (Holm-adjusted with more than two runs)")})
st.plotly_chart(figures.bars, width="stretch")
with st.expander("How these are computed"):
    st.markdown(plain(DEFINITIONS))

slices.slice_section(
    dataset, lambda metadata, field: compare_slices(store, view, metadata, field),
    key=f"compare-slice-{dataset}")

st.subheader("Gold ranks per query")
st.caption("The rank by which each run retrieved every gold table of the query (with one "
           "gold table, its rank): inside the dotted k lines a run found the query. A "
           "marker stands for every query with the same pair of ranks (hover for their "
           "ids). Below the diagonal the compared run ranks the gold tables higher.")
columns = st.columns(min(2, len(comparison.pairs)))
for i, pair in enumerate(comparison.pairs):
    columns[i % len(columns)].plotly_chart(
        figures.scatters[pair.other], width="stretch",
        key=f"compare-scatter-{pair.other}")

qualities = quality_metrics(store, view)
if qualities:
    st.subheader("Answer quality against reply length (GTR's Figure 3)")
    quality = st.selectbox("Quality", qualities, format_func=lambda m: QUALITY_METRICS.get(m, m),
                           key="compare-quality",
                           help="SAS here is the cosine of local MiniLM embeddings of answer "
                                "and reference, not a cross-encoder's SAS; truthfulness "
                                "appears after `python -m target_core judge RUN_ID`.")
    scatter = quality_scatter(store, view, quality)
    st.caption(plain(scatter.note))
    st.plotly_chart(scatter.figure, width="stretch", key="compare-quality-scatter")

st.subheader("Flipped queries")
st.caption(f"Found by one run and failed by the other at k = {comparison.k} ({FAILURE_RULE}); "
           "largest change of reciprocal rank first (the reciprocal ranks are in the HTML "
           "report). The links open the query in each run.")
for pair in comparison.pairs:
    table = view.flipped[pair.other]
    st.markdown(f"**{plain(names[pair.other])}** vs **{plain(names[pair.baseline])}**: "
                f"{len(pair.flipped)} flipped")
    if table.empty:
        continue
    st.dataframe(table, hide_index=True, width="stretch", height=widgets.grid_height(len(table)),
                 key=f"compare-flipped-{pair.other}",
                 column_order=[c for c in table.columns if not c.endswith(" RR")],
                 column_config={
                     "open baseline": st.column_config.LinkColumn(
                         "baseline", display_text="open",
                         help=f"This query in {plain(names[pair.baseline])} on the Query page"),
                     "open compared": st.column_config.LinkColumn(
                         "compared", display_text="open",
                         help=f"This query in {plain(names[pair.other])} on the Query page")})

st.subheader("Download")
cols = st.columns(2)
stem = view.file_stem
cols[0].download_button(
    "HTML report (standalone, offline)", data=lambda: report_html(comparison, outcomes, runs),
    file_name=f"{stem}.html", mime="text/html", on_click="ignore",
    icon=":material/description:")
cols[1].download_button(
    "Per-query outcomes (CSV)", data=lambda: outcomes.to_csv(index=False),
    file_name=f"{stem}.csv", mime="text/csv", on_click="ignore", icon=":material/table:")
