"""What exact set match needs to know about a database: its tables, columns and keys.

Spider's official evaluator resolves every column against the database (`name` in a
query over `singer JOIN concert` is `singer.name`) and treats the two ends of a foreign
key as one column. `read_schema` reads exactly that from a SQLite file, read-only, in the
file's own order (tables by creation, columns as declared, foreign keys as SQLite lists
them), which is also the order a Spider-style `tables.json` built from the file has.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from target_core.sql.execute import SqlExecutionError, connect_readonly


@dataclass(frozen=True)
class SqlSchema:
    """Tables (lower-case name -> lower-case column names) and foreign keys.

    `foreign_keys` holds (column, referenced column) pairs as "table.column", in the
    order SQLite lists them. Build one with `read_schema` or directly (tests).
    """

    tables: dict[str, tuple[str, ...]]
    foreign_keys: tuple[tuple[str, str], ...] = ()
    key_map: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key_map", _key_map(self))

    def columns(self) -> list[str]:
        """Every column as "table.column", tables and columns in order."""
        return [f"{table}.{column}" for table, columns in self.tables.items()
                for column in columns]


def _key_map(schema: SqlSchema) -> dict[str, str]:
    """Column -> the column that stands for its foreign-key group.

    Spider's `build_foreign_key_map` rule, kept exactly because it decides which columns
    count as one: each key pair joins the first group that already holds either column,
    or starts a new one (groups are never merged); a group's stand-in is its column that
    comes first in the schema; a column in several groups takes the last group's.
    """
    position = {column: index for index, column in enumerate(schema.columns())}
    groups: list[set[str]] = []
    for pair in schema.foreign_keys:
        if not all(column in position for column in pair):
            continue
        group = next((g for g in groups if pair[0] in g or pair[1] in g), None)
        if group is None:
            group = set()
            groups.append(group)
        group.update(pair)
    mapping: dict[str, str] = {}
    for group in groups:
        first = min(group, key=position.__getitem__)
        mapping.update(dict.fromkeys(group, first))
    return mapping


def read_schema(path: str | Path) -> SqlSchema:
    """The schema of a SQLite file, cached while the file is unchanged.

    Raises SqlExecutionError naming the file if it is missing or not SQLite.
    """
    file = Path(path).resolve()
    try:
        stat = file.stat()
    except OSError:
        raise SqlExecutionError(f"{file}: no such database file") from None
    return _read_schema(str(file), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _read_schema(path: str, _mtime_ns: int, _size: int) -> SqlSchema:
    connection = connect_readonly(path)
    try:
        names = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid")]
        tables: dict[str, tuple[str, ...]] = {}
        primary: dict[str, str] = {}
        for name in names:
            info = list(connection.execute(f"PRAGMA table_info({_quote(name)})"))
            tables[name.lower()] = tuple(str(row[1]).lower() for row in info)
            keyed = sorted((row[5], str(row[1]).lower()) for row in info if row[5])
            if keyed:
                primary[name.lower()] = keyed[0][1]
        keys = []
        for name in names:
            for row in connection.execute(f"PRAGMA foreign_key_list({_quote(name)})"):
                target = str(row[2]).lower()
                # No column named: the key references the other table's primary key.
                to = str(row[4]).lower() if row[4] else primary.get(target, "")
                keys.append((f"{name.lower()}.{str(row[3]).lower()}", f"{target}.{to}"))
    except sqlite3.DatabaseError as error:
        raise SqlExecutionError(f"{path}: cannot read the schema ({error})") from None
    finally:
        connection.close()
    return SqlSchema(tables, tuple(keys))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
