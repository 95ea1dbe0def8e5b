"""Datasets: add a dataset (server path or upload) or remove an added one; counts and
size distributions, search and browse tables and queries, one table under several
views, a query's gold tables. State lives in the URL:
?dataset=NAME&section=Tables&table=DB/TABLE or &section=Queries&query=ID."""

from __future__ import annotations

import streamlit as st

from pages._ui import add_dataset, resources, shell, url, widgets
from pages._ui.text import plain
from target_core.errors import TargetError
from target_core.figures.sizes import size_distributions
from target_core.read_models.dataset_sizes import TableRefs, browsed_columns, with_tokens
from target_core.read_models.datasets import (
    evidence_cells,
    evidence_rows,
    failure_modes,
    filter_by_failure_mode,
    highlight_cells,
    is_passage,
    passage_text,
    queries_with_gold,
    query_detail,
    render_views,
    search,
    table_frame,
    views_to_compare,
)
from target_core.read_models.query import passage_caption
from target_core.table_view import VIEW_PRESETS, TableView
from target_core.types import Query, Table, TableLookup, parse_table_ref, table_ref
from target_core.wording import counted

SECTIONS = ["Sizes", "Tables", "Queries"]
PREVIEW_ROWS = 200
PAGE_ROWS = 100

shell.frame()
chosen = widgets.pick_dataset()
add_dataset.add_form(chosen)
dataset = widgets.lookup_or_stop(chosen)  # a large corpus is not loaded: read by table
# a link's section, table and query must exist before anything of the dataset shows
url.read_choice("section", SECTIONS, kind="section")
url.read_choice("table", TableRefs(dataset), among=f"the tables of {dataset.name}")
url.read_choice("query", [q.query_id for q in dataset.queries],
                among=f"the queries of {dataset.name}")
st.title(dataset.name)
st.caption(f"task **{dataset.task}** · source {plain(dataset.source)}")
if dataset.description:
    with st.expander("About this dataset"):
        st.markdown(plain(dataset.description))

with st.expander("Table view (how tables become text, for token counts and previews)"):
    view = widgets.view_picker("datasets")
summary = resources.summary(dataset, view)
sample_note = ("" if summary.exact else f" From a sample of {summary.measured:,} of "
               f"{summary.n_tables:,} tables.")
if not summary.exact:
    note_col, button_col = st.columns([4, 1])
    note_col.info(f"Token sizes from a random sample of {summary.measured:,} of "
                  f"{summary.n_tables:,} tables; rows and columns from every table.")
    if button_col.button("Measure all tables", key="datasets-measure-all",
                         help="Count every table's tokens under this view and keep the "
                              "counts in the workspace for next time."):
        bar = st.progress(0.0, text="Measuring every table…")
        def progress(done: int, total: int, what: str) -> None:
            bar.progress(done / max(total, 1), text=f"{done:,} of {total:,} {what}")

        resources.measure_all(dataset, view, progress)
        st.rerun()

grids = summary.grids
figures: list[tuple[str, str, str | None]] = [("Tables", f"{len(grids):,}", None)]
if summary.n_passages:
    figures.append(("Passages", f"{summary.n_passages:,}",
                    f"Cut from {summary.n_documents:,} documents (documents.jsonl)."))
figures += [("Queries", f"{summary.n_queries:,}", None),
            ("Databases", f"{summary.n_databases:,}", None),
            ("Median rows", f"{grids['rows'].median():g}" if len(grids) else "–", None),
            ("Median columns", f"{grids['columns'].median():g}" if len(grids) else "–", None),
            ("Median tokens", f"{summary.tokens.median():,.0f}",
             f"Under the view '{view.label}', counted with {summary.token_label}."
             + sample_note)]
for column, (label, value, note) in zip(st.columns(len(figures)), figures, strict=True):
    column.metric(label, value, help=note)

wanted_section = url.read("section", "Sizes")
section = st.segmented_control(
    "Section", SECTIONS, default=wanted_section if wanted_section in SECTIONS else "Sizes",
    key="datasets-section", label_visibility="collapsed") or "Sizes"
url.write(section=section)


