"""The Datasets page's sizes without measuring a large corpus on every visit.

Counting every table's tokens under a view means serialising and tokenising each one:
about 20 s for 100,000 tables. So a large corpus's counts are stored in the workspace
(`cache/dataset-sizes/`), one file per (corpus fingerprint, view, token counter), and
read back in milliseconds; a changed corpus has another fingerprint, so another file.
With nothing stored, a corpus of up to EXACT_MAX_TABLES tables is measured in full; a
larger one on a seeded random sample of SAMPLE_SIZE tables (stored too), which the page
says, until `measure_all` (the page's button) counts every table and stores the counts.
A corpus-index lookup (datasets/lookup.py) gives the catalogue (ids, titles, rows,
columns) without reading the corpus.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from target_core.datasets.chunking import is_passage
from target_core.datasets.lookup import DatasetLookup, LazyTables, tables_of
from target_core.progress import Progress, no_progress
from target_core.read_models.datasets import DatasetSummary, queries_frame
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import TokenCounter, get_counter
from target_core.types import Dataset, Table, TableLookup, parse_table_ref, table_ref

log = logging.getLogger(__name__)

SIZES_DIR = Path("cache") / "dataset-sizes"
EXACT_MAX_TABLES = 5_000
"""Corpora up to this size are measured in full on a visit (well under a second)."""
SAMPLE_SIZE = 2_000
SAMPLE_SEED = 0
_BATCH = 1_000
KINDS = ("table", "passage")


def catalogue(dataset: TableLookup) -> pd.DataFrame:
    """table, database_id, table_id, title, section_title, rows, columns, kind: every
    table in corpus order (a corpus-index lookup answers from its stored catalogue)."""
    tables = dataset.table_index
    if isinstance(tables, LazyTables):
        frame = tables.catalogue()
        frame["kind"] = pd.Categorical.from_codes(np.zeros(len(frame), dtype=np.int8),
                                                  categories=pd.Index(KINDS))  # 2 ms, not 66
        return frame
    loaded = _tables(dataset)
    return pd.DataFrame({
        "table": [table_ref(t.key) for t in loaded],
        "database_id": [t.database_id for t in loaded],
        "table_id": [t.table_id for t in loaded],
        "title": [t.title for t in loaded],
        "section_title": [t.section_title for t in loaded],
        "rows": [t.n_rows for t in loaded],
        "columns": [t.n_cols for t in loaded],
        "kind": pd.Categorical(["passage" if is_passage(t) else "table" for t in loaded],
                               categories=KINDS),
    })


def _tables(dataset: TableLookup) -> Sequence[Table]:
    if isinstance(dataset, Dataset):
        return dataset.tables
    return list(dataset.table_index.values())


def _stream(dataset: TableLookup) -> Iterator[Table]:
    """Every table in corpus order (a corpus index: its corpus read front to back)."""
    tables = dataset.table_index
    yield from tables.tables() if isinstance(tables, LazyTables) else _tables(dataset)


def _corpus_fingerprint(dataset: TableLookup) -> str:
    if isinstance(dataset, Dataset | DatasetLookup):
        return dataset.corpus_fingerprint
    raise TypeError(f"no corpus fingerprint for {type(dataset).__name__}")


def sizes_path(workspace: Path, dataset: TableLookup, view: TableView, counter: TokenCounter,
               *, sample: bool) -> Path:
    """The stored counts of this corpus under `view` with `counter` (all, or the sample)."""
    key = json.dumps([_corpus_fingerprint(dataset), view.to_dict(), counter.label,
                      SAMPLE_SIZE if sample else "all", SAMPLE_SEED if sample else None],
                     sort_keys=True, default=str)
    name = hashlib.sha256(key.encode()).hexdigest()[:24]
    return Path(workspace) / SIZES_DIR / f"{name}{'-sample' if sample else ''}.npz"


def _read(path: Path, n_tables: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(positions, tokens) stored at `path`, or None (absent, unreadable, other size)."""
    try:
        with np.load(path) as stored:
            positions, tokens = stored["positions"], stored["tokens"]
    except (OSError, ValueError, KeyError):
        return None
    if len(positions) != len(tokens) or (len(positions) and positions.max() >= n_tables):
        return None
    return positions, tokens


