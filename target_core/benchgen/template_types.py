"""The template data types: `Template`, its typed `Placeholder`s and `Alternative`
readings, and `TemplateError`, which names the file, template and field at fault.

The file format they come from is described in `target_core.benchgen.templates`;
checking a record into these types is `template_parse` (placeholders:
`template_placeholders`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TypeGuard

from target_core.errors import TargetError

AGGREGATIONS = ("SUM", "COUNT", "AVG", "MIN", "MAX")
ORDERS = ("ASC", "DESC")
VALUE_MODES = ("distinct", "range")
PLACEHOLDER_TYPES = ("aggregation", "column", "group_by", "value", "order", "limit", "time")


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


Fail = Callable[[str, str], TemplateError]
"""How the parsers report a problem: (reason, field) -> the error to raise, which
already knows the file and the template."""


def is_text(value: Any) -> TypeGuard[str]:
    """A non-blank string."""
    return isinstance(value, str) and bool(value.strip())


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

