"""Dense retrieval: table texts embedded once into Chroma, queries by cosine similarity.

The collection is named by (texts, embedder), so a second run of the same configuration
embeds nothing. Embedding goes in chunks that are stored as they finish: a run killed
while embedding resumes where it stopped; progress comes from the embedder within a
chunk (MiniLM: every batch, at most 64 tables). That scaffolding is
retrievers/chroma_base.py's, shared with rows.

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

from target_core.progress import Progress, no_progress
from target_core.retrievers.base import Hits, IndexInfo, top_k_hits
from target_core.retrievers.chroma_base import EMBED_CHUNK, ChromaRetriever

__all__ = ["EMBED_CHUNK", "DenseRetriever"]


class DenseRetriever(ChromaRetriever):
    """Embeddings in a Chroma collection; `spec` is "dense:<embedder spec>"."""

    description = "embeddings in Chroma, cosine similarity"
    family = "dense"
    unit = "tables"

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        started = time.perf_counter()
        name, collection, n_missing, truncated = self.open_collection(
            corpus_key, [str(i) for i in range(len(texts))], texts,
            {"corpus_key": corpus_key, "embedder": self.embedder.spec, "n_texts": len(texts)},
            progress)
        return IndexInfo(len(texts), time.perf_counter() - started, {
            "collection": name, "store": self.store.description, "embedded": n_missing,
            "cached": len(texts) - n_missing, "truncated": truncated,
            "embedder": self.embedder.spec, "ef_search": _ef_search(collection),
            "backend": self.embedder.backend})

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        collection = self._require()
        vectors = self.embed_queries(queries)
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
        return self.exact_scores(query)


def _ef_search(collection: Any) -> int | None:
    """The collection's HNSW search breadth (fixed when it was created), for the record."""
    try:
        return int(collection.configuration_json["hnsw"]["ef_search"])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
