"""What a dense retriever's embedder saw of a table: where its input window cut the
table's text, as "cut after row N of M", and whether the cells an answer rests on lie
inside or beyond that cut. The one home of the rule behind the failure category
`evidence-beyond-window` (analysis/failures.py) and of the Query page's dense section
(analysis/explain_dense.py).

Window: all-MiniLM-L6-v2 reads 256 word pieces, [CLS] and [SEP] included, so 254 of the
text (embeddings/minilm_weights.py); its tokenizer's character offsets map the last piece
read back into the text. OpenAI's embedding models read 8,191 tokens (tiktoken's
cl100k_base, OpenAIEmbedder.fit); only for OpenAI's own server, whose counts are exact
offline. Another embedder's cut is not known here (None).

Rows: a row's end in the text is where the text of the table cut to its first r rows
stops agreeing with the full text (true of every format: markdown, CSV and TARGET's
markdown append rows; JSON's closing brackets are where the two differ), found by binary
search, so a table of M rows costs O(log M) serializations.

Evidence, the first source that has something for the table:
1. the query's `evidence` annotation, [{"table_id"?, "row", "column"}] with `row` the
   0-based data row (the demo sets; FeTaQA's highlighted_cell_ids by
   scripts/fetaqa_folder.py);
2. text-to-SQL: the gold SQL's literal values found in cells and its columns (header);
3. the answer string: cells that contain it, else (a sentence) cells of at least three
   characters whose text occurs in the answer as whole words.
Annotated evidence is beyond the window when any of its cells is (the answer needs every
highlighted cell); evidence found by matching text only when none of its cells was seen
(a value seen anywhere is a value the embedder read). The gold SQL's columns (header
cells) decide only when it names no value found in the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from target_core.config import Settings
from target_core.datasets.chunking import is_passage
from target_core.errors import TargetError
from target_core.serialize import cell_text, table_text, visible_rows
from target_core.table_view import TableView
from target_core.types import Query, Table

__all__ = ["EvidenceCell", "TableWindow", "Window", "beyond_window",
           "dense_embedder", "evidence_cells", "row_end", "table_window", "window_for"]

MIN_ANSWER_CELL = 3
"""Characters a cell needs before its text found in a sentence answer counts."""


@dataclass(frozen=True)
class Window:
    """An embedder's input window: `count(text)` gives (tokens of the whole text,
    character offset after the last character read, or None when all of it fits)."""

    embedder: str
    limit: int
    """Tokens the model reads (MiniLM: 256, [CLS] and [SEP] included)."""
    tokenizer: str
    count: Callable[[str], tuple[int, int | None]]


def dense_embedder(retriever_spec: str) -> str | None:
    """The embedder spec of a dense or hybrid retriever spec, else None."""
    from target_core.retrievers import RETRIEVERS

    try:
        entry, arg = RETRIEVERS.parse(retriever_spec)
    except TargetError:
        return None
    if not entry.embeds_view:
        return None
    return next((p.spec for p in entry.parts(arg) if p.kind == "embedder"), None)


@lru_cache(maxsize=1)
def _minilm_window() -> Window:
    from tokenizers import Tokenizer

    from target_core.embeddings.minilm_weights import (
        MAX_SEQ_LENGTH,
        find_model_dir,
        load_tokenizer,
    )

    whole = Tokenizer.from_str(load_tokenizer(find_model_dir()).to_str())
    whole.no_truncation()
    content = MAX_SEQ_LENGTH - 2  # [CLS] ... [SEP] take two places of the window

    def count(text: str) -> tuple[int, int | None]:
        stripped = text.strip()  # as the embedder (sentence-transformers) strips it
        encoding = whole.encode(stripped)
        n = len(encoding.ids)
        if n <= MAX_SEQ_LENGTH:
            return n, None
        lead = len(text) - len(text.lstrip())
        return n, lead + encoding.offsets[content][1]  # index 0 is [CLS]

    return Window("minilm", MAX_SEQ_LENGTH, "all-MiniLM-L6-v2 WordPiece (exact)", count)


def window_for(embedder_spec: str, settings: Settings) -> Window | None:
    """The window of `embedder_spec`, when it can be known offline (see the module doc)."""
    family = embedder_spec.split("/", 1)[0]
    if family == "minilm":
        return _minilm_window()
    if family == "openai":
        from target_core.embeddings.openai_embedder import MODEL_MAX_TOKENS, OpenAIEmbedder
        from target_core.llm.servers import billed_by_openai

        model = embedder_spec.partition("/")[2] or "text-embedding-3-small"
        if not billed_by_openai(settings.openai_base_url) or model not in MODEL_MAX_TOKENS:
            return None
        try:
            embedder = OpenAIEmbedder(settings, model)
        except TargetError:
            return None

        def count(text: str) -> tuple[int, int | None]:
            seen, _, cut = embedder.fit(text)
            return embedder.cost(text), len(seen) if cut else None

        return Window(embedder_spec, embedder.max_tokens,
                      f"tiktoken ({embedder.counter.label})", count)
    return None


def row_end(table: Table, view: TableView, rows: int, full: str | None = None) -> int:
    """Character offset in the view's text of `table` where its first `rows` data rows
    end (rows = 0: the title and header)."""
    full = table_text(table, view) if full is None else full
    part = table_text(table, view.with_(rows=rows))
    if full.startswith(part):  # markdown, CSV: rows are appended
        return len(part)
    low, high = 0, min(len(part), len(full))  # the longest common prefix, by halving
    while low < high:
        mid = (low + high + 1) // 2
        if part[:mid] == full[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


@dataclass(frozen=True)
class EvidenceCell:
    row: int
    """0-based data row; -1: the header (a column the gold SQL names)."""
    column: str
    source: str
    """"annotation", "sql" or "answer"."""

    def label(self) -> str:
        where = "header" if self.row < 0 else f"row {self.row + 1}"
        return f"{where} ({self.column})"


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _annotated(query: Query, table: Table) -> list[EvidenceCell] | None:
    items = [i for i in query.meta.get("evidence") or () if isinstance(i, dict)
             and isinstance(i.get("row"), int)]
    if not items:
        return None
    single = len(query.gold) == 1
    return [EvidenceCell(i["row"], str(i.get("column", "?")), "annotation") for i in items
            if (i.get("table_id") or (table.table_id if single else None)) == table.table_id]


def _sql_cells(sql: str, table: Table) -> list[EvidenceCell]:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError:
        return []
    values = {_norm(str(lit.this)) for lit in tree.find_all(exp.Literal)}
    numbers = {n for v in values if (n := _number(v)) is not None}
    columns = {c.name.casefold() for c in tree.find_all(exp.Column)}
    cells = [EvidenceCell(-1, h, "sql") for h in table.header if h.casefold() in columns]
    for r, row in enumerate(table.rows):
        for name, value in zip(table.header, row, strict=False):
            text = _norm(cell_text(value))
            if text and (text in values or (numbers and _number(text) in numbers)):
                cells.append(EvidenceCell(r, name, "sql"))
    return cells


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _answer_cells(answer: str, table: Table) -> list[EvidenceCell]:
    wanted = _norm(answer)
    if not wanted:
        return []
    inside, within = [], []
    for r, row in enumerate(table.rows):
        for name, value in zip(table.header, row, strict=False):
            text = _norm(cell_text(value))
            if not text:
                continue
            if wanted in text:
                inside.append(EvidenceCell(r, name, "answer"))
            elif len(text) >= MIN_ANSWER_CELL and re.search(
                    rf"(?<!\w){re.escape(text)}(?!\w)", wanted):
                within.append(EvidenceCell(r, name, "answer"))
    return inside or within


def evidence_cells(query: Query, table: Table) -> list[EvidenceCell]:
    """The cells of `table` the query's answer rests on (see the module doc), in order."""
    annotated = _annotated(query, table)
    if annotated is not None:
        return annotated
    if query.sql:
        return _sql_cells(query.sql, table)
    if isinstance(query.answer, str):
        return _answer_cells(query.answer, table)
    return []


