"""hit@k: 1 if any gold table is among the first k retrieved, else 0; averaged (macro).

Also called success@k (trec_eval `success_k`). With one gold table it equals recall@k;
with several it is 1 as soon as one of them is found.
Edge cases: nothing retrieved -> 0; k <= 0 or empty gold -> ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from target_core.metrics.measures.base import RankBatch, RetrievalMetric, score_list
from target_core.metrics.ranking import check_cutoff
from target_core.types import TableKey


def hit_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    return (batch.first[:, None] <= ks).astype(np.float64)


METRIC = RetrievalMetric(
    "hit", "the share of queries with at least one gold table within the top k",
    values=hit_values)


def hit_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> int:
    """hit@k of one ranked list, 0 or 1."""
    return int(score_list(METRIC, retrieved, gold, check_cutoff(k)))
