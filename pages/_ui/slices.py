"""The "By query metadata" section of the Overview and Compare pages: pick a metadata
field of the dataset's queries (difficulty, database_id, failure_mode, ...), see each
run's headline metrics per value of it, as a table and as bars. The field is in the URL
as ?slice=FIELD."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from pages._ui import resources
from pages._ui.url import read, read_choice, url_selectbox
from target_core.errors import TargetError
from target_core.read_models.slices import SliceView, metadata_frame

PARAM = "slice"

CAPTION = ("Each run per value of the field, over the run's queries with that value: R@c "
           "is TARGET's recall as in Table 2 (gold tables found within c / gold tables of "
           "those queries), R@1 for text-to-SQL the share "
           "whose top table is in the gold database (db_hit@1); with a generator, the "
           "mean answer score: EX = execution accuracy, EM = exact set match (by "
           "difficulty: GTR-T's Figure 5), Acc = fact accuracy, BLEU = mean sentence BLEU "
           "(not the corpus sacreBLEU).")

Build = Callable[[Any, str], SliceView]
"""build(metadata, field): the page's read model call (metadata: analysis.slices'
metadata_frame of the dataset's queries)."""


def _metadata(dataset: str) -> Any:
    """metadata_frame of the dataset's queries (read without its tables when the corpus
    is indexed), None when the dataset does not load."""
    try:
        return metadata_frame(resources.lookup_by_name(dataset).queries)
    except TargetError:
        return None


def _fields(metadata: Any) -> list[str]:
    return [] if metadata is None else [str(c) for c in metadata.columns]


def check_link(datasets: Sequence[str], where: str) -> None:
    """Stop on a link's ?slice= that is no metadata field of the queries of any of
    `datasets`; call before the page shows any data."""
    if read(PARAM) is None:
        return
    fields = sorted({f for name in datasets for f in _fields(_metadata(name))})
    read_choice(PARAM, fields, kind="field", among=f"the metadata fields of {where}'s queries")


def slice_section(dataset: str, build: Build, *, key: str, caption: str = CAPTION
                  ) -> None:
    """The section for `dataset`: a "Slice by" choice among its queries' metadata fields
    (difficulty when they have it), then build(metadata, field)'s table, bars and
    `caption`. Nothing when the queries carry no field with two or more values."""
    metadata = _metadata(dataset)
    fields = _fields(metadata)
    if not fields:
        return
    st.subheader("By query metadata")
    field = str(url_selectbox("Slice by", fields, param=PARAM, key=key, default="difficulty",
                              kind="field", among=f"the metadata fields of {dataset}'s queries",
                              help="A field of the dataset's queries.jsonl with 2 to 50 "
                              "values; the table has a row per value."))
    view = build(metadata, field)
    if view.empty:
        st.info("No run has per-query metrics to slice.")
        return
    labels = 2  # run and metric, or the value and its queries
    st.dataframe(view.shown, hide_index=True, width="stretch", column_config={
        "slice": st.column_config.TextColumn(field),
        "queries": st.column_config.NumberColumn(format="%d"),
        **{c: st.column_config.TextColumn(alignment="right")
           for c in view.shown.columns[labels:]}})
    st.plotly_chart(view.figure, width="stretch", key=f"{key}-bars")
    st.caption(caption + (f" A column per value of {field}, its queries in brackets."
                          if view.runs_as_rows else ""))
