"""Open single tables of a large folder dataset without loading its whole corpus.

The Query page shows one query and the dozen tables around it; parsing a 100,000-table
corpus.jsonl for that takes seconds. So whenever a folder dataset loads in full (which
validates it), the byte offset of every table's line is saved in the workspace, under
`cache/corpus-index/`, in a file named by the corpus file's path, size and modification
time; with it, each table's title, section title, header and size (the catalogue the
Datasets page browses, and what the failure taxonomy compares of the tables ranked above
a gold one: `table_heads`, many tables in one query) and the corpus fingerprint (so a
run's dataset version is checked without reading the corpus). Later, `open_lookup`
gives the same answers as the loaded Dataset for what a page asks (name, task,
databases, queries, `table(key)`, `table_index.get(key)`, `fingerprint`), reading just
the lines it needs. Without a current index (never loaded, or the corpus changed since)
it loads the dataset in full, which writes the index for next time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from target_core.datasets.folder import (
    CORPUS_FILE,
    QUERIES_FILE,
    find_databases,
    gc_paused,
    inside,
    iter_jsonl,
    read_meta,
)
from target_core.datasets.records import (
    Where,
    check_queries,
    check_task,
    parse_query,
    parse_table,
    sql_from_answers,
)
from target_core.types import Dataset, Query, Table, TableKey, TableLookup, dataset_fingerprint

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

INDEX_DIR = Path("cache") / "corpus-index"
INDEX_MIN_TABLES = 2_000
"""Smaller corpora load in full in well under a second: no index for them."""
INDEX_VERSION = "3"
"""Part of each index file's name: an index of an older layout is never opened."""


def index_path(workspace: Path, corpus: Path) -> Path:
    """The index file for this version of `corpus` (path, size, modification time)."""
    stat = corpus.stat()
    stamp = f"{INDEX_VERSION}|{corpus.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return Path(workspace) / INDEX_DIR / f"{hashlib.sha256(stamp.encode()).hexdigest()[:24]}.sqlite"


def write_index(workspace: Path, corpus: Path, dataset: Dataset, wheres: Sequence[Where]
                ) -> None:
    """Save where each table of a corpus that just loaded in full is (`wheres`, in corpus
    order), unless saved already. Best effort: a workspace that cannot be written only
    costs the next page a full load."""
    try:
        path = index_path(workspace, corpus)
        if not path.exists():
            save_index(path, zip(dataset.tables, wheres, strict=True),
                       lambda: dataset.corpus_fingerprint)
    except OSError as exc:
        log.warning("cannot save the corpus index of %s: %s", corpus, exc)