@dataclass(frozen=True)
class TableWindow:
    """Where the window cut one table's text, and its evidence against the cut."""

    tokens: int
    limit: int
    chars: int
    cut_at: int | None
    """Character offset of the cut (None: the whole text fits)."""
    rows_total: int
    """Data rows in the view's text (the view's row limit applied)."""
    rows_seen: int
    """Data rows read whole."""
    evidence: tuple[tuple[EvidenceCell, str], ...]
    """Each evidence cell and where it is: "inside", "beyond" (the cut) or "not in the
    view" (a row the view did not serialize)."""

    @property
    def cut_label(self) -> str:
        if self.cut_at is None:
            return (f"whole table read ({self.tokens} of {self.limit} tokens, "
                    f"{self.rows_total} rows)")
        if self.rows_seen == 0 and self.rows_total:
            return (f"cut inside the title/header: no row of {self.rows_total} read "
                    f"({self.tokens} tokens, window {self.limit})")
        return (f"cut after row {self.rows_seen} of {self.rows_total} ({self.tokens} "
                f"tokens, window {self.limit})")

    @property
    def verdict(self) -> str | None:
        """"beyond", "inside" or None (no evidence found in the view's text)."""
        placed = [(c, w) for c, w in self.evidence if w != "not in the view"]
        values = [w for c, w in placed if c.row >= 0]  # the gold SQL's columns count
        places = values or [w for _, w in placed]      # only when it names no value seen
        if not places:
            return None
        annotated = any(cell.source == "annotation" for cell, _ in self.evidence)
        beyond = ("beyond" in places) if annotated else all(p == "beyond" for p in places)
        return "beyond" if beyond else "inside"


