"""Turn raw records (dicts from JSONL, the hub or Spider) into validated types.

Every loader goes through here, so a malformed record gives the same `DatasetError`
(file, line, field) whatever its source, and a dataset is either loaded whole or not
at all: nothing is built until every record has passed.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from target_core.errors import DatasetError
from target_core.tasks import TASKS, is_task, task_rules
from target_core.types import Cell, Dataset, Query, Table, TableKey, Task

_SCALARS = (str, int, float, bool, type(None))
_QUERY_FIELDS = frozenset({"query_id", "query", "answer", "table_id", "database_id", "sql",
                           "label", "difficulty"})


@dataclass(frozen=True)
class Where:
    """Where a record came from, for error messages."""

    path: str
    line: int | None = None
    offset: int | None = None
    """Byte offset of the line in its file (JSONL records), and its length in bytes."""
    length: int | None = None

    def error(self, reason: str, field: str | None = None) -> DatasetError:
        return DatasetError(reason, path=self.path, line=self.line, field=field)


def identifier(value: Any, where: Where, field: str) -> str:
    """An id field: a non-empty string (integers are accepted and turned into strings)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise where.error(f"must be a string, got {type(value).__name__}", field)
    text = str(value)
    if not text.strip():
        raise where.error("must not be empty", field)
    return text


def _require(record: Mapping[str, Any], name: str, where: Where) -> Any:
    if name not in record:
        raise where.error("required field is missing", name)
    return record[name]


def _cell(value: Any, where: Where, field: str) -> Cell:
    if not isinstance(value, _SCALARS):
        raise where.error(f"cells must be strings, numbers, booleans or null, "
                          f"got {type(value).__name__}", field)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


_PLAIN_CELLS = frozenset({str, int, bool, type(None)})
_NUMBER_CELLS = _PLAIN_CELLS | {float}


def _row(row: list[Any], where: Where, field: str) -> tuple[Cell, ...]:
    """A row's cells; the usual row (plain JSON scalars, finite floats) is taken as is,
    which keeps loading a 100,000-table corpus to a few seconds."""
    kinds = set(map(type, row))
    if kinds <= _PLAIN_CELLS or (kinds <= _NUMBER_CELLS and all(
            math.isfinite(c) for c in row if type(c) is float)):
        return tuple(row)
    return tuple(_cell(c, where, field) for c in row)


def parse_table(record: Any, where: Where) -> Table:
    """A corpus record {database_id, table_id, table: [[header], [row], ...], context?}."""
    if not isinstance(record, Mapping):
        raise where.error(f"a corpus line must be a JSON object, got {type(record).__name__}")
    database_id = identifier(_require(record, "database_id", where), where, "database_id")
    table_id = identifier(_require(record, "table_id", where), where, "table_id")
    raw = _require(record, "table", where)
    if not isinstance(raw, list) or not all(isinstance(r, list) for r in raw):
        raise where.error("must be a list of rows, each a list of cells (row 0 is the header)",
                          "table")
    if not raw or not raw[0]:
        raise where.error("the table has no header (row 0 must list the column names)", "table")
    header = tuple("" if h is None else str(_cell(h, where, "table[0]")) for h in raw[0])
    rows = []
    for i, row in enumerate(raw[1:], start=1):
        if len(row) != len(header):
            raise where.error(f"row {i} has {len(row)} cells but the header has "
                              f"{len(header)}", f"table[{i}]")
        rows.append(_row(row, where, f"table[{i}]"))
    context = record.get("context") or {}
    if not isinstance(context, Mapping):
        raise where.error(f"must be a JSON object, got {type(context).__name__}", "context")
    return Table(database_id, table_id, header, tuple(rows), dict(context))


def parse_query(record: Any, where: Where) -> Query:
    """A query record {query_id, query, answer, table_id: str | [str], database_id, ...}."""
    if not isinstance(record, Mapping):
        raise where.error(f"a query line must be a JSON object, got {type(record).__name__}")
    query_id = identifier(_require(record, "query_id", where), where, "query_id")
    text = _require(record, "query", where)
    if not isinstance(text, str) or not text.strip():
        raise where.error("must be a non-empty string", "query")
    answer = _require(record, "answer", where)
    database_id = identifier(_require(record, "database_id", where), where, "database_id")
    raw_gold = _require(record, "table_id", where)
    gold_ids = raw_gold if isinstance(raw_gold, list) else [raw_gold]
    if not gold_ids:
        raise where.error("must name at least one gold table", "table_id")
    gold = tuple(dict.fromkeys((database_id, identifier(t, where, "table_id"))
                               for t in gold_ids))
    sql = record.get("sql")
    if sql is not None and (not isinstance(sql, str) or not sql.strip()):
        raise where.error("must be a non-empty string when present", "sql")
    label = record.get("label")
    if label is not None and not isinstance(label, bool):
        raise where.error(f"must be true or false, got {label!r}", "label")
    difficulty = record.get("difficulty")
    if difficulty is not None and not isinstance(difficulty, str):
        difficulty = str(difficulty)
    meta = {k: v for k, v in record.items() if k not in _QUERY_FIELDS}
    return Query(query_id, text, answer, gold, database_id, sql, label, difficulty or None, meta)


_SQL_START = re.compile(r"\s*(select|with)\b", re.IGNORECASE)


