"""Table -> text for a TableView, shared by every retriever and every prompt.

Deterministic: the same table and view always give the same string, so a text
fingerprint identifies exactly what a run indexed.

A schema-aware view (`TableView.context`) adds keys of the table's context after the
title lines, in the view's order, a table without the key adding nothing:

    Primary key: instructor_id
    Foreign keys: instructors.dept_id -> departments.dept_id
    Columns:
    - dept_id: department of the instructor (integer)
    Database: university

`column_descriptions` maps a column to its description: a string, or BIRD's
database_description fields (`column_description`, `column_name`, `data_format`,
`value_description`); a list of BIRD rows keyed by `original_column_name` reads the
same. Columns are described in header order; a description of a column the table lacks
is left out. JSON carries the same entries under the context key's name.

A passage (a document's chunk) is text, not a grid: "Title: <document title>" when the
view shows titles, then its text (`passage_view_text`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from target_core.datasets.chunking import is_passage, passage_text
from target_core.table_view import TableView
from target_core.types import Cell, Table


def cell_text(value: Cell) -> str:
    """How one cell reads in every format: null is empty, booleans lower-case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _identity(table: Table, view: TableView) -> list[tuple[str, str]]:
    pairs = []
    if view.title and table.title:
        pairs.append(("title", table.title))
    if view.section_title and table.section_title:
        pairs.append(("section_title", table.section_title))
    if view.table_id:
        pairs.append(("table_id", table.table_id))
    return pairs


_LABELS = {"title": "Title", "section_title": "Section", "table_id": "Table"}


def visible_rows(table: Table, view: TableView) -> Sequence[Sequence[Cell]]:
    return table.rows if view.rows is None else table.rows[: view.rows]


