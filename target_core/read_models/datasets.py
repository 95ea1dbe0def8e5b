"""Dataset browsing: per-table and per-query frames, search, and one table under many views.

Everything the Datasets page shows is computed here, so the page only reads widgets,
calls one function and renders the result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from target_core.datasets.chunking import document_of, table_or_document
from target_core.datasets.chunking import is_passage as is_passage
from target_core.datasets.chunking import passage_text as passage_text
from target_core.read_models.cells import display_column
from target_core.serialize import table_text
from target_core.table_view import VIEW_PRESETS, TableView
from target_core.tokens import TokenCounter, get_counter
from target_core.types import Query, Table, TableKey, TableLookup, table_ref


@dataclass(frozen=True)
class DatasetSummary:
    """Counts plus one row per table and one per query."""

    name: str
    task: str
    n_tables: int
    n_queries: int
    n_databases: int
    tables: pd.DataFrame
    queries: pd.DataFrame
    token_label: str
    view: TableView
    n_passages: int = 0
    """Of n_tables, the passages cut from documents (the rest are tables)."""
    n_documents: int = 0
    measured: int = -1
    """Tables whose tokens are counted (a sample of a large corpus); -1: all."""

    @property
    def exact(self) -> bool:
        """Whether every table's tokens are counted."""
        return self.measured in (-1, self.n_tables)

    @cached_property
    def tokens(self) -> pd.Series:
        """The counted tokens (every table's, or a sample's), by row of `tables`: the
        numbers alone (taking a million-row sample's rows of every column cost 0.5 s)."""
        return self.tables["tokens"] if self.exact else self.tables["tokens"].dropna()

    @cached_property
    def grids(self) -> pd.DataFrame:
        """The rows of `tables` that are tables (rows and columns mean something)."""
        if not self.n_passages:  # no copy of a million rows per look
            return self.tables
        return self.tables[self.tables["kind"] == "table"]

    def largest(self, n: int = 10) -> pd.DataFrame:
        """The `n` texts with the most tokens under the view: table, title, rows,
        columns (blank for a passage: it has none), tokens."""
        frame = self.tables.loc[self.tokens.nlargest(n).index]
        shown = frame[["table", "title"]].copy()
        for column in ("rows", "columns"):
            shown[column] = [f"{v:,}" if kind == "table" else ""
                             for v, kind in zip(frame[column], frame["kind"], strict=True)]
        shown["tokens"] = frame["tokens"].astype("int64")
        return shown


def _answer_text(answer: Any) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def queries_frame(dataset: TableLookup) -> pd.DataFrame:
    frame = pd.DataFrame({
        "query_id": [q.query_id for q in dataset.queries],
        "query": [q.query for q in dataset.queries],
        "answer": [_answer_text(q.answer) for q in dataset.queries],
        "gold": [", ".join(table_ref(k) for k in q.gold) for q in dataset.queries],
        "n_gold": [len(q.gold) for q in dataset.queries],
        "database_id": [q.database_id for q in dataset.queries],
    })
    optional: dict[str, list[Any]] = {
        "difficulty": [q.difficulty for q in dataset.queries],
        "label": [q.label for q in dataset.queries],
        "failure_mode": [q.meta.get("failure_mode") or "" for q in dataset.queries],
    }
    for column, values in optional.items():
        if any(v is not None for v in values):
            frame[column] = values
    return frame


def search(frame: pd.DataFrame, text: str, columns: list[str]) -> pd.DataFrame:
    """Rows where every whitespace-separated term occurs (case-insensitive) in `columns`."""
    terms = [t for t in text.lower().split() if t]
    if not terms or frame.empty:
        return frame
    haystack = frame[columns[0]].astype(str)
    for column in columns[1:]:  # column by column: a row-wise join is slow at 100,000 rows
        haystack = haystack + " " + frame[column].astype(str)
    haystack = haystack.str.lower()
    mask = pd.Series(True, index=frame.index)
    for term in terms:
        mask &= haystack.str.contains(re.escape(term), regex=True)
    return frame[mask]


@dataclass(frozen=True)
class RenderedView:
    label: str
    view: TableView
    text: str
    tokens: int


def render_views(table: Table, views: list[TableView], counter: TokenCounter | None = None
                 ) -> list[RenderedView]:
    """The text of one table under each view, with its token count."""
    counter = counter or get_counter()
    rendered = []
    for view in views:
        text = table_text(table, view)
        rendered.append(RenderedView(view.label, view, text, counter.count(text)))
    return rendered


