"""Jobs: a launched run works in its own process, not in the page that launched it.
This module holds the job table; target_core.engine.workers launches, cancels and
resumes jobs and is the worker process.

A job is a row in the workspace's `jobs.sqlite` (its RunConfig as JSON, status, pid,
progress, the run it fills, timestamps, error) and a detached worker process,
`python -m target_core worker JOB_ID` in its own session, so it outlives the page, the
browser tab and the server that started it. Workers need no scheduler: each waits for
a free slot (at most `TARGET_MAX_JOBS` jobs run at once, the oldest queued first),
writes its progress to its row, and checks there for a cancel at every progress call.
A cancelled job keeps its finished queries and marks its run cancelled; launching the
configuration again resumes it. A worker that died (killed, machine restarted) is
found by its pid (gone, a zombie, or a different process under a reused pid) and its
job marked `interrupted`; `resume` starts a new worker, which resumes the stored run.

Statuses (engine/job_record.py, with the Job record a row is read as): queued ->
running -> done | failed | cancelled; queued or running -> interrupted (worker gone) ->
queued again on resume.

Kinds (engine/job_kinds.py, one entry each): "run" (a RunConfig), "draft" (the
Benchmark builder's sampling and question writing) and "judge" (a stored run's answers
rated); a job's `spec` is its kind's parameters as JSON and `result` what the finished
job reports beyond its run.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from target_core.engine.job_kinds import JOB_KINDS
from target_core.engine.job_record import ACTIVE, Job
from target_core.engine.pids import pid_alive, process_start
from target_core.errors import UnknownNameError
from target_core.run_config import RunConfig

SPAWN_GRACE_S = 30.0
"""A queued job without a pid is being spawned for this long; after it, it is lost."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY, kind TEXT NOT NULL, config TEXT NOT NULL,
    fresh INTEGER NOT NULL DEFAULT 0, cwd TEXT NOT NULL, status TEXT NOT NULL,
    pid INTEGER, pid_start TEXT, done INTEGER NOT NULL DEFAULT 0,
    total INTEGER NOT NULL DEFAULT 0, what TEXT NOT NULL DEFAULT '',
    run_id TEXT, reused INTEGER NOT NULL DEFAULT 0, cancel INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL, queued_at REAL NOT NULL, started_at REAL,
    finished_at REAL, error TEXT, result TEXT)
