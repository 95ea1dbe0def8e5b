"""SQL templates with typed placeholders: the plain-data input of the benchmark builder.

Seed 002 starts from validated SQL, turns it into templates with placeholders for
metrics, filters and time references, and samples SQL from them. A template file is
JSON (or YAML, same structure) that a user writes by hand::

    {"database": "retail_store",                   # default for the templates below
     "templates": [
       {"id": "orders-count-by-status",            # unique over everything loaded
        "difficulty": "easy",                      # optional, copied to every item
        "description": "Orders with one status",   # optional
        "reference_date": "2025-01-01",            # optional, see below
        "sql": "SELECT COUNT(*) FROM orders WHERE status = {status} AND {period}",
        "placeholders": {
          "status": {"type": "value", "column": "orders.status"},
          "period": {"type": "time", "column": "orders.order_date",
                     "expressions": ["last month", "this year", "2024-12"]}},
        "questions": [                             # optional question patterns
          "How many {status} orders were placed {period}?"]}]}

``alternatives`` (optional) lists other valid readings of the questions, seed 002's
*alternative interpretations*: ``[{"kind": "metric" | "granularity" | "time",
"description": "...", "sql": "..."}]``, each SQL using (some of) the template's
placeholders. Evaluation counts an answer matching one as an alternative, not an error.
Relative time references get their alternative readings automatically
(`timeref.alternative_readings`).

``questions`` (optional) lists question patterns for the template question writer
(`target_core.benchgen.questions`), using the SQL's ``{placeholder}`` names; a name
not declared in ``placeholders`` is an error.

A file may also be a bare list of templates, or one template object. `{name}` in the
SQL is a placeholder; every name used must be declared and every declared one used
(braces are reserved for placeholders). Placeholder types and their keys:

- ``aggregation``: ``choices`` from SUM, COUNT, AVG, MIN, MAX (default: all five).
- ``column`` / ``group_by``: ``choices``, column names; ``table`` says whose, or a
  choice is written ``table.column`` (then rendered qualified). Checked to exist.
- ``value``: a filter value, rendered as a SQL literal. ``column`` is ``table.column``,
  or ``column_from`` names a column/group_by placeholder whose drawn column is used.
  ``mode``: ``distinct`` (default; a value drawn from the column's non-null values,
  weighted by how often each occurs) or ``range`` (numeric columns: uniform between
  MIN and MAX; an integer for integer data, else rounded to ``digits``, default 2).
- ``order``: ``choices`` from ASC, DESC (default: both).
- ``limit``: ``choices``, positive integers.
- ``time``: ``column`` (``table.column`` holding ISO dates) and ``expressions``, each
  an absolute date or a relative reference (see `target_core.benchgen.timeref`).
  Renders ``(column >= 'start' AND column < 'end')``. At most one per template.

A relative time is resolved against a reference date stored with every sampled item:
the one given to `sample_queries`, else the template's ``reference_date``, else the day
after the latest date in the time column, so "last month" lands on real rows.

Structure is checked on load; column names are checked against the database schema
before sampling (`check_schema`). Every problem raises `TemplateError` naming the
file, the template id and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from target_core.benchgen.timeref import TimeReferenceError, resolve
from target_core.errors import TargetError

EXAMPLE_TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "data" / "benchgen" / "templates"
AGGREGATIONS = ("SUM", "COUNT", "AVG", "MIN", "MAX")
ORDERS = ("ASC", "DESC")
VALUE_MODES = ("distinct", "range")
PLACEHOLDER_TYPES = ("aggregation", "column", "group_by", "value", "order", "limit", "time")
TEMPLATE_SUFFIXES = (".json", ".yaml", ".yml")
ALTERNATIVE_KINDS = ("metric", "granularity", "time")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACES = re.compile(r"\{([^{}]*)\}")
_TEMPLATE_KEYS = frozenset({"id", "database", "sql", "placeholders", "difficulty", "questions",
                            "description", "reference_date", "alternatives"})
_KEYS = {"aggregation": {"choices"}, "column": {"choices", "table"},
         "group_by": {"choices", "table"}, "order": {"choices"}, "limit": {"choices"},
         "value": {"column", "column_from", "mode", "digits"},
         "time": {"column", "expressions"}}
_PROBE_DATE = date(2024, 6, 15)  # any date: expressions are only checked to parse


class TemplateError(TargetError):
    """A template is malformed or does not fit its database: names file, template, field."""

    def __init__(self, reason: str, *, path: str | Path | None = None,
                 template_id: str | None = None, field: str | None = None,
                 line: int | None = None) -> None:
        self.reason = reason
        self.path = str(path) if path else None
        self.template_id = template_id
        self.field = field
        self.line = line
        where = self.path or "templates"
        if line is not None:
            where += f", line {line}"
        if template_id is not None:
            where += f", template '{template_id}'"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {reason}")


_Fail = Callable[[str, str], "TemplateError"]


@dataclass(frozen=True)
class ColumnRef:
    """A column as the template wrote it; `qualified` means it was ``table.column``."""

    table: str
    column: str
    qualified: bool = False


@dataclass(frozen=True)
class Placeholder:
    """One typed placeholder. `choices` holds keywords, ints, expressions or ColumnRefs
    by type; `column` is the value/time column; `column_from` a column placeholder."""

    name: str
    type: str
    choices: tuple[Any, ...] = ()
    column: ColumnRef | None = None
    column_from: str | None = None
    mode: str = "distinct"
    digits: int = 2


@dataclass(frozen=True)
class Alternative:
    """Another valid reading of a template's questions, as SQL over the same bindings."""

    kind: str
    description: str
    sql: str


