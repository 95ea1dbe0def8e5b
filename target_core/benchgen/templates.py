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

This module loads template files; the types are in `template_types`, checking a
record in `template_parse` and `template_placeholders`. Every public name of the
three is importable from here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from target_core.benchgen.template_parse import check_schema, parse_template, parse_templates
from target_core.benchgen.template_types import (
    AGGREGATIONS,
    ORDERS,
    PLACEHOLDER_TYPES,
    VALUE_MODES,
    Alternative,
    ColumnRef,
    Placeholder,
    Template,
    TemplateError,
)
from target_core.config import DATA_DIR
from target_core.sql.interpretations import ALTERNATIVE_KINDS

__all__ = ["AGGREGATIONS", "ALTERNATIVE_KINDS", "EXAMPLE_TEMPLATES_DIR", "ORDERS",
           "PLACEHOLDER_TYPES", "TEMPLATE_SUFFIXES", "VALUE_MODES", "Alternative",
           "ColumnRef", "Placeholder", "Template", "TemplateError", "check_schema",
           "load_templates", "parse_template", "parse_templates"]

EXAMPLE_TEMPLATES_DIR = DATA_DIR / "benchgen" / "templates"
TEMPLATE_SUFFIXES = (".json", ".yaml", ".yml")


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

