"""Core data types: tables, queries, datasets (a table view: table_view.py; a run's
configuration: run_config.py).

Tables are identified by the pair (database_id, table_id), a `TableKey`. Gold for a
query is the tuple of its table keys. All types are frozen dataclasses; containers
hold tuples so a loaded dataset cannot be changed by accident.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from target_core.errors import UnknownNameError

TableKey = tuple[str, str]


def table_ref(key: TableKey) -> str:
    """'database_id/table_id': how a table is named in URLs and lists."""
    return f"{key[0]}/{key[1]}"


def parse_table_ref(ref: str) -> TableKey:
    database_id, _, table_id = ref.partition("/")
    return (database_id, table_id)

Cell = str | int | float | bool | None
Task = str
"""A registered task's name (target_core.tasks: qa, fact, sql, retrieval, or one added)."""


@dataclass(frozen=True)
class Table:
    """One table: a header row, data rows, and context such as page and section title."""

    database_id: str
    table_id: str
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    context: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> TableKey:
        return (self.database_id, self.table_id)

    @property
    def title(self) -> str:
        return str(self.context.get("title") or "")

    @property
    def section_title(self) -> str:
        return str(self.context.get("section_title") or "")

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return len(self.header)


@dataclass(frozen=True)
class Query:
    """A question (or statement, for fact verification) with its gold tables."""

    query_id: str
    query: str
    answer: Any
    gold: tuple[TableKey, ...]
    database_id: str
    sql: str | None = None
    label: bool | None = None
    difficulty: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Extra fields of the record, kept as given (e.g. `failure_mode` in the demo data)."""


class TableLookup:
    """What showing a few queries and their tables needs, with `table(key)` and
    `query(id)` (close matches suggested on a miss): a Dataset, or a lookup over a large
    corpus that reads only the tables asked for (datasets/lookup.py)."""

    name: str
    task: str
    queries: tuple[Query, ...]

    if TYPE_CHECKING:
        # Read-only to the type checker, so a subclass may provide it as a field
        # (DatasetLookup) or a cached_property (Dataset). Declared only for type checking:
        # a real property here would make DatasetLookup's field unsettable.
        @property
        def table_index(self) -> Mapping[TableKey, Table]: ...

        @property
        def fingerprint(self) -> str: ...

    def table(self, key: TableKey) -> Table:
        try:
            return self.table_index[tuple(key)]  # type: ignore[index]
        except KeyError:
            raise UnknownNameError("table", f"{key[0]}/{key[1]}",
                                   [f"{d}/{t}" for d, t in self.table_index]) from None

    @property
    def n_tables(self) -> int:
        """How many tables the corpus holds (a corpus index counts them in SQL)."""
        return len(self.table_index)

    @cached_property
    def query_index(self) -> dict[str, Query]:
        return {q.query_id: q for q in self.queries}

    def query(self, query_id: str) -> Query:
        try:
            return self.query_index[query_id]
        except KeyError:
            raise UnknownNameError("query", query_id, self.query_index) from None


@dataclass(frozen=True)
class Dataset(TableLookup):
    """A corpus of tables, the queries over it, and (text-to-SQL) its SQLite databases."""

    name: str
    task: Task
    tables: tuple[Table, ...]
    queries: tuple[Query, ...]
    databases: Mapping[str, Path] = field(default_factory=dict)
    description: str = ""
    license: str | None = None
    source: str = ""
    chunking: str = ""  # how its documents were cut (datasets/chunking.py); "" without

    @cached_property
    def table_index(self) -> dict[TableKey, Table]:
        return {t.key: t for t in self.tables}

    @property
    def n_tables(self) -> int:
        return len(self.tables)

    @cached_property
    def corpus_fingerprint(self) -> str:
        """sha256 over the canonical JSON of every table, in corpus order."""
        digest = hashlib.sha256()
        for t in self.tables:
            digest.update(fingerprint_line(t))
        return digest.hexdigest()[:16]

    @cached_property
    def fingerprint(self) -> str:
        """sha256 over the corpus fingerprint, the chunking and the queries with their gold."""
        return dataset_fingerprint(self.corpus_fingerprint, self.chunking, self.queries)


def fingerprint_line(t: Table) -> bytes:
    """A table's part of Dataset.corpus_fingerprint (its canonical JSON and a newline), so a
    corpus read a table at a time is fingerprinted alike (datasets/corpus_stream.py)."""
    record = [t.database_id, t.table_id, list(t.header), [list(r) for r in t.rows],
              dict(t.context)]
    return json.dumps(record, ensure_ascii=False, sort_keys=True, default=str).encode() + b"\n"


def dataset_fingerprint(corpus_fingerprint: str, chunking: str, queries: Sequence[Query]
                        ) -> str:
    """Dataset.fingerprint from its parts (a corpus-index lookup has no tables to hash)."""
    digest = hashlib.sha256((corpus_fingerprint + chunking).encode())
    for q in queries:
        record = [q.query_id, q.query, q.answer, [list(g) for g in q.gold], q.database_id,
                  q.sql, q.label, q.difficulty]
        digest.update(json.dumps(record, ensure_ascii=False, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]
