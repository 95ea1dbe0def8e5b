"""Run generated SQL read-only; the entry point for result comparison and match too.

DESIGN.md ("Components that must be real", SQL): generated SQL never changes a user's
database. Four independent locks make sure of it: the `mode=ro` URI (SQLite opens the
file read-only and never creates it), `PRAGMA query_only`, an authorizer that denies
every action except reading (so ATTACH, which could create a file, never runs), and
SQLITE_LIMIT_ATTACHED = 0. A progress handler stops runaway queries and a row cap
bounds memory. Bad SQL never raises: `execute` returns a `SqlResult` whose
`error_class` says what went wrong, and `classify` turns a gold/predicted pair into one
of ERROR_CLASSES. Only infrastructure problems (no such file, not a database) raise
SqlExecutionError, because they are not the generated SQL's fault.

Result comparison, the execution diff and `classify` live in `target_core/sql/compare.py`,
exact set match in `target_core/sql/exact_match.py`; `target_core.sql` re-exports all three.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import sqlglot
from sqlglot import exp

from target_core.errors import ConfigError, TargetError
from target_core.sql.structure import DIALECT

DEFAULT_TIMEOUT_S = 5.0
"""For the benchmark builder's sampling, which runs many short probes."""
DEFAULT_ROW_CAP = 10_000

EVAL_TIMEOUT_S = 30.0
"""Scoring a run: BIRD's evaluation script allows 30 s per query (`meta_time_out`)."""
EVAL_ROW_CAP = 1_000_000
"""Scoring a run: results are compared whole up to this many rows; a larger result is
marked not comparable, never compared by its prefix (BIRD's tables average 52k rows)."""


@dataclass(frozen=True)
class SqlLimits:
    """How long one query may run and how many rows a result may hold."""

    timeout_s: float = EVAL_TIMEOUT_S
    row_cap: int = EVAL_ROW_CAP
_PROGRESS_STEPS = 1_000  # SQLite VM instructions between two deadline checks

# SQLite error text -> error class, first match wins. "refused" covers the authorizer,
# mode=ro / query_only, and the ATTACH limit.
_ERROR_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("refused", ("not authorized", "authorization denied", "readonly database",
                 "too many attached", "may not be modified", "query_only")),
    ("unknown_table_or_column", ("no such table", "no such column", "ambiguous column")),
    ("syntax_error", ("syntax error", "incomplete input", "unrecognized token")),
)


class SqlExecutionError(TargetError):
    """The database itself cannot be used: the file is missing or is not SQLite."""


# --- read-only connection ------------------------------------------------------------

_READ_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                           sqlite3.SQLITE_RECURSIVE})
# Pragmas whose argument names a table or index (never a new value): schema reading.
_SCHEMA_PRAGMAS = frozenset({"table_info", "table_xinfo", "index_list", "index_info",
                             "index_xinfo", "foreign_key_list"})
# Pragmas that only report a value when they are given no argument.
_REPORT_PRAGMAS = frozenset({"table_list", "database_list", "collation_list", "function_list",
                             "module_list", "pragma_list", "compile_options", "encoding",
                             "page_size", "page_count", "user_version", "schema_version",
                             "application_id", "data_version", "freelist_count",
                             "foreign_keys", "journal_mode"})
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master",
                            "sqlite_temp_schema"})