"""
_ADDED_COLUMNS = {"result": "TEXT"}  # columns added since the first jobs.sqlite


def _job(row: dict[str, Any]) -> Job:
    return Job(job_id=row["job_id"], kind=row["kind"], spec=json.loads(row["config"]),
               fresh=bool(row["fresh"]), cwd=row["cwd"], status=row["status"],
               pid=row["pid"], done=row["done"], total=row["total"], what=row["what"],
               run_id=row["run_id"], reused=bool(row["reused"]),
               cancel_requested=bool(row["cancel"]), created_at=row["created_at"],
               started_at=row["started_at"], finished_at=row["finished_at"],
               error=row["error"],
               result=json.loads(row["result"]) if row.get("result") else None)


class JobStore:
    """The workspace's jobs (workspace/jobs.sqlite; WAL, short transactions, several
    processes). Kept apart from runs.sqlite: progress is written twice a second, and
    the run store's schema stays the runs'."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite_utils.Database(self.path)
        self.db.execute("PRAGMA busy_timeout = 30000")
        for attempt in range(100):
            try:
                self.db.enable_wal()
                self.db.execute(_SCHEMA)
                self._add_columns()
                break
            except Exception as exc:  # a concurrent first open: "database is locked"
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.05)

    def _add_columns(self) -> None:
        """Bring a jobs.sqlite made by an earlier version up to this schema."""
        have = {c.name for c in self.db.table("jobs").columns}
        for name, kind in _ADDED_COLUMNS.items():
            if name not in have:
                self.db.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")

    @classmethod
    def in_workspace(cls, workspace: Path) -> JobStore:
        return cls(Path(workspace) / "jobs.sqlite")

    @contextmanager
    def _write(self) -> Iterator[None]:
        self.db.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.conn.execute("COMMIT")
        except BaseException:
            self.db.conn.rollback()
            raise

    def create(self, config: RunConfig, *, fresh: bool = False, cwd: str | None = None) -> Job:
        """A queued run job."""
        return self.create_job("run", config.to_dict(), fresh=fresh, cwd=cwd)

    def create_job(self, kind: str, spec: dict[str, Any], *, fresh: bool = False,
                   cwd: str | None = None) -> Job:
        """A queued job of `kind` (JOB_KINDS; UnknownNameError for another) with its
        parameters `spec` (which names its dataset)."""
        JOB_KINDS.get(kind)
        job_id = f"job-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        now = time.time()
        with self._write():
            self.db.table("jobs").insert({
                "job_id": job_id, "kind": kind, "config": json.dumps(spec),
                "fresh": int(fresh), "cwd": cwd or os.getcwd(), "status": "queued",
                "created_at": now, "queued_at": now})
        return self.get(job_id)

    def get(self, job_id: str) -> Job:
        rows = list(self.db.query("SELECT * FROM jobs WHERE job_id = ?", [job_id]))
        if not rows:
            known = [r["job_id"] for r in self.db.query("SELECT job_id FROM jobs")]
            raise UnknownNameError("job", job_id, known)
        return _job(rows[0])

    def list_jobs(self, *, statuses: tuple[str, ...] | None = None, dataset: str | None = None,
             since: float | None = None) -> list[Job]:
        """Jobs, newest first; optionally only some statuses, one dataset, or those
        created or finished after `since` (active ones always included)."""
        jobs = [_job(r) for r in self.db.query("SELECT * FROM jobs ORDER BY created_at DESC")]
        return [j for j in jobs
                if (statuses is None or j.status in statuses)
                and (dataset is None or j.dataset == dataset)
                and (since is None or j.active or j.status == "interrupted"
                     or (j.finished_at or j.created_at) >= since)]

    def _update(self, job_id: str, **values: Any) -> None:
        sets = ", ".join(f"{name} = ?" for name in values)
        self.db.execute(f"UPDATE jobs SET {sets} WHERE job_id = ?", [*values.values(), job_id])

    def update(self, job_id: str, **values: Any) -> None:
        with self._write():
            self._update(job_id, **values)

    def set_pid(self, job_id: str, pid: int) -> None:
        """Record the worker just started (unless it has finished already)."""
        with self._write():
            self.db.execute("UPDATE jobs SET pid = ?, pid_start = ? WHERE job_id = ? AND "
                            "status IN ('queued', 'running')",
                            [pid, process_start(pid), job_id])

    def take(self, job_id: str, pid: int) -> bool:
        """Process `pid` takes a queued job that has no worker, to start one: True for
        exactly one taker. Its pid stands for the worker until set_pid records the
        worker's (a taker that dies first leaves a dead pid: the job is reaped)."""
        with self._write():
            cursor = self.db.execute(
                "UPDATE jobs SET pid = ?, pid_start = ? WHERE job_id = ? AND "
                "status = 'queued' AND pid IS NULL", [pid, process_start(pid), job_id])
            return cursor.rowcount == 1

    def start_failed(self, job_id: str, reason: str) -> None:
        """The worker of a queued job could not be started: the job fails with `reason`."""
        with self._write():
            self.db.execute("UPDATE jobs SET status = 'failed', error = ?, pid = NULL, "
                            "finished_at = ? WHERE job_id = ? AND status = 'queued'",
                            [reason, time.time(), job_id])

    def progress(self, job_id: str, done: int, total: int, what: str) -> bool:
        """Record progress; True when a cancel was asked for."""
        with self._write():
            self._update(job_id, done=done, total=total, what=what)
            row = next(iter(self.db.query("SELECT cancel FROM jobs WHERE job_id = ?",
                                          [job_id])))
        return bool(row["cancel"])

    def _reap_locked(self) -> list[str]:
        lost = []
        for row in self.db.query("SELECT job_id, status, pid, pid_start, queued_at FROM jobs "
                                 "WHERE status IN ('queued', 'running')"):
            if row["pid"] is None and time.time() - row["queued_at"] < SPAWN_GRACE_S:
                continue  # its worker is being started
            if not pid_alive(row["pid"], row["pid_start"]):
                lost.append(row["job_id"])
        for job_id in lost:
            self._update(job_id, status="interrupted", pid=None,
                         error="the worker process is gone (killed, or the machine "
                               "restarted); resume to continue")
        return lost

    def reap(self) -> list[str]:
        """Mark queued or running jobs whose worker is gone `interrupted`; their ids."""
        with self._write():
            return self._reap_locked()

    def claim(self, job_id: str, max_jobs: int, pid: int, parent: int | None = None) -> str:
        """Worker `pid` (started by process `parent`) tries to take a slot: 'claimed'
        when it did, 'queued' to wait; 'taken' when another worker owns the job, else the
        job's status (cancelled while queued, ...): both end the worker."""
        with self._write():
            self._reap_locked()
            job = self.get(job_id)
            # a worker started by hand adopts the job, and so does one whose spawner
            # (JobStore.take) has not recorded its pid yet
            if job.pid is None or (parent is not None and job.pid == parent):
                self._update(job_id, pid=pid, pid_start=process_start(pid))
            elif job.pid != pid:
                return "taken"
            if job.status != "queued":
                return job.status
            row = next(iter(self.db.query(
                "SELECT (SELECT COUNT(*) FROM jobs WHERE status = 'running') AS running, "
                "(SELECT COUNT(*) FROM jobs WHERE status = 'queued' AND "
                "(queued_at < q.queued_at OR (queued_at = q.queued_at AND job_id < q.job_id))"
                ") AS ahead FROM jobs q WHERE job_id = ?", [job_id])))
            if row["running"] + row["ahead"] >= max_jobs:
                return "queued"
            self._update(job_id, status="running", started_at=time.time(), error=None)
            return "claimed"

    def request_cancel(self, job_id: str) -> Job:
        """Cancel: a queued or dead job at once, a running one at its next progress call."""
        with self._write():
            self._reap_locked()
            job = self.get(job_id)
            if job.status == "running":
                self._update(job_id, cancel=1)
            elif job.status in ("queued", "interrupted"):
                self._update(job_id, status="cancelled", finished_at=time.time(), error=None)
        return self.get(job_id)

    def requeue(self, job_id: str) -> bool:
        """Queue an interrupted, cancelled or failed job again, for a new worker; False
        when the job was in another state (e.g. another process requeued it first)."""
        with self._write():
            self._reap_locked()
            if self.get(job_id).status not in ("interrupted", "cancelled", "failed"):
                return False
            self._update(job_id, status="queued", pid=None, pid_start=None, cancel=0,
                         queued_at=time.time(), finished_at=None, error=None)
            return True

    def active_like(self, config: RunConfig) -> Job | None:
        """A queued, running or interrupted job of this same configuration."""
        wanted = config.to_dict()
        for job in self.list_jobs(statuses=(*ACTIVE, "interrupted")):
            if job.runs_config and job.config.to_dict() == wanted:
                return job
        return None
