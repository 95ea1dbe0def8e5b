"""Metrics: pure per-query functions, and averaging over queries as a separate, named step.

Modules (import the one you need; this package imports none of them, so a light
metric never pulls a heavy dependency):

* `ranking`: the gold ranks of one ranked list (validation, cutoffs, DCG discounts).
* `measures`: the retrieval metrics, one module each (recall@k, recall_micro@k,
  capped_recall@k, hit@k, mrr, ndcg@10, db_hit@1), each ONE vectorised computation,
  behind one registry `METRICS` that names, labels and computes them everywhere.
* `retrieval`: `QueryOutcome`, per-query rows for the run store, and the run-level
  names of DESIGN.md (`recall@k`, `recall_micro@k`, `hit@k`, `mrr`, `ndcg@10`,
  `db_hit@1`, `retrieval_ms_*`), all read from `METRICS`; re-exports the per-list
  functions (`recall_at_k` ...).

Metric names are strings like `ndcg@10`: the name, then `@` and the cutoff.
"""
