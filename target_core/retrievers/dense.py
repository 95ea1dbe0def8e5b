"""Dense retrieval: table texts embedded once into Chroma, queries by cosine similarity.

The collection is named by (texts, embedder), so a second run of the same configuration
embeds nothing. Embedding goes in chunks that are stored as they finish: a run killed
while embedding resumes where it stopped; progress comes from the embedder within a
chunk (MiniLM: every batch, at most 64 tables).

Per query: the question is embedded once, Chroma gives the top k (and one more: when
the cut splits texts of equal score, every text is scored exactly and ties go to the
lower index, so a smaller k always gives a prefix of a larger k's list), and gold-rank
scoring of a missed query (score_all) reuses that vector against every stored vector,
with BLAS on one thread so that no OpenBLAS worker is left spinning against the next
query's embedding and search (benchmarks/dense_speed.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.embeddings.base import Embedder, blas_threads
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import (
    Hits,
    IndexInfo,
    NotIndexedError,
    Retriever,
    top_k_hits,
)
from target_core.vectorstore import VectorStore, collection_name

EMBED_CHUNK = 256


class DenseRetriever(Retriever):
    """Embeddings in a Chroma collection; `spec` is "dense:<embedder spec>"."""

    description = "embeddings in Chroma, cosine similarity"

    def __init__(self, embedder: Embedder, store: VectorStore) -> None:
        self.embedder = embedder
        self.store = store
        self.spec = f"dense:{embedder.spec}"
        self._collection: Any = None
        self._n = 0
        self._matrix: np.ndarray | None = None
        self._last_vectors: dict[str, np.ndarray] = {}
        """The queries of the last search and their vectors: gold-rank scoring of a missed
        query (score_all) comes right after its search and reuses its vector."""

    @classmethod
    def from_spec(cls, embedder_spec: str, settings: Settings,
                  store: VectorStore | None = None) -> DenseRetriever:
        from target_core.embeddings import get_embedder

        embedder = get_embedder(embedder_spec, settings)  # raises before any work
        return cls(embedder, store or VectorStore.from_settings(settings))

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        started = time.perf_counter()
        name = collection_name(corpus_key, self.embedder.fingerprint())

        def waiting() -> None:
            progress(0, len(texts), "waiting: another run is embedding these tables")

        # open and read the collection only once it is ours: a process that read it while
        # another was still adding to it cannot search it afterwards (Chroma 1.5 keeps its
        # first view: "Error creating hnsw segment reader: Nothing found on disk")
        with self.store.writing(name, waiting):
            collection = self.store.collection(name, {"corpus_key": corpus_key,
                                                      "embedder": self.embedder.spec,
                                                      "n_texts": len(texts)})
            n_missing, truncated = self._embed_missing(collection, texts, progress)
        self.embedder.load()  # not inside the first query's time
        self._collection, self._n, self._matrix = collection, len(texts), None
        return IndexInfo(len(texts), time.perf_counter() - started, {
            "collection": name, "store": self.store.description, "embedded": n_missing,
            "cached": len(texts) - n_missing, "truncated": truncated,
            "embedder": self.embedder.spec, "ef_search": _ef_search(collection),
            "backend": self.embedder.backend})

    def _embed_missing(self, collection: Any, texts: Sequence[str], progress: Progress
                       ) -> tuple[int, int]:
        """Embed and store the texts not stored yet, in chunks; (how many, truncated)."""
        ids = [str(i) for i in range(len(texts))]
        stored = self.store.stored_ids(collection)
        missing = [i for i, id_ in enumerate(ids) if id_ not in stored]
        progress(len(texts) - len(missing), len(texts), "embedding tables")
        truncated = 0
        for start in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[start:start + EMBED_CHUNK]
            before = len(texts) - len(missing) + start

            def within(done: int, total: int, what: str, before: int = before) -> None:
                progress(before + done, len(texts), "embedding tables")

            vectors = self.embedder.embed([texts[i] for i in chunk], kind="document",
                                          progress=within)
            truncated += self.embedder.last_truncated
            self.store.add(collection, [ids[i] for i in chunk], vectors)
            progress(before + len(chunk), len(texts), "embedding tables")
        return len(missing), truncated

    def _require(self) -> Any:
        if self._collection is None:
            raise NotIndexedError(self.spec)
        return self._collection

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        collection = self._require()
        vectors = self.embedder.embed(list(queries), kind="query")
        self._last_vectors = dict(zip(queries, np.asarray(vectors), strict=True))
        # One more than asked shows whether the cut falls inside a group of equal scores.
        found = self.store.query(collection, vectors, top_k + 1, size=self._n)
        results = []
        for query, hits in zip(queries, found, strict=True):
            # Chroma's HNSW breaks exact ties arbitrarily; ties go to the lower index
            ranked = sorted(((int(i), s) for i, s in hits), key=lambda h: (-h[1], h[0]))
            if 0 < top_k < len(ranked) and ranked[top_k][1] == ranked[top_k - 1][1]:
                # which of the tied texts made the cut was Chroma's choice: score them all,
                # so the top 5 is always the first 5 of the top 10
                ranked = top_k_hits(self.score_all(query), top_k)
            results.append(ranked[:top_k])
        return results

    def score_all(self, query: str) -> np.ndarray:
        """Exact cosine of the query with every stored text (vectors are normalized); a
        query of the last search is not embedded again."""
        collection = self._require()
        if self._matrix is None:
            self._matrix = self.store.vectors(collection, [str(i) for i in range(self._n)])
        vector = self._last_vectors.get(query)
        if vector is None:
            vector = np.asarray(self.embedder.embed([query], kind="query")[0])
        with blas_threads(1):  # a second thread gains ~0.1 ms and then spins ~100 ms
            return self._matrix @ vector


def _ef_search(collection: Any) -> int | None:
    """The collection's HNSW search breadth (fixed when it was created), for the record."""
    try:
        return int(collection.configuration_json["hnsw"]["ef_search"])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
