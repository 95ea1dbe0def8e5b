"""The "No context" baseline of TARGET: retrieve nothing.

Downstream runs with this retriever show what a generator answers from its parametric
knowledge alone, the floor every retriever should beat.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from target_core.progress import Progress, no_progress
from target_core.retrievers.base import Hits, IndexInfo, NotIndexedError, Retriever


class NoContextRetriever(Retriever):
    """Indexes nothing and returns no tables for any query."""

    spec = "no-context"
    description = "No context: retrieves no tables (TARGET's parametric-knowledge baseline)"

    def __init__(self) -> None:
        self._n_docs: int | None = None

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        """Remember only how many texts there are."""
        started = time.perf_counter()
        self._n_docs = len(texts)
        progress(self._n_docs, self._n_docs, "indexed")
        return IndexInfo(n_texts=self._n_docs, seconds=time.perf_counter() - started,
                         details={"vocabulary_size": 0})

    def score_all(self, query: str) -> None:
        """None: this retriever ranks nothing, so no table has a rank."""
        if self._n_docs is None:
            raise NotIndexedError(self.spec)
        return None

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        """An empty hit list for every query."""
        if self._n_docs is None:
            raise NotIndexedError(self.spec)
        return [[] for _ in queries]
