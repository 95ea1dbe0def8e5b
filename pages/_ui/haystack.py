"""The Ablations page's Haystack section: recall against the number of distractor
tables added to the corpus (TARGET's needle in a haystack), one line per retriever, the
points with links to their runs, and a button that launches the missing points as jobs.
Widgets -> one target_core.read_models.haystack call -> render."""

from __future__ import annotations

import streamlit as st

from pages._ui import jobs, resources, widgets
from target_core.errors import TargetError
from target_core.figures.recall import haystack_figure
from target_core.read_models.choices import RETRIEVER_SPECS, label
from target_core.read_models.haystack import (
    default_sources,
    haystack_curve,
    parse_sizes,
    points_table,
)
from target_core.types import TableLookup

CAPTION = ("Each point is an ordinary run of the retriever on the same queries, with N "
           "tables drawn (seeded; a larger N adds to a smaller one's) from the chosen "
           "datasets added to the corpus. N = 0 is the plain run. A distractor is never "
           "gold.")


def haystack_section(dataset: TableLookup, retriever: str, *, top_k: int,
                     limit: int | None) -> None:
    """The section for `dataset` at the page's top-k and query sample; `retriever` (the
    page's) is the first line, dense:minilm the second by default."""
    settings = resources.settings()
    st.subheader("Haystack")
    st.caption(CAPTION)
    specs = list(dict.fromkeys([retriever, *RETRIEVER_SPECS]))
    chosen = list(dict.fromkeys([retriever, "dense:minilm"]))
    sources = default_sources(settings, dataset.name)
    cols = st.columns([2, 2, 1])
    retrievers = cols[0].multiselect("Retrievers", specs, chosen, key="haystack-retrievers",
                                     accept_new_options=True)
    picked = cols[1].multiselect("Distractors from", sources, sources,
                                 key="haystack-sources",
                                 help="Datasets whose tables are drawn as distractors.")
    sizes = cols[2].text_input("Sizes N", "", key="haystack-sizes", placeholder="default",
                               help="Comma-separated, e.g. 0,100,1k. Default: 0, 30, 100, "
                                    "300, 1k, ... and the whole pool.")
    if not retrievers or not picked:
        st.info("Pick at least one retriever and one dataset to draw distractors from.")
        return
    try:
        curve = haystack_curve(resources.store(), settings, dataset, retrievers, picked,
                               sizes=parse_sizes(sizes) if sizes.strip() else None,
                               top_k=top_k, limit=limit)
    except TargetError as exc:
        st.error(str(exc))
        return
    jobs.launch_missing(curve.missing(), dataset, noun="point", key="haystack-run")
    frame = curve.frame()
    k = max(curve.ks)
    if frame["run_id"].notna().any():
        st.plotly_chart(haystack_figure(frame, tuple(dict.fromkeys(("recall@1", f"recall@{k}")))),
                        width="stretch")
    else:
        st.info("No point of this curve is stored yet: run the missing points.")
    st.dataframe(points_table(curve), hide_index=True, width="stretch",
                 height=widgets.grid_height(len(frame), 12), column_config={
                     "open": st.column_config.LinkColumn("open", display_text="queries"),
                     **{c: st.column_config.TextColumn(alignment="right")
                        for c in (*(label(f"recall@{n}") for n in curve.ks), "n_queries")}})
    st.caption(f"Corpus = the {curve.n_tables} tables of {dataset.name} + N. Pool: "
               f"{curve.pool} tables of {', '.join(curve.sources)} (tables equal to one of "
               f"{dataset.name}'s left out). Solid: mean recall@{k}, dashed: mean recall@1 "
               "(the mean over queries of each query's recall).")
