"""ndcg@10: the mean over queries of nDCG at 10, binary relevance (trec_eval's
`ndcg_cut_10`).

    DCG@k  = Σ over gold tables at rank r <= k of 1 / log2(r + 1), added in rank order
    IDCG@k = Σ for i = 1 .. min(|gold|, k) of 1 / log2(i + 1)
    nDCG@k = DCG@k / IDCG@k, in [0, 1]

Every gain is 1; the ideal list puts all gold tables first, so a query with more gold
tables than k reaches 1.0 once the first k are all gold. Reported at 10 whatever the
run's top_k (ranks beyond top_k hold no table).
Edge cases: nothing retrieved, or all gold beyond k -> 0.0; k > len(retrieved) is fine;
k <= 0 or empty gold -> ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from target_core.metrics.measures.base import RankBatch, RetrievalMetric, score_list
from target_core.metrics.ranking import check_cutoff, ideal_dcg
from target_core.types import TableKey

NDCG_K = 10


def ndcg_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    out = np.empty((len(batch), len(ks)))
    for j, k in enumerate(ks):
        ideal = np.array([ideal_dcg(m) if m else 1.0 for m in range(int(k) + 1)])
        out[:, j] = _dcg(batch, k) / ideal[np.minimum(batch.n_gold, int(k))]
    return out


def _dcg(batch: RankBatch, k: float) -> np.ndarray:
    """Each query's DCG@k, its gains added one by one in rank order (as trec_eval does,
    so a query's value does not depend on how its gold is listed)."""
    query = np.repeat(np.arange(len(batch)), batch.n_gold)
    order = np.lexsort((batch.ranks, query))  # by query, then by rank
    ranks, query = batch.ranks[order], query[order]
    found = ranks <= k
    position = (np.arange(len(ranks)) - batch.starts[query])[found]  # 0 = best found
    gains = np.zeros((len(batch), int(position.max()) + 1 if position.size else 0))
    gains[query[found], position] = 1.0 / np.log2(ranks[found] + 1.0)
    dcg = np.zeros(len(batch))
    for column in gains.T:
        dcg = dcg + column
    return dcg


METRIC = RetrievalMetric(
    "ndcg", f"the mean over queries of nDCG at {NDCG_K} (binary gain)",
    values=ndcg_values, per_k=False, cutoff=NDCG_K)


def ndcg_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> float:
    """nDCG@k of one ranked list (see the module's docstring)."""
    return score_list(METRIC, retrieved, gold, check_cutoff(k))
