"""Retrieval metrics of one query: pure functions of a ranked list and its gold set.

Conventions shared by every function here:

* `retrieved` is the ranked list of table keys, best first: rank 1 is `retrieved[0]`.
  It may be shorter than k (the retriever found fewer tables) or longer (a run
  retrieves once at its largest k; every smaller k is a prefix). No key may appear
  twice: a repeated key would push every later table down a rank (ValueError).
* `gold` is the query's gold tables: at least one key, none twice (ValueError).
  Relevance is binary: a table is relevant exactly when it is gold.
* `k` is a cutoff, a positive integer; only `retrieved[:k]` counts. k <= 0 or a
  non-integer raises ValueError. A k larger than the list is fine: the missing ranks
  hold no table, so they hold no gold either.

Each function returns one type (int or float, as annotated). Averaging over queries is
a separate step, with macro and micro averages spelled out: see `metrics.retrieval`.
The rank-based helpers at the end (`overlap_of_ranks` ...) are the same formulas on
precomputed gold ranks, shared with `metrics.retrieval` so both agree by construction.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from target_core.types import TableKey

GoldRanks = tuple[int | None, ...]
"""The 1-based rank of each gold key in `retrieved`, aligned with `gold`; None = absent."""


def check_cutoff(k: int, *, name: str = "k") -> int:
    """`k` as an int, or ValueError unless it is a positive integer (bool is not)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    return int(k)


def rank_positions(retrieved: Sequence[TableKey], gold: Sequence[TableKey]) -> GoldRanks:
    """The rank of each gold key in `retrieved` (1-based, None when absent), in gold order.

    Validates both lists: ValueError for empty gold, a key twice in gold, or a key
    twice in retrieved. Every metric of this module is a function of these ranks and
    len(gold), which is how `QueryOutcome` computes them only once per query.
    """
    if len(gold) == 0:
        raise ValueError("gold must name at least one table")
    members = set(retrieved)
    if len(members) != len(retrieved):
        raise ValueError(f"retrieved lists table {_first_repeat(retrieved)!r} more than once")
    if len(set(gold)) != len(gold):
        raise ValueError(f"gold lists table {_first_repeat(gold)!r} more than once")
    # A set plus index() for the few gold tables found beats a key -> rank dict (~30%).
    return tuple(retrieved.index(key) + 1 if key in members else None for key in gold)


def _first_repeat(keys: Sequence[TableKey]) -> TableKey | None:
    seen: set[TableKey] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None


def gold_ranks(retrieved: Sequence[TableKey],
               gold: Sequence[TableKey]) -> dict[TableKey, int | None]:
    """Gold key -> its 1-based rank in `retrieved`, or None when it was not retrieved.

    Ranks count over the whole list given, not up to some k. Keys keep gold's order.
    Edge cases: empty gold or a repeated key in either list -> ValueError.
    """
    return dict(zip(gold, rank_positions(retrieved, gold), strict=True))


def overlap_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> int:
    """|gold ∩ top-k|: how many gold tables are among the first k retrieved.

    The numerator of recall; summed over queries it gives micro recall
    (Σ overlap@k / Σ |gold|, TARGET's reported number).
    Edge cases: nothing retrieved -> 0; gold only beyond k -> 0; k > len(retrieved)
    counts the whole list; k <= 0 or empty gold -> ValueError.
    """
    k = check_cutoff(k)
    return overlap_of_ranks(rank_positions(retrieved, gold), k)


def recall_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> float:
    """recall@k = |gold ∩ top-k| / |gold|, in [0, 1].

    Averaged over queries this is macro recall (each query weighs the same, whatever
    its number of gold tables). With one gold table it equals hit@k.
    Edge cases: nothing retrieved -> 0.0; k > len(retrieved) counts the whole list;
    k <= 0 or empty gold -> ValueError.
    """
    k = check_cutoff(k)
    return overlap_of_ranks(rank_positions(retrieved, gold), k) / len(gold)