def _markdown_cell(value: Cell) -> str:
    return cell_text(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


_CELL, _ROW = "\x1f", "\x1e"  # ASCII unit and record separators: hardly ever in cells


def _markdown(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    rows = list(rows)
    # the usual table: all cells joined once, escaped once, separators turned into pipes;
    # the per-cell path below gives the same text and serves a cell holding a separator
    body = _ROW.join(_CELL.join(map(cell_text, row)) for row in rows)
    if body.count(_CELL) == sum(len(row) - 1 for row in rows if row) and \
            body.count(_ROW) == max(len(rows) - 1, 0):
        if "\\" in body or "|" in body or "\n" in body:
            body = body.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
        body_lines = ("\n| " + body.replace(_CELL, " | ").replace(_ROW, " |\n| ") + " |"
                      if rows else "")
    else:
        body_lines = "".join("\n| " + " | ".join(_markdown_cell(c) for c in row) + " |"
                             for row in rows)
    return ("| " + " | ".join(_markdown_cell(h) for h in header) + " |\n"
            + "| " + " | ".join("---" for _ in header) + " |" + body_lines)


def _csv(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([cell_text(c) for c in row] for row in rows)
    return buffer.getvalue().rstrip("\n")


# --- schema context ------------------------------------------------------------------------

_CONTEXT_LABELS = {"primary_key": "Primary key", "foreign_keys": "Foreign keys",
                   "column_descriptions": "Columns"}
_RESERVED = frozenset({"title", "section_title", "table_id", "columns", "rows"})
"""JSON keys of the record itself: a context key of the same name is `context_<key>`."""


def _one_line(value: Any) -> str:
    return " ".join(str(value).split())


def _foreign_key(table: Table, entry: Any) -> str:
    """"table.column -> table.column" from the demo's {"column", "references"}, the
    Spider loader's {"column", "ref_table", "ref_column"}, a [column, reference] pair or
    a string kept as given."""
    if isinstance(entry, Mapping):
        column = entry.get("column", "")
        target = entry.get("references") or ".".join(
            str(entry[k]) for k in ("ref_table", "ref_column") if entry.get(k))
        return f"{table.table_id}.{column} -> {target}"
    if isinstance(entry, list | tuple) and len(entry) == 2:
        return f"{table.table_id}.{entry[0]} -> {entry[1]}"
    return _one_line(entry)


def _description(value: Any) -> str:
    """One column's description: the text, BIRD's expanded name when there is no text,
    the data format in brackets, then its value description."""
    if not isinstance(value, Mapping):
        return _one_line(value)
    text = _one_line(value.get("column_description") or value.get("description")
                     or value.get("column_name") or "")
    if fmt := _one_line(value.get("data_format") or ""):
        text = f"{text} ({fmt})" if text else f"({fmt})"
    if values := _one_line(value.get("value_description") or ""):
        text = f"{text}. Values: {values}" if text else f"Values: {values}"
    return text


def _column_descriptions(table: Table, value: Any) -> dict[str, str]:
    """Column -> description in header order (names matched ignoring case and spaces)."""
    if isinstance(value, list):  # BIRD's CSV rows as records
        value = {str(r.get("original_column_name") or r.get("column_name") or ""): r
                 for r in value if isinstance(r, Mapping)}
    if not isinstance(value, Mapping):
        return {}
    given = {str(k).strip().lower(): v for k, v in value.items()}
    found = {}
    for column in table.header:
        if (text := _description(given.get(column.strip().lower(), ""))):
            found[column] = text
    return found


def context_entries(table: Table, view: TableView) -> list[tuple[str, str, Any]]:
    """(context key, label, value) of each of the view's context keys that `table`'s
    context holds, in the view's order: the one renderer of keys and descriptions, for
    every format and the text-to-SQL schema prompt. A value is a string, a list of
    strings (keys) or a column -> description mapping; empty values are left out."""
    entries: list[tuple[str, str, Any]] = []
    for key in view.context:
        raw = table.context.get(key)
        if raw in (None, "", [], {}):
            continue
        value: Any
        if key == "primary_key":
            value = [str(c) for c in raw] if isinstance(raw, list | tuple) else [str(raw)]
        elif key == "foreign_keys":
            value = [_foreign_key(table, e) for e in
                     (raw if isinstance(raw, list | tuple) else [raw])]
        elif key == "column_descriptions":
            value = _column_descriptions(table, raw)
        elif isinstance(raw, list | tuple):
            value = [_one_line(v) for v in raw]
        elif isinstance(raw, Mapping):
            value = _one_line(json.dumps(raw, ensure_ascii=False, sort_keys=True,
                                         default=str))
        else:
            value = _one_line(cell_text(raw))
        if value:
            label = _CONTEXT_LABELS.get(key) or key.replace("_", " ").capitalize()
            entries.append((key, label, value))
    return entries


def context_lines(table: Table, view: TableView) -> list[str]:
    """The lines the view's context adds to markdown and CSV text (see the module doc)."""
    lines = []
    for _, label, value in context_entries(table, view):
        if isinstance(value, Mapping):
            lines.append(f"{label}:")
            lines.extend(f"- {column}: {text}" for column, text in value.items())
        else:
            lines.append(f"{label}: {', '.join(value) if isinstance(value, list) else value}")
    return lines


def passage_view_text(table: Table, view: TableView) -> str:
    """A passage (a chunk of a document, datasets/chunking.py) as text: its identifying
    lines as a table's ("Title: ...", "Passage: <id>" for the table_id flag), then the
    text itself, in every format (JSON: {"title"?, "table_id"?, "text"}). A passage has
    no header, rows or context keys, so the view's rows limit and context do not apply:
    a header-only view still indexes the passage's words."""
    identity = _identity(table, view)
    text = passage_text(table)
    if view.format == "json":
        return json.dumps(dict(identity) | {"text": text}, ensure_ascii=False)
    labels = _LABELS | {"table_id": "Passage"}
    return "".join(f"{labels[k]}: {v}\n" for k, v in identity) + text


def ottqa_text(table: Table, view: TableView) -> str:
    """TARGET's OTT-QA text (retrievers/ottqa/utils.py, `convert_table_representation`
    then `build_corpus`): "{table id or ''} | {section title} | {header joined by
    spaces}"; the table id only with the view's table_id flag (TARGET's `withtitle`),
    the section title only with its section_title flag (TARGET always has it)."""
    ident = table.table_id if view.table_id else ""
    section = table.section_title if view.section_title else ""
    return f"{ident} | {section} | {' '.join(table.header)}"


def target_markdown(header: Sequence[str], rows: Sequence[Sequence[Cell]], n_rows: int | None
                    ) -> str:
    """TARGET's `markdown_table_str(table, num_rows)` (retrievers/utils.py): "| a | b |"
    lines, no escaping; the "| --- |" separator only when num_rows > 0, so all rows
    (None) come without it as in TARGET."""
    lines = ["| " + " | ".join(header) + " |"]
    if n_rows:
        lines.append("| " + " | ".join(["---"] * len(header)) + " |")
    lines += ["| " + " | ".join(cell_text(c) for c in row) + " |" for row in rows]
    return "".join(line + "\n" for line in lines)


def table_text(table: Table, view: TableView) -> str:
    """The text of `table` under `view` (a passage: `passage_view_text`)."""
    if is_passage(table):
        return passage_view_text(table, view)
    if view.format == "ottqa":
        return ottqa_text(table, view)
    identity = _identity(table, view)
    rows = visible_rows(table, view)
    if view.format == "json":
        record: dict[str, object] = dict(identity)
        for key, _, value in context_entries(table, view) if view.context else ():
            record[f"context_{key}" if key in _RESERVED else key] = value
        record["columns"] = list(table.header)
        record["rows"] = [[cell_text(c) if isinstance(c, bool) else c for c in r] for r in rows]
        return json.dumps(record, ensure_ascii=False)
    body = (_markdown(table.header, rows) if view.format == "markdown" else
            target_markdown(table.header, rows, view.rows) if view.format == "target-markdown"
            else _csv(table.header, rows))
    prefix = "".join(f"{_LABELS[k]}: {v}\n" for k, v in identity)
    if view.context:
        prefix += "".join(f"{line}\n" for line in context_lines(table, view))
    return prefix + body


def texts_fingerprint(texts: Iterable[str]) -> str:
    """sha256 (16 hex chars) over a sequence of texts, order-sensitive."""
    digest = hashlib.sha256()
    for text in texts:
        encoded = text.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()[:16]
