"""Launch, cancel and resume jobs (target_core.engine.jobs), and the worker process that
runs one: `python -m target_core worker JOB_ID`, detached in its own session."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from target_core.config import PROJECT_ROOT, Settings
from target_core.engine.cancel_watch import watch_for_cancel
from target_core.engine.job_kinds import JobTask
from target_core.engine.job_record import Job, UnknownJobKindError
from target_core.engine.jobs import JobStore
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import Cancelled, TargetError
from target_core.progress import Progress
from target_core.run_config import RunConfig, with_task_defaults
from target_core.types import TableLookup

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.5
"""How often a worker writes its progress (and so notices a cancel), at most; work that
calls progress for longer is stopped by engine.cancel_watch."""
POLL_S = 0.5
"""How often a queued worker looks for a free slot."""
WORKER_NICENESS = 10
"""Workers run this much below the launching process's priority (where `nice` exists)."""



@dataclass(frozen=True)
class Launch:
    """What launching a run did: started (or found) a job, or found the run complete."""

    job: Job | None
    reused_run: RunRecord | None = None
    """The complete RunRecord of this configuration (nothing launched), or None."""
    existing: bool = False
    """The job was queued or running already (or interrupted, and is resumed)."""


def _reap_child(process: subprocess.Popen[bytes]) -> None:
    threading.Thread(target=process.wait, daemon=True, name="job-reaper").start()


class WorkerStartError(TargetError):
    """A job's worker process could not be started (the job is failed with the reason)."""


def spawn_worker(job: Job, settings: Settings, jobs: JobStore | None = None) -> int | None:
    """Start the detached worker of the queued `job`; its output goes to
    workspace/jobs/JOB_ID.log. None when another process took the job to start it
    (JobStore.take: one worker per job, however many pages or threads try). A worker
    that cannot be started fails the job with the reason, and raises WorkerStartError."""
    jobs = jobs or JobStore.in_workspace(settings.workspace)
    if not jobs.take(job.job_id, os.getpid()):
        return None
    try:
        pid = _popen_worker(job, settings)
    except Exception as exc:  # fork, exec or the log file: the job must say so
        reason = f"its worker process could not be started: {exc}"
        jobs.start_failed(job.job_id, reason)
        raise WorkerStartError(f"job {job.job_id}: {reason}") from exc
    jobs.set_pid(job.job_id, pid)
    return pid


def _popen_worker(job: Job, settings: Settings) -> int:
    logs = Path(settings.workspace) / "jobs"
    logs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT),
                                                    env.get("PYTHONPATH", "")) if p)
    cwd = job.cwd if Path(job.cwd).is_dir() else str(PROJECT_ROOT)
    # below the dashboard's priority: a dozen workers starting at once (a second of CPU
    # each) must not starve the page that launched them; `nice` execs, so the pid holds
    nice = [path, "-n", str(WORKER_NICENESS)] if (path := shutil.which("nice")) else []
    with open(logs / f"{job.job_id}.log", "ab") as out:
        process = subprocess.Popen(
            [*nice, sys.executable, "-m", "target_core", "worker", job.job_id,
             "--workspace", str(Path(settings.workspace).resolve())],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            start_new_session=True)
    _reap_child(process)  # no zombie while the launching process lives
    return process.pid


def start_waiting(settings: Settings) -> threading.Thread:
    """Start the worker of every queued job that has none (launched with spawn=False),
    oldest first, in a background thread: a page lists the jobs it launched without
    waiting for a dozen interpreters to start. Each job gets exactly one worker
    (JobStore.take); one whose worker cannot start is failed with the reason."""
    def start() -> None:
        jobs = JobStore.in_workspace(settings.workspace)
        for job in reversed(jobs.list_jobs(statuses=("queued",))):
            if job.pid is None:
                try:
                    spawn_worker(job, settings, jobs)
                except WorkerStartError as exc:
                    log.error("%s", exc)

    thread = threading.Thread(target=start, daemon=True, name="job-starter")
    thread.start()
    return thread


def launch_run(config: RunConfig, *, settings: Settings, fresh: bool = False,
               dataset: TableLookup | None = None,
               stores: tuple[JobStore, RunStore] | None = None, spawn: bool = True) -> Launch:
    """Launch `config` as a job. A configuration complete already is not run again
    (unless `fresh`): its run is returned. A job of the same configuration that is queued
    or running is returned instead of a second one; an interrupted one is resumed.
    Raises TargetError for an unknown dataset or retriever before anything starts, and
    for a retriever that cannot be built (e.g. no API key): a retriever is built to check
    unless it is self-contained (retrievers.self_contained: building it imports its
    libraries and loads models, seconds on a cold dashboard, and cannot fail for want of
    its environment; if it still cannot be built, its job fails with the reason).
    `stores` (the workspace's job and run stores, opened once by a caller launching many)
    saves reopening them per launch.
    With `spawn` False the job is only queued: start_waiting starts its worker."""
    from target_core.datasets import load_dataset, registered_name
    from target_core.retrievers import build_retriever, self_contained

    config = replace(config, dataset=registered_name(config.dataset, settings))
    dataset = dataset or load_dataset(config.dataset, settings)
    if not self_contained(config.retriever):  # an unknown name stops here too
        build_retriever(config.retriever, settings)
    if not fresh:
        runs = stores[1] if stores else RunStore.in_workspace(settings.workspace)
        done = runs.complete_run(
            with_task_defaults(config, dataset.task), dataset.fingerprint)
        if done is not None:
            return Launch(None, reused_run=done)
    jobs = stores[0] if stores else JobStore.in_workspace(settings.workspace)
    jobs.reap()
    if (same := jobs.active_like(config)) is not None:
        if same.status == "interrupted":
            return Launch(resume(same.job_id, settings), existing=True)
        return Launch(same, existing=True)
    job = jobs.create(config, fresh=fresh)
    if spawn:
        spawn_worker(job, settings, jobs)
    return Launch(jobs.get(job.job_id))


