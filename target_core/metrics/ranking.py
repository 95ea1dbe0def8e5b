"""Gold ranks of one ranked list: what every retrieval metric is computed from.

Conventions shared by every retrieval metric (metrics.measures):

* `retrieved` is the ranked list of table keys, best first: rank 1 is `retrieved[0]`.
  It may be shorter than k (the retriever found fewer tables) or longer (a run
  retrieves once at its largest k; every smaller k is a prefix). No key may appear
  twice: a repeated key would push every later table down a rank (ValueError).
* `gold` is the query's gold tables: at least one key, none twice (ValueError).
  Relevance is binary: a table is relevant exactly when it is gold.
* `k` is a cutoff, a positive integer; only `retrieved[:k]` counts. k <= 0 or a
  non-integer raises ValueError. A k larger than the list is fine: the missing ranks
  hold no table, so they hold no gold either.

The metrics themselves, one module each with its formula, are `metrics.measures`
(recall@k, hit@k, reciprocal rank, nDCG@k, db_hit@1 ...); averaging over queries is a
separate step, with macro and micro averages spelled out: see `metrics.retrieval`.
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
