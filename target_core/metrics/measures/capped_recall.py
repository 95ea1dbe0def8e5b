"""capped_recall@k: TARGET's capped recall, pooled over queries (metrics.capped).

    capped_recall@k = Σ_q |G_q ∩ top-k_q| / Σ_q min(|G_q|, |top-k_q|)

The denominator never asks for more gold tables than the list had room for. A query
stores `overlap@k` and `capped_gold@k`; lists as returned count as TARGET counts them
(see recall_micro). Edge cases: Σ capped_gold = 0 (nothing retrieved) -> 0.0.
"""

from __future__ import annotations

import numpy as np

from target_core.metrics.measures.base import Part, RankBatch, RetrievalMetric
from target_core.metrics.measures.recall_micro import OVERLAP, as_returned


def capped_gold_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    capped = np.minimum(batch.n_gold[:, None], np.minimum(batch.lengths[:, None], ks))
    return as_returned(batch, ks, capped, 1)


CAPPED_GOLD = Part("capped_gold", True, capped_gold_values)

METRIC = RetrievalMetric(
    "capped_recall", "TARGET's capped recall at k: Σ gold tables within the top k / "
                     "Σ min(k, |gold|)",
    pooled=(OVERLAP, CAPPED_GOLD), label="capped R@{k}{tables}")
