"""Ablations: one retriever over table views (title / no title × all rows / first 100 /
header only, the format, and the view with the tables' schema context) on the same
queries, as paired experiments: the Table 2 layout with p-values against the base view,
and which queries depend on the title or the rows. ?dataset=NAME&retriever=SPEC&limit=N
reopens it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from pages._ui import jobs, resources, shell, url, widgets
from pages._ui.haystack import haystack_section
from pages._ui.sql_ablation import sql_ablation_section
from pages._ui.text import plain
from target_core.errors import TargetError
from target_core.figures.failures import ablation_bars
from target_core.read_models.ablation import (
    ROWS_CHOICES,
    SCHEMA_VARIANT,
    TABLE_FORMATS,
    ablation_configs,
    chosen_variants,
    has_schema_context,
    load_ablation,
    sensitivity_frame,
)
from target_core.read_models.choices import RETRIEVER_SPECS, split_spec
from target_core.read_models.params import unknown_message
from target_core.table_view import FORMATS, TEXT_FORMATS

shell.frame()
st.title("Ablations")
name = widgets.pick_dataset()
dataset = widgets.lookup_or_stop(name)

specs = list(RETRIEVER_SPECS)
wanted = url.read("retriever", "bm25")
try:
    split_spec(wanted)
except TargetError:  # typed in this session: load_ablation below shows why it fails
    if url.from_link():
        url.stop(unknown_message("retriever", wanted, specs, kind="retriever"))
if wanted not in specs:
    specs.append(wanted)
cols = st.columns([2, 1, 1])
retriever = cols[0].selectbox("Retriever", specs, index=specs.index(wanted),
                              accept_new_options=True, key="ablation-retriever",
                              help="Any retriever spec, e.g. bm25 or dense:minilm.")
top_k = int(cols[1].number_input("Top-k", 1, 100,
                                 url.read_int("top_k", 10, minimum=1, maximum=100),
                                 key="ablation-top-k"))
limit = int(cols[2].number_input("Queries (0 = all)", 0, len(dataset.queries),
                                 url.read_int("limit", 0, minimum=0,
                                              maximum=len(dataset.queries)),
                                 key="ablation-limit",
                                 help="A seeded sample of this many queries."))
columns = st.columns(2)
rows_chosen = columns[0].multiselect("Rows", list(ROWS_CHOICES), ["all rows", "first 100 rows",
                                                       "header only"], key="ablation-rows",
                                  help="Each with and without the title; the first is the "
                                       "base row of the table.")
# each format is tried with the title and rows: "ottqa" has neither (TableView)
offered = [f for f in FORMATS if f != "ottqa"]
formats = columns[1].multiselect("Formats", offered, list(TEXT_FORMATS),
                              key="ablation-formats",
                              help="Each with the title and the first rows setting.")
schema = st.checkbox(f"Also {SCHEMA_VARIANT}", has_schema_context(dataset),
                     key=f"ablation-schema-{dataset.name}",
                     help="The base view with each table's primary and foreign keys and "
                          "column descriptions added (on by default where the dataset's "
                          "tables carry them, e.g. demo-sql).")
url.write(retriever=retriever, top_k=top_k, limit=limit)
if not rows_chosen or not retriever:
    st.info("Pick a retriever and at least one rows setting.")
    st.stop()

variants = chosen_variants(rows_chosen, formats, schema=schema)
options: dict[str, Any] = {"top_k": top_k, "limit": limit or None, "variants": variants}
try:
    report = load_ablation(resources.store(), resources.settings(), dataset, retriever, **options)
except TargetError as exc:
    st.error(str(exc))
    st.stop()

jobs.launch_missing(ablation_configs(dataset.name, retriever,
                                     [v.variant for v in report.variants if v.run is None],
                                     top_k=top_k, limit=limit or None, seed=0),
                    dataset, noun="variant", key="ablation-run", primary=True)
jobs.job_list(dataset.name, key="ablation")

if report.hits.empty:
    st.info(f"No variant of {plain(retriever)} on {plain(dataset.name)} is stored yet "
            f"with these settings: run the ablation ({len(report.variants)} runs).")
    sql_ablation_section(dataset, retriever, top_k=top_k, limit=limit or None)
    haystack_section(dataset, retriever, top_k=top_k, limit=limit or None)
    st.stop()

st.subheader("Table 2 layout")
table = report.table()
italic = set(report.italic_rows())
formats_of_columns: dict[Any, str | Callable[[object], str] | None] = {
    ("ms / query" if c == "ms" else c): f for c, f in TABLE_FORMATS.items()}
formats_of_columns |= {column: "{:.3f}" for column, _ in report.recall_columns}
styled = (table.rename(columns={"ms": "ms / query"}).style
          .format(formats_of_columns, na_rep="—")
          .apply(lambda row: ["font-style: italic" if row.name in italic else ""
                              for _ in row], axis=1)
          .hide(axis="index"))
st.table(styled)  # a static table: st.dataframe's canvas drops italics
st.caption(f"{len(report.hits)} queries, the same for every variant. Italic rows are the "
           f"ones TARGET's Table 2 prints in italics (w/o title, header only). p vs base: "
           f"paired McNemar test of found at k = {report.k} (every gold table within k) "
           f"against the first row, Holm-adjusted "
           f"over the variants.")
st.plotly_chart(ablation_bars(report), width="stretch")
st.download_button("Download the table (CSV)", table.to_csv(index=False).encode(),
                   file_name=f"ablation-{dataset.name}-{retriever}.csv".replace(":", "_"),
                   mime="text/csv")

st.subheader("Per-query sensitivity")
groups = report.sensitivity()
if not groups:
    st.info("Needs the base variant with its title and header-only counterparts.")
cols = st.columns(max(1, len(groups)))
for col, (group, ids) in zip(cols, groups.items(), strict=False):
    col.metric(group.capitalize(), len(ids))
for group, ids in groups.items():
    if not ids:
        continue
    with st.expander(f"{group}: {len(ids)} queries (links open the run that missed them)"):
        rows = sensitivity_frame(report, dataset, group)
        st.dataframe(rows, hide_index=True, width="stretch",
                     height=widgets.grid_height(len(rows), 10), column_config={
                         "open": st.column_config.LinkColumn("open", display_text="query"),
                         "query": st.column_config.TextColumn(width="large")})

sql_ablation_section(dataset, retriever, top_k=top_k, limit=limit or None)
haystack_section(dataset, retriever, top_k=top_k, limit=limit or None)
