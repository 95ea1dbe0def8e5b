"""LLM table summaries, embedded: TARGET's LlamaIndex baseline.

For each table a generator writes a short name and a summary from the header and the
first rows only; "name\\nsummary" is what gets embedded into Chroma, and queries are
matched against it by cosine similarity. Spec `summary:EMBEDDER[@GENERATOR]`, e.g.
`summary:minilm` (summaries from the offline `heuristic` template, labelled so) or
`summary:openai@openai:gpt-4o-mini` (as the paper: an LLM writes them). OpenAI
replies are cached, so summarizing a corpus twice costs nothing; a table whose
summary failed is indexed under its name alone and counted in the run's index info.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from target_core.config import Settings
from target_core.embeddings.base import Embedder
from target_core.generators import Generator, build_generator
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import IndexInfo
from target_core.retrievers.dense import DenseRetriever
from target_core.types import Table, TableView
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
        failed = 0

        def one(i: int) -> tuple[int, str, bool]:
            summary = self.summarizer.summarize(tables[i], rows=SUMMARY_ROWS)
            return i, f"{summary.name}\n{summary.summary}".strip(), summary.error is not None

        workers = max(1, self.summarizer.concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="summary") as pool:
            for n, (i, text, error) in enumerate(pool.map(one, range(len(tables))), start=1):
                texts[i] = text or tables[i].table_id
                failed += error
                if n % 32 == 0 or n == len(tables):
                    progress(n, len(tables), "summarizing tables")
        self._summary_info = {"summarizer": self.summarizer.label,
                              "summaries_failed": failed}
        return texts

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        info = super().index(texts, corpus_key=corpus_key, progress=progress)
        return IndexInfo(info.n_texts, info.seconds, info.details | self._summary_info)
