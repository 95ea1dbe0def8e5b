"""Sample SQL from templates: draw bindings, render, run read-only, keep what answers.

For each template, draws are made with `random.Random(f"{seed}/{template.id}")`, so a
template's sample depends only on the seed, its id and the data (not on which other
templates were loaded). A draw picks one value per placeholder (see templates.py),
renders the SQL and runs it through `target_core.sql.execute` (read-only, time limit,
row cap). It is kept when it runs without error and returns at least one row that is
not all NULL (an aggregate over no rows returns one such row). Draws repeat until `n`
queries are kept or `max_draws` (default 5 × n) are spent; a draw whose normalized SQL
was seen before, from any template, counts as a duplicate and is not run again.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import sqlglot

from target_core.benchgen.render import column_sql, quote_identifier, render_sql
from target_core.benchgen.templates import ColumnRef, Placeholder, Template, check_schema
from target_core.benchgen.timeref import resolve
from target_core.errors import ConfigError
from target_core.sql import DEFAULT_TIMEOUT_S, connect_readonly, execute
from target_core.sql.execute import json_safe_rows, json_safe_value
from target_core.sql.structure import DIALECT

logger = logging.getLogger(__name__)

PREVIEW_ROWS = 5
DRAWS_PER_QUERY = 5
REJECTIONS = ("error", "empty", "duplicate")

@dataclass(frozen=True)
class SampledQuery:
    """One kept SQL query with how it was made and what it returned.

    `bindings` maps placeholder -> drawn value (JSON-safe); `time` is the resolved
    TimeRange.to_dict() of the time placeholder, `reference_date` its ISO reference.
    """

    template_id: str
    database: str
    sql: str
    difficulty: str | None
    bindings: dict[str, Any]
    time: dict[str, str] | None
    reference_date: str | None
    result_preview: tuple[tuple[Any, ...], ...]
    n_rows: int
    columns: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"template_id": self.template_id, "database": self.database, "sql": self.sql,
                "difficulty": self.difficulty, "bindings": dict(self.bindings),
                "time": dict(self.time) if self.time else None,
                "reference_date": self.reference_date, "columns": list(self.columns),
                "result_preview": [list(r) for r in self.result_preview],
                "n_rows": self.n_rows}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SampledQuery:
        return cls(template_id=data["template_id"], database=data["database"],
                   sql=data["sql"], difficulty=data.get("difficulty"),
                   bindings=dict(data.get("bindings") or {}), time=data.get("time"),
                   reference_date=data.get("reference_date"),
                   result_preview=tuple(tuple(r) for r in data.get("result_preview") or ()),
                   n_rows=int(data.get("n_rows", 0)),
                   columns=tuple(data.get("columns") or ()))


@dataclass
class TemplateCounts:
    """Draws of one template: kept + error + empty + duplicate == draws."""

    template_id: str
    draws: int = 0
    kept: int = 0
    error: int = 0
    empty: int = 0
    duplicate: int = 0
    first_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class SampleReport:
    queries: tuple[SampledQuery, ...]
    counts: dict[str, TemplateCounts] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"queries": [q.to_dict() for q in self.queries],
                "counts": {k: c.to_dict() for k, c in self.counts.items()}}


def normalize_sql(sql: str) -> str:
    """One spelling per query for deduplication: sqlglot's rendering, or collapsed
    whitespace when it cannot parse."""
    try:
        return sqlglot.parse_one(sql, read=DIALECT).sql(dialect=DIALECT)
    except sqlglot.errors.SqlglotError:
        return " ".join(sql.split()).rstrip(";")


class _Database:
    """Schema and column statistics of one database, read over a read-only connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connection = connect_readonly(path)
        self.schema: dict[str, list[str]] = {}
        tables = self.connection.execute("SELECT name FROM sqlite_master WHERE type IN "
                                         "('table', 'view') AND name NOT LIKE 'sqlite_%'")
        for (table,) in tables.fetchall():
            info = self.connection.execute(f"PRAGMA table_info({quote_identifier(table)})")
            self.schema[table] = [row[1] for row in info.fetchall()]
        self._cache: dict[tuple[str, str, str], Any] = {}

    def _query(self, kind: str, ref: ColumnRef, sql: str) -> Any:
        key = (kind, ref.table.lower(), ref.column.lower())
        if key not in self._cache:
            col, table = quote_identifier(ref.column), quote_identifier(ref.table)
            self._cache[key] = self.connection.execute(
                sql.format(col=col, table=table)).fetchall()
        return self._cache[key]

    def distinct(self, ref: ColumnRef) -> list[tuple[Any, int]]:
        rows = self._query("distinct", ref, "SELECT {col}, COUNT(*) FROM {table} WHERE {col} "
                           "IS NOT NULL AND typeof({col}) != 'blob' GROUP BY {col} "
                           "ORDER BY {col}")
        return [(v, c) for v, c in rows if not (isinstance(v, str) and "\x00" in v)]

    def numeric_range(self, ref: ColumnRef) -> tuple[Any, Any]:
        rows = self._query("range", ref, "SELECT MIN({col}), MAX({col}) FROM {table} "
                           "WHERE typeof({col}) IN ('integer', 'real')")
        return rows[0]

    def max_date(self, ref: ColumnRef) -> str | None:
        rows = self._query("max_date", ref, "SELECT MAX(substr({col}, 1, 10)) FROM {table} "
                           "WHERE {col} IS NOT NULL")
        return rows[0][0]

    def close(self) -> None:
        self.connection.close()