def _write(path: Path, positions: np.ndarray, tokens: np.ndarray) -> None:
    """Best effort: a workspace that cannot be written only costs the next visit a count."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.stem}.{os.getpid()}.partial.npz")
        np.savez(partial, positions=positions, tokens=tokens)
        partial.replace(path)  # atomic: a reader never sees half a file
    except OSError as exc:
        log.warning("cannot store the table sizes in %s: %s", path.parent, exc)


def _count(tables: Iterable[Table], view: TableView, counter: TokenCounter,
           total: int, progress: Progress) -> np.ndarray:
    counts: list[int] = []
    batch: list[str] = []
    for table in tables:
        batch.append(table_text(table, view))
        if len(batch) == _BATCH:
            counts += counter.count_many(batch)
            batch = []
            progress(len(counts), total, "tables measured")
    counts += counter.count_many(batch)
    progress(len(counts), total, "tables measured")
    return np.asarray(counts, dtype=np.int64)


def sample_positions(n_tables: int) -> np.ndarray:
    """The corpus positions of the seeded sample of SAMPLE_SIZE tables, in corpus order."""
    rng = np.random.default_rng(SAMPLE_SEED)
    return np.sort(rng.choice(n_tables, size=min(SAMPLE_SIZE, n_tables), replace=False))


def _summary(dataset: TableLookup, view: TableView, counter: TokenCounter,
             frame: pd.DataFrame, positions: np.ndarray, tokens: np.ndarray) -> DatasetSummary:
    if len(tokens) == len(frame):
        frame["tokens"] = tokens
    else:
        column = np.full(len(frame), np.nan)
        column[positions] = tokens
        frame["tokens"] = column
    passages = frame["kind"] == "passage"
    documents = ({t.context.get("document_id") for t in _tables(dataset) if is_passage(t)}
                 if passages.any() else set())
    return DatasetSummary(
        name=dataset.name, task=dataset.task, n_tables=len(frame),
        n_queries=len(dataset.queries), n_databases=len(getattr(dataset, "databases", {})),
        tables=frame, queries=queries_frame(dataset), token_label=counter.label, view=view,
        n_passages=int(passages.sum()), n_documents=len(documents), measured=len(tokens))


def dataset_summary(dataset: TableLookup, view: TableView, workspace: Path,
                    counter: TokenCounter | None = None) -> DatasetSummary:
    """Counts and per-table sizes under `view`: every table's tokens when the corpus is
    small or its counts are stored, else a seeded sample's (`summary.exact` is False)."""
    counter = counter or get_counter()
    frame = catalogue(dataset)
    n = len(frame)
    if n <= EXACT_MAX_TABLES:
        tokens = _count(_stream(dataset), view, counter, n, no_progress)
        return _summary(dataset, view, counter, frame, np.arange(n), tokens)
    for sample in (False, True):
        stored = _read(sizes_path(workspace, dataset, view, counter, sample=sample), n)
        if stored is not None:
            return _summary(dataset, view, counter, frame, *stored)
    positions = sample_positions(n)
    keys = list(zip(frame["database_id"].iloc[positions].tolist(),  # not 2,000 .iat: 0.25 s
                    frame["table_id"].iloc[positions].tolist(), strict=True))
    read = tables_of(dataset.table_index, keys)  # one pass over the corpus file, in order
    tokens = _count((read[k] for k in keys), view, counter, len(keys), no_progress)
    _write(sizes_path(workspace, dataset, view, counter, sample=True), positions, tokens)
    return _summary(dataset, view, counter, frame, positions, tokens)


def measure_all(dataset: TableLookup, view: TableView, workspace: Path,
                counter: TokenCounter | None = None, progress: Progress = no_progress
                ) -> DatasetSummary:
    """Count every table's tokens under `view`, store the counts, and return the summary
    with them (`progress` is told after each thousand tables)."""
    counter = counter or get_counter()
    frame = catalogue(dataset)
    tokens = _count(_stream(dataset), view, counter, len(frame), progress)
    positions = np.arange(len(frame))
    _write(sizes_path(workspace, dataset, view, counter, sample=False), positions, tokens)
    return _summary(dataset, view, counter, frame, positions, tokens)


def with_tokens(dataset: TableLookup, rows: pd.DataFrame, view: TableView,
                counter: TokenCounter | None = None) -> pd.DataFrame:
    """`rows` of a summary's tables with the tokens that are not yet counted (a sampled
    summary's) counted now: for the few rows a page shows."""
    missing = rows["tokens"].isna()
    if missing.any():
        counter = counter or get_counter()
        texts = [table_text(dataset.table(parse_table_ref(ref)), view)
                 for ref in rows.loc[missing, "table"]]
        rows = rows.copy()
        rows.loc[missing, "tokens"] = counter.count_many(texts)
    return rows.astype({"tokens": "int64"})


def browsed_columns(rows: pd.DataFrame) -> list[str]:
    """The columns the Tables grid shows: not the ids the "table" ref holds, nor a kind
    every row shares (the grid then fits a 1,500-pixel screen)."""
    same_kind = rows["kind"].nunique() < 2
    return [str(c) for c in rows.columns
            if c not in ("database_id", "table_id") and not (c == "kind" and same_kind)]


class TableRefs(Sequence[str]):
    """The tables' refs ("db/table") of a dataset, for checking a link's `table`: `in`
    asks the dataset's index; the full list is built only to suggest a close match."""

    def __init__(self, dataset: TableLookup) -> None:
        self.tables = dataset.table_index
        self._all: list[str] | None = None

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and parse_table_ref(ref) in self.tables

    def _refs(self) -> list[str]:
        if self._all is None:
            self._all = [table_ref(k) for k in self.tables]
        return self._all

    def __getitem__(self, i: Any) -> Any:
        return self._refs()[i]

    def __len__(self) -> int:
        return len(self.tables)
