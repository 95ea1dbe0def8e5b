"""A retriever of TARGET Explorer's own protocol (target_core/retrievers/base.py), with
no base class: `index(texts, *, corpus_key)`, `search(queries, *, top_k)` and, optional,
`score_all(query)` so a gold table beyond k still gets its rank.

    python -m target_core run --dataset demo-qa \
        --retriever py:examples/protocol_retriever.py:OverlapRetriever

The engine gives it each table as text (the run's table view) and expects, per query,
(index into those texts, score) pairs, best first. This one scores a text by the share
of the query's words it contains, so a table naming every word of the question is first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 1}


class OverlapRetriever:
    """The fraction of the query's words found in each table's text."""

    def __init__(self) -> None:
        self.bags: list[set[str]] | None = None

    def index(self, texts: Sequence[str], *, corpus_key: str, **options: Any) -> None:
        self.bags = [words(text) for text in texts]

    def score_all(self, query: str) -> np.ndarray:
        if self.bags is None:
            raise RuntimeError("index() first")
        wanted = words(query)
        if not wanted:
            return np.full(len(self.bags), -np.inf)
        shares = np.array([len(wanted & bag) / len(wanted) for bag in self.bags])
        return np.where(shares > 0, shares, -np.inf)  # -inf: no shared word, never ranked

    def search(self, queries: Sequence[str], *, top_k: int) -> list[list[tuple[int, float]]]:
        results = []
        for query in queries:
            scores = self.score_all(query)
            order = sorted((i for i in range(len(scores)) if np.isfinite(scores[i])),
                           key=lambda i: (-scores[i], i))  # ties: the lower index first
            results.append([(i, float(scores[i])) for i in order[:top_k]])
        return results
