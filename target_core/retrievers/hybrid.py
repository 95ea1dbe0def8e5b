"""Hybrid retrieval: reciprocal-rank fusion (RRF) of BM25 and a dense retriever.

score(t) = Σ_r 1 / (K + rank_r(t)) over the two rankings, K = 60 (Cormack et al., 2009);
a table absent from one ranking's candidate list contributes nothing for it. Each
ranking contributes its top `depth` candidates.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from target_core.config import Settings
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import Hits, IndexInfo, Retriever
from target_core.retrievers.dense import DenseRetriever

RRF_K = 60
DEPTH = 100


def rrf(rankings: Sequence[Hits], top_k: int, k: int = RRF_K) -> Hits:
    """Fuse rankings of (index, score) by reciprocal rank; ties go to the lower index."""
    fused: dict[int, float] = defaultdict(float)
    for hits in rankings:
        for rank, (index, _) in enumerate(hits, start=1):
            fused[index] += 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:top_k]


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every index under `scores`, ties to the lower index."""
    order = np.lexsort((np.arange(scores.size), -scores))
    ranks = np.empty(scores.size, dtype=np.int64)
    ranks[order] = np.arange(1, scores.size + 1)
    return ranks


class HybridRetriever(Retriever):
    """RRF of a lexical and a dense retriever; `spec` is "hybrid:<embedder spec>"."""

    description = "reciprocal-rank fusion of bm25 and a dense retriever"

    def __init__(self, lexical: Retriever, dense: DenseRetriever, depth: int = DEPTH) -> None:
        self.lexical = lexical
        self.dense = dense
        self.depth = depth
        self.spec = f"hybrid:{dense.embedder.spec}"

    @classmethod
    def from_spec(cls, embedder_spec: str, settings: Settings) -> HybridRetriever:
        from target_core.retrievers.bm25 import BM25Retriever

        return cls(BM25Retriever(), DenseRetriever.from_spec(embedder_spec, settings))

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        started = time.perf_counter()
        lexical = self.lexical.index(texts, corpus_key=corpus_key, progress=progress)
        dense = self.dense.index(texts, corpus_key=corpus_key, progress=progress)
        details = {f"bm25_{k}": v for k, v in lexical.details.items()}
        details.update(dense.details)
        return IndexInfo(len(texts), time.perf_counter() - started, details)

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        depth = max(self.depth, top_k)
        lexical = self.lexical.search(queries, top_k=depth)
        dense = self.dense.search(queries, top_k=depth)
        return [rrf([a, b], top_k) for a, b in zip(lexical, dense, strict=True)]

    def score_all(self, query: str) -> np.ndarray | None:
        """RRF over the full rankings (every table is a candidate in both)."""
        lexical = self.lexical.score_all(query)
        dense = self.dense.score_all(query)
        if lexical is None or dense is None:
            return None
        return 1.0 / (RRF_K + _ranks(lexical)) + 1.0 / (RRF_K + _ranks(dense))