def save_index(path: Path, tables: Iterable[tuple[Table, Where]],
               fingerprint: Callable[[], str]) -> None:
    """Write the index file `path` from each table and where its line is, in corpus order,
    then the corpus fingerprint (asked for once every table is written). Whatever
    `tables` raises leaves no file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    db = sqlite3.connect(partial)
    try:
        with db, gc_paused():
            db.execute("CREATE TABLE spans (database_id TEXT, table_id TEXT, offset INTEGER, "
                       "length INTEGER, line INTEGER, title TEXT, section_title TEXT, "
                       "n_rows INTEGER, n_cols INTEGER, header TEXT, "
                       "PRIMARY KEY (database_id, table_id))")
            context_keys: set[str] = set()  # those with a truthy value in some table
            databases: set[str] = set()

            def rows() -> Iterator[tuple]:
                for t, w in tables:
                    context_keys.update(key for key, value in t.context.items() if value)
                    databases.add(t.database_id)
                    yield (t.database_id, t.table_id, w.offset, w.length, w.line, t.title,
                           t.section_title, t.n_rows, t.n_cols, json.dumps(t.header))

            db.executemany("INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
            db.execute("CREATE INDEX spans_header ON spans (header)")  # with_headers
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("corpus_fingerprint", fingerprint()),
                ("context_keys", json.dumps(sorted(context_keys))),
                ("database_count", str(len(databases)))])
        db.close()
        partial.replace(path)  # atomic: a reader never sees half an index
        from target_core.datasets.catalogue import write_catalogue  # pyarrow: lazily

        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as written:
            write_catalogue(written, path)  # replaces any catalogue of an index before
    finally:
        db.close()
        partial.unlink(missing_ok=True)


@dataclass(frozen=True)
class TableHead:
    """A table's names and column names without its rows, from the corpus index: what
    the failure taxonomy compares of the tables ranked above a gold one."""

    database_id: str
    table_id: str
    header: tuple[str, ...]
    title: str = ""
    section_title: str = ""

    @property
    def key(self) -> TableKey:
        return (self.database_id, self.table_id)


class LazyTables(Mapping[TableKey, Table]):
    """Tables by key, each parsed from its line on first use."""

    def __init__(self, corpus: Path, index: Path) -> None:
        self.corpus = corpus
        self.index = index
        self.db = sqlite3.connect(f"file:{index}?mode=ro", uri=True, check_same_thread=False)
        self._table = lru_cache(maxsize=256)(self._read)

    def _span(self, key: TableKey) -> tuple[int, int, int] | None:
        row = self.db.execute("SELECT offset, length, line FROM spans WHERE database_id = ? "
                              "AND table_id = ?", [key[0], key[1]]).fetchone()
        return tuple(row) if row else None

    def _read(self, key: TableKey) -> Table | None:
        span = self._span(key)
        if span is None:
            return None
        offset, length, line = span
        with self.corpus.open("rb") as handle:
            handle.seek(offset)
            return self._parse(handle.read(length), line, key)

    def _parse(self, raw: bytes, line: int, key: TableKey) -> Table:
        where = Where(str(self.corpus), line)
        try:
            record = json.loads(raw)
        except ValueError:
            raise where.error("changed since it was indexed; load the dataset again") from None
        table = parse_table(record, where)
        if table.key != key:
            raise where.error("changed since it was indexed; load the dataset again")
        return table

    def __getitem__(self, key: TableKey) -> Table:
        table = self._table(tuple(key))
        if table is None:
            raise KeyError(key)
        return table

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self._span(key) is not None

    def __iter__(self) -> Iterator[TableKey]:
        yield from self.db.execute("SELECT database_id, table_id FROM spans ORDER BY line")

    def __len__(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM spans").fetchone()[0]

    def _rows(self, columns: str, keys: Iterable[TableKey]) -> Iterator[tuple]:
        """(database_id, table_id, *columns) of those of `keys` that are indexed, in one
        query: the keys go as one JSON array, each looked up by the primary key."""
        unique = list(dict.fromkeys(tuple(key) for key in keys))
        yield from self.db.execute(
            f"SELECT s.database_id, s.table_id, {columns} FROM json_each(?) AS j "  # noqa: S608
            "CROSS JOIN spans AS s ON s.database_id = json_extract(j.value, '$[0]') "
            "AND s.table_id = json_extract(j.value, '$[1]')", [json.dumps(unique)])

    def present(self, keys: Iterable[TableKey]) -> set[TableKey]:
        """Those of `keys` that are indexed, in one query (not one per key)."""
        return {(d, t) for d, t, _ in self._rows("s.line", keys)}

    def heads(self, keys: Iterable[TableKey]) -> dict[TableKey, TableHead]:
        """The heads of those of `keys` that are indexed, without reading the corpus."""
        return {(d, t): TableHead(d, t, tuple(json.loads(header)), title, section)
                for d, t, header, title, section
                in self._rows("header, title, section_title", keys)}

    def many(self, keys: Iterable[TableKey]) -> dict[TableKey, Table]:
        """Those of `keys` that are indexed, read in one pass over the corpus file (in
        file order, one open)."""
        spans = sorted(self._rows("offset, length, line", keys), key=lambda row: row[2])
        out: dict[TableKey, Table] = {}
        with self.corpus.open("rb") as handle:
            for database_id, table_id, offset, length, line in spans:
                handle.seek(offset)
                key = (database_id, table_id)
                out[key] = self._parse(handle.read(length), line, key)
        return out

    def database_count(self) -> int:
        """From the index's meta (counting in SQL took 0.24 s at 1,000,000 tables), or
        counted for an index written before it kept the count."""
        stored = self.db.execute("SELECT value FROM meta WHERE key = 'database_count'"
                                 ).fetchone()
        if stored is not None:
            return int(stored[0])
        return self.db.execute("SELECT COUNT(DISTINCT database_id) FROM spans").fetchone()[0]

    def first_of_each_database(self) -> dict[TableKey, Where]:
        """The first table of each database and where it is, in corpus order: where a full
        load reports a database whose SQLite file is missing (records.check_task)."""
        return {(d, t): Where(str(self.corpus), line) for d, t, line in self.db.execute(
            "SELECT database_id, table_id, MIN(line) FROM spans GROUP BY database_id "
            "ORDER BY 3")}

    def with_headers(self, headers: Iterable[Sequence[str]]) -> list[TableKey]:
        """The keys of the tables whose header is one of `headers`, without reading the
        corpus (what may hold the same content as a table with such a header)."""
        wanted = list(dict.fromkeys(json.dumps(list(h)) for h in headers))
        return [(d, t) for d, t in self.db.execute(
            "SELECT database_id, table_id FROM spans WHERE header IN "
            "(SELECT value FROM json_each(?)) ORDER BY line", [json.dumps(wanted)])]

    def headers(self) -> set[tuple[str, ...]]:
        """Every distinct header of the indexed tables, without reading the corpus."""
        return {tuple(json.loads(header))
                for (header,) in self.db.execute("SELECT DISTINCT header FROM spans")}

    def any_context(self, names: Sequence[str]) -> bool:
        """Whether any table's context has a truthy value under one of `names`: from the
        context keys the index keeps; an index written before it kept them has the
        corpus file searched for the quoted names as bytes (one pass, no parsing: 1.8 s
        at 1,000,000 tables), and only the tables on the lines where one occurs parsed."""
        stored = self.db.execute("SELECT value FROM meta WHERE key = 'context_keys'").fetchone()
        if stored is not None:
            return not set(names).isdisjoint(json.loads(stored[0]))
        import bisect

        needles = [json.dumps(name).encode() for name in names]
        with self.corpus.open("rb") as handle:
            if self.corpus.stat().st_size == 0:
                return False
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                hits = sorted({at for needle in needles for at in _find_all(data, needle)})
        if not hits:
            return False
        spans = self.db.execute("SELECT offset, database_id, table_id FROM spans "
                                "ORDER BY offset").fetchall()
        starts = [row[0] for row in spans]
        keys = dict.fromkeys(spans[bisect.bisect_right(starts, at) - 1][1:] for at in hits
                             if bisect.bisect_right(starts, at))
        return any(self[key].context.get(name) for key in keys for name in names)

    def tables(self) -> Iterator[Table]:
        """Every table in corpus order, the corpus read front to back (no seeks)."""
        for where, record in iter_jsonl(self.corpus):
            yield parse_table(record, where)

    def corpus_fingerprint(self) -> str:
        """The indexed corpus's Dataset.corpus_fingerprint, saved when it loaded in full."""
        return str(self.db.execute("SELECT value FROM meta WHERE key = 'corpus_fingerprint'")
                   .fetchone()[0])

    def catalogue(self) -> pd.DataFrame:
        """table, database_id, table_id, title, section_title, rows, columns of every
        table, in corpus order, without reading the corpus (datasets/catalogue.py)."""
        from target_core.datasets.catalogue import read_catalogue  # pyarrow: lazily

        return read_catalogue(self.db, self.index)


