"""The retrieval metrics: one module each (its formula, edge cases and one vectorised
computation), registered here in the order a run reports them.

`METRICS` is what everything else reads: `metrics.retrieval` computes a query's row and
a run's numbers from it and names them (`metric_names`); `metrics.labels` takes each
metric's label and definition from it. Adding a metric is one module defining
`METRIC = RetrievalMetric(...)` and one line in `REGISTERED` below
(docs/extending/metric.md). `base` says what an entry holds.
"""

from __future__ import annotations

from target_core.metrics.measures import (
    capped_recall,
    db_hit,
    hit,
    mrr,
    ndcg,
    recall,
    recall_micro,
)
from target_core.metrics.measures.base import MetricRegistry, RetrievalMetric

REGISTERED: tuple[RetrievalMetric, ...] = (
    recall.METRIC, recall_micro.METRIC, capped_recall.METRIC, hit.METRIC, mrr.METRIC,
    ndcg.METRIC, db_hit.METRIC)

METRICS = MetricRegistry(REGISTERED)
"""The registered retrieval metrics, in report order."""
