"""Row serialization: one vector per row, a table scored by its best row (the
RowSerializationRetriever of TARGET's repository).

Each row the run's TableView shows (its `rows` limit applies) becomes the text
"col1 is v1, col2 is v2, ..." (empty cells left out), after "Title: ... | Section: ... |
Table: ... | " when the view includes them; a table with no visible row is one text of
its header ("col1, col2, ..."). TARGET writes every cell, empty ones too, and no title,
so there a table without rows has no vector and is never retrieved.

The Retriever protocol indexes one text per table, so `prepare_texts` gives each table
its row texts one per line (a line break inside a cell becomes a space) and `index`
splits them again: what the run stores and fingerprints is exactly what was embedded,
and `index` needs nothing but its texts.

Index: every row of the corpus in ONE Chroma collection, under the id "T:R" (T the
table's position in the corpus, R the line in its text, i.e. the row), named like
dense's by (texts, embedder): a rerun embeds nothing, an interrupted one resumes, and
processes take turns (VectorStore.writing): retrievers/chroma_base.py, as for dense.

Search: a table's score is its best row's cosine, max over rows r of cos(q, r). Chroma
gives the n best rows, n = max(k + 1, FIRST_ROWS) and then doubled until they hold
k + 1 distinct tables or every row is in (TARGET starts at k and widens the same way
until k tables; the one more shows whether the cut splits equal scores, as dense asks
for k + 1); a table ranks at its first row in that list. When the cut does split
equal scores, every table is scored exactly (score_all) and ties go to the lower index,
as everywhere else.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from target_core.embeddings.base import Embedder
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import Hits, IndexInfo, top_k_hits
from target_core.retrievers.chroma_base import ChromaRetriever
from target_core.serialize import cell_text, visible_rows
from target_core.table_view import TableView
from target_core.types import Table
from target_core.vectorstore import EF_SEARCH, VectorStore

FIRST_ROWS = EF_SEARCH
"""Rows asked for first (at least k + 1). HNSW visits EF_SEARCH candidates per query
anyway, so asking up to that many costs little more than k + 1 (demo-qa, 7,427 rows:
2.7 ms for 176 or 500 rows, 1.2 ms for 11) while starting at k + 1 took 3 to 5 rounds
for most queries (9.5 ms in Chroma per query)."""
MATCHED_ROWS = 3
"""Rows shown per retrieved table on the Query page."""


def _flat(text: str) -> str:
    """One line: the per-table text holds one row per line."""
    return " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _prefix(table: Table, view: TableView) -> str:
    parts = []
    if view.title and table.title:
        parts.append(f"Title: {table.title}")
    if view.section_title and table.section_title:
        parts.append(f"Section: {table.section_title}")
    if view.table_id:
        parts.append(f"Table: {table.table_id}")
    return "".join(f"{_flat(p)} | " for p in parts)


def row_texts(table: Table, view: TableView) -> list[str]:
    """The texts embedded for `table`: one per visible row, or one of the header when
    the view shows no row (header only, or an empty table)."""
    prefix = _prefix(table, view)
    rows = visible_rows(table, view)
    if not rows:
        return [prefix + (_flat(", ".join(table.header)) or table.table_id)]
    texts = []
    for row in rows:
        cells = [f"{name} is {cell_text(value)}" for name, value in
                 zip(table.header, row, strict=False) if cell_text(value) != ""]
        texts.append(prefix + (_flat(", ".join(cells)) or "(empty row)"))
    return texts


def split_rows(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Every row text of the corpus in order, and where each table's rows start."""
    rows: list[str] = []
    starts = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        starts[i] = len(rows)
        rows.extend(text.split("\n"))
    return rows, starts


class RowsRetriever(ChromaRetriever):
    """Row vectors in one Chroma collection; `spec` is "rows:<embedder spec>"."""

    description = "one vector per row in Chroma, a table scored by its best row"
    family = "rows"
    unit = "rows"
    collection_prefix = "rows|"

    def __init__(self, embedder: Embedder, store: VectorStore) -> None:
        super().__init__(embedder, store)
        self._starts = np.zeros(0, dtype=np.int64)

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """Each table's row texts, one per line (row_texts)."""
        return ["\n".join(row_texts(t, view)) for t in tables]

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        """Embed every line of `texts` (one row each) into one collection."""
        started = time.perf_counter()
        rows, starts = split_rows(texts)
        ids = [f"{table}:{row}" for table, n in enumerate(np.diff(np.append(starts, len(rows))))
               for row in range(n)]
        name, _, n_missing, truncated = self.open_collection(
            corpus_key, ids, rows, {"corpus_key": corpus_key, "embedder": self.embedder.spec,
                                    "n_tables": len(texts), "n_rows": len(rows)}, progress)
        self._starts = starts
        return IndexInfo(len(texts), time.perf_counter() - started, {
            "collection": name, "store": self.store.description, "rows": len(rows),
            "embedded": n_missing, "cached": len(rows) - n_missing, "truncated": truncated,
            "embedder": self.embedder.spec, "backend": self.embedder.backend})

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        collection = self._require()
        vectors = self.embed_queries(queries)
        return [self._search_one(collection, query, vector, top_k)
                for query, vector in zip(queries, vectors, strict=True)]

    def _search_one(self, collection: Any, query: str, vector: np.ndarray, top_k: int
                    ) -> Hits:
        n_rows = len(self._ids)
        if top_k <= 0 or n_rows == 0:
            return []
        n = min(max(top_k + 1, FIRST_ROWS), n_rows)
        while True:
            found = self.store.query(collection, vector[None, :], n, size=n_rows)[0]
            best: dict[int, float] = {}
            for id_, score in found:  # best first: a table's first row is its best
                best.setdefault(int(id_.partition(":")[0]), score)
            if len(best) > top_k or n >= n_rows:
                break
            n = min(2 * n, n_rows)
        ranked = sorted(best.items(), key=lambda h: (-h[1], h[0]))
        # every row not seen scores at most the (k+1)-th table's best, so the cut can
        # split equal scores only if that table ties the k-th: which of them made the cut
        # was Chroma's choice, so every table is scored exactly
        if len(ranked) > top_k and ranked[top_k][1] == ranked[top_k - 1][1]:
            return top_k_hits(self.score_all(query), top_k)
        return ranked[:top_k]

    def score_all(self, query: str) -> np.ndarray:
        """Each table's best row cosine, max over its rows of cos(q, r)."""
        scores = self.exact_scores(query)
        if scores.size == 0:
            return np.zeros(len(self._starts), dtype=np.float32)
        return np.maximum.reduceat(scores, self._starts)

    def matched_rows(self, query: str, tables: Sequence[int], per_table: int = MATCHED_ROWS
                     ) -> list[list[tuple[int, float]]]:
        """For each table position in `tables`, its `per_table` best rows as (line of its
        text, i.e. row index, cosine), best first, ties to the lower row."""
        scores = self.exact_scores(query)
        ends = np.append(self._starts[1:], scores.size)
        out = []
        for table in tables:
            start, end = int(self._starts[table]), int(ends[table])
            out.append(top_k_hits(scores[start:end].astype(np.float64), per_table))
        return out
