"""Run: choose retrievers, a table view and k for the sidebar's dataset; launch with live
progress; the new runs are stored and listed below."""

from __future__ import annotations

from urllib.parse import quote

import pandas as pd
import streamlit as st

from pages import _shared as ui
from target_core.costs import openai_model, run_embedding_cost
from target_core.errors import TargetError
from target_core.retrievers import EXAMPLE_SPECS
from target_core.runner import run_retrieval
from target_core.types import RunConfig

ui.frame()
dataset = ui.dataset_or_stop(ui.pick_dataset())
st.title("Run retrievers")
st.caption(f"on **{ui.plain(dataset.name)}** ({dataset.task}, {len(dataset.tables):,} tables, "
           f"{len(dataset.queries):,} queries)")

specs = st.multiselect("Retrievers", EXAMPLE_SPECS, default=["bm25", "tfidf"],
                       accept_new_options=True, key="run-specs",
                       help="Type another spec, e.g. dense:openai/text-embedding-3-large.")
with st.expander("Table view", expanded=False):
    view = ui.view_picker("run")
cols = st.columns(3)
top_k = int(cols[0].number_input("k (tables per query)", 1, 1000, 10, key="run-k"))
limit = int(cols[1].number_input("Queries (0 = all)", 0, len(dataset.queries), 0,
                                 key="run-limit"))
seed = int(cols[2].number_input("Sample seed", 0, 2**31 - 1, 0, key="run-seed",
                                disabled=limit == 0))
for model in sorted({m for m in map(openai_model, specs) if m}):
    estimate = run_embedding_cost(dataset, view, model)
    price = ("no known price (local or unknown model)" if estimate.usd is None
             else f"about ${estimate.usd:,.4f}")
    st.info(f"{model}: {estimate.tokens:,} tokens to embed "
            f"({'counted' if estimate.exact else 'estimated'}), {price}. Embeddings already "
            "in Chroma are not paid for again. Needs OPENAI_API_KEY (and OPENAI_BASE_URL "
            "for a compatible server).")

if st.button("Launch", type="primary", disabled=not specs):
    finished = []
    for spec in specs:
        bar = st.progress(0.0, text=f"{spec}: starting")

        def progress(done: int, total: int, what: str, bar=bar, spec=spec) -> None:
            bar.progress(min(1.0, done / total) if total else 1.0,
                         text=f"{spec}: {what} {done:,}/{total:,}")

        config = RunConfig(dataset=dataset.name, retriever=spec, view=view, top_k=top_k,
                           limit=limit or None, seed=seed)
        try:
            result = run_retrieval(config, settings=ui.settings(), progress=progress)
        except TargetError as exc:
            bar.empty()
            st.error(f"{spec}: {exc}")
            continue
        bar.progress(1.0, text=f"{spec}: done" + (" (resumed)" if result.resumed else ""))
        finished.append(result.run.run_id)
    if finished:
        st.success(f"{len(finished)} run(s) stored: " + ", ".join(finished))

st.subheader("Runs on this dataset")
runs = ui.store().list_runs(dataset=dataset.name)
if not runs:
    st.info("No runs yet: pick retrievers and launch.")
else:
    frame = pd.DataFrame([{
        "run_id": r.run_id, "retriever": r.config.retriever, "view": r.config.view.label,
        "k": r.config.top_k, "status": r.status, "queries": f"{r.n_done}/{r.n_queries}",
        "recall@k": r.metrics.get(f"recall@{min(10, r.config.top_k)}"),
        "mrr": r.metrics.get("mrr"), "ms p50": r.metrics.get("retrieval_ms_p50"),
        "open": f"query?run={quote(r.run_id)}"} for r in runs])
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "open": st.column_config.LinkColumn("drill down", display_text="queries"),
        "recall@k": st.column_config.NumberColumn(format="%.3f"),
        "mrr": st.column_config.NumberColumn(format="%.3f"),
        "ms p50": st.column_config.NumberColumn(format="%.2f")})