def _authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None,
               _trigger: str | None) -> int:
    """Allow reads only. Everything unlisted (writes, DDL, ATTACH/DETACH, transactions,
    savepoints, pragma assignments) is denied, so SQLite fails with 'not authorized'."""
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in _SCHEMA_PRAGMAS or (arg2 is None and name in _REPORT_PRAGMAS):
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
        # Building a table-valued function (json_each, pragma_table_info) asks for this
        # although nothing is written; a real write to the schema table still fails
        # under mode=ro and query_only, and writable_schema cannot be switched on.
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class _Clock:
    """The progress handler's deadline; restarted by every execute on the connection."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = math.inf
        self.expired = False

    def restart(self) -> None:
        self.deadline = time.monotonic() + self.timeout_s
        self.expired = False

    def check(self) -> int:
        """Progress handler: a non-zero return interrupts the running statement."""
        if time.monotonic() > self.deadline:
            self.expired = True
            return 1
        return 0


class _DeadlineCursor(sqlite3.Cursor):
    """A cursor whose every statement gets the connection's full time budget."""

    def _restart_clock(self) -> None:
        connection = self.connection
        if not isinstance(connection, _ReadOnlyConnection):
            raise TypeError("a _DeadlineCursor belongs to a connection from connect_readonly")
        connection.clock.restart()

    def execute(self, *args: Any, **kwargs: Any) -> Self:
        self._restart_clock()
        return super().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> Self:
        self._restart_clock()
        return super().executemany(*args, **kwargs)

    def executescript(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        self._restart_clock()
        return super().executescript(*args, **kwargs)


class _ReadOnlyConnection(sqlite3.Connection):
    """sqlite3.Connection on which every statement restarts the deadline.

    Connection.execute does not go through cursor(), so both paths are overridden.
    """

    clock: _Clock

    def cursor(self, factory: Any = None) -> sqlite3.Cursor:  # type: ignore[override]
        return super().cursor(factory or _DeadlineCursor)

    def execute(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        return self.cursor().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        return self.cursor().executemany(*args, **kwargs)

    def executescript(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        return self.cursor().executescript(*args, **kwargs)


def _decode_text(data: bytes) -> str:
    # Real databases (BIRD's among them) hold a few invalid UTF-8 values; one bad cell
    # must not turn a correct query into an error.
    return data.decode("utf-8", errors="replace")


def connect_readonly(path: str | Path, *, timeout_s: float = DEFAULT_TIMEOUT_S
                     ) -> sqlite3.Connection:
    """Open a SQLite file so that nothing run on the connection can change any file.

    Every execute gets `timeout_s` seconds (wall clock) before it is interrupted.
    Schema reading keeps working: `PRAGMA table_info(t)`, `foreign_key_list(t)`,
    `index_list(t)` and argument-less report pragmas are allowed; `PRAGMA x = y` is not.
    Raises SqlExecutionError naming the path if the file is missing or not SQLite.
    """
    if not timeout_s > 0:
        raise ConfigError(f"timeout_s must be positive, got {timeout_s!r}")
    file = Path(path)
    if not file.is_file():
        raise SqlExecutionError(f"{file}: no such database file")
    uri = f"file:{quote(str(file.resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(
            uri, uri=True, timeout=timeout_s, isolation_level=None, factory=_ReadOnlyConnection)
    except sqlite3.Error as error:
        raise SqlExecutionError(f"{file}: cannot open the database ({error})") from None
    connection.clock = _Clock(timeout_s)
    try:
        connection.execute("PRAGMA query_only = ON")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the header
    except sqlite3.Error as error:
        connection.close()
        raise SqlExecutionError(f"{file}: not a readable SQLite database ({error})") from None
    connection.text_factory = _decode_text
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.set_authorizer(_authorize)  # last: the setup above needs a pragma
    connection.set_progress_handler(connection.clock.check, _PROGRESS_STEPS)
    return connection


# --- execution -----------------------------------------------------------------------


_BLOB_HEX_LIMIT = 32  # bytes shown as hex in JSON; longer blobs become "<blob n bytes>"


def json_safe_value(value: Any) -> Any:
    """A SQLite value as JSON can hold it: blobs as hex (long ones as "<blob n bytes>"),
    infinities as text. Used by every to_dict here and by SqlResult.to_dict."""
    if isinstance(value, bytes):
        if len(value) <= _BLOB_HEX_LIMIT:
            return f"x'{value.hex()}'"
        return f"<blob {len(value)} bytes>"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no infinity
    if value is None or isinstance(value, (str, int, float)):
        return value
    return str(value)


def json_safe_rows(rows: Sequence[tuple[Any, ...]]) -> list[list[Any]]:
    return [[json_safe_value(v) for v in row] for row in rows]

@dataclass(frozen=True)
class SqlResult:
    """What one SQL string produced: rows, or a one-line error and its class.

    `rows` holds at most the row cap; `truncated` says more rows existed.
    """

    sql: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    error: str | None
    error_class: str | None
    ms: float

    @property
    def ok(self) -> bool:
        return self.error is None and self.error_class is None

    def to_dict(self, max_rows: int | None = None) -> dict[str, Any]:
        """JSON-safe form. Blobs become hex (or "<blob n bytes>"); `n_rows` counts all
        held rows even when `max_rows` lists fewer."""
        rows = self.rows if max_rows is None else self.rows[:max_rows]
        return {"sql": self.sql, "columns": list(self.columns), "rows": json_safe_rows(rows),
                "n_rows": len(self.rows), "truncated": self.truncated, "error": self.error,
                "error_class": self.error_class, "ms": round(self.ms, 3)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SqlResult:
        """Inverse of to_dict. Rows cut by max_rows mark the result truncated."""
        rows = tuple(tuple(row) for row in data.get("rows") or ())
        n_rows = int(data.get("n_rows", len(rows)))
        return cls(sql=data.get("sql") or "", columns=tuple(data.get("columns") or ()),
                   rows=rows, truncated=bool(data.get("truncated")) or len(rows) < n_rows,
                   error=data.get("error"), error_class=data.get("error_class"),
                   ms=float(data.get("ms") or 0.0))


def _failed(sql: str, error_class: str, message: str, ms: float = 0.0) -> SqlResult:
    return SqlResult(sql=sql, columns=(), rows=(), truncated=False, error=message,
                     error_class=error_class, ms=ms)


def _is_blank(sql: str) -> bool:
    """Nothing but whitespace, comments and semicolons."""
    if not sql.strip():
        return True
    try:
        tokens = sqlglot.tokenize(sql, read=DIALECT)
    except sqlglot.errors.SqlglotError:
        return False
    return all(token.token_type == sqlglot.TokenType.SEMICOLON for token in tokens)


def execute(path: str | Path, sql: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
            row_cap: int = DEFAULT_ROW_CAP) -> SqlResult:
    """Run one statement read-only on the database file at `path`.

    Never raises for the SQL itself: empty SQL is "no_sql", SQLite's errors are classed
    (syntax_error, unknown_table_or_column, refused, timeout, execution_error). Fetches
    row_cap + 1 rows to learn whether there were more without loading them all. Raises
    SqlExecutionError only when the database file cannot be used.
    """
    if row_cap < 0:
        raise ConfigError(f"row_cap must be >= 0, got {row_cap!r}")
    text = sql if isinstance(sql, str) else ""
    if _is_blank(text):
        return _failed(text, "no_sql", "no SQL to run")
    connection = connect_readonly(path, timeout_s=timeout_s)
    clock: _Clock = connection.clock  # type: ignore[attr-defined]
    start = time.perf_counter()
    try:
        cursor = connection.execute(text)
        columns = tuple(d[0] for d in cursor.description or ())
        rows = cursor.fetchmany(row_cap + 1) if cursor.description else []
    except (sqlite3.Error, sqlite3.Warning, ValueError) as error:
        ms = (time.perf_counter() - start) * 1000
        error_class, message = _error_class(error, text, clock)
        return _failed(text, error_class, message, ms)
    finally:
        connection.close()
    ms = (time.perf_counter() - start) * 1000
    return SqlResult(sql=text, columns=columns, rows=tuple(tuple(r) for r in rows[:row_cap]),
                     truncated=len(rows) > row_cap, error=None, error_class=None, ms=ms)


def _error_class(error: Exception, sql: str, clock: _Clock) -> tuple[str, str]:
    """(error class, one-line message) for an exception raised while running `sql`."""
    message = " ".join(str(error).split()) or type(error).__name__
    lowered = message.lower()
    if clock.expired and "interrupt" in lowered:
        return "timeout", f"stopped after {clock.timeout_s:g} s (the time limit)"
    if "one statement at a time" in lowered:
        return _multiple_statements(sql)
    for error_class, needles in _ERROR_PATTERNS:
        if any(needle in lowered for needle in needles):
            return error_class, message
    return "execution_error", message


def _multiple_statements(sql: str) -> tuple[str, str]:
    """sqlite3 runs one statement per call and refuses the rest before running any."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except sqlglot.errors.SqlglotError:
        return "refused", "refused: more than one statement, and not all of them parse"
    kinds = sorted({s.key.upper() for s in statements if not isinstance(s, exp.Query)})
    if kinds:
        return "refused", f"refused: more than one statement, including {', '.join(kinds)}"
    return "execution_error", f"only one statement can run at a time, got {len(statements)}"