def _reference_date(template: Template, db: _Database, override: date | None) -> date | None:
    time = template.time_placeholder
    if time is None:
        return None
    if override is not None or template.reference_date is not None:
        return override or template.reference_date
    column, field = time.column, f"placeholders.{time.name}.column"
    if column is None:  # parse_template requires one; a Template built in code may not
        raise template.error("a time placeholder needs a column", field)
    latest = db.max_date(column)
    try:
        return date.fromisoformat(str(latest)) + timedelta(days=1)
    except ValueError:
        raise template.error(f"cannot derive a reference date: {column.table}."
                             f"{column.column} holds no ISO dates (latest: {latest!r}); "
                             "set reference_date", field) from None


def _draw_value(p: Placeholder, ref: ColumnRef, db: _Database, rng: random.Random,
                template: Template) -> Any:
    field_name = f"placeholders.{p.name}"
    if p.mode == "range":
        low, high = db.numeric_range(ref)
        if low is None:
            raise template.error(f"range mode needs numbers, and {ref.table}.{ref.column} "
                                 "holds none", f"{field_name}.mode")
        if isinstance(low, int) and isinstance(high, int):
            return rng.randint(low, high)
        value = round(rng.uniform(low, high), p.digits)
        return int(value) if p.digits == 0 else value
    values = db.distinct(ref)
    if not values:
        raise template.error(f"{ref.table}.{ref.column} holds no values to draw from",
                             f"{field_name}.column")
    return rng.choices([v for v, _ in values], weights=[c for _, c in values])[0]


def _draw(template: Template, db: _Database, rng: random.Random, reference: date | None
          ) -> tuple[str, dict[str, Any], dict[str, str] | None]:
    """(rendered SQL, bindings, time range dict) for one random draw."""
    bindings: dict[str, Any] = {}
    picked: dict[str, ColumnRef] = {}
    time_range = None
    # Values last: a value drawn from a column placeholder needs that column first.
    for p in sorted(template.placeholders, key=lambda p: p.type == "value"):
        if p.type in ("column", "group_by"):
            picked[p.name] = rng.choice(p.choices)
            bindings[p.name] = column_sql(picked[p.name])
        elif p.type == "value":
            ref = p.column or picked[p.column_from or ""]
            value = _draw_value(p, ref, db, rng, template)
            bindings[p.name] = json_safe_value(value)
        elif p.type == "time":
            # A time placeholder always has a column (parse) and a reference (caller).
            bindings[p.name] = expression = rng.choice(p.choices)
            time_range = resolve(expression, reference)  # type: ignore[arg-type]
        else:
            bindings[p.name] = rng.choice(p.choices)
    ordered = {p.name: bindings[p.name] for p in template.placeholders}
    sql = render_sql(template.sql, template, ordered, time_range)
    return sql, ordered, time_range.to_dict() if time_range else None


