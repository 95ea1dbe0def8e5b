"""Template records checked for structure and built into `Template`s, and templates
checked against a database schema (`check_schema`).

The record format is described in `target_core.benchgen.templates`; placeholder specs
are checked in `template_placeholders`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from target_core.benchgen.template_placeholders import parse_placeholder
from target_core.benchgen.template_types import (
    Alternative,
    ColumnRef,
    Fail,
    Placeholder,
    Template,
    TemplateError,
    is_text,
)
from target_core.sql.interpretations import ALTERNATIVE_KINDS

_BRACES = re.compile(r"\{([^{}]*)\}")
_TEMPLATE_KEYS = frozenset({"id", "database", "sql", "placeholders", "difficulty", "questions",
                            "description", "reference_date", "alternatives"})


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
        if default_db is not None and not is_text(default_db):
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
    if not is_text(template_id):
        raise TemplateError("required: a non-empty string", path=source,
                            field=f"templates[{index}].id")

    def fail(reason: str, field: str) -> TemplateError:
        return TemplateError(reason, path=source, template_id=template_id, field=field)

    unknown = sorted(set(record) - _TEMPLATE_KEYS)
    if unknown:
        raise fail(f"unknown key; expected {', '.join(sorted(_TEMPLATE_KEYS))}", unknown[0])
    database = record.get("database", default_database)
    if not is_text(database):
        raise fail("required: a non-empty string (here or at the top of the file)",
                   "database")
    sql = record.get("sql")
    if not is_text(sql):
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
    placeholders = tuple(parse_placeholder(str(name), spec, fail) for name, spec in specs.items())
    _check_usage(sql, placeholders, fail)
    questions = record.get("questions") or []
    if not isinstance(questions, list) or not all(is_text(q) for q in questions):
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


def _alternatives(value: Any, declared: set[str], fail: Fail) -> tuple[Alternative, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise fail("must be a list of {kind, description, sql}", "alternatives")
    found = []
    for i, spec in enumerate(value):
        field = f"alternatives[{i}]"
        if not isinstance(spec, Mapping) or not is_text(spec.get("sql")):
            raise fail("must be an object with a non-empty 'sql'", field)
        if unknown := sorted(set(spec) - {"kind", "description", "sql"}):
            raise fail("unknown key; expected kind, description, sql", f"{field}.{unknown[0]}")
        if spec.get("kind") not in ALTERNATIVE_KINDS:
            raise fail(f"must be one of {', '.join(ALTERNATIVE_KINDS)}", f"{field}.kind")
        if not is_text(spec.get("description")):
            raise fail("required: a non-empty string", f"{field}.description")
        names = {m.strip() for m in _BRACES.findall(spec["sql"])}
        if unknown := sorted(names - declared):
            raise fail(f"uses undeclared placeholder '{{{unknown[0]}}}'", f"{field}.sql")
        found.append(Alternative(spec["kind"], spec["description"].strip(), spec["sql"]))
    return tuple(found)


def _check_usage(sql: str, placeholders: tuple[Placeholder, ...], fail: Fail) -> None:
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