def _find_all(data: bytes | mmap.mmap, needle: bytes) -> Iterator[int]:
    at = data.find(needle)
    while at >= 0:
        yield at
        at = data.find(needle, at + 1)


def table_heads(index: Mapping[TableKey, Table], keys: Iterable[TableKey]
                ) -> Mapping[TableKey, Table | TableHead]:
    """Those of `keys` in `index` with at least their names and header: from a corpus
    index in one pass over the index, else the tables themselves."""
    if isinstance(index, LazyTables):
        return index.heads(keys)
    return {key: table for key in keys if (table := index.get(key)) is not None}


def tables_of(index: Mapping[TableKey, Table], keys: Iterable[TableKey]
              ) -> dict[TableKey, Table]:
    """Those of `keys` in `index`: from a corpus index in one pass over the corpus file."""
    if isinstance(index, LazyTables):
        return index.many(keys)
    return {key: table for key in keys if (table := index.get(key)) is not None}


def with_headers(index: Mapping[TableKey, Table], headers: Iterable[Sequence[str]]
                 ) -> list[TableKey]:
    """The keys of the tables of `index` whose header is one of `headers` (a corpus index
    answers in SQL, without reading the corpus)."""
    if isinstance(index, LazyTables):
        return index.with_headers(headers)
    wanted = {tuple(h) for h in headers}
    return [key for key, table in index.items() if tuple(table.header) in wanted]


