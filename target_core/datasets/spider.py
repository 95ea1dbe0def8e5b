"""Load a dataset laid out as Spider ships it, so a downloaded Spider needs no conversion.

Layout (github.com/taoyds/spider):
    tables.json                      schemas: db_id, table_names_original,
                                     column_names_original [[table_idx, name]], column_types,
                                     primary_keys, foreign_keys
    dev.json | train_spider.json     questions: db_id, question, query (gold SQL), ...
    database/<db>/<db>.sqlite        one SQLite file per database
The test release adds test.json, test_tables.json and test_database/.

The corpus is every table of every database in tables.json that has a SQLite file (read
read-only); gold tables come from the gold SQL (sqlglot), difficulty is Spider's own
hardness. Everything goes through `records` so errors name the file, record and field.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from target_core.datasets.folder import inside
from target_core.datasets.records import Where, assemble, identifier, parse_query, parse_table
from target_core.errors import DatasetError, UnknownNameError
from target_core.sql.structure import SqlParseError, gold_tables, spider_hardness
from target_core.types import Dataset, Query, Table

logger = logging.getLogger(__name__)

QUESTION_FILES: dict[str, str] = {
    "dev": "dev.json",
    "train": "train_spider.json",
    "train_others": "train_others.json",
    "test": "test.json",
}
"""Spider's question file for each split name."""


@dataclass
class _Schema:
    """One tables.json entry, with key columns turned from indices into names."""

    db_id: str
    tables: list[str]
    primary_keys: dict[str, list[str]] = field(default_factory=dict)
    foreign_keys: dict[str, list[dict[str, str]]] = field(default_factory=dict)


def is_spider_dir(path: str | Path) -> bool:
    """True for a folder in Spider's layout: tables.json, or a question file + database/.

    Deliberately loose, so an incomplete Spider folder still reaches `load_spider`
    and gets a precise error instead of "unknown dataset".
    """
    path = Path(path)
    if not path.is_dir():
        return False
    if (path / "tables.json").is_file():
        return True
    has_questions = any((path / f).is_file() for f in QUESTION_FILES.values())
    return has_questions and (path / "database").is_dir()


def load_spider(path: str | Path, *, split: str | None = None, name: str | None = None,
                corpus: Literal["all", "split"] = "all") -> Dataset:
    """Load a Spider-layout folder as a text-to-SQL Dataset.

    `split` picks the question file (see QUESTION_FILES); by default dev.json when
    present, else train_spider.json. Query ids are f"{split}-{index:05d}" with the
    0-based index in the question file; errors give the 1-based record number as line.
    `corpus="all"` indexes every database with a SQLite file (Spider's tables.json
    lists train and dev databases alike); `corpus="split"` only those the split's
    questions use, as TARGET's per-split Spider corpora do (and much smaller).
    Raises DatasetError for a missing tables.json or question file, a malformed record,
    gold SQL that does not parse or names an unknown table, a database without its
    SQLite file, a SQLite file that is not a database, or a file that resolves outside
    the folder (a symlink out of it), as for the folder format.
    """
    root = Path(path)
    chosen = _choose_split(root, split)
    questions_path = root / QUESTION_FILES[chosen]
    tables_path = root / "tables.json"
    database_dir = root / "database"
    if chosen == "test":  # the test release keeps its own schemas and databases
        if (root / "test_tables.json").is_file():
            tables_path = root / "test_tables.json"
        if (root / "test_database").is_dir():
            database_dir = root / "test_database"

    schemas = _read_schemas(inside(tables_path, root))
    questions = _read_json(inside(questions_path, root), "question file")
    if not isinstance(questions, list):
        raise DatasetError(f"expected a JSON list of questions, got {type(questions).__name__}",
                           path=questions_path)

    if corpus not in ("all", "split"):
        raise UnknownNameError("Spider corpus option", str(corpus), ("all", "split"))
    used = {r.get("db_id") for r in questions if isinstance(r, Mapping)}
    databases: dict[str, Path] = {}
    for schema in schemas.values():
        db_path = database_dir / schema.db_id / f"{schema.db_id}.sqlite"
        if corpus == "split" and schema.db_id not in used:
            continue
        if db_path.is_file():
            databases[schema.db_id] = inside(db_path, root)
        else:
            logger.info("Spider database %s has no SQLite file at %s; its tables are skipped",
                        schema.db_id, db_path)

    # Questions first: their errors show up before the slow read of every table.
    queries = []
    for i, record in enumerate(questions):
        where = Where(str(questions_path), i + 1)
        queries.append((where, _question(record, i, chosen, schemas, databases, database_dir,
                                         where)))
    tables = [item for db_id, db_path in databases.items()
              for item in _read_tables(db_path, schemas[db_id])]
    return assemble(
        name=name or (root.name if split is None else f"{root.name}-{chosen}"),
        task="sql",
        tables=tables,
        queries=queries,
        databases=databases,
        corpus_source=str(tables_path),
        queries_source=str(questions_path),
        description=f"Spider layout, {chosen} split: {len(queries)} questions over "
                    f"{len(databases)} databases",
        source=str(root),
    )


def _choose_split(root: Path, split: str | None) -> str:
    if split is not None:
        if split not in QUESTION_FILES:
            raise UnknownNameError("Spider split", split, QUESTION_FILES)
        return split
    for candidate in ("dev", "train"):
        if (root / QUESTION_FILES[candidate]).is_file():
            return candidate
    return "dev"  # reported as a missing dev.json by the caller


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DatasetError(f"{what} is missing", path=path)
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise DatasetError(f"invalid JSON: {error.msg}", path=path, line=error.lineno) from None
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"cannot read {what}: {error}", path=path) from None


