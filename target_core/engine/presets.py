"""Named pipelines: a retriever, a table view and a generator chosen together.

`gtr-t` is GTR-T (seed 001): tables serialized as CSV, embedded into a vector store
(Chroma), the most similar tables retrieved for a question, an LLM writes SQL over
those tables only, and the SQL is executed (read-only here). The generator defaults to
`openai` as in the paper; `heuristic` runs the same pipeline offline.
"""

from __future__ import annotations

from dataclasses import dataclass

from target_core.errors import UnknownNameError


@dataclass(frozen=True)
class PipelinePreset:
    name: str
    description: str
    retriever: str
    view: str
    generator: str
    context: str = "retrieved"
    context_k: int | None = None
    sql_schema: str = "database"


PRESETS: dict[str, PipelinePreset] = {p.name: p for p in (
    PipelinePreset("gtr-t", "GTR-T: tables as CSV in Chroma, dense retrieval, the LLM writes "
                   "SQL over the retrieved tables, executed read-only", retriever="dense:minilm",
                   view="gtr-csv", generator="openai", context_k=3, sql_schema="tables"),
)}


def pipeline_preset(name: str) -> PipelinePreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownNameError("pipeline preset", name, PRESETS) from None
