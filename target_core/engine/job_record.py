"""A job as stored: one row of the workspace's job table (engine/jobs.py), read as a
record that says what it is (its kind's entry, engine/job_kinds.py), how far it got and
how to show it in one line.

Statuses: queued -> running -> done | failed | cancelled; queued or running ->
interrupted (worker gone) -> queued again on resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from target_core.engine.job_kinds import JOB_KINDS, JobKind
from target_core.errors import TargetError
from target_core.run_config import RunConfig

STATUSES = ("queued", "running", "done", "failed", "cancelled", "interrupted")
ACTIVE = ("queued", "running")


class UnknownJobKindError(TargetError):
    """A saved job whose kind is no longer registered (removed since it was launched):
    it is still listed, but nothing can run or resume it."""

    def __init__(self, job_id: str, kind: str) -> None:
        super().__init__(f"job {job_id} is of the unknown job kind {kind!r} (removed since "
                         f"it was launched; known: {', '.join(JOB_KINDS.names())}): it "
                         f"cannot be run or resumed")


@dataclass(frozen=True)
class Job:
    """One launched job as stored: a run, or another kind of work (JOB_KINDS)."""

    job_id: str
    kind: str
    spec: dict[str, Any]
    """The kind's parameters: a RunConfig's dict for a run."""
    fresh: bool
    cwd: str
    status: str
    pid: int | None
    done: int
    total: int
    what: str
    run_id: str | None
    reused: bool
    cancel_requested: bool
    created_at: float
    started_at: float | None
    finished_at: float | None
    error: str | None
    result: dict[str, Any] | None = None
    """What a finished job reports beyond its run (a draft's name and counts)."""

    @property
    def kind_known(self) -> bool:
        """Whether this job's kind is registered (a saved job's kind may have been removed
        since: the job is listed, labelled so, and cannot be resumed)."""
        return self.kind in JOB_KINDS

    @property
    def kind_entry(self) -> JobKind:
        """What this job's kind is (engine/job_kinds.py); UnknownJobKindError when it is
        no longer registered."""
        if not self.kind_known:
            raise UnknownJobKindError(self.job_id, self.kind)
        return JOB_KINDS.get(self.kind)

    @property
    def runs_config(self) -> bool:
        """Its spec is a RunConfig's dict (JobKind.runs_config); False for an unknown kind."""
        return self.kind_known and self.kind_entry.runs_config

    @property
    def config(self) -> RunConfig:
        """A run job's configuration; a ValueError for a kind whose spec is another."""
        if not self.runs_config:
            raise ValueError(f"job {self.job_id} is a {self.kind} job, not a run")
        return RunConfig.from_dict(self.spec)

    @property
    def dataset(self) -> str:
        return str(self.spec["dataset"])

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def fraction(self) -> float:
        if self.status == "done":
            return 1.0
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def label(self) -> str:
        """e.g. 'bm25 → heuristic on demo-qa · header only': what tells two jobs apart
        (ablation variants differ only in their view), as its kind reads its spec; a job
        of a kind no longer registered: "unknown job kind 'X' on DATASET"."""
        if not self.kind_known:
            return f"{self.pipeline} on {self.dataset}"
        return self.kind_entry.label(self.spec)

    @property
    def pipeline(self) -> str:
        """What the job does, without its dataset: the run's pipeline, 'draft NAME', ...
        (for a kind no longer registered: "unknown job kind 'X'")."""
        if not self.kind_known:
            return f"unknown job kind {self.kind!r}"
        return self.kind_entry.pipeline(self.spec)

    def describe(self) -> str:
        """One line: status and progress, e.g. 'running: retrieving 12/60', or the step
        after the last query by its name ('running: scoring answers')."""
        if (self.status == "running" and self.kind_known
                and self.what in self.kind_entry.uncounted and not self.cancel_requested):
            return f"running: {self.what}"
        if self.status == "running" and self.total:
            return f"running: {self.what} {self.done:,}/{self.total:,}"
        if self.status in ("failed", "interrupted") and self.error:
            return f"{self.status}: {self.error}"
        if self.status == "running" and self.cancel_requested:
            return "running: cancelling"
        return self.status

    def to_dict(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "kind": self.kind, "status": self.status,
                "dataset": self.dataset, "retriever": self.spec.get("retriever"),
                "config": self.spec, "fresh": self.fresh, "pid": self.pid,
                "done": self.done, "total": self.total, "what": self.what,
                "run_id": self.run_id, "reused": self.reused,
                "cancel_requested": self.cancel_requested, "created_at": self.created_at,
                "started_at": self.started_at, "finished_at": self.finished_at,
                "error": self.error, "result": self.result}
