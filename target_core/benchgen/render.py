"""Render a template's SQL from bindings: identifiers, literals and time conditions.

Sampling (instantiate.py) draws bindings and renders them; export renders the same
bindings into a template's alternative readings (other metrics, time windows). A
binding is stored JSON-safe as drawn: a column or group_by binding is already SQL
(`column_sql`), a value is rendered as a literal, a time placeholder as the condition
of the TimeRange given, anything else (aggregation, order, limit) as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from target_core.benchgen.templates import ColumnRef, Template
from target_core.benchgen.timeref import TimeRange

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SQLITE_KEYWORDS = frozenset("""
ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEFORE BEGIN
BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS
CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT DEFERRABLE DEFERRED
DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS
EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS HAVING
IF IGNORE IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL
JOIN KEY LAST LEFT LIKE LIMIT MATCH MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF
OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE RANGE
RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT ROLLBACK
ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED
UNION UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT""".split())


def quote_identifier(name: str) -> str:
    """`name` bare when it is a plain identifier and not an SQLite keyword, else
    double-quoted with embedded quotes doubled."""
    if _BARE.fullmatch(name) and name.upper() not in _SQLITE_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def column_sql(ref: ColumnRef) -> str:
    text = quote_identifier(ref.column)
    return f"{quote_identifier(ref.table)}.{text}" if ref.qualified else text


def sql_literal(value: Any) -> str:
    """A Python value as an SQLite literal; strings quoted with '' escaping."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"no SQL literal for {type(value).__name__}")


def render_sql(pattern: str, template: Template, bindings: Mapping[str, Any],
               time_range: TimeRange | None) -> str:
    """`pattern` (the template's SQL or one of its alternatives) with every
    `{placeholder}` replaced by its binding; `time_range` fills the time placeholder."""
    texts: dict[str, str] = {}
    for p in template.placeholders:
        value = bindings.get(p.name)
        if p.type == "value":
            texts[p.name] = sql_literal(value)
        elif p.type == "time":
            if time_range is None or p.column is None:
                raise template.error("a time placeholder needs a resolved time range",
                                     f"placeholders.{p.name}")
            texts[p.name] = f"({time_range.sql_condition(column_sql(p.column))})"
        else:
            texts[p.name] = str(value)
    return PLACEHOLDER.sub(lambda m: texts[m.group(1).strip()], pattern)