def sample_queries(templates: Iterable[Template], databases: Mapping[str, Path], *, n: int,
                   seed: int, reference_date: date | None = None,
                   max_draws: int | None = None,
                   timeout_s: float = DEFAULT_TIMEOUT_S) -> SampleReport:
    """Up to `n` distinct, runnable, non-empty SQL queries per template.

    `databases` maps database id -> SQLite file. `reference_date`, when given, replaces
    every template's reference date for relative time expressions. Every template is
    checked against its schema before anything is drawn (TemplateError otherwise).
    """
    if n < 1:
        raise ConfigError(f"n must be at least 1, got {n!r}")
    draws_allowed = max_draws if max_draws is not None else DRAWS_PER_QUERY * n
    if draws_allowed < 1:
        raise ConfigError(f"max_draws must be at least 1, got {max_draws!r}")
    templates = list(templates)
    opened: dict[str, _Database] = {}
    try:
        for template in templates:
            if template.database not in databases:
                raise template.error(f"unknown database {template.database!r}; known: "
                                     f"{', '.join(sorted(databases)) or '(none)'}", "database")
            if template.database not in opened:
                opened[template.database] = _Database(Path(databases[template.database]))
            check_schema(template, opened[template.database].schema)
        seen: set[str] = set()
        kept: list[SampledQuery] = []
        counts: dict[str, TemplateCounts] = {}
        for template in templates:
            db = opened[template.database]
            counts[template.id] = tally = TemplateCounts(template.id)
            reference = _reference_date(template, db, reference_date)
            rng = random.Random(f"{seed}/{template.id}")
            while tally.kept < n and tally.draws < draws_allowed:
                tally.draws += 1
                query = _attempt(template, db, rng, reference, seen, tally, timeout_s)
                if query is not None:
                    kept.append(query)
                    tally.kept += 1
    finally:
        for db in opened.values():
            db.close()
    return SampleReport(queries=tuple(kept), counts=counts)


def _attempt(template: Template, db: _Database, rng: random.Random, reference: date | None,
             seen: set[str], tally: TemplateCounts, timeout_s: float) -> SampledQuery | None:
    sql, bindings, time_range = _draw(template, db, rng, reference)
    key = normalize_sql(sql)
    if key in seen:
        tally.duplicate += 1
        return None
    seen.add(key)
    result = execute(db.path, sql, timeout_s=timeout_s)
    if not result.ok:
        tally.error += 1
        tally.first_error = tally.first_error or f"{result.error_class}: {result.error}"
        logger.debug("template %s: %s rejected: %s", template.id, sql, result.error)
        return None
    if not result.rows or (len(result.rows) == 1 and all(v is None for v in result.rows[0])):
        tally.empty += 1
        return None
    return SampledQuery(
        template_id=template.id, database=template.database, sql=sql,
        difficulty=template.difficulty, bindings=bindings, time=time_range,
        reference_date=reference.isoformat() if reference else None,
        result_preview=tuple(tuple(r) for r in json_safe_rows(result.rows[:PREVIEW_ROWS])),
        n_rows=len(result.rows), columns=result.columns)


__all__ = ["DRAWS_PER_QUERY", "PREVIEW_ROWS", "REJECTIONS", "SampleReport", "SampledQuery",
           "TemplateCounts", "normalize_sql", "sample_queries"]
