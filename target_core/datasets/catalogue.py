"""A corpus index's catalogue, column-wise: every table's ref, ids, titles and size.

The Datasets page lists, searches and measures a corpus's tables from its catalogue. At
1,000,000 tables, fetching it as rows from the corpus index (SQLite) and building a
DataFrame from a million tuples took 5.9 s on every first visit. So beside each index
file (`cache/corpus-index/NAME.sqlite`) its catalogue is kept as an Arrow file
(`NAME.catalogue.arrow`), written once, in batches, when the index is written (or on
first use for an index written before), and read back memory-mapped: a few tenths of a
second at a million tables, the strings staying Arrow strings in pandas.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa

from target_core.types import table_ref

log = logging.getLogger(__name__)

SCHEMA = pa.schema([("table", pa.string()), ("database_id", pa.string()),
                    ("table_id", pa.string()), ("title", pa.string()),
                    ("section_title", pa.string()), ("rows", pa.int64()),
                    ("columns", pa.int64())])
"""The catalogue's columns, as the Datasets page names them (table is "db/table")."""
_BATCH = 100_000
_SELECT = ("SELECT database_id, table_id, title, section_title, n_rows, n_cols FROM spans "
           "ORDER BY line")


def catalogue_path(index: Path) -> Path:
    """Where the catalogue of the corpus index file `index` is kept."""
    return index.with_name(f"{index.stem}.catalogue.arrow")


def _iter_batches(db: sqlite3.Connection) -> Iterator[pa.RecordBatch]:
    cursor = db.execute(_SELECT)
    while rows := cursor.fetchmany(_BATCH):
        database_ids, table_ids, titles, sections, n_rows, n_cols = zip(*rows, strict=True)
        refs = [table_ref(key) for key in zip(database_ids, table_ids, strict=True)]
        yield pa.record_batch([refs, list(database_ids), list(table_ids), list(titles),
                               list(sections), list(n_rows), list(n_cols)], schema=SCHEMA)


def write_catalogue(db: sqlite3.Connection, index: Path) -> bool:
    """Write the catalogue of the index `db` (the file `index`) beside it, a batch of
    rows at a time. Best effort: False when the workspace cannot be written."""
    path = catalogue_path(index)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_file(sink, SCHEMA) as writer:
            for batch in _iter_batches(db):
                writer.write_batch(batch)
        partial.replace(path)  # atomic: a reader never sees half a catalogue
        return True
    except OSError as exc:
        log.warning("cannot store the catalogue of %s: %s", index, exc)
        return False
    finally:
        partial.unlink(missing_ok=True)


def read_catalogue(db: sqlite3.Connection, index: Path) -> pd.DataFrame:
    """The catalogue of the index `db` (the file `index`), in corpus order: from its
    Arrow file, written first if missing; from the index itself if it cannot be."""
    path = catalogue_path(index)
    if path.is_file() or write_catalogue(db, index):
        try:
            with pa.memory_map(str(path)) as source:
                table = pa.ipc.open_file(source).read_all()
            if table.schema.equals(SCHEMA):
                return table.to_pandas()
        except (OSError, pa.ArrowInvalid) as exc:
            log.warning("unreadable catalogue %s (%s): read from the index", path, exc)
    return pa.Table.from_batches(list(_iter_batches(db)), schema=SCHEMA).to_pandas()