def evidence_cells(query: Query, table: Table) -> set[tuple[int, int]]:
    """(data-row index, column index) of the cells a query's `evidence` names in `table`.

    Evidence entries are {"row": i, "column": "Header"} with an optional "table_id"
    (needed when a query has several gold tables); unknown columns are ignored.
    """
    entries = query.meta.get("evidence")
    if not isinstance(entries, list):
        return set()
    columns = {name: i for i, name in reversed(list(enumerate(table.header)))}
    cells = set()
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("table_id", table.table_id) != table.table_id:
            continue
        row, name = entry.get("row"), entry.get("column")
        column = columns.get(name) if isinstance(name, str) else None
        if isinstance(row, int) and 0 <= row < table.n_rows and column is not None:
            cells.add((row, column))
    return cells


def highlight_cells(frame: pd.DataFrame, cells: set[tuple[int, int]]) -> Any:
    """A pandas Styler that shades `cells` (positions in `frame`); other cells unstyled."""
    shade = "background-color: #fde68a; font-weight: 600"

    def style(data: pd.DataFrame) -> pd.DataFrame:
        styles = pd.DataFrame("", index=data.index, columns=data.columns)
        for row, column in cells:
            if row < len(data) and column < len(data.columns):
                styles.iat[row, column] = shade
        return styles

    return frame.style.apply(style, axis=None)


def evidence_rows(table: Table, cells: set[tuple[int, int]]) -> tuple[pd.DataFrame,
                                                                       set[tuple[int, int]]]:
    """Only the rows holding evidence, indexed by their 1-based data-row number, and the
    evidence cells' positions within that smaller frame (for highlight_cells)."""
    rows = sorted({r for r, _ in cells})
    frame = table_frame(table).iloc[rows]
    frame.index = pd.Index([r + 1 for r in rows], name="row")
    position = {r: i for i, r in enumerate(rows)}
    return frame, {(position[r], c) for r, c in cells}


def filter_by_failure_mode(queries: pd.DataFrame, mode: str | None) -> pd.DataFrame:
    """Queries built for one failure mode; "ordinary" means none (a blank failure_mode);
    None keeps all."""
    if mode is None or "failure_mode" not in queries:
        return queries
    return queries[queries["failure_mode"] == ("" if mode == "ordinary" else mode)]


def failure_modes(queries: pd.DataFrame) -> list[str]:
    """The failure modes present in a queries frame, sorted, plus "ordinary" if any."""
    if "failure_mode" not in queries:
        return []
    present = set(queries["failure_mode"].astype(str))
    return sorted(present - {""}) + (["ordinary"] if "" in present else [])


def table_frame(table: Table, limit: int | None = None) -> pd.DataFrame:
    """The table as a DataFrame for display (duplicate or empty headers made unique)."""
    names: list[str] = []
    for i, name in enumerate(table.header):
        label = name or f"column {i + 1}"
        while label in names:
            label += "'"
        names.append(label)
    rows = table.rows if limit is None else table.rows[:limit]
    # column by column from the cells themselves: a DataFrame built from rows turns an
    # integer column with an empty cell into floats (1984 -> 1984.0) before we see it
    columns = [display_column(pd.Series([row[i] if i < len(row) else None for row in rows],
                                         dtype=object)) for i in range(len(names))]
    frame = pd.DataFrame(dict(enumerate(columns)), index=pd.RangeIndex(len(rows)))
    frame.columns = names
    return frame


@dataclass(frozen=True)
class QueryDetail:
    query: Query
    gold: list[Table]


def queries_with_gold(dataset: TableLookup, key: TableKey) -> list[str]:
    """Ids of the queries whose gold includes the table `key` (a passage: or its
    document)."""
    document = document_of(key)
    return [q.query_id for q in dataset.queries if key in q.gold or document in q.gold]


def query_detail(dataset: TableLookup, query_id: str) -> QueryDetail:
    """A query and its gold tables; a gold document comes whole (its chunks joined)."""
    query = dataset.query(query_id)
    return QueryDetail(query, [table_or_document(dataset.table_index, k) or dataset.table(k)
                               for k in query.gold])


def views_to_compare(view: TableView, presets: Sequence[str]) -> list[TableView]:
    """`view`, then each named preset that differs from it (for side-by-side texts)."""
    return [view] + [VIEW_PRESETS[name] for name in presets if VIEW_PRESETS[name] != view]
