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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from target_core.metrics.ranking import check_cutoff, paired_sums
from target_core.types import TableKey


def capped_gold_at_k(n_gold: int, n_retrieved: int, k: int) -> int:
    """capped_gold@k = min(|G|, |top-k|), with |top-k| = min(k, |R|): the most gold
    tables the first k retrieved could hold (TARGET's `total_tables_capped` term).

    Edge cases: nothing retrieved -> 0; k beyond the list counts the whole list;
    k <= 0, |G| < 1 or |R| < 0 -> ValueError. For a list with repeats or more than
    k entries, as TARGET counts it, see `target_counts`.
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


def target_counts(returned: Sequence[TableKey], gold: Sequence[TableKey], k: int, *,
                  whole: bool) -> tuple[int, int]:
    """(overlap, capped gold) of one query, as TARGET 0.1.3 adds them up
    (`_update_retrieval_metrics`): with R the list the retriever returned,

        overlap = |set(G) ∩ set(R)|,   capped gold = min(|G|, len(R)),

    R taken as returned: a table listed twice counts once in the overlap and twice in
    len(R), and entries beyond k count too (TARGET never cuts the list). `whole`: R is
    the list returned at the run's k; otherwise R is its first k entries (a smaller
    cutoff of the same list, repeats kept). For a list without repeats and at most k
    entries this is overlap@k and capped_gold@k of the ranked list.

    Worked example: G = {a, b}, R = [a, x, a, y, b] at k = 3 (whole): overlap =
    |{a, b}| = 2, capped = min(2, 5) = 2; at k = 2 (not whole), R = [a, x]: overlap 1,
    capped min(2, 2) = 2. Errors: empty gold or k <= 0 -> ValueError.
    """
    k = check_cutoff(k)
    if len(gold) == 0:
        raise ValueError("a query needs at least one gold table")
    listed = list(returned) if whole else list(returned)[:k]
    return len(set(gold) & set(listed)), min(len(set(gold)), len(listed))


def returned_shape(returned: Sequence[TableKey], top_k: int) -> dict[str, float]:
    """What a list as returned holds that its ranking does not show, per query:
    `returned_repeats` (entries repeating an earlier one) and `returned_beyond_k`
    (entries past the k it was asked for, repeats included)."""
    return {"returned_repeats": float(len(returned) - len(set(returned))),
            "returned_beyond_k": float(max(0, len(returned) - top_k))}


def returned_summary(rows: Iterable[Mapping[str, float]]) -> dict[str, int]:
    """Over a run's per-query metrics: how many queries' lists held repeats or more than
    k entries, and how many such entries; {} when no query recorded its list as
    returned (every retriever but TARGET-shaped ones and imports)."""
    summary = {"queries": 0, "repeat_queries": 0, "repeats": 0, "beyond_k_queries": 0,
               "beyond_k": 0}
    for row in rows:
        if "returned_repeats" not in row:
            continue
        summary["queries"] += 1
        repeats, beyond = int(row["returned_repeats"]), int(row["returned_beyond_k"])
        summary["repeat_queries"] += repeats > 0
        summary["repeats"] += repeats
        summary["beyond_k_queries"] += beyond > 0
        summary["beyond_k"] += beyond
    return summary if summary["queries"] else {}


def returned_notes(info: Mapping[str, Any]) -> list[str]:
    """One sentence for a run's index info when its lists held repeats or more than k
    entries (`returned_lists`, from returned_summary): `show` and the Run page say it."""
    summary = info.get("returned_lists") or {}
    parts = []
    if summary.get("repeat_queries"):
        parts.append(f"{summary['repeat_queries']} of {summary['queries']} queries listed "
                     f"a table more than once ({summary['repeats']} repeats)")
    if summary.get("beyond_k_queries"):
        parts.append(f"{summary['beyond_k_queries']} listed more than k tables "
                     f"({summary['beyond_k']} extra entries)")
    if not parts:
        return []
    return ["; ".join(parts) + ": recall_micro@k and capped_recall@k count the lists as "
            "returned, as TARGET does (repeats once in the overlap and in full in the "
            "capped denominator, entries beyond k included); rank metrics use each "
            "table's first rank within k"]
