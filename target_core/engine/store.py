"""RunStore: runs and their per-query results in SQLite (sqlite-utils).

One row per run (configuration, dataset fingerprint, what was indexed, timings,
package versions, status, metrics) and one per query (ranked tables with scores, the
rank of each gold table, per-query metrics, time). Every write is one transaction, so
a run killed at any moment keeps exactly the queries it finished, and a run started
again with the same configuration resumes instead of starting over. The schema and
its migrations live here and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from target_core.engine.results import QueryResult, QueryScore
from target_core.errors import TargetError, UnknownNameError
from target_core.pyclass import spec_fingerprints
from target_core.types import RunConfig, TableKey

SCHEMA_VERSION = 2
STATUSES = ("running", "complete", "failed", "cancelled")


OPEN_TIMEOUT_S = 30.0
"""How long opening the store waits out other connections that hold its lock."""


class StoreError(TargetError):
    """The run store cannot be opened or is from an unknown (newer) version."""


@dataclass(frozen=True)
class RunRecord:
    """One run as stored."""

    run_id: str
    config: RunConfig
    config_key: str
    dataset_fingerprint: str
    task: str
    status: str
    created_at: float
    finished_at: float | None
    n_queries: int
    n_done: int
    index_info: dict[str, Any]
    text_fingerprint: str
    text_example: str
    versions: dict[str, str]
    metrics: dict[str, float]
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "dataset": self.config.dataset, "task": self.task,
                "retriever": self.config.retriever, "config": self.config.to_dict(),
                "status": self.status, "created_at": self.created_at,
                "finished_at": self.finished_at, "n_queries": self.n_queries,
                "n_done": self.n_done, "dataset_fingerprint": self.dataset_fingerprint,
                "index_info": self.index_info, "text_fingerprint": self.text_fingerprint,
                "text_example": self.text_example, "versions": self.versions,
                "metrics": self.metrics, "error": self.error}


def config_key(config: RunConfig, dataset_fingerprint: str) -> str:
    """What makes two runs the same: the configuration and the dataset's content, the
    source of any py: class it runs (an edited plugin makes a new run) and the version
    of the retriever family where it has one (hybrid's default changed); keys of other
    runs are as they always were."""
    from target_core.retrievers import RETRIEVERS

    parts: list[Any] = [config.to_dict(), dataset_fingerprint]
    specs = [config.retriever] + ([config.generation.generator] if config.generation else [])
    if code := spec_fingerprints(specs):
        parts.append(code)
    if version := RETRIEVERS.version(config.retriever):
        parts.append({"retriever_version": version})
    payload = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def _key_text(key: TableKey) -> str:
    return json.dumps(list(key), ensure_ascii=False)


class RunStore:
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

    @classmethod
    def in_workspace(cls, workspace: Path) -> RunStore:
        return cls(Path(workspace) / "runs.sqlite")

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

    # --- runs -----------------------------------------------------------------------------

    def complete_run(self, config: RunConfig, dataset_fingerprint: str) -> RunRecord | None:
        """The newest complete run of this configuration on this dataset version."""
        rows = list(self.db.query(
            "SELECT run_id FROM runs WHERE config_key = ? AND status = 'complete' "
            "ORDER BY created_at DESC LIMIT 1", [config_key(config, dataset_fingerprint)]))
        return self.get_run(rows[0]["run_id"]) if rows else None

    def start_run(self, config: RunConfig, *, dataset_fingerprint: str, task: str,
                  n_queries: int, versions: dict[str, str], fresh: bool = False
                  ) -> tuple[RunRecord, bool]:
        """(run, resumed): the unfinished run with this configuration, or a new one (always
        when `fresh`). A complete run is never reopened: starting the same configuration
        again makes a new run (whose index is cached by then); the runner reuses a complete
        run instead unless asked for a fresh one (`complete_run`)."""
        key = config_key(config, dataset_fingerprint)
        with self._write():
            rows = [] if fresh else list(self.db.query(
                "SELECT run_id FROM runs WHERE config_key = ? AND status != 'complete' "
                "ORDER BY created_at DESC LIMIT 1", [key]))
            if rows:
                run_id = rows[0]["run_id"]
                self.db.execute("UPDATE runs SET status = 'running', error = NULL "
                                "WHERE run_id = ?", [run_id])
                return self.get_run(run_id), True
            run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
            self.db.table("runs").insert({
                "run_id": run_id, "config_key": key, "config": json.dumps(config.to_dict()),
                "dataset": config.dataset, "dataset_fingerprint": dataset_fingerprint,
                "task": task, "retriever": config.retriever,
                "view": json.dumps(config.view.to_dict()), "top_k": config.top_k,
                "status": "running", "created_at": time.time(), "finished_at": None,
                "n_queries": n_queries, "versions": json.dumps(versions)})
        return self.get_run(run_id), False

    def record_index(self, run_id: str, *, index_info: dict[str, Any], text_fingerprint: str,
                     text_example: str) -> None:
        with self._write():
            self.db.execute("UPDATE runs SET index_info = ?, text_fingerprint = ?, "
                            "text_example = ? WHERE run_id = ?",
                            [json.dumps(index_info), text_fingerprint, text_example, run_id])

    def finish_run(self, run_id: str, metrics: dict[str, float], *,
                   failed: str | None = None) -> None:
        """Record a run whose every query is done: complete, or `failed` with that reason
        (its metrics kept, but it is never ranked or reused as complete)."""
        with self._write():
            self.db.execute("UPDATE runs SET status = ?, finished_at = ?, metrics = ?, "
                            "error = ? WHERE run_id = ?",
                            ["failed" if failed else "complete", time.time(),
                             json.dumps(metrics), failed, run_id])

    def fail_run(self, run_id: str, error: str) -> None:
        with self._write():
            self.db.execute("UPDATE runs SET status = 'failed', error = ? WHERE run_id = ?",
                            [error, run_id])

    def cancel_run(self, run_id: str) -> None:
        """Mark an unfinished run cancelled; its stored queries stay, and running the same
        configuration again resumes it."""
        with self._write():
            self.db.execute("UPDATE runs SET status = 'cancelled', error = NULL "
                            "WHERE run_id = ? AND status != 'complete'", [run_id])

    def delete_run(self, run_id: str) -> None:
        self.get_run(run_id)
        with self._write():
            self.db.execute("DELETE FROM query_results WHERE run_id = ?", [run_id])
            if self.db["judgements"].exists():
                self.db.execute("DELETE FROM judgements WHERE run_id = ?", [run_id])
            self.db.execute("DELETE FROM runs WHERE run_id = ?", [run_id])

    def _record(self, row: dict[str, Any], n_done: int) -> RunRecord:
        return RunRecord(
            run_id=row["run_id"], config=RunConfig.from_dict(json.loads(row["config"])),
            config_key=row["config_key"], dataset_fingerprint=row["dataset_fingerprint"],
            task=row["task"], status=row["status"], created_at=row["created_at"],
            finished_at=row["finished_at"], n_queries=row["n_queries"], n_done=n_done,
            index_info=json.loads(row["index_info"]), text_fingerprint=row["text_fingerprint"],
            text_example=row["text_example"], versions=json.loads(row["versions"]),
            metrics=json.loads(row["metrics"]), error=row["error"])

    def get_run(self, run_id: str) -> RunRecord:
        rows = list(self.db.query(
            "SELECT r.*, (SELECT COUNT(*) FROM query_results q WHERE q.run_id = r.run_id) "
            "AS n_done FROM runs r WHERE r.run_id = ?", [run_id]))
        if not rows:
            known = [r["run_id"] for r in self.db.query("SELECT run_id FROM runs")]
            raise UnknownNameError("run", run_id, known)
        return self._record(rows[0], rows[0]["n_done"])

    def list_runs(self, *, dataset: str | None = None, status: str | None = None
                  ) -> list[RunRecord]:
        """Runs, newest first, optionally of one dataset (its content, by any name) or status."""
        where, params = [], []
        if dataset:  # one content is one dataset, however it was named
            where.append("(r.dataset = ? OR r.dataset_fingerprint IN (SELECT "
                         "dataset_fingerprint FROM runs WHERE dataset = ?))")
            params += [dataset, dataset]
        if status:
            where.append("r.status = ?")
            params.append(status)
        sql = ("SELECT r.*, (SELECT COUNT(*) FROM query_results q WHERE q.run_id = r.run_id) "
               "AS n_done FROM runs r" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY r.created_at DESC")
        return [self._record(row, row["n_done"]) for row in self.db.query(sql, params)]

    # --- per-query results ----------------------------------------------------------------

    def done_query_ids(self, run_id: str) -> set[str]:
        return {r["query_id"] for r in self.db.query(
            "SELECT query_id FROM query_results WHERE run_id = ?", [run_id])}

    def generation_errors(self, run_id: str) -> list[tuple[str, str, str | None]]:
        """(query_id, error, error class as stored) of each query whose generation
        failed, in query order."""
        return [(r["query_id"], r["error"], r["error_class"]) for r in self.db.query(
            "SELECT query_id, json_extract(generation, '$.error') AS error, "
            "json_extract(generation, '$.error_class') AS error_class FROM query_results "
            "WHERE run_id = ? AND generation IS NOT NULL "
            "AND COALESCE(json_extract(generation, '$.error'), '') != '' ORDER BY position",
            [run_id])]

    def served_models(self, run_id: str) -> dict[str, int]:
        """The model ids the server answered with (as its replies name them), and how
        many of the run's generations each answered."""
        return {r["model"]: r["n"] for r in self.db.query(
            "SELECT json_extract(generation, '$.served_model') AS model, COUNT(*) AS n "
            "FROM query_results WHERE run_id = ? AND model IS NOT NULL GROUP BY model "
            "ORDER BY n DESC", [run_id])}

    def save_results(self, run_id: str, results: Iterable[QueryResult]) -> None:
        """Write a batch of query results in one transaction (all or nothing)."""
        rows = [{
            "run_id": run_id, "query_id": r.query_id, "position": r.position,
            "ranked": json.dumps([[k[0], k[1], s] for k, s in r.ranked], ensure_ascii=False),
            "gold": json.dumps([list(k) for k in r.gold], ensure_ascii=False),
            "gold_ranks": json.dumps({_key_text(k): v for k, v in r.gold_ranks.items()},
                                     ensure_ascii=False),
            "metrics": json.dumps(r.metrics), "ms": r.ms,
            "generation": None if r.generation is None else json.dumps(
                r.generation, ensure_ascii=False)} for r in results]
        with self._write():
            self.db.table("query_results").insert_all(rows, replace=True)

    def query_metrics(self, run_id: str) -> list[tuple[str, dict[str, float]]]:
        """(query_id, per-query metrics) in query order, without the ranked lists."""
        return [(r["query_id"], json.loads(r["metrics"])) for r in self.db.query(
            "SELECT query_id, metrics FROM query_results WHERE run_id = ? ORDER BY position",
            [run_id])]

    def query_scores(self, run_id: str) -> list[QueryScore]:
        """Every query's metrics, best and last gold rank, in query order."""
        # last_rank: NULL when a gold table is unranked (COUNT skips JSON nulls), 0 when
        # there is no gold table, as metrics.tasks.last_gold_rank
        return [QueryScore(r["query_id"], json.loads(r["metrics"]), r["best_rank"],
                           r["last_rank"])
                for r in self.db.query(
                    "SELECT query_id, metrics, "
                    "(SELECT MIN(value) FROM json_each(gold_ranks)) AS best_rank, "
                    "(SELECT CASE WHEN COUNT(*) = 0 THEN 0 WHEN COUNT(*) = COUNT(value) "
                    "THEN MAX(value) END FROM json_each(gold_ranks)) AS last_rank "
                    "FROM query_results WHERE run_id = ? ORDER BY position", [run_id])]

    def iter_results(self, run_id: str) -> Iterator[QueryResult]:
        """The run's query results in query order."""
        for row in self.db.query("SELECT * FROM query_results WHERE run_id = ? "
                                 "ORDER BY position", [run_id]):
            yield _result(row)

    def get_result(self, run_id: str, query_id: str) -> QueryResult:
        rows = list(self.db.query("SELECT * FROM query_results WHERE run_id = ? AND "
                                  "query_id = ?", [run_id, query_id]))
        if not rows:
            raise UnknownNameError(f"query of run {run_id}", query_id,
                                   self.done_query_ids(run_id))
        return _result(rows[0])

    def merge_query_metrics(self, run_id: str, values: Mapping[str, Mapping[str, float | None]]
                            ) -> None:
        """Set per-query metrics found after the run, {query_id: {name: v}}; None drops."""
        with self._write():
            self.db.conn.executemany(
                "UPDATE query_results SET metrics = json_patch(metrics, ?) "
                "WHERE run_id = ? AND query_id = ?",
                [(json.dumps(v), run_id, q) for q, v in values.items()])

    def merge_run_metrics(self, run_id: str, values: dict[str, float]) -> None:
        """Add or overwrite run-level metrics computed after the run."""
        with self._write():
            self.db.execute("UPDATE runs SET metrics = json_patch(metrics, ?) WHERE run_id = ?",
                            [json.dumps(values), run_id])

    def save_judgements(self, run_id: str, judge: str, label: str,
                        rows: Iterable[tuple[str, float | None, str, str | None]]) -> None:
        """A judge's (query_id, rating or None, reason, error) per query, replacing that
        judge's earlier ones; the table is made on first use (old stores lack it)."""
        now = time.time()
        with self._write():
            self.db.execute(_JUDGEMENTS)
            self.db.table("judgements").insert_all(
                [{"run_id": run_id, "query_id": q, "judge": judge, "label": label,
                  "rating": rating, "reason": reason, "error": error, "created_at": now}
                 for q, rating, reason, error in rows], replace=True)

    def judgements(self, run_id: str) -> list[dict[str, Any]]:
        """The run's stored judgements, newest first."""
        return list(self.db.query("SELECT * FROM judgements WHERE run_id = ? ORDER BY "
                                  "created_at DESC, query_id", [run_id])
                    ) if self.db["judgements"].exists() else []

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

_JUDGEMENTS = """CREATE TABLE IF NOT EXISTS judgements (
    run_id TEXT NOT NULL, query_id TEXT NOT NULL, judge TEXT NOT NULL, label TEXT NOT NULL,
    rating REAL, reason TEXT NOT NULL DEFAULT '', error TEXT, created_at REAL NOT NULL,
    PRIMARY KEY (run_id, query_id, judge))"""
"""A judge's rating of one answer (engine.judge); rating NULL: the judgement failed."""


def _result(row: dict[str, Any]) -> QueryResult:
    ranks = json.loads(row["gold_ranks"])
    return QueryResult(
        query_id=row["query_id"], position=row["position"],
        ranked=[((d, t), s) for d, t, s in json.loads(row["ranked"])],
        gold=[tuple(k) for k in json.loads(row["gold"])],
        gold_ranks={tuple(json.loads(k)): v for k, v in ranks.items()},
        metrics=json.loads(row["metrics"]), ms=row["ms"],
        generation=json.loads(row["generation"]) if row.get("generation") else None)
