"""A run's evaluation by error source, as reported (seed 002, Table 1): the sources in
the order they are checked, what each means, one row per query, and the counts and
percentages Table 1 shows. How a query gets its source is `error_sources`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from target_core.metrics.downstream import difficulty_order

SOURCES: tuple[str, ...] = ("exact", "alternative", "retrieval", "sql", "time", "other")
"""In the order they are checked: a query gets the first that applies."""

DEFINITIONS: dict[str, str] = {
    "exact": "The generated SQL returns the gold query's result (the run's execution-accuracy "
             "rule: equal row sets).",
    "alternative": "The result differs from gold but one row set contains the other (same "
                   "columns, both non-empty) for one reading of the question: the gold query "
                   "or one of its alternatives (another time range, metric or granularity), "
                   "run on the gold database.",
    "retrieval": "The generator queried another database than the gold one, one the "
                 "retrieved context offered, so the context missed or misranked the gold "
                 "one (not in the paper; this product's focus).",
    "sql": "No SQL was generated, the generation call failed, the SQL did not execute "
           "(error, timeout, refused write), or it was written for a database the prompt "
           "never showed (an invented database id).",
    "time": "Only the time handling was wrong: once every WHERE/HAVING condition on the "
            "query's time column is removed from both queries, their results match.",
    "other": "Any other wrong result: a wrong metric, column, join, grouping or filter.",
}

TABLE_COLUMNS: tuple[str, ...] = ("Overall", "EA", "Alt", "Time", "SQL", "Retrieval", "Others")
"""Table 1's columns (plus Retrieval); Overall = EA + Alt."""
_COLUMN_SOURCES: dict[str, tuple[str, ...]] = {
    "Overall": ("exact", "alternative"), "EA": ("exact",), "Alt": ("alternative",),
    "Time": ("time",), "SQL": ("sql",), "Retrieval": ("retrieval",), "Others": ("other",)}


@dataclass(frozen=True)
class SourceRow:
    """One query's error source and why, in one line."""

    query_id: str
    difficulty: str | None
    source: str
    detail: str
    alternative_kind: str | None = None
    """The kind of the matching reading (source "alternative" only): "gold" or an
    alternative's kind."""


def _percentages(rows: tuple[SourceRow, ...] | list[SourceRow]) -> dict[str, float]:
    """Each TABLE_COLUMNS entry as 100 · (queries of its sources) / (all queries)."""
    counts = Counter(r.source for r in rows)
    return {column: 100.0 * sum(counts[s] for s in sources) / len(rows)
            for column, sources in _COLUMN_SOURCES.items()}


@dataclass(frozen=True)
class ErrorSourceReport:
    """The sources of a run's queries, in query order."""

    run_id: str
    dataset: str
    label: str
    """The run's label, e.g. "bm25 → heuristic"; the row name of `table()`."""
    rows: tuple[SourceRow, ...]

    @property
    def n_queries(self) -> int:
        return len(self.rows)

    @property
    def counts(self) -> dict[str, int]:
        """Queries per source, every source listed (in SOURCES order)."""
        found = Counter(r.source for r in self.rows)
        return {source: found[source] for source in SOURCES}

    @property
    def alternative_counts(self) -> dict[str, int]:
        """Alternative interpretations per kind of the reading matched ("gold" or an
        alternative's kind; kinds that matched only)."""
        return dict(Counter(r.alternative_kind for r in self.rows if r.alternative_kind))

    def frame(self) -> pd.DataFrame:
        """One row per query: query_id, difficulty, source, alternative kind, detail."""
        return pd.DataFrame([asdict(r) for r in self.rows],
                            columns=["query_id", "difficulty", "source", "alternative_kind",
                                     "detail"])

    def table(self) -> pd.DataFrame:
        """Table 1's layout: one row (the run), TABLE_COLUMNS as % of all queries."""
        return pd.DataFrame([_percentages(self.rows)], columns=list(TABLE_COLUMNS),
                            index=pd.Index([self.label], name="run"))

    def by_difficulty(self) -> pd.DataFrame:
        """The same columns per difficulty level (% of that level's queries), levels in
        `difficulty_order`; queries without a difficulty count only in `table()`."""
        levels = difficulty_order({r.difficulty for r in self.rows if r.difficulty})
        data = [_percentages([r for r in self.rows if r.difficulty == level])
                for level in levels]
        return pd.DataFrame(data, columns=list(TABLE_COLUMNS),
                            index=pd.Index(levels, name="difficulty"))

    def to_dict(self) -> dict[str, Any]:
        by_level = self.by_difficulty()
        return {"run_id": self.run_id, "dataset": self.dataset, "label": self.label,
                "n_queries": self.n_queries, "counts": self.counts,
                "alternative_counts": self.alternative_counts,
                "table": _percentages(self.rows),
                "by_difficulty": {str(level): {c: float(v) for c, v in row.items()}
                                  for level, row in by_level.iterrows()},
                "rows": [asdict(r) for r in self.rows]}