@dataclass(frozen=True)
class Template:
    id: str
    database: str
    sql: str
    placeholders: tuple[Placeholder, ...] = ()
    difficulty: str | None = None
    description: str = ""
    reference_date: date | None = None
    source: str = ""
    questions: tuple[str, ...] = ()
    """Question patterns with the SQL's {placeholders}, for the template question writer."""
    alternatives: tuple[Alternative, ...] = ()

    @property
    def time_placeholder(self) -> Placeholder | None:
        return next((p for p in self.placeholders if p.type == "time"), None)

    def error(self, reason: str, field: str | None = None) -> TemplateError:
        return TemplateError(reason, path=self.source or None, template_id=self.id,
                             field=field)

    def to_dict(self) -> dict[str, Any]:
        """The template as a file record: `parse_template(t.to_dict())` gives it back."""
        record: dict[str, Any] = {
            "id": self.id, "database": self.database, "sql": self.sql,
            "placeholders": {p.name: _placeholder_spec(p) for p in self.placeholders}}
        if self.difficulty:
            record["difficulty"] = self.difficulty
        if self.description:
            record["description"] = self.description
        if self.reference_date:
            record["reference_date"] = self.reference_date.isoformat()
        if self.questions:
            record["questions"] = list(self.questions)
        if self.alternatives:
            record["alternatives"] = [vars(a).copy() for a in self.alternatives]
        return record


def _ref_text(ref: ColumnRef) -> str:
    return f"{ref.table}.{ref.column}"


def _placeholder_spec(p: Placeholder) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": p.type}
    if p.type in ("column", "group_by"):
        bare = [r for r in p.choices if not r.qualified]
        if bare:
            spec["table"] = bare[0].table
        spec["choices"] = [_ref_text(r) if r.qualified or r.table != spec.get("table")
                           else r.column for r in p.choices]
    elif p.type == "time":
        spec["column"] = _ref_text(p.column)  # type: ignore[arg-type]
        spec["expressions"] = list(p.choices)
    elif p.type == "value":
        if p.column is not None:
            spec["column"] = _ref_text(p.column)
        else:
            spec["column_from"] = p.column_from
        spec.update(mode=p.mode, digits=p.digits)
    else:
        spec["choices"] = list(p.choices)
    return spec


# --- loading -------------------------------------------------------------------------


def load_templates(path: str | Path) -> list[Template]:
    """Templates from one file or from every .json/.yaml/.yml file in a folder (sorted).

    Raises TemplateError for unreadable or malformed files and for duplicate ids.
    """
    root = Path(path)
    if root.is_dir():
        files = sorted(p for p in root.iterdir() if p.suffix.lower() in TEMPLATE_SUFFIXES)
        if not files:
            raise TemplateError("no template files (.json, .yaml, .yml) in this folder",
                                path=root)
    elif root.is_file():
        files = [root]
    else:
        raise TemplateError("no such file or folder", path=root)
    templates: list[Template] = []
    seen: dict[str, str] = {}
    for file in files:
        for template in parse_templates(_read(file), source=str(file)):
            if template.id in seen:
                raise template.error(f"duplicate id; first defined in {seen[template.id]}",
                                     "id")
            seen[template.id] = template.source
            templates.append(template)
    return templates


