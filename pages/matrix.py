"""All runs: every query of a dataset against every configuration run on it, one row
per query and one column per run, the gold rank coloured by outcome and linked to the
Query page; most disputed queries first, filtered by a metadata field of the queries and
by outcome. ?dataset=NAME&k=K&field=FIELD&value=VALUE&outcome=OUTCOME reopens it."""

from __future__ import annotations

import streamlit as st

from pages._ui import resources, shell, url, widgets
from pages._ui.text import plain
from target_core.errors import TargetError
from target_core.read_models.matrix import OUTCOMES, cell_legend, matrix_choices, run_matrix
from target_core.tasks.failure import FAILURE_RULE

SHOWN = 1000  # rows drawn at once; the CSV has them all

shell.frame()
st.title("All runs")
store = resources.store()
name = widgets.pick_dataset()
if name is None:
    st.stop()
try:
    queries = resources.lookup_by_name(name).queries
except TargetError as exc:
    st.error(f"Cannot load dataset '{name}': {exc}")
    st.stop()
choices = matrix_choices(store, name, queries)
if not choices.runs:
    st.info(f"No complete runs of {plain(name)} yet. Launch some on the Run page, or with "
            f"`python -m target_core run --dataset {name} --retriever bm25` and "
            "`--retriever tfidf`.")
    st.page_link("pages/run.py", label="Go to Run", icon=":material/play_arrow:")
    st.stop()

url.read_int("k", 0, minimum=1, maximum=choices.max_k)  # a malformed ?k= stops here
k = url.url_selectbox("k", list(range(1, choices.max_k + 1)), param="k",
                      key=f"matrix-k-{name}", where=st.sidebar, default=choices.default_k,
                      kind="k", help=f"Found at k: {FAILURE_RULE}. At most the smallest "
                      "top-k of the runs.")
cols = st.columns(3)
field = url.url_selectbox("Query field", ["", *choices.fields], param="field",
                          key=f"matrix-field-{name}", where=cols[0], kind="field",
                          among=f"the metadata fields of {name}'s queries",
                          format_func=lambda f: f or "all queries",
                          help="Keep the queries with one value of a field of queries.jsonl "
                          "(difficulty, database_id, failure_mode, ...).")
value = ""
if field:
    value = url.url_selectbox("Value", choices.values(field), param="value",
                              key=f"matrix-value-{name}-{field}", where=cols[1],
                              kind="value", among=f"the values of {field}", follow=False)
else:
    url.drop("value")
    cols[1].selectbox("Value", ["all values"], disabled=True, key=f"matrix-no-value-{name}")
outcome = url.url_selectbox("Outcome at k", list(OUTCOMES), param="outcome",
                            key="matrix-outcome", where=cols[2], kind="outcome",
                            format_func=OUTCOMES.get)

try:
    matrix = run_matrix(store, choices, k=k, field=field, value=value, outcome=outcome)
except TargetError as exc:
    st.error(str(exc))
    st.stop()

st.caption(f"{len(matrix.frame):,} of {matrix.n_total:,} queries · {len(choices.runs)} "
           "runs, the newest complete run of each configuration · a cell is the rank by "
           "which the run retrieved every gold table of the query (one gold table: its "
           f"rank), green when found at k = {k} ({FAILURE_RULE}). Most disputed first: "
           "runs split between found and missed, then the widest spread of ranks. A cell "
           "opens the query in that run.")
if matrix.empty:
    st.info("No query matches these filters.")
    st.stop()
st.dataframe(
    matrix.display_styler(SHOWN), width="stretch", height=min(38 + 35 * SHOWN, 640),
    column_config={
        "query_id": st.column_config.TextColumn("query", pinned=True),
        "found": st.column_config.TextColumn(
            "found", help=f"Runs that found the query at k = {k} / runs that answered it"),
        "question": st.column_config.TextColumn("question", width="large"),
        **{column: st.column_config.LinkColumn(column, help=f"{plain(column)}: open the "
                                               "query in this run")
           for column in matrix.columns}})
st.caption("Colours: " + cell_legend() + ".")
if len(matrix.frame) > SHOWN:
    st.caption(f"The {SHOWN:,} most disputed of {len(matrix.frame):,} queries are shown; "
               "the CSV holds every row.")
st.download_button("All rows (CSV)", data=matrix.csv, mime="text/csv", on_click="ignore",
                   file_name=f"all-runs-{name}-k{k}.csv", icon=":material/table:")
