"""A large folder dataset read a table at a time: its corpus index written in one pass
over the corpus file, and its tables handed to a run in corpus order without keeping them.

A full load holds every table as Python objects (about 7 KB each: 7 GB at a million
tables). A corpus file of STREAM_MIN_BYTES or more without a current corpus index is
indexed here instead (`index_streaming`: each line parsed and checked as the full load
checks it, duplicates included, then dropped), and a run that only retrieves reads its
tables through `run_tables`: a sequence whose iteration parses the corpus file front to
back, one table at a time, and whose `keys` come from the index without parsing. The
texts, rankings and fingerprints are the full load's (tests/test_corpus_stream.py).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import overload

from target_core.datasets.folder import iter_jsonl
from target_core.datasets.lookup import DatasetLookup, LazyTables, index_path, save_index
from target_core.datasets.records import Where, duplicate_table, parse_table
from target_core.errors import DatasetError
from target_core.types import Dataset, Table, TableKey, fingerprint_line

log = logging.getLogger(__name__)

STREAM_MIN_BYTES = 64 * 2**20
"""A corpus file this large (about 50,000 tables) is indexed streaming when it has no
current index, so it is never loaded in full to be opened (registry.open_lookup)."""


def index_streaming(workspace: Path, corpus: Path) -> None:
    """Write the corpus index of `corpus` (lookup.py) in one pass, unless it is current:
    the same file the full load writes, with the same checks of every table (a bad line
    or a repeated key raises DatasetError naming its line, and no index is written). A
    workspace that cannot be written is logged, not raised: then there is no index."""
    path = index_path(workspace, corpus)
    if path.exists():
        return
    digest = hashlib.sha256()
    first_line: dict[TableKey, int | None] = {}

    def tables() -> Iterator[tuple[Table, Where]]:
        for where, record in iter_jsonl(corpus):
            table = parse_table(record, where)
            if table.key in first_line:
                raise duplicate_table(where, table, first_line[table.key])
            first_line[table.key] = where.line
            digest.update(fingerprint_line(table))
            yield table, where
        if not first_line:
            raise DatasetError("the corpus is empty: it holds no tables", path=corpus)

    log.info("indexing %s a table at a time", corpus)
    try:
        save_index(path, tables(), lambda: digest.hexdigest()[:16])
    except OSError as exc:  # e.g. a read-only workspace: the caller loads the dataset whole
        log.warning("cannot save the corpus index of %s: %s", corpus, exc)


class CorpusTables(Sequence[Table]):
    """The tables of a corpus index, in corpus order: iterating parses the corpus file
    front to back and keeps none; `tables[i]` reads one table by its key."""

    def __init__(self, lazy: LazyTables) -> None:
        self.lazy = lazy

    @cached_property
    def keys(self) -> list[TableKey]:
        """Every table's key in corpus order, from the index (the corpus is not read)."""
        return [(d, t) for d, t in self.lazy]

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[Table]:
        return self.lazy.tables()

    @overload
    def __getitem__(self, i: int) -> Table: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Table]: ...

    def __getitem__(self, i: int | slice) -> Table | Sequence[Table]:
        if isinstance(i, slice):
            return [self.lazy[key] for key in self.keys[i]]
        return self.lazy[self.keys[i]]


def run_tables(dataset: Dataset | DatasetLookup) -> Sequence[Table]:
    """The corpus a run indexes, in corpus order: a loaded dataset's tables, or a
    corpus index's read a table at a time."""
    if isinstance(dataset, Dataset):
        return dataset.tables
    if isinstance(dataset.table_index, LazyTables):
        return CorpusTables(dataset.table_index)
    return tuple(dataset.table_index.values())


def table_keys(tables: Sequence[Table]) -> list[TableKey]:
    """The key of each of `tables`, in order (a corpus index's without parsing them)."""
    if isinstance(tables, CorpusTables):
        return tables.keys
    return [t.key for t in tables]