def headers(index: Mapping[TableKey, Table]) -> set[tuple[str, ...]]:
    """Every distinct header of the tables of `index` (a corpus index answers in SQL)."""
    if isinstance(index, LazyTables):
        return index.headers()
    return {tuple(table.header) for table in index.values()}


def database_count(index: Mapping[TableKey, Table]) -> int:
    """How many databases hold the tables of `index` (a corpus index counts in SQL)."""
    if isinstance(index, LazyTables):
        return index.database_count()
    return len({database_id for database_id, _ in index})


@dataclass(frozen=True)
class DatasetLookup(TableLookup):
    """What pages ask of a Dataset, answered from the corpus index: no `tables` tuple."""

    name: str
    task: str
    queries: tuple[Query, ...]
    table_index: Mapping[TableKey, Table]
    """The corpus index (LazyTables), or any mapping (a haystack run adds distractors)."""
    databases: Mapping[str, Path] = field(default_factory=dict)
    description: str = ""
    source: str = ""
    corpus_fingerprint: str = ""
    """The full load's Dataset.corpus_fingerprint, from the index."""

    @cached_property
    def fingerprint(self) -> str:
        """The full load's Dataset.fingerprint (a corpus index is of a folder without
        documents: no chunking)."""
        return dataset_fingerprint(self.corpus_fingerprint, "", self.queries)


def lookup_folder(path: Path, name: str, workspace: Path) -> DatasetLookup | None:
    """A lookup over the folder dataset at `path`, or None when its corpus has no current
    index. Queries, dataset.json and databases are read afresh and checked as a full load
    checks them (a gold table missing from the corpus is an error)."""
    corpus = inside(path / CORPUS_FILE, path)
    index = index_path(workspace, corpus)
    if not index.is_file():
        return None
    tables = LazyTables(corpus, index)
    meta = read_meta(path)
    databases = find_databases(path)
    parsed = [(w, parse_query(r, w)) for w, r in iter_jsonl(inside(path / QUERIES_FILE, path))]
    present = tables.present(key for _, query in parsed for key in query.gold)  # one query
    queries, wheres = check_queries(parsed, present, str(path / QUERIES_FILE))
    queries = sql_from_answers(queries, meta.get("task"), bool(databases))
    # without databases every query's database is refused first: no need to ask the index
    task = check_task(meta.get("task"), queries, databases, path / "databases", wheres,
                      tables.first_of_each_database() if databases else {}, str(path))
    return DatasetLookup(name=name, task=task, queries=tuple(queries), table_index=tables,
                         databases=databases, description=meta.get("description", ""),
                         source=str(path), corpus_fingerprint=tables.corpus_fingerprint())
