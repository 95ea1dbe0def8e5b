"""The Ablations page's seed 002 section (text-to-SQL datasets): its prompt with and
without few-shot examples, schema annotation and chain of thought, as its Table 2, with
a button that launches the missing variants as jobs.
Widgets -> one target_core.read_models.sql_ablation call -> render."""

from __future__ import annotations

import streamlit as st

from pages._ui import jobs, resources
from target_core.errors import TargetError
from target_core.read_models.sql_ablation import SHOWN_FORMATS, load_sql_ablation, shown_table
from target_core.tasks import task_rules
from target_core.types import Dataset, TableLookup

CAPTION = ("Each row is an ordinary run of the retriever and generator on the same queries "
           "with seed 002's SQL prompt (its Figure 4): the full system has few-shot pairs "
           "(the benchmark builder's accepted pairs of the query's database, else the "
           "dataset's other queries; never the query itself), column annotations and "
           "chain of thought; each other row removes one. Overall = EA + Alt (an "
           "alternative reading of the question); latency over replies not served from "
           "the cache; p vs base: exact McNemar of overall correctness against the full "
           "system, Holm-adjusted.")
GENERATORS = ["heuristic", "local:smollm2", "openai:gpt-4o-mini"]


def sql_ablation_section(lookup: TableLookup, retriever: str, *, top_k: int,
                         limit: int | None) -> None:
    """The section for a text-to-SQL dataset at the page's retriever, top-k and sample
    (it reads every table's context: a text-to-SQL dataset on its corpus index loads)."""
    if not task_rules(lookup.task).answers_sql:
        return
    dataset = lookup if isinstance(lookup, Dataset) else resources.load_by_name(lookup.name)
    st.subheader("Seed 002: text-to-SQL prompt ablation (Table 2)")
    st.caption(CAPTION)
    cols = st.columns([2, 1, 1])
    generator = cols[0].selectbox("Generator", GENERATORS, key="sql-ablation-generator",
                                  accept_new_options=True,
                                  help="local:smollm2 takes about 10 s per query on this "
                                       "machine; the heuristic reads no prompt.")
    few_shot = int(cols[1].number_input("Few-shot pairs", 1, 20, 3,
                                        key="sql-ablation-shots"))
    answer = cols[2].checkbox("Phrase answers", False, key="sql-ablation-answer",
                              help="The generator also phrases each SQL result as a "
                                   "sentence, scored where queries carry a "
                                   "reference_answer.")
    try:
        report = load_sql_ablation(resources.store(), dataset, retriever, generator,
                                   few_shot=few_shot, answer=answer, top_k=top_k,
                                   limit=limit)
    except TargetError as exc:
        st.error(str(exc))
        return
    jobs.launch_missing(report.missing(), dataset, noun="variant", key="sql-ablation-run")
    for note in report.notes:
        st.warning(note)
    frame = shown_table(report)
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "open": st.column_config.LinkColumn("open", display_text="queries"),
        **{c: st.column_config.TextColumn(alignment="right")
           for c in SHOWN_FORMATS if c in frame}})
    if report.shared_queries():
        st.caption(f"{len(report.shared_queries())} queries, the same for every stored "
                   f"variant; {retriever} → {generator}.")
