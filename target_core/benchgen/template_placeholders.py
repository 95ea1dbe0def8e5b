"""Placeholder specs checked into `Placeholder`s: one function per placeholder type.

The types and their keys are listed in `target_core.benchgen.templates`. Problems are
reported through the template parser's `fail(reason, field)`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from target_core.benchgen.template_types import (
    AGGREGATIONS,
    ORDERS,
    PLACEHOLDER_TYPES,
    VALUE_MODES,
    ColumnRef,
    Fail,
    Placeholder,
    is_text,
)
from target_core.benchgen.timeref import TimeReferenceError, resolve

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYS = {"aggregation": {"choices"}, "column": {"choices", "table"},
         "group_by": {"choices", "table"}, "order": {"choices"}, "limit": {"choices"},
         "value": {"column", "column_from", "mode", "digits"},
         "time": {"column", "expressions"}}
_PROBE_DATE = date(2024, 6, 15)  # any date: expressions are only checked to parse


def parse_placeholder(name: str, spec: Any, fail: Fail) -> Placeholder:
    """One placeholder spec, checked for its type's keys and values."""
    field = f"placeholders.{name}"
    if not _NAME.fullmatch(name):
        raise fail("a placeholder name must be a letter or _ then letters, digits, _", field)
    if not isinstance(spec, Mapping):
        raise fail("must be an object with a 'type'", field)
    kind = spec.get("type")
    if kind not in PLACEHOLDER_TYPES:
        raise fail(f"unknown type {kind!r}; expected one of {', '.join(PLACEHOLDER_TYPES)}",
                   f"{field}.type")
    unknown = sorted(set(spec) - _KEYS[kind] - {"type"})
    if unknown:
        raise fail(f"unknown key for a {kind} placeholder; expected "
                   f"{', '.join(sorted(_KEYS[kind]))}", f"{field}.{unknown[0]}")
    choices = spec.get("choices")
    if kind in ("aggregation", "order"):
        allowed = AGGREGATIONS if kind == "aggregation" else ORDERS
        picked = allowed if choices is None else _list(choices, f"{field}.choices", fail)
        words = tuple(str(c).upper() for c in picked)
        for i, word in enumerate(words):
            if word not in allowed:
                raise fail(f"{picked[i]!r} is not one of {', '.join(allowed)}",
                           f"{field}.choices[{i}]")
        return Placeholder(name, kind, words)
    if kind == "limit":
        values = _list(choices, f"{field}.choices", fail)
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise fail(f"must be a positive integer, got {value!r}",
                           f"{field}.choices[{i}]")
        return Placeholder(name, kind, tuple(values))
    if kind in ("column", "group_by"):
        table = spec.get("table")
        if table is not None and not is_text(table):
            raise fail("must be a non-empty string", f"{field}.table")
        refs = tuple(_column(c, f"{field}.choices[{i}]", fail, table)
                     for i, c in enumerate(_list(choices, f"{field}.choices", fail)))
        return Placeholder(name, kind, refs)
    if kind == "time":
        column = _column(spec.get("column"), f"{field}.column", fail)
        expressions = _list(spec.get("expressions"), f"{field}.expressions", fail)
        for i, expression in enumerate(expressions):
            try:
                resolve(expression, _PROBE_DATE)
            except TimeReferenceError as error:
                raise fail(str(error), f"{field}.expressions[{i}]") from None
        return Placeholder(name, kind, tuple(expressions), column=column)
    return _value(name, spec, field, fail)


def _value(name: str, spec: Mapping[str, Any], field: str, fail: Fail) -> Placeholder:
    has_column, has_from = "column" in spec, "column_from" in spec
    if has_column == has_from:
        raise fail("give exactly one of 'column' (table.column) or 'column_from' "
                   "(a column placeholder)", f"{field}.column")
    column = _column(spec["column"], f"{field}.column", fail) if has_column else None
    column_from = spec.get("column_from")
    if has_from and not (isinstance(column_from, str) and _NAME.fullmatch(column_from)):
        raise fail("must name a column or group_by placeholder", f"{field}.column_from")
    mode = spec.get("mode", "distinct")
    if mode not in VALUE_MODES:
        raise fail(f"must be one of {', '.join(VALUE_MODES)}, got {mode!r}", f"{field}.mode")
    digits = spec.get("digits", 2)
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 10:
        raise fail(f"must be an integer from 0 to 10, got {digits!r}", f"{field}.digits")
    return Placeholder(name, "value", column=column, column_from=column_from, mode=mode,
                       digits=digits)


def _list(value: Any, field: str, fail: Fail) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise fail("must be a non-empty list", field)
    return value


def _column(value: Any, field: str, fail: Fail, table: str | None = None) -> ColumnRef:
    """`table.column`, or a bare column when `table` is given (a column placeholder)."""
    if not is_text(value):
        raise fail("must be a column name" + ("" if table else " written table.column"), field)
    head, dot, tail = value.strip().partition(".")
    if dot and head and tail:
        return ColumnRef(head, tail, qualified=True)
    if dot or table is None:
        raise fail(f"write the column as table.column, got {value!r}", field)
    return ColumnRef(table, value.strip())

