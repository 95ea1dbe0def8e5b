"""mrr: the mean over queries of the reciprocal rank of the first gold table.

    RR(q) = 1 / (rank of the first gold table in the list), 0.0 when none is there

The rank counts over the whole list given, with no cutoff; since a run keeps its top_k
tables, the mean over queries is in effect MRR@top_k. `values` takes a cutoff all the
same (RR@k: 0 beyond k); the run reports it without one (k = inf).
Edge cases: nothing retrieved -> 0.0; empty gold -> ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from target_core.metrics.measures.base import RankBatch, RetrievalMetric, score_list
from target_core.types import TableKey


def reciprocal_rank_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    first = batch.first[:, None]
    return np.where(first <= ks, 1.0 / first, 0.0)


METRIC = RetrievalMetric(
    "mrr", "the mean over queries of 1 / rank of the first gold table (0 if none)",
    values=reciprocal_rank_values, per_k=False)


def reciprocal_rank(retrieved: Sequence[TableKey], gold: Sequence[TableKey]) -> float:
    """RR of one ranked list (see the module's docstring)."""
    return score_list(METRIC, retrieved, gold)
