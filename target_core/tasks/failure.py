"""When a query's retrieval failed: the one definition, for every task.

Retrieval failure at k (TARGET's recall: every gold table counts): a query fails at k
when some gold table is not among the first k retrieved tables. A query with several gold
tables that found some of them within k has failed too (recall@k < 1); `hit@k` (any gold
table within k) stays a metric of its own, but never decides what failed.
"""

from __future__ import annotations

from collections.abc import Mapping

from target_core.types import TableKey

__all__ = ["FAILED_AT_SQL", "FAILURE_RULE", "LAST_GOLD_RANK_SQL", "failed_at",
           "last_gold_rank", "missing_gold"]

FAILURE_RULE = ("a query fails at k when some gold table is not among the first k "
                "retrieved (TARGET's recall: with several gold tables, finding only some "
                "of them is a failure)")
"""The failure definition in words, for pages and help texts."""


def last_gold_rank(gold_ranks: Mapping[TableKey, int | None]) -> int | None:
    """The rank by which every gold table has been retrieved: the worst gold rank.

    None when some gold table was never ranked; 0 when there is no gold table (nothing
    to find). RunStore.query_scores computes the same in SQL.
    """
    ranks = list(gold_ranks.values())
    if not ranks:
        return 0
    if any(r is None for r in ranks):
        return None
    return max(r for r in ranks if r is not None)


def failed_at(last_rank: int | None, k: int) -> bool:
    """Whether a query whose last gold table came at `last_rank` failed at k."""
    return last_rank is None or last_rank > k


LAST_GOLD_RANK_SQL = ("(SELECT CASE WHEN COUNT(*) = 0 THEN 0 WHEN COUNT(*) = COUNT(value) "
                      "THEN MAX(value) END FROM json_each(gold_ranks))")
"""last_gold_rank in SQLite, over a stored result's `gold_ranks` JSON object (the run
store's query_results): NULL when a gold table is unranked (COUNT skips JSON nulls), 0
when there is no gold table."""
FAILED_AT_SQL = "(last_rank IS NULL OR last_rank > ?)"
"""failed_at in SQLite, of a column `last_rank` (LAST_GOLD_RANK_SQL), k the parameter."""


def missing_gold(gold: list[TableKey], gold_ranks: Mapping[TableKey, int | None], k: int
                 ) -> list[TableKey]:
    """The gold tables not within the first k, in gold order."""
    return [g for g in gold if (rank := gold_ranks.get(g)) is None or rank > k]