def cancel(job_id: str, settings: Settings) -> Job:
    """Ask a job to stop; a job that had no live worker is cancelled at once (and its
    run marked cancelled)."""
    from target_core.engine.store import RunStore

    job = JobStore.in_workspace(settings.workspace).request_cancel(job_id)
    if job.status == "cancelled" and job.run_id:
        RunStore.in_workspace(settings.workspace).cancel_run(job.run_id)
    return job


def resume(job_id: str, settings: Settings) -> Job:
    """Start a new worker for an interrupted, cancelled or failed job; it resumes the
    stored run (finished queries are kept). An active or done job is left as it is.
    A job whose kind is no longer registered raises UnknownJobKindError, left as it is."""
    jobs = JobStore.in_workspace(settings.workspace)
    if not (job := jobs.get(job_id)).kind_known:
        raise UnknownJobKindError(job.job_id, job.kind)
    if jobs.requeue(job_id):  # only the process that requeued it starts its worker
        spawn_worker(jobs.get(job_id), settings)
    return jobs.get(job_id)


def refresh(settings: Settings) -> list[str]:
    """Find jobs whose worker is gone (marked interrupted); their ids."""
    return JobStore.in_workspace(settings.workspace).reap()


def resume_interrupted(settings: Settings) -> list[Job]:
    """Resume every job whose worker is gone: what the dashboard does when it starts.
    A job whose kind is no longer registered stays interrupted (listed, not resumable)."""
    jobs = JobStore.in_workspace(settings.workspace)
    jobs.reap()
    return [resume(job.job_id, settings) for job in jobs.list_jobs(statuses=("interrupted",))
            if job.kind_known]


# --- the worker process ------------------------------------------------------------------------

def _run_complete(run_id: str, settings: Settings) -> bool:
    from target_core.engine.store import RunStore

    try:
        return RunStore.in_workspace(settings.workspace).get_run(run_id).status == "complete"
    except TargetError:
        return False


class _JobProgress:
    """The run's progress callback: writes to the job's row (at most every
    PROGRESS_EVERY_S, and at every change of step or end) and raises Cancelled when a
    cancel was asked for."""

    def __init__(self, jobs: JobStore, job_id: str) -> None:
        self.jobs, self.job_id = jobs, job_id
        self.last = (0.0, "")

    def __call__(self, done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if (what == self.last[1] and done < total
                and now - self.last[0] < PROGRESS_EVERY_S):
            return
        self.last = (now, what)
        if self.jobs.progress(self.job_id, done, total, what):
            raise Cancelled("cancelled on request")


def run_task(job: Job, settings: Settings, progress: Progress) -> dict[str, Any]:
    """A run job's work: run (or resume) its RunConfig. A run marked failed (too many
    generations failed) fails the job with the run's reason."""
    from target_core.engine.runner import RunFailed, run_retrieval

    jobs = JobStore.in_workspace(settings.workspace)
    # a fresh job whose worker died after starting its run resumes that run (the newest
    # unfinished one of its configuration) instead of starting yet another
    fresh = job.fresh and job.run_id is None
    result = run_retrieval(job.config, settings=settings, fresh=fresh, progress=progress,
                           on_start=lambda run: jobs.update(job.job_id, run_id=run.run_id))
    if result.failed:
        raise RunFailed(result.run)
    return {"run_id": result.run.run_id, "reused": int(result.reused),
            "done": result.run.n_done, "total": result.run.n_queries}


def run_worker(job_id: str, settings: Settings, task: JobTask | None = None) -> int:
    """The worker: wait for a slot, do the job's `task` (by default its kind's,
    JobKind.load_task), record the outcome. Returns the process's exit code."""
    jobs = JobStore.in_workspace(settings.workspace)
    while (state := jobs.claim(job_id, settings.max_jobs, os.getpid(),
                               os.getppid())) == "queued":
        time.sleep(POLL_S)
    if state != "claimed":
        return 0
    job = jobs.get(job_id)
    if job.run_id is not None and _run_complete(job.run_id, settings):
        # a worker that died after finishing the run, before saying so: nothing to redo
        # (a fresh job would otherwise start yet another run)
        jobs.update(job_id, status="done", what="done", finished_at=time.time(), pid=None)
        return 0
    watch_for_cancel(Path(settings.workspace), job_id)
    try:
        work = task or job.kind_entry.load_task()
        done = work(job, settings, _JobProgress(jobs, job_id))
    except Cancelled:
        jobs.update(job_id, status="cancelled", finished_at=time.time(), pid=None)
        return 0
    except TargetError as exc:
        jobs.update(job_id, status="failed", error=str(exc), finished_at=time.time(), pid=None)
        return 2
    except BaseException as exc:
        log.exception("job %s failed", job_id)
        jobs.update(job_id, status="failed", error=f"{type(exc).__name__}: {exc}",
                    finished_at=time.time(), pid=None)
        raise
    jobs.update(job_id, status="done", what="done", finished_at=time.time(), pid=None,
                **done)
    return 0