def _read(file: Path) -> Any:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(f"cannot read the file ({error})", path=file) from None
    if file.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise TemplateError(f"invalid JSON: {error.msg} (column {error.colno})",
                                path=file, line=error.lineno) from None
    import yaml  # only YAML files need it

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise TemplateError(f"invalid YAML: {getattr(error, 'problem', None) or error}",
                            path=file, line=mark.line + 1 if mark else None) from None


def parse_templates(data: Any, *, source: str = "") -> list[Template]:
    """Templates from parsed file content: {"database"?, "templates": [...]}, a list of
    template objects, or one template object (it has "sql")."""
    default_db = None
    if isinstance(data, Mapping) and "sql" in data:
        records: Any = [data]
    elif isinstance(data, Mapping):
        unknown = sorted(set(data) - {"database", "templates"})
        if unknown:
            raise TemplateError(f"unknown key(s) {', '.join(unknown)}; a file holds "
                                "'database' and 'templates'", path=source, field=unknown[0])
        default_db, records = data.get("database"), data.get("templates")
        if default_db is not None and not _text(default_db):
            raise TemplateError("must be a non-empty string", path=source, field="database")
    else:
        records = data
    if not isinstance(records, list) or not records:
        raise TemplateError("expected a non-empty list of templates", path=source,
                            field="templates")
    return [parse_template(r, source=source, index=i, default_database=default_db)
            for i, r in enumerate(records)]