def _read_schemas(path: Path) -> dict[str, _Schema]:
    entries = _read_json(path, "schema file (tables.json)")
    if not isinstance(entries, list):
        raise DatasetError(f"expected a JSON list of schemas, got {type(entries).__name__}",
                           path=path)
    schemas: dict[str, _Schema] = {}
    for i, entry in enumerate(entries):
        where = Where(str(path), i + 1)
        schema = _parse_schema(entry, where)
        if schema.db_id in schemas:
            raise where.error(f"duplicate db_id {schema.db_id!r}", "db_id")
        schemas[schema.db_id] = schema
    return schemas


def _parse_schema(entry: Any, where: Where) -> _Schema:
    if not isinstance(entry, Mapping):
        raise where.error(f"a schema must be a JSON object, got {type(entry).__name__}")
    for key in ("db_id", "table_names_original", "column_names_original"):
        if key not in entry:
            raise where.error("required field is missing", key)
    db_id = identifier(entry["db_id"], where, "db_id")
    tables = entry["table_names_original"]
    if not isinstance(tables, list) or not all(isinstance(t, str) and t for t in tables):
        raise where.error("must be a list of table names", "table_names_original")
    columns = entry["column_names_original"]
    if not isinstance(columns, list) or not all(
            isinstance(c, list) and len(c) == 2 and isinstance(c[0], int)
            and isinstance(c[1], str) for c in columns):
        raise where.error("must be a list of [table_index, column_name]",
                          "column_names_original")
    schema = _Schema(db_id, list(tables), {t: [] for t in tables}, {t: [] for t in tables})

    def column(index: Any, key: str) -> tuple[str, str]:
        if (isinstance(index, bool) or not isinstance(index, int)
                or not 0 <= index < len(columns) or not 0 <= columns[index][0] < len(tables)):
            raise where.error(f"column index {index!r} does not name a table column", key)
        return tables[columns[index][0]], columns[index][1]

    for key_entry in entry.get("primary_keys") or []:
        for index in key_entry if isinstance(key_entry, list) else [key_entry]:
            table, name = column(index, "primary_keys")
            schema.primary_keys[table].append(name)
    for pair in entry.get("foreign_keys") or []:
        if not isinstance(pair, list) or len(pair) != 2:
            raise where.error(f"expected [column_index, column_index], got {pair!r}",
                              "foreign_keys")
        table, name = column(pair[0], "foreign_keys")
        ref_table, ref_name = column(pair[1], "foreign_keys")
        schema.foreign_keys[table].append(
            {"column": name, "ref_table": ref_table, "ref_column": ref_name})
    return schema


def _read_tables(db_path: Path, schema: _Schema) -> list[tuple[Where, Table]]:
    """Every table of one database, read through a read-only connection."""
    where = Where(str(db_path))
    result = []
    try:
        connection = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise where.error(f"cannot open the SQLite database: {error}") from None
    # Some Spider databases hold text that is not valid UTF-8; keep it readable.
    connection.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
    try:
        for table in schema.tables:
            quoted = '"' + table.replace('"', '""') + '"'
            try:
                cursor = connection.execute(f"SELECT * FROM {quoted}")
                header = [d[0] for d in cursor.description]
                rows = [[_cell(v) for v in row] for row in cursor.fetchall()]
            except sqlite3.DatabaseError as error:
                reason = ("is not a SQLite database" if "not a database" in str(error)
                          else f"cannot read table {table!r}: {error}")
                raise where.error(reason, None if "not a database" in str(error)
                                  else "table_names_original") from None
            record = {
                "database_id": schema.db_id,
                "table_id": table,
                "table": [header, *rows],
                "context": {"title": table, "database": schema.db_id,
                            "primary_key": schema.primary_keys.get(table, []),
                            "foreign_keys": schema.foreign_keys.get(table, [])},
            }
            result.append((where, parse_table(record, where)))
    finally:
        connection.close()
    return result


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):  # BLOBs: cells must be scalars the views can print
        return value.decode("utf-8", errors="replace")
    return value


def _question(record: Any, index: int, split: str, schemas: Mapping[str, _Schema],
              databases: Mapping[str, Path], database_dir: Path, where: Where) -> Query:
    if not isinstance(record, Mapping):
        raise where.error(f"a question must be a JSON object, got {type(record).__name__}")
    for key in ("db_id", "question", "query"):
        if key not in record:
            raise where.error("required field is missing", key)
    db_id = identifier(record["db_id"], where, "db_id")
    if db_id not in schemas:
        raise where.error(f"database {db_id!r} is not in tables.json", "db_id")
    if db_id not in databases:
        raise where.error(f"database file {database_dir / db_id / (db_id + '.sqlite')} "
                          f"does not exist", "db_id")
    question = record["question"]
    if not isinstance(question, str) or not question.strip():
        raise where.error("must be a non-empty string", "question")
    sql = record["query"]
    if not isinstance(sql, str) or not sql.strip():
        raise where.error("must be a non-empty SQL string", "query")
    try:
        gold = gold_tables(sql, schemas[db_id].tables)
        difficulty = spider_hardness(sql)
    except SqlParseError as error:
        raise where.error(str(error), "query") from None
    return parse_query({
        "query_id": f"{split}-{index:05d}",
        "query": question,
        "answer": sql,
        "sql": sql,
        "table_id": gold,
        "database_id": db_id,
        "difficulty": difficulty,
    }, where)
