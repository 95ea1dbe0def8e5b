"""recall@k (macro): the mean over queries of each query's |gold ∩ top-k| / |gold|.

    recall@k(q) = |G_q ∩ top-k_q| / |G_q|, in [0, 1];  recall@k = (1/n) Σ_q recall@k(q)

Each query weighs the same, whatever its number of gold tables; with one gold table it
equals hit@k. TARGET's number is the micro average (`recall_micro`).
Edge cases: nothing retrieved -> 0.0; k > len(retrieved) counts the whole list;
k <= 0 or empty gold -> ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from target_core.metrics.measures.base import RankBatch, RetrievalMetric, gold_within, score_list
from target_core.metrics.ranking import check_cutoff
from target_core.types import TableKey


def recall_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    return gold_within(batch, ks) / batch.n_gold[:, None]


METRIC = RetrievalMetric(
    "recall", "the mean over queries of each query's recall at k (|gold ∩ top k| / |gold|)",
    values=recall_values, label="mean recall@{k}")


def recall_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> float:
    """recall@k of one ranked list (see the module's docstring)."""
    return score_list(METRIC, retrieved, gold, check_cutoff(k))


def overlap_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> int:
    """|gold ∩ top-k|: how many gold tables are among the first k retrieved; the
    numerator of recall. Edge cases as recall@k's."""
    k = check_cutoff(k)
    batch = RankBatch.of_list(retrieved, gold)
    return int(gold_within(batch, np.array([k], dtype=np.float64))[0, 0])
