"""Seed 002's hierarchical evaluation of text-to-SQL: the one rule behind the per-query
`alt_interpretation` flag, the run's `alt_interpretation_rate`, Table 1's Alt
(`benchgen evaluate`) and the Query page's verdict.

The paper (section 3.3): the evaluation "starts with strict comparison to execution
results of ground-truth SQL", then "expand[s] to consider variations in time periods,
metric selection and result granularity that correspond to alternative interpretations",
"leveraging subset relationships between the generated SQL's execution results and the
expanded ground-truth values". Read here as:

* Readings of a query: the gold SQL first (kind "gold"), then the query's
  `alternatives` (`meta["alternatives"]`, `[{kind, description, sql}]`, written by
  `benchgen export`), each run read-only on the gold database. Their results are the
  expanded ground truth. A query without alternatives has one reading: gold.
* Level 1, exact: the prediction's row set equals the gold result's (`row_set`, the
  execution-accuracy rule).
* Level 2, alternative: not exact, and for some reading R the prediction P satisfies
  P ⊆ R or R ⊆ P as row sets (`row_set`: row order and duplicates ignored, floats to 6
  decimals), where both executed without error, both hold at least one row, neither was
  cut by the row cap, and both have the same number of columns (names are aliases).
  Equal to an alternative's result is the case where both directions hold.
* Otherwise, or when the prediction or the gold query failed: wrong.

Each reading is compared on its own: rows mixed from two readings answer neither. The
empty result is a subset of everything, so it never counts; nor does a truncated one,
whose missing rows could break the relation.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from target_core.errors import DatasetError
from target_core.sql.compare import row_set
from target_core.sql.execute import SqlLimits, SqlResult, execute
from target_core.types import Dataset, Query

__all__ = ["ALTERNATIVE_KINDS", "GOLD", "LEVELS", "RELATIONS", "ExpandedTruth",
           "Interpretation", "Reading", "interpret", "readings_of", "relation",
           "stored_interpretation"]

logger = logging.getLogger(__name__)

ALTERNATIVE_KINDS: tuple[str, ...] = ("metric", "granularity", "time")
"""The kinds of alternative a query may carry; the same tuple as benchgen's templates
(benchgen sits above this layer, so a test keeps the two equal)."""
GOLD = "gold"
"""The kind of the first reading: the gold SQL itself."""
LEVELS: tuple[str, ...] = ("exact", "alternative", "wrong")
RELATIONS: tuple[str, ...] = ("equal", "subset", "superset")
"""The prediction's rows against a reading's: the same set, a proper subset, a proper
superset."""


@dataclass(frozen=True)
class Reading:
    """One valid reading of a query's question, as SQL on the gold database."""

    kind: str
    description: str
    sql: str


@dataclass(frozen=True)
class Interpretation:
    """One prediction's verdict. For "alternative", `kind` and `description` name the
    reading it matched (kind "gold" for the gold query itself) and `relation` says how
    the prediction's rows relate to that reading's; `n_readings` counts the readings
    (gold included) it was judged against."""

    level: str
    kind: str | None = None
    description: str = ""
    relation: str | None = None
    n_readings: int = 1

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}; expected one of {LEVELS}")
        if self.relation is not None and self.relation not in RELATIONS:
            raise ValueError(f"unknown relation {self.relation!r}; expected one of "
                             f"{RELATIONS}")

    @property
    def alternative(self) -> bool:
        """The per-query `alt_interpretation` flag."""
        return self.level == "alternative"

    def reading_name(self) -> str:
        if self.kind in (None, GOLD):
            return "the gold result"
        about = f" ({self.description})" if self.description else ""
        return f"the {self.kind} alternative{about}"

    def sentence(self) -> str:
        """The verdict in one plain sentence, for the Query page."""
        if self.level == "exact":
            return "Exact: the same rows as the gold result (level 1)."
        if self.level == "wrong":
            others = self.n_readings - 1
            where = (f"the gold result or any of its {others} alternative reading"
                     f"{'s' if others != 1 else ''}" if others else
                     "the gold result (the query has no alternative readings)")
            return f"Not an alternative interpretation: no subset relation with {where}."
        how = {"equal": "the same rows as",
               "subset": "rows that are a subset of those of",
               "superset": "every row of, and more rows than,"}.get(self.relation or "",
                                                                    "a subset relation with")
        return f"An alternative interpretation (level 2): {how} {self.reading_name()}."

    def detail(self) -> str:
        """Table 1's one-line detail for an alternative."""
        if self.relation == "equal":
            return f"matches alternative: {self.kind}" + (
                f" ({self.description})" if self.description else "")
        side = {"subset": "subset of", "superset": "superset of"}.get(self.relation or "",
                                                                      "subset relation with")
        return f"{side} {self.reading_name()}"

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "kind": self.kind, "description": self.description,
                "relation": self.relation, "n_readings": self.n_readings}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interpretation:
        return cls(level=str(data.get("level") or "wrong"), kind=data.get("kind"),
                   description=str(data.get("description") or ""),
                   relation=data.get("relation"),
                   n_readings=int(data.get("n_readings") or 1))