def _cell_seen(table: Table, full: str, cut_at: int, cell: EvidenceCell,
               span: tuple[int, int]) -> bool:
    """Whether `cell`, in the row the cut falls in (its text at `span`), was read."""
    row = table.rows[cell.row]
    value = next((cell_text(v) for h, v in zip(table.header, row, strict=False)
                  if h == cell.column), "")
    at = full.find(value, *span) if value else -1
    return at >= 0 and at + len(value) <= cut_at


def table_window(window: Window, table: Table, view: TableView, query: Query | None
                 ) -> TableWindow:
    """Where `window` cuts the view's text of `table`, and (with `query`) where its
    evidence cells lie against the cut."""
    full = table_text(table, view)
    tokens, cut_at = window.count(full)
    if is_passage(table):  # a document's text: no rows, no cells to place
        return TableWindow(tokens, window.limit, len(full), cut_at, 0, 0, ())
    n_rows = len(visible_rows(table, view))
    seen, span = n_rows, (0, 0)
    header_read = True
    if cut_at is not None:
        header_read = row_end(table, view, 0, full) <= cut_at
        low, high = 0, (n_rows if header_read else 0)  # largest r: row_end(r) <= cut_at
        while low < high:
            mid = (low + high + 1) // 2
            if row_end(table, view, mid, full) <= cut_at:
                low = mid
            else:
                high = mid - 1
        seen = low
        if header_read and seen < n_rows:  # the row the cut falls in
            span = (row_end(table, view, seen, full), row_end(table, view, seen + 1, full))

    def place(cell: EvidenceCell) -> str:
        if cell.row >= n_rows:
            return "not in the view"
        if cut_at is None or (cell.row >= 0 and cell.row < seen):
            return "inside"
        if cell.row < 0:
            return "inside" if header_read or cell.column in full[:cut_at] else "beyond"
        if cell.row > seen or not header_read:
            return "beyond"
        return "inside" if _cell_seen(table, full, cut_at, cell, span) else "beyond"

    cells = evidence_cells(query, table) if query is not None else []
    return TableWindow(tokens=tokens, limit=window.limit, chars=len(full), cut_at=cut_at,
                       rows_total=n_rows, rows_seen=seen,
                       evidence=tuple((c, place(c)) for c in cells))


def beyond_window(window: Window, query: Query, table: Table, view: TableView
                  ) -> str | None:
    """The failure category's evidence line when `table`'s evidence lies beyond the
    window (see the module doc), else None."""
    if not table.header and not table.rows:
        return None
    where = table_window(window, table, view, query)
    if where.verdict != "beyond":
        return None
    beyond = [c for c, p in where.evidence if p == "beyond"]
    shown = ", ".join(c.label() for c in beyond[:3]) + (" …" if len(beyond) > 3 else "")
    return (f"{table.table_id}: evidence at {shown} ({beyond[0].source}); "
            f"{window.embedder} {where.cut_label}")
