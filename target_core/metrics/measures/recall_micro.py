"""recall_micro@k: TARGET's recall, pooled over queries (each gold table weighs the same).

    recall_micro@k = Σ_q |G_q ∩ top-k_q| / Σ_q |G_q|

It differs from recall@k (macro) only when queries have different numbers of gold
tables. A query stores its two terms, `overlap@k` and `n_gold`, so any subset of stored
queries re-aggregates. When a query's list as returned is known and differs from its
ranking (a TARGET-shaped plug-in, an imported TARGET file: a table listed twice, more
than k tables), `overlap@k` counts that list as TARGET does (metrics.capped.target_counts).
Edge cases: nothing retrieved anywhere -> 0.0.
"""

from __future__ import annotations

import numpy as np

from target_core.metrics.capped import target_counts
from target_core.metrics.measures.base import Part, RankBatch, RetrievalMetric, gold_within


def as_returned(batch: RankBatch, ks: np.ndarray, values: np.ndarray, term: int
                ) -> np.ndarray:
    """`values` with the rows of queries whose list as returned is known replaced by
    TARGET's count of that list (term 0: overlap, 1: capped gold); the largest cutoff
    is the run's own (the whole list), smaller ones its first k entries."""
    for i, query in enumerate(batch.queries):
        if query.returned is not None:
            for j, k in enumerate(ks):
                values[i, j] = target_counts(query.returned, query.gold, int(k),
                                             whole=k == ks[-1])[term]
    return values


def overlap_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    return as_returned(batch, ks, gold_within(batch, ks).astype(np.float64), 0)


def n_gold_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    return np.broadcast_to(batch.n_gold[:, None], (len(batch), len(ks))).astype(np.float64)


OVERLAP = Part("overlap", True, overlap_values)
N_GOLD = Part("n_gold", False, n_gold_values)

METRIC = RetrievalMetric(
    "recall_micro", "TARGET's recall at k (micro): Σ gold tables within the top k / Σ gold "
                    "tables, over all queries",
    pooled=(OVERLAP, N_GOLD), label="R@{k}{tables}")