def sql_from_answers(queries: list[Query], task: str | None, has_databases: bool
                     ) -> list[Query]:
    """TARGET's text-to-SQL layout keeps the gold SQL in `answer`, with no `sql` field:
    there, each query without `sql` takes its answer as its gold SQL. That layout is a
    folder with databases whose task is "sql", or is not given and every such answer
    reads as SQL (starts with SELECT or WITH). Anything else is returned unchanged."""
    lacking = [q for q in queries if q.sql is None]
    answers_sql = is_task(task) and task_rules(task).answers_sql
    if (task is not None and not answers_sql) or not has_databases or not lacking:
        return queries
    if not all(isinstance(q.answer, str) and q.answer.strip()
               and (answers_sql or _SQL_START.match(q.answer)) for q in lacking):
        return queries
    return [replace(q, sql=q.answer) if q.sql is None else q for q in queries]


def infer_task(queries: Iterable[Query], has_databases: bool) -> Task:
    """sql if there are databases and queries carry sql; fact if they carry labels; else qa."""
    queries = list(queries)
    if has_databases and queries and all(q.sql for q in queries):
        return "sql"
    if queries and all(q.label is not None for q in queries):
        return "fact"
    return "qa"


def assemble(
    *,
    name: str,
    task: str | None,
    tables: Iterable[tuple[Where, Table]],
    queries: Iterable[tuple[Where, Query]],
    databases: Mapping[str, Path] | None = None,
    database_dir: Path | None = None,
    corpus_source: str,
    queries_source: str,
    description: str = "",
    license: str | None = None,
    source: str = "",
    documents: Iterable[TableKey] = (),
    chunking: str = "",
) -> Dataset:
    """Check the records against each other and build the Dataset.

    `documents`: keys of whole documents a query's gold may name besides the tables
    (datasets/chunking.py); `chunking` labels how they were cut (Dataset.chunking).

    Raises DatasetError for an empty corpus, no queries, a duplicate table key, a
    duplicate query id, a gold table missing from the corpus, or (text-to-SQL) a
    database whose SQLite file does not exist or is not SQLite. `database_dir` is where
    missing databases were expected, for the message.
    """
    databases = dict(databases or {})
    seen: dict[TableKey, Where] = {}
    table_list: list[Table] = []
    for where, table in tables:
        if table.key in seen:
            raise duplicate_table(where, table, seen[table.key].line)
        seen[table.key] = where
        table_list.append(table)
    if not table_list:
        raise DatasetError("the corpus is empty: it holds no tables", path=corpus_source)

    extra = set(documents)
    known: Container[TableKey] = seen if not extra else set(seen) | extra
    query_list, seen_ids = check_queries(queries, known, queries_source)
    query_list = sql_from_answers(query_list, task, bool(databases))
    task = check_task(task, query_list, databases, database_dir, seen_ids, seen, source)
    return Dataset(name=name, task=task, tables=tuple(table_list), queries=tuple(query_list),
                   databases=databases, description=description, license=license,
                   source=source, chunking=chunking)


def duplicate_table(where: Where, table: Table, first_line: int | None) -> DatasetError:
    """The error for a table whose key an earlier line (`first_line`) holds already."""
    return where.error(f"duplicate table ({table.database_id!r}, {table.table_id!r}); "
                       f"first defined at line {first_line}", "table_id")


def check_queries(queries: Iterable[tuple[Where, Query]], tables: Container[TableKey],
                  queries_source: str) -> tuple[list[Query], dict[str, Where]]:
    """The queries, and where each was defined, after checking that there is at least
    one, that no id repeats and that every gold table is in `tables`."""
    query_list: list[Query] = []
    seen_ids: dict[str, Where] = {}
    for where, query in queries:
        if query.query_id in seen_ids:
            raise where.error(f"duplicate query_id {query.query_id!r}; first defined at line "
                              f"{seen_ids[query.query_id].line}", "query_id")
        seen_ids[query.query_id] = where
        for key in query.gold:
            if key not in tables:
                raise where.error(f"gold table ({key[0]!r}, {key[1]!r}) is not in the corpus",
                                  "table_id")
        query_list.append(query)
    if not query_list:
        raise DatasetError("there are no queries", path=queries_source)
    return query_list, seen_ids


def check_task(task: str | None, queries: list[Query], databases: Mapping[str, Path],
               database_dir: Path | None, query_wheres: Mapping[str, Where],
               table_wheres: Mapping[TableKey, Where], source: str) -> Task:
    """The task (inferred when not given); for text-to-SQL, every database a query or a
    table (of `table_wheres`) names must have a real SQLite file."""
    if task is None:
        task = infer_task(queries, bool(databases))
    if not is_task(task):
        raise DatasetError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}",
                           field="task", path=source or None)
    if task_rules(task).answers_sql:
        _check_databases(databases, database_dir, table_wheres, query_wheres, queries)
    return task


SQLITE_MAGIC = b"SQLite format 3\x00"


def check_sqlite_file(path: Path, where: Where) -> None:
    """A database file must exist, start with SQLite's magic header and have a readable
    schema (read-only; a full integrity check would read every page of a large database).
    """
    if not Path(path).is_file():
        raise where.error(f"database file {path} does not exist", "database_id")
    with open(path, "rb") as handle:
        if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise where.error(f"{path} is not a SQLite database", "database_id")
    try:
        connection = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise where.error(f"{path} cannot be read as a SQLite database: {exc}",
                          "database_id") from None


def _check_databases(databases: Mapping[str, Path], database_dir: Path | None,
                     tables: Mapping[TableKey, Where], query_wheres: Mapping[str, Where],
                     queries: list[Query]) -> None:
    """Every database a query or table names must have a real SQLite file."""
    root = database_dir or Path("databases")
    checked: set[str] = set()
    wheres = [(q.database_id, query_wheres[q.query_id]) for q in queries]
    wheres += [(database_id, where) for (database_id, _), where in tables.items()]
    for database_id, where in wheres:
        if database_id in checked:
            continue
        path = databases.get(database_id)
        check_sqlite_file(path or root / database_id / f"{database_id}.sqlite", where)
        checked.add(database_id)
