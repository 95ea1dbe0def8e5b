"""LLM table summaries, embedded: TARGET's LlamaIndex baseline.

For each table a generator writes a short name and a summary from the header and the
first rows only; "name\\nsummary" is what gets embedded into Chroma, and queries are
matched against it by cosine similarity. Spec `summary:EMBEDDER[@GENERATOR]`, e.g.
`summary:minilm` (summaries from the offline `heuristic` template, labelled so) or
`summary:openai@openai:gpt-4o-mini` (as the paper: an LLM writes them). OpenAI
replies are cached, so summarizing a corpus twice costs nothing; a table whose
summary failed is indexed under its name alone and counted in the run's index info. A
model's summaries are judged by the failure policy (retrievers/llm_calls.py): too many
failed, the run fails before anything is embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from target_core.config import Settings
from target_core.embeddings.base import Embedder
from target_core.generators import Generator, build_generator
from target_core.generators.base import TableSummary
from target_core.llm.policy import Failure
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import IndexInfo
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.llm_calls import LLMCalls
from target_core.table_view import TableView
from target_core.types import Table
from target_core.vectorstore import VectorStore

SUMMARY_ROWS = 3


class SummaryRetriever(DenseRetriever):
    """A dense retriever over generated table summaries."""

    description = "generated table name + summary, embedded in Chroma (LlamaIndex baseline)"

    def __init__(self, embedder: Embedder, store: VectorStore, summarizer: Generator) -> None:
        super().__init__(embedder, store)
        self.summarizer = summarizer
        self.spec = f"summary:{embedder.spec}@{summarizer.spec}"
        self._summary_info: dict[str, Any] = {}
        self._calls: list[LLMCalls] = []

    @classmethod
    def from_specs(cls, embedder_spec: str, generator_spec: str,
                   settings: Settings) -> SummaryRetriever:
        """From the parts of a `summary:EMBEDDER@GENERATOR` spec (read by the registry)."""
        from target_core.embeddings import get_embedder

        embedder = get_embedder(embedder_spec, settings)
        summarizer = build_generator(generator_spec, settings)
        return cls(embedder, VectorStore.from_settings(settings), summarizer)

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """One "name\\nsummary" text per table (the view does not apply: a summary is
        written from the header and first rows)."""
        texts: list[str] = [""] * len(tables)
        failures: list[Failure] = []

        def one(i: int) -> tuple[int, TableSummary]:
            return i, self.summarizer.summarize(tables[i], rows=SUMMARY_ROWS)

        workers = max(1, self.summarizer.concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="summary") as pool:
            for n, (i, summary) in enumerate(pool.map(one, range(len(tables))), start=1):
                texts[i] = f"{summary.name}\n{summary.summary}".strip() or tables[i].table_id
                if summary.error is not None:
                    failures.append((tables[i].table_id, summary.error, summary.error_class))
                if n % 32 == 0 or n == len(tables):
                    progress(n, len(tables), "summarizing tables")
        self._summary_info = {"summarizer": self.summarizer.label,
                              "summaries_failed": len(failures)}
        if self.summarizer.spec != "heuristic":  # the offline template calls no model
            self._calls = [LLMCalls("summary", "Summaries", "summaries", "table",
                                    "the table was indexed under its name alone",
                                    len(tables), tuple(failures))]
        return texts

    def llm_calls(self) -> list[LLMCalls]:
        """The summarizer's calls of the last prepare_texts (none for the heuristic
        template); a table's id names a failure."""
        return list(self._calls)

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        info = super().index(texts, corpus_key=corpus_key, progress=progress)
        return IndexInfo(info.n_texts, info.seconds, info.details | self._summary_info)
