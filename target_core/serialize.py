"""Table -> text for a TableView, shared by every retriever and every prompt.

Deterministic: the same table and view always give the same string, so a text
fingerprint identifies exactly what a run indexed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence

from target_core.types import Cell, Table, TableView


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


def table_text(table: Table, view: TableView) -> str:
    """The text of `table` under `view`."""
    identity = _identity(table, view)
    rows = visible_rows(table, view)
    if view.format == "json":
        record: dict[str, object] = dict(identity)
        record["columns"] = list(table.header)
        record["rows"] = [[cell_text(c) if isinstance(c, bool) else c for c in r] for r in rows]
        return json.dumps(record, ensure_ascii=False)
    body = _markdown(table.header, rows) if view.format == "markdown" else _csv(table.header, rows)
    prefix = "".join(f"{_LABELS[k]}: {v}\n" for k, v in identity)
    return prefix + body


def texts_fingerprint(texts: Iterable[str]) -> str:
    """sha256 (16 hex chars) over a sequence of texts, order-sensitive."""
    digest = hashlib.sha256()
    for text in texts:
        encoded = text.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()[:16]
