"""Query: one query of one run: the generated answer against the reference (or the SQL
diff), the ranked tables with scores and the gold marked, the gold's rank even beyond
k, a table preview with the query's words highlighted, and links to the neighbouring
failed queries; for a rows run, the rows that matched. ?run=RUN_ID&query=QUERY_ID&table=DB/TABLE
reopens it."""

from __future__ import annotations

import streamlit as st

from pages._ui import resources, shell, url, widgets
from pages._ui.answer import judge_launcher
from pages._ui.answer import render as render_answer
from pages._ui.embedding_map import query_map_section
from pages._ui.probe import probe_section
from pages._ui.text import plain
from target_core.actions.query import matched_rows_view
from target_core.errors import TargetError
from target_core.read_models.answer import answer_view
from target_core.read_models.explain_dense import render_dense
from target_core.read_models.explain_lexical import render_lexical
from target_core.read_models.explain_sql import render_sql
from target_core.read_models.matched_rows import is_rows_run
from target_core.read_models.query import (
    explain,
    highlighted_table,
    is_passage,
    matched_terms,
    outcome_view,
    passage_caption,
    passage_text,
    preview_table,
    query_flags,
    query_terms,
    with_distractors,
)
from target_core.read_models.runs import failed_banner, runs_with_results
from target_core.tasks.failure import FAILURE_RULE
from target_core.types import parse_table_ref

shell.frame()
store = resources.store()
runs = runs_with_results(store)
if not runs:
    st.title("Query")
    url.missing_runs("run")
    st.info("No runs yet. Launch one on the Run page.")
    st.stop()

run_id = widgets.pick_run(runs, key="query-run")
run = store.get_run(run_id)
if (banner := failed_banner(run)) is not None:
    st.error(banner)
try:
    dataset = with_distractors(resources.lookup_by_name(run.config.dataset),
                               run.config.haystack, resources.settings())
except TargetError as exc:
    st.error(f"The run's dataset cannot be loaded: {exc}")
    st.stop()

flags = query_flags(store, run)
shown = st.sidebar.radio("Show", flags.filters(), key="query-filter",
                         help=f"Missed by retrieval: {FAILURE_RULE}.")
choices = flags.chosen(shown)
if not choices:
    st.title("Query")
    st.success("No failed queries in this run.")
    st.stop()
query_id = url.url_selectbox(
    "Query", choices, param="query", key=f"query-id-{run_id}-{shown}", where=st.sidebar,
    format_func=flags.label, kind="query", among=f"the queries of run {run_id}")

# previous/next step through the filter's queries; under "all queries", the failed ones
view = outcome_view(store, dataset, run_id, query_id,
                    shown=None if shown == "all queries" else choices)
q = view.query
# the tables this query can preview: its gold ones first (the default), then the ranked
options = list(dict.fromkeys(list(view.gold["table"]) + list(view.ranked["table"])))
table_among = f"the gold and retrieved tables of query {query_id}"
url.read_choice("table", options, kind="table", among=table_among)  # before any data
st.title(f"Query {plain(q.query_id)}")
st.markdown(f"**{plain(q.query)}**")
status = ("found: every gold table within k" if view.found
          else "failed: a gold table is not within k")
st.caption(f"{plain(run.config.label)} · view {plain(run.config.view.label)} · "
           f"k = {run.config.top_k} · {status} · {view.result.ms:.2f} ms")
answer = answer_view(dataset, view.result, store.judgements(run_id))
if answer is None and q.sql:
    st.code(q.sql, language="sql")
elif answer is None:
    st.markdown(f"**Reference answer:** {plain(q.answer)}")


def go(target: str) -> None:
    """Step to `target` in the sidebar's query picker (a callback: it runs before the
    picker is drawn), in this tab and under the same filter."""
    st.session_state[f"query-id-{run_id}-{shown}"] = target


which = "wrong" if shown == "wrong answer" else "failed"
steps = st.columns([1, 1, 4], vertical_alignment="center")
steps[0].button(f"← previous {which}", key="query-previous", width="stretch",
                disabled=view.previous_failed is None, on_click=go,
                args=(view.previous_failed,))
steps[1].button(f"next {which} →", key="query-next", width="stretch",
                disabled=view.next_failed is None, on_click=go, args=(view.next_failed,))
steps[2].caption(f"{view.n_failed} {which} in this run"
                 + ("" if shown == "wrong answer" else f". Retrieval failure: {FAILURE_RULE}."))
if answer is not None:
    render_answer(answer)
    if answer.judged:
        judge_launcher(run_id)

st.subheader("Gold")
st.dataframe(view.gold[["table", "where", "found", "title"]], hide_index=True,
             width="stretch", column_config={
                 "found": st.column_config.CheckboxColumn("in top k"),
                 "where": st.column_config.TextColumn("rank")})
st.subheader("Retrieved")
st.dataframe(view.ranked, hide_index=True, width="stretch", column_config={
    "gold": st.column_config.CheckboxColumn("gold"),
    "score": st.column_config.NumberColumn(format="%.4f")})

