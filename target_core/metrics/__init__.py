"""Metrics: pure per-query functions, and averaging over queries as a separate, named step.

Modules (import the one you need; this package imports none of them, so a light
metric never pulls a heavy dependency):

* `ranking`: retrieval metrics of one ranked list against its gold set (recall@k,
  hit@k, reciprocal rank, nDCG@k, db_hit@1, gold ranks), each with its formula.
* `retrieval`: `QueryOutcome`, per-query rows for the run store, and the run-level
  names of DESIGN.md (`recall@k`, `recall_micro@k`, `hit@k`, `mrr`, `ndcg@10`,
  `db_hit@1`, `retrieval_ms_*`); re-exports everything in `ranking`.

Metric names are strings like `ndcg@10`: the name, then `@` and the cutoff.
"""