def relation(pred: SqlResult, reading: SqlResult) -> str | None:
    """How `pred`'s rows relate to `reading`'s (one of RELATIONS), or None when they
    stand in no subset relation or cannot be judged: an error on either side, an empty
    or truncated result, or different column counts."""
    if not (pred.ok and reading.ok) or pred.truncated or reading.truncated:
        return None
    if len(pred.columns) != len(reading.columns):
        return None
    p, r = row_set(pred), row_set(reading)
    if not p or not r:
        return None
    if p == r:
        return "equal"
    if p < r:
        return "subset"
    if p > r:
        return "superset"
    return None


def interpret(pred: SqlResult | None,
              expanded: Sequence[tuple[Reading, SqlResult]]) -> Interpretation:
    """The verdict for a prediction's result (None: never executed) against the expanded
    ground truth: `expanded[0]` is the gold reading and its result, then the
    alternatives in order (see the module docstring for the levels).

    When several readings relate, equality wins over a subset relation, then the
    earlier reading: the verdict is the same, only its detail changes.
    """
    if not expanded:
        raise ValueError("the expanded ground truth needs the gold reading first")
    gold = expanded[0][1]
    n = len(expanded)
    if pred is None or not pred.ok or not gold.ok:  # a failed gold query judges nothing
        return Interpretation("wrong", n_readings=n)
    if row_set(pred) == row_set(gold):
        return Interpretation("exact", GOLD, expanded[0][0].description, "equal", n)
    found: list[tuple[Reading, str]] = []
    for reading, result in expanded:
        how = relation(pred, result)
        if how is not None:
            found.append((reading, how))
    if not found:
        return Interpretation("wrong", n_readings=n)
    reading, how = next((f for f in found if f[1] == "equal"), found[0])
    return Interpretation("alternative", reading.kind, reading.description, how, n)


def readings_of(query: Query, *, source: str | None = None) -> tuple[Reading, ...]:
    """The query's readings: gold first, then its `alternatives` metadata in order.

    Raises DatasetError (naming `source`, the query and the field) when `alternatives`
    is not a list of {kind in ALTERNATIVE_KINDS, description?, sql: non-empty string}.
    """
    def fail(field: str, reason: str) -> DatasetError:
        return DatasetError(f"query {query.query_id!r}: {reason}", path=source or None,
                            field=field)

    gold = Reading(GOLD, "the gold query", query.sql or str(query.answer))
    raw = query.meta.get("alternatives") or []
    if not isinstance(raw, list):
        raise fail("alternatives", "must be a list")
    found = [gold]
    for i, item in enumerate(raw):
        field = f"alternatives[{i}]"
        if not isinstance(item, Mapping):
            raise fail(field, "must be an object")
        if item.get("kind") not in ALTERNATIVE_KINDS:
            raise fail(f"{field}.kind", f"must be one of {', '.join(ALTERNATIVE_KINDS)}, "
                                        f"got {item.get('kind')!r}")
        if not isinstance(item.get("sql"), str) or not item["sql"].strip():
            raise fail(f"{field}.sql", "must be a non-empty string")
        found.append(Reading(item["kind"], str(item.get("description") or ""), item["sql"]))
    return tuple(found)


class ExpandedTruth:
    """A dataset's readings and their results, each (database, SQL) executed once;
    thread-safe. Used by the run's evaluation and by `benchgen evaluate`."""

    def __init__(self, dataset: Dataset, limits: SqlLimits | None = None) -> None:
        self.dataset = dataset
        self.limits = limits or SqlLimits()
        self._lock = threading.Lock()
        self._results: dict[tuple[str, str], SqlResult] = {}

    def run(self, database_id: str, sql: str) -> SqlResult:
        """`sql` executed read-only on `database_id` (cached)."""
        key = (database_id, sql)
        with self._lock:
            cached = self._results.get(key)
        if cached is None:
            cached = execute(self.dataset.databases[database_id], sql,
                             timeout_s=self.limits.timeout_s, row_cap=self.limits.row_cap)
            with self._lock:
                cached = self._results.setdefault(key, cached)
        return cached

    def readings(self, query: Query) -> tuple[Reading, ...]:
        return readings_of(query, source=self.dataset.source or None)

    def gold(self, query: Query) -> SqlResult:
        return self.run(query.database_id, query.sql or str(query.answer))

    def expanded(self, query: Query) -> list[tuple[Reading, SqlResult]]:
        """Every reading with its result on the gold database; an alternative that
        fails is logged (it can never match) and kept."""
        found = []
        for reading in self.readings(query):
            result = self.run(query.database_id, reading.sql)
            if not result.ok and reading.kind != GOLD:
                logger.warning("query %s: the %s alternative fails on %s (%s); it cannot "
                               "match", query.query_id, reading.kind, query.database_id,
                               result.error)
            found.append((reading, result))
        return found

    def interpret(self, query: Query, pred: SqlResult | None) -> Interpretation:
        """`interpret(pred, self.expanded(query))`; no reading is run for a prediction
        that never ran or failed (it is wrong whatever they return)."""
        if pred is None or not pred.ok:
            return Interpretation("wrong", n_readings=len(self.readings(query)))
        return interpret(pred, self.expanded(query))


def stored_interpretation(sql_record: Mapping[str, Any]) -> Interpretation | None:
    """The verdict stored on a query's text-to-SQL record (`record["sql"]`), or None for
    records stored before verdicts were (their flags then say only exact or not, and
    `alt_interpretation` compared with the gold result alone)."""
    data = sql_record.get("interpretation")
    return Interpretation.from_dict(data) if isinstance(data, Mapping) else None
