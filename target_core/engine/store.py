"""RunStore: runs and their per-query results in SQLite (sqlite-utils).

One row per run (configuration, dataset fingerprint, what was indexed, timings,
package versions, status, metrics), kept here; one per query (engine/store_results.py)
and per judged answer (engine/store_judgements.py); the file, its schema and migrations
and the write transaction are engine/store_file.py. Every write is one transaction, so
a run killed at any moment keeps exactly the queries it finished, and a run started
again with the same configuration resumes instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from target_core.engine.results import QueryResult
from target_core.engine.store_file import StoreError
from target_core.engine.store_judgements import Judgements
from target_core.engine.store_results import QueryResults
from target_core.errors import UnknownNameError
from target_core.pyclass import spec_fingerprints
from target_core.run_config import RunConfig

__all__ = ["STATUSES", "QueryResult", "RunRecord", "RunStore", "StoreError", "complete_runs",
           "config_key"]

STATUSES = ("running", "complete", "failed", "cancelled")

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


class RunStore(QueryResults, Judgements):
    """The SQLite file of runs, their per-query results and judgements; safe for several
    processes (WAL, short transactions)."""

    @classmethod
    def in_workspace(cls, workspace: Path) -> RunStore:
        return cls(Path(workspace) / "runs.sqlite")

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
            self._delete_results(run_id)
            self._delete_judgements(run_id)
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


def complete_runs(store: RunStore, configs: Sequence[RunConfig], fingerprint: str
                  ) -> list[RunRecord | None]:
    """The newest complete run of each configuration on this dataset version (None: not
    run yet): what an experiment of several configurations has stored."""
    wanted = {config_key(c, fingerprint): i for i, c in enumerate(configs)}
    found: list[RunRecord | None] = [None] * len(configs)
    for run in store.list_runs(dataset=configs[0].dataset, status="complete"):
        i = wanted.get(run.config_key)
        if i is not None and found[i] is None:
            found[i] = run
    return found