def hit_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> int:
    """hit@k = 1 if any gold table is among the first k retrieved, else 0.

    Also called success@k (trec_eval `success_k`). With one gold table it equals
    recall@k; with several it is 1 as soon as one of them is found.
    Edge cases: nothing retrieved -> 0; k <= 0 or empty gold -> ValueError.
    """
    k = check_cutoff(k)
    return hit_of_ranks(rank_positions(retrieved, gold), k)


def reciprocal_rank(retrieved: Sequence[TableKey], gold: Sequence[TableKey]) -> float:
    """RR = 1 / (rank of the first gold table in `retrieved`), 0.0 when none is there.

    The rank counts over the whole list given, with no cutoff; since a run keeps its
    top_k tables, the mean over queries (MRR) is in effect MRR@top_k.
    Edge cases: nothing retrieved -> 0.0; empty gold -> ValueError.
    """
    return reciprocal_rank_of_ranks(rank_positions(retrieved, gold))


def ndcg_at_k(retrieved: Sequence[TableKey], gold: Sequence[TableKey], k: int) -> float:
    """nDCG@k with binary relevance, the trec_eval (`ndcg_cut_k`) definition.

        DCG@k  = Σ over gold tables at rank r <= k of 1 / log2(r + 1)
        IDCG@k = Σ for i = 1 .. min(|gold|, k) of 1 / log2(i + 1)
        nDCG@k = DCG@k / IDCG@k, in [0, 1]

    Every gain is 1; the ideal list puts all gold tables first, so a query with more
    gold tables than k reaches 1.0 once the first k are all gold.
    Edge cases: nothing retrieved, or all gold beyond k -> 0.0; k > len(retrieved) is
    fine; k <= 0 or empty gold -> ValueError.
    """
    k = check_cutoff(k)
    return ndcg_of_ranks(rank_positions(retrieved, gold), k)


def db_hit_at_1(retrieved: Sequence[TableKey], gold_database: str) -> int:
    """db_hit@1 = 1 if the top retrieved table belongs to the gold database, else 0.

    TARGET's text-to-SQL retrieval rule: "a successful retrieval occurs when the
    ground-truth database contains any of the retrieved tables", evaluated at k = 1,
    so only `retrieved[0]`'s database_id matters; the table itself need not be gold.
    Edge cases: nothing retrieved -> 0.
    """
    return int(len(retrieved) > 0 and retrieved[0][0] == gold_database)


# --- the same formulas on precomputed gold ranks ------------------------------------------

def overlap_of_ranks(ranks: GoldRanks, k: int) -> int:
    """How many of `ranks` are at most k (None never is)."""
    return sum(1 for r in ranks if r is not None and r <= k)


def hit_of_ranks(ranks: GoldRanks, k: int) -> int:
    return int(any(r is not None and r <= k for r in ranks))


def reciprocal_rank_of_ranks(ranks: GoldRanks) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def ndcg_of_ranks(ranks: GoldRanks, k: int) -> float:
    dcg = sum(discount(r) for r in sorted(r for r in ranks if r is not None and r <= k))
    return dcg / ideal_dcg(min(len(ranks), k))


def discount(rank: int) -> float:
    """The DCG discount of a 1-based rank: 1 / log2(rank + 1)."""
    return 1.0 / math.log2(rank + 1)


@lru_cache(maxsize=256)
def ideal_dcg(n_relevant: int) -> float:
    """IDCG of `n_relevant` gain-1 items at ranks 1..n: Σ 1 / log2(i + 1)."""
    return math.fsum(discount(i) for i in range(1, n_relevant + 1))


def paired_sums(overlaps: Iterable[float], denominators: Iterable[float], what: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per-query overlaps and their denominators as arrays, for a micro average
    (Σ overlap / Σ denominator). Errors: lengths differ or no queries -> ValueError."""
    over = np.fromiter(overlaps, dtype=np.float64)
    under = np.fromiter(denominators, dtype=np.float64)
    if over.size != under.size:
        raise ValueError(f"{over.size} overlaps but {under.size} {what}")
    if under.size == 0:
        raise ValueError("no queries to average")
    return over, under