def show_table(table: Table, dataset: TableLookup, view: TableView, key: str,
               query: Query | None = None) -> None:
    passage = is_passage(table)
    if passage:  # a document's text: title, where it sits, the text itself
        st.subheader(f"Passage {plain(table_ref(table.key))}")
        st.markdown(f"**Title:** {plain(table.title or '—')}  \n"
                    f"**From:** {plain(passage_caption(table))}")
    else:
        st.subheader(f"Table {plain(table_ref(table.key))}")
        st.markdown(f"**Title:** {plain(table.title or '—')}  \n"
                    f"**Section:** {plain(table.section_title or '—')}  \n"
                    f"**Size:** {table.n_rows:,} rows × {table.n_cols} columns")
    gold_of = queries_with_gold(dataset, table.key)
    if gold_of:
        st.caption(f"Gold table of {counted(len(gold_of), 'query')}: "
                   + ", ".join(plain(q) for q in gold_of[:20])
                   + (" …" if len(gold_of) > 20 else ""))
    grid, text = st.tabs(["Text" if passage else "Grid", "As text under views"])
    with grid:
        if passage:
            st.text(passage_text(table))
        cells = evidence_cells(query, table) if query and not passage else set()
        if cells:
            rows, marked = evidence_rows(table, cells)
            st.markdown("**Evidence** (the cells the reference answer rests on)")
            st.dataframe(highlight_cells(rows, marked), width="stretch")
        if not passage:
            st.dataframe(table_frame(table, PREVIEW_ROWS), width="stretch", hide_index=True)
        if table.n_rows > PREVIEW_ROWS:
            st.caption(f"First {PREVIEW_ROWS} of {table.n_rows:,} rows.")
    with text:
        chosen = st.multiselect("Compare with presets", list(VIEW_PRESETS),
                                default=["header-only", "target-ottqa"], key=f"{key}-compare")
        for rendered in render_views(table, views_to_compare(view, chosen)):
            st.markdown(f"**{plain(rendered.label)}** · {rendered.tokens:,} tokens "
                        f"({plain(summary.token_label)})")
            st.code(rendered.text, language=None, wrap_lines=True, height=min(
                400, 40 + 22 * rendered.text.count("\n")))


if section == "Sizes":
    st.plotly_chart(size_distributions(summary.tables), width="stretch")
    st.caption(f"Tokens under the view '{plain(view.label)}', counted with "
               f"{plain(summary.token_label)}.{sample_note}")
    st.markdown(("**Largest tables under this view**" if not summary.n_passages else
                 "**Largest tables and passages under this view**")
                + ("" if summary.exact else " (among the sample)"))
    st.dataframe(summary.largest(10), width="stretch", hide_index=True, column_config={
        c: st.column_config.TextColumn(alignment="right") for c in ("rows", "columns")})

elif section == "Tables":
    text = st.text_input("Search tables", key="datasets-table-search",
                         placeholder="words in id, title or section")
    found = search(summary.tables, text, ["table", "title", "section_title"])
    pages = max(1, -(-len(found) // PAGE_ROWS))
    page = 1
    if pages > 1:  # a page at a time: never every table into the browser
        page = int(st.number_input(f"Page (of {pages:,})", 1, pages, 1,
                                   key=f"datasets-tables-page-{text}"))
    shown = with_tokens(dataset, found.iloc[(page - 1) * PAGE_ROWS:page * PAGE_ROWS], view)
    st.caption(f"{len(found):,} of {summary.n_tables:,} tables"
               + (f"; {len(shown):,} on this page" if pages > 1 else ""))
    event = st.dataframe(shown, width="stretch", column_order=browsed_columns(shown),
                         hide_index=True, on_select="rerun", selection_mode="single-row",
                         key=f"datasets-tables-{page}", height=widgets.grid_height(len(shown)))
    if event.selection.rows:
        url.write(table=shown.iloc[event.selection.rows[0]]["table"])
    ref = url.read("table")
    if ref:
        try:
            show_table(dataset.table(parse_table_ref(ref)), dataset, view, "table")
        except TargetError as exc:
            st.warning(str(exc))
    else:
        st.info("Select a table to see it as a grid and as text under each view.")

else:
    search_col, mode_col = st.columns([3, 1])
    text = search_col.text_input("Search queries", key="datasets-query-search",
                                 placeholder="words in the question, answer, id or gold table")
    modes = failure_modes(summary.queries)
    mode = mode_col.selectbox("Built-in failure mode", modes, index=None, placeholder="any",
                              key="datasets-failure-mode", disabled=not modes)
    found = search(filter_by_failure_mode(summary.queries, mode), text,
                   ["query_id", "query", "answer", "gold"])
    st.caption(f"{len(found):,} of {summary.n_queries:,} queries")
    event = st.dataframe(found, width="stretch", hide_index=True, on_select="rerun",
                         selection_mode="single-row", key="datasets-queries",
                         height=widgets.grid_height(len(found)))
    if event.selection.rows:
        url.write(query=found.iloc[event.selection.rows[0]]["query_id"])
    query_id = url.read("query")
    if query_id:
        try:
            detail = query_detail(dataset, query_id)
        except TargetError as exc:
            st.warning(str(exc))
        else:
            q = detail.query
            st.subheader(f"Query {plain(q.query_id)}")
            st.markdown(f"**Question:** {plain(q.query)}")
            if q.sql:
                st.code(q.sql, language="sql")
            else:
                st.markdown(f"**Reference answer:** {plain(q.answer)}")
            if q.label is not None:
                st.markdown(f"**Label:** {'true' if q.label else 'false'}")
            if q.meta.get("failure_mode"):
                st.markdown(f"**Built-in failure mode:** {plain(q.meta['failure_mode'])}")
            st.markdown(f"**Gold tables ({len(detail.gold)})**")
            for i, table in enumerate(detail.gold):
                with st.container(border=True):
                    show_table(table, dataset, view, f"gold-{i}", q)
    else:
        st.info("Select a query to see its gold table(s).")
