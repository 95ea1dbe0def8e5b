"""db_hit@1: 1 if the top retrieved table belongs to the gold database, else 0; averaged
(macro). Text-to-SQL's Table 2 "R@1".

TARGET's text-to-SQL retrieval rule: "a successful retrieval occurs when the
ground-truth database contains any of the retrieved tables", evaluated at k = 1, so only
the first table's database_id matters; the table itself need not be gold. A query's row
holds it for every task; a run reports it where Table 2's recall is database-level.
Edge cases: nothing retrieved -> 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from target_core.metrics.measures.base import RankBatch, RetrievalMetric
from target_core.tasks import task_rules
from target_core.types import TableKey


def db_hit_at_1(retrieved: Sequence[TableKey], gold_database: str) -> int:
    """1 if `retrieved[0]` is in `gold_database`, else 0 (nothing retrieved: 0)."""
    return int(len(retrieved) > 0 and retrieved[0][0] == gold_database)


def db_hit_values(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    hits = np.fromiter((db_hit_at_1(q.retrieved, q.gold_database) for q in batch.queries),
                       dtype=np.float64, count=len(batch))
    return np.repeat(hits[:, None], len(ks), axis=1)


METRIC = RetrievalMetric(
    "db_hit", "the share of queries whose top table is in the gold database",
    values=db_hit_values, per_k=False, cutoff=1,
    reported_for=lambda task: task_rules(task).database_level)
