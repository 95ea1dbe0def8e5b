"""The run store's SQLite file: opened safely by several processes at once (WAL, a busy
timeout, retries while another connection switches a new file to WAL), its schema and
the migrations between versions (here and nowhere else), and one write transaction at a
time. RunStore (engine/store.py) is this file plus what it stores: runs, their per-query
results (engine/store_results.py) and judgements (engine/store_judgements.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from target_core.errors import TargetError

SCHEMA_VERSION = 2
OPEN_TIMEOUT_S = 30.0
"""How long opening the store waits out other connections that hold its lock."""


class StoreError(TargetError):
    """The run store cannot be opened or is from an unknown (newer) version."""


class StoreFile:
    """The SQLite file of runs; safe for several processes (WAL, short transactions)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + OPEN_TIMEOUT_S
        while True:
            try:
                self.db = sqlite_utils.Database(self.path)
                self.db.execute("PRAGMA busy_timeout = 30000")
                self.db.enable_wal()
                self._migrate()
                return
            except Exception as exc:  # sqlite3.DatabaseError for a file that is not SQLite
                if isinstance(exc, StoreError):
                    raise
                # Switching a new file to WAL, or recovering its WAL index, can answer
                # SQLITE_BUSY without waiting on the busy timeout while another
                # connection does the same: that is worth another try, nothing else is.
                if "locked" in str(exc) and time.monotonic() < deadline:
                    self.db.close()
                    time.sleep(0.05)
                    continue
                raise StoreError(f"{self.path}: cannot open the run store: {exc}") from None

    # --- schema ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        if self._schema_version() == SCHEMA_VERSION:
            return  # the usual open: no write, so no lock taken
        with self._write():  # re-read under the lock: another process may have migrated
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            version = self._schema_version()
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer TARGET Explorer "
                                 f"(schema {version} > {SCHEMA_VERSION}); upgrade to read it")
            if version < 1:
                self._create_v1()
            if version < 2:  # v2: downstream generation per query
                self.db.execute("ALTER TABLE query_results ADD COLUMN generation TEXT")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                            [str(SCHEMA_VERSION)])

    def _schema_version(self) -> int:
        if not self.db["meta"].exists():
            return 0
        row = list(self.db.query("SELECT value FROM meta WHERE key = 'schema_version'"))
        return int(row[0]["value"]) if row else 0

    def _create_v1(self) -> None:
        # one statement at a time: executescript() would commit the open transaction
        for statement in _V1_SCHEMA.split(";"):
            if statement.strip():
                self.db.execute(statement)

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction that takes the write lock up front (BEGIN IMMEDIATE).

        A deferred transaction that reads first cannot become a writer once another
        process has committed meanwhile (WAL's SQLITE_BUSY_SNAPSHOT, which busy_timeout
        does not wait out): two runs started at once failed with "database is locked".
        """
        self.db.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.conn.execute("COMMIT")
        except BaseException:
            self.db.conn.rollback()  # a no-op when the error already ended the transaction
            raise

    def integrity_check(self) -> str:
        return next(iter(self.db.query("PRAGMA integrity_check")))["integrity_check"]


_V1_SCHEMA = """
    CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, config_key TEXT NOT NULL, config TEXT NOT NULL,
        dataset TEXT NOT NULL, dataset_fingerprint TEXT NOT NULL, task TEXT NOT NULL,
        retriever TEXT NOT NULL, view TEXT NOT NULL, top_k INTEGER NOT NULL,
        status TEXT NOT NULL, created_at REAL NOT NULL, finished_at REAL,
        n_queries INTEGER NOT NULL, index_info TEXT NOT NULL DEFAULT '{}',
        text_fingerprint TEXT NOT NULL DEFAULT '', text_example TEXT NOT NULL DEFAULT '',
        versions TEXT NOT NULL DEFAULT '{}', metrics TEXT NOT NULL DEFAULT '{}',
        error TEXT);
    CREATE INDEX IF NOT EXISTS runs_config_key ON runs (config_key, status);
    CREATE TABLE IF NOT EXISTS query_results (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        query_id TEXT NOT NULL, position INTEGER NOT NULL, ranked TEXT NOT NULL,
        gold TEXT NOT NULL, gold_ranks TEXT NOT NULL, metrics TEXT NOT NULL,
        ms REAL NOT NULL, PRIMARY KEY (run_id, query_id));
"""
