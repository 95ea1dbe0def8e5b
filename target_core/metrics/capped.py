"""TARGET's capped recall: recall whose denominator never asks for more gold tables than
the list had room for.

TARGET 0.1.3 (tasks/AbsTask.py, `_update_retrieval_metrics`) adds up, over queries,
`num_overlap += |G_q ∩ R_q|` and `total_tables_capped += min(|G_q|, |R_q|)`, and
reports `capped_recall = num_overlap / total_tables_capped`, where R_q is the list the
retriever returned at k. A query with three gold tables searched at k = 1 can at best
find one of them: recall counts it as 1/3, capped recall as 1/1.

Like `recall_micro@k` it is pooled over queries (micro), so it is stored per query as
two summable numbers, `overlap@k` and `capped_gold@k`, and any subset of stored
queries re-aggregates to its own capped recall.
"""

from __future__ import annotations

from collections.abc import Iterable

from target_core.metrics.ranking import check_cutoff, paired_sums


def capped_gold_at_k(n_gold: int, n_retrieved: int, k: int) -> int:
    """capped_gold@k = min(|G|, |top-k|), with |top-k| = min(k, |R|): the most gold
    tables the first k retrieved could hold (TARGET's `total_tables_capped` term).

    Edge cases: nothing retrieved -> 0; k beyond the list counts the whole list;
    k <= 0, |G| < 1 or |R| < 0 -> ValueError. TARGET takes |R| as returned, so a
    retriever that lists one table twice counts it twice there; a run here never
    holds a table twice (the importer keeps each table's first rank).
    """
    k = check_cutoff(k)
    if n_gold < 1:
        raise ValueError(f"a query needs at least one gold table, got {n_gold}")
    if n_retrieved < 0:
        raise ValueError(f"the number of retrieved tables cannot be negative: {n_retrieved}")
    return min(n_gold, min(k, n_retrieved))


def capped_recall(overlaps: Iterable[float], capped_golds: Iterable[float]) -> float:
    """capped_recall@k = Σ_q |G_q ∩ top-k_q| / Σ_q min(|G_q|, |top-k_q|) (micro).

    From stored per-query `overlap@k` and `capped_gold@k`. It equals `recall_micro@k`
    when every list is full and no query has more gold tables than k; it is never
    below it. Edge cases: Σ capped_gold = 0 (no query retrieved anything) -> 0.0
    (TARGET divides by zero there); lengths differ or no queries -> ValueError.
    """
    over, capped = paired_sums(overlaps, capped_golds, "capped gold sizes")
    total = capped.sum()
    return float(over.sum() / total) if total > 0 else 0.0
