"""One query's stored outcome in a run (QueryResult), and its cheap summary (QueryScore):
what RunStore writes and reads per query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from target_core.metrics.retrieval import QueryOutcome
from target_core.tasks.failure import failed_at, last_gold_rank
from target_core.types import TableKey


@dataclass(frozen=True)
class QueryResult:
    """One query's outcome in a run."""

    query_id: str
    position: int
    ranked: list[tuple[TableKey, float]]
    gold: list[TableKey]
    gold_ranks: dict[TableKey, int | None]
    metrics: dict[str, float]
    ms: float
    generation: dict[str, Any] | None = None
    """The generator's answer, its context and its evaluation (None: retrieval only)."""

    @property
    def best_rank(self) -> int | None:
        """Best (lowest) rank of any gold table, beyond top_k when known; None: unranked."""
        ranks = [r for r in self.gold_ranks.values() if r is not None]
        return min(ranks) if ranks else None

    @property
    def last_rank(self) -> int | None:
        """The rank by which every gold table was retrieved (tasks.failure.last_gold_rank)."""
        return last_gold_rank(self.gold_ranks)

    def failed_at(self, k: int) -> bool:
        """Retrieval failed at k: some gold table is not within the first k."""
        return failed_at(self.last_rank, k)

    def outcome(self) -> QueryOutcome:
        """The metrics' view of this result (what the retriever returned against gold)."""
        return QueryOutcome(query_id=self.query_id, retrieved=[k for k, _ in self.ranked],
                            gold=tuple(self.gold), gold_database=self.gold[0][0], ms=self.ms)


@dataclass(frozen=True)
class QueryScore:
    """A query's metrics and best gold rank, read without its ranked list (which is most
    of a stored result): what comparisons and tests need, cheap for thousands of queries."""

    query_id: str
    metrics: dict[str, float]
    best_rank: int | None
    """As QueryResult.best_rank, computed by SQLite."""
    last_rank: int | None
    """As QueryResult.last_rank, computed by SQLite."""

    def failed_at(self, k: int) -> bool:
        """Retrieval failed at k: some gold table is not within the first k."""
        return failed_at(self.last_rank, k)