def parse_template(record: Any, *, source: str = "", index: int = 0,
                   default_database: str | None = None) -> Template:
    """One template object, checked for structure (not yet against a schema)."""
    if not isinstance(record, Mapping):
        raise TemplateError(f"a template must be an object, got {type(record).__name__}",
                            path=source, field=f"templates[{index}]")
    template_id = record.get("id")
    if not _text(template_id):
        raise TemplateError("required: a non-empty string", path=source,
                            field=f"templates[{index}].id")

    def fail(reason: str, field: str) -> TemplateError:
        return TemplateError(reason, path=source, template_id=template_id, field=field)

    unknown = sorted(set(record) - _TEMPLATE_KEYS)
    if unknown:
        raise fail(f"unknown key; expected {', '.join(sorted(_TEMPLATE_KEYS))}", unknown[0])
    database = record.get("database", default_database)
    if not _text(database):
        raise fail("required: a non-empty string (here or at the top of the file)",
                   "database")
    sql = record.get("sql")
    if not _text(sql):
        raise fail("required: a non-empty string", "sql")
    for key in ("difficulty", "description"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise fail("must be a string", key)
    reference = record.get("reference_date")
    if reference is not None and not isinstance(reference, date):  # YAML parses dates
        try:
            reference = date.fromisoformat(reference)
        except (TypeError, ValueError):
            raise fail(f"must be an ISO date (YYYY-MM-DD), got {reference!r}",
                       "reference_date") from None
    specs = record.get("placeholders") or {}
    if not isinstance(specs, Mapping):
        raise fail("must be an object: name -> {type, ...}", "placeholders")
    placeholders = tuple(_placeholder(str(name), spec, fail) for name, spec in specs.items())
    _check_usage(sql, placeholders, fail)
    questions = record.get("questions") or []
    if not isinstance(questions, list) or not all(_text(q) for q in questions):
        raise fail("must be a list of question patterns (strings)", "questions")
    declared = {p.name for p in placeholders}
    for i, pattern in enumerate(questions):
        if unknown := sorted(set(_BRACES.findall(pattern)) - declared):
            raise fail(f"uses undeclared placeholder '{{{unknown[0]}}}'", f"questions[{i}]")
    return Template(id=template_id, database=database, sql=sql, placeholders=placeholders,
                    difficulty=record.get("difficulty") or None,
                    description=record.get("description") or "",
                    reference_date=reference, source=source, questions=tuple(questions),
                    alternatives=_alternatives(record.get("alternatives"), declared, fail))


def _alternatives(value: Any, declared: set[str], fail: _Fail) -> tuple[Alternative, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise fail("must be a list of {kind, description, sql}", "alternatives")
    found = []
    for i, spec in enumerate(value):
        field = f"alternatives[{i}]"
        if not isinstance(spec, Mapping) or not _text(spec.get("sql")):
            raise fail("must be an object with a non-empty 'sql'", field)
        if unknown := sorted(set(spec) - {"kind", "description", "sql"}):
            raise fail("unknown key; expected kind, description, sql", f"{field}.{unknown[0]}")
        if spec.get("kind") not in ALTERNATIVE_KINDS:
            raise fail(f"must be one of {', '.join(ALTERNATIVE_KINDS)}", f"{field}.kind")
        if not _text(spec.get("description")):
            raise fail("required: a non-empty string", f"{field}.description")
        names = {m.strip() for m in _BRACES.findall(spec["sql"])}
        if unknown := sorted(names - declared):
            raise fail(f"uses undeclared placeholder '{{{unknown[0]}}}'", f"{field}.sql")
        found.append(Alternative(spec["kind"], spec["description"].strip(), spec["sql"]))
    return tuple(found)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _placeholder(name: str, spec: Any, fail: _Fail) -> Placeholder:
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
        if table is not None and not _text(table):
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


def _value(name: str, spec: Mapping[str, Any], field: str, fail: _Fail) -> Placeholder:
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


def _list(value: Any, field: str, fail: _Fail) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise fail("must be a non-empty list", field)
    return value


def _column(value: Any, field: str, fail: _Fail, table: str | None = None) -> ColumnRef:
    """`table.column`, or a bare column when `table` is given (a column placeholder)."""
    if not _text(value):
        raise fail("must be a column name" + ("" if table else " written table.column"), field)
    head, dot, tail = value.strip().partition(".")
    if dot and head and tail:
        return ColumnRef(head, tail, qualified=True)
    if dot or table is None:
        raise fail(f"write the column as table.column, got {value!r}", field)
    return ColumnRef(table, value.strip())


def _check_usage(sql: str, placeholders: tuple[Placeholder, ...], fail: _Fail) -> None:
    declared = {p.name: p for p in placeholders}
    used = set()
    for match in _BRACES.finditer(sql):
        name = match.group(1).strip()
        if name not in declared:
            known = ", ".join(declared) or "none declared"
            raise fail(f"unknown placeholder {{{name}}} (known: {known})", "sql")
        used.add(name)
    for p in placeholders:
        if p.column_from is not None:
            source = declared.get(p.column_from)
            if source is None or source.type not in ("column", "group_by"):
                raise fail(f"{p.column_from!r} is not a column or group_by placeholder",
                           f"placeholders.{p.name}.column_from")
            used.add(p.column_from)
    unused = [p.name for p in placeholders if p.name not in used]
    if unused:
        raise fail(f"declared but not used in the SQL: {unused[0]}",
                   f"placeholders.{unused[0]}")
    if sum(p.type == "time" for p in placeholders) > 1:
        raise fail("at most one time placeholder per template", "placeholders")


def check_schema(template: Template, schema: Mapping[str, Iterable[str]]) -> None:
    """Every column a placeholder names exists; `schema` maps table -> column names
    (compared case-insensitively, as SQLite does). Raises TemplateError."""
    lowered = {t.lower(): {c.lower() for c in cols} for t, cols in schema.items()}

    def check(ref: ColumnRef, field: str) -> None:
        columns = lowered.get(ref.table.lower())
        if columns is None:
            raise template.error(f"no table {ref.table!r} in database {template.database!r} "
                                 f"(tables: {', '.join(sorted(schema))})", field)
        if ref.column.lower() not in columns:
            raise template.error(f"no column {ref.column!r} in table {ref.table!r} "
                                 f"(columns: {', '.join(schema[_key(schema, ref.table)])})",
                                 field)

    for p in template.placeholders:
        if p.column is not None:
            check(p.column, f"placeholders.{p.name}.column")
        if p.type in ("column", "group_by"):
            for i, ref in enumerate(p.choices):
                check(ref, f"placeholders.{p.name}.choices[{i}]")


def _key(schema: Mapping[str, Any], table: str) -> str:
    return next(t for t in schema if t.lower() == table.lower())