matched_rows: dict[str, tuple[int, ...]] = {}
if is_rows_run(run):
    st.subheader("Matched rows")
    try:
        with st.spinner("Matching rows…"):
            matched = matched_rows_view(run, view.result, q.query, resources.settings()) or []
    except TargetError as exc:
        st.warning(f"Rows cannot be matched: {exc}")
        matched = []
    if matched:
        st.caption("A table scores its best row's cosine with the query. Each table's best "
                   "rows: their cells and the text that was embedded. ★ gold. The preview "
                   "below shades a table's matched rows.")
    for entry in matched:
        matched_rows[entry.table] = entry.matched
        with st.expander(plain(entry.label), expanded=entry.rank == 1 or entry.rank is None):
            st.dataframe(entry.rows, hide_index=True, width="stretch", column_config={
                "cosine": st.column_config.NumberColumn(format="%.4f")})

st.subheader("Why this ranking?")
gold_refs = set(view.gold["table"])
others = [t for t in view.ranked["table"] if t not in gold_refs]
explanation = None
# off until asked (it rebuilds the run's index over the whole corpus); then on for the
# session as the user moves between queries
explaining = st.toggle("Explain: each query term's share of the score, what the embedder "
                       "saw, the schema links", key="why-on")
if not explaining:
    pass
elif not others:
    st.caption("The run ranked no table other than the gold: nothing to compare.")
else:
    against = st.selectbox("Compare the gold with", others, key=f"why-{run_id}-{query_id}",
                           help="Any table the run ranked; first: the best-ranked one.")
    try:
        with st.spinner("Explaining…"):
            explanation = explain(store, resources.settings(), run_id, query_id, against)
    except TargetError as exc:
        st.warning(f"This ranking cannot be explained: {exc}")
lexical = explanation["lexical"] if explanation else None
if lexical is not None and "error" in lexical:
    st.warning(f"Term contributions cannot be recomputed: {lexical['error']}")
elif lexical is not None:
    why = render_lexical(lexical)
    st.caption(plain(why.caption))
    st.plotly_chart(why.figure, key=f"why-terms-{run_id}-{query_id}")
    st.dataframe(why.terms, hide_index=True, width="stretch")
    st.caption(plain(" · ".join(why.sums)))
    st.markdown(plain(" ".join(filter(None, [why.only_other, why.gap]))))
    if why.fusion is not None:
        st.dataframe(why.fusion, hide_index=True, width="stretch")
        st.caption(plain(why.decided))
    for note in why.notes:
        st.caption(plain(note))
# dense and text-to-SQL sections follow (explanation["dense"], explanation["sql"])

dense_why = render_dense(explanation["dense"] if explanation else None)
if dense_why is not None:  # what the embedder saw: its window's cut, rows' cosines
    st.markdown("**What the embedder saw**")
    st.caption(plain(dense_why.caption))
    st.dataframe(dense_why.overview, hide_index=True, width="stretch")
    if dense_why.warning:
        st.warning(dense_why.warning)
    for seen in dense_why.tables:
        with st.expander(plain(seen.label)):
            if len(seen.evidence):
                st.dataframe(seen.evidence, hide_index=True, width="stretch")
            st.dataframe(seen.rows, hide_index=True, width="stretch", column_config={
                "cosine": st.column_config.NumberColumn(format="%.4f"),
                "vs title + header": st.column_config.NumberColumn(format="%+.4f"),
                "read": st.column_config.CheckboxColumn("read by the embedder")})
            st.caption(plain(seen.rows_note))
            st.caption(plain(seen.text_note))
            st.text(seen.text_seen)

sql_why = explanation["sql"] if explanation else None
if sql_why is not None:  # text-to-SQL: the question's words linked to each schema
    linked = render_sql(sql_why)
    st.markdown("**Schema linking** (the SQL writer's: table name 3, value 2, column 1)")
    st.text(linked.summary)
    st.dataframe(linked.words, hide_index=True, width="stretch")
    for line in filter(None, [linked.database, *linked.notes]):
        st.caption(plain(line))

probe_section(store, run, query_id, q.query)  # what if: edit, re-rank everywhere

query_map_section(run, query_id)  # the run's tables in 2-D, this query's marked

# a table belongs to its query: without ?table= the preview opens the first gold table
ref = url.url_selectbox("Preview a table", options, param="table",
                        key=f"query-table-{run_id}-{query_id}", follow=False,
                        kind="table", among=table_among,
                        format_func=lambda t: ("★ " if t in set(view.gold["table"]) else "")
                        + t)
table = preview_table(dataset, parse_table_ref(ref))
terms = query_terms(q.query)
present, absent = matched_terms(table, terms)
if is_passage(table):  # a document's text: its title and the text, not a grid
    st.markdown(f"**{plain(table.title or ref)}** · {plain(passage_caption(table))}")
    st.caption("Query words in this passage: " + (", ".join(present) or "none") +
               " · not in it: " + (", ".join(absent) or "none") + ".")
    st.text(passage_text(table))
else:
    section = f" · {plain(table.section_title)}" if table.section_title else ""
    st.markdown(f"**{plain(table.title or ref)}**{section}")
    st.caption("Query words in this table: " + (", ".join(present) or "none") +
               " · not in it: " + (", ".join(absent) or "none") +
               ". Shaded cells and ◆ columns contain a query word"
               + (", amber rows matched the query (rows retriever)." if matched_rows.get(ref)
                  else "."))
    st.dataframe(highlighted_table(table, terms, rows=matched_rows.get(ref, ())),
                 width="stretch", hide_index=True)
