"""Job commands: `jobs`, `cancel`, `resume`, and `worker` (the process a launched run
works in; `run --detach` and the Run page start it)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from target_core.cli import options
from target_core.cli.format import format_rows
from target_core.config import load_settings

if TYPE_CHECKING:  # imported lazily at run time: every command pays for its own imports
    from target_core.engine.job_record import Job
    from target_core.engine.workers import Launch


def job_row(job: Job) -> dict[str, object]:
    """A job as one line of `jobs`."""
    progress = f"{job.done}/{job.total}" if job.total else ""
    return {"job_id": job.job_id, "status": job.status, "dataset": job.dataset,
            "pipeline": job.pipeline, "progress": progress, "step": job.what,
            "run_id": job.run_id or "", "error": job.error or ""}


def cmd_jobs(args: argparse.Namespace) -> int:
    from target_core.engine.job_record import ACTIVE
    from target_core.engine.jobs import JobStore

    settings = load_settings(args.workspace)
    store = JobStore.in_workspace(settings.workspace)
    store.reap()
    jobs = store.list_jobs(statuses=(*ACTIVE, "interrupted") if args.active else None)
    if args.json:
        print(json.dumps([j.to_dict() for j in jobs], indent=2))
        return 0
    rows = [job_row(j) for j in jobs]
    print(format_rows(rows, list(rows[0])) if rows else "no jobs")
    return 0


def _print_job(args: argparse.Namespace, job: Job, verb: str) -> None:
    if args.json:
        print(json.dumps(job.to_dict(), indent=2))
    else:
        print(f"job {job.job_id} {verb}: {job.describe()}")


def cmd_cancel(args: argparse.Namespace) -> int:
    from target_core.engine.workers import cancel

    settings = load_settings(args.workspace)
    job = cancel(args.job_id, settings)
    if args.wait:
        from target_core.engine.jobs import JobStore

        store = JobStore.in_workspace(settings.workspace)
        deadline = time.monotonic() + args.wait
        while job.status == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
            store.reap()
            job = store.get(args.job_id)
    _print_job(args, job, "cancel asked" if job.status == "running" else "is")
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from target_core.engine.workers import resume

    _print_job(args, resume(args.job_id, load_settings(args.workspace)), "is")
    return 0


def cmd_demo_suite(args: argparse.Namespace) -> int:
    from target_core.engine.job_record import ACTIVE
    from target_core.engine.jobs import JobStore
    from target_core.experiments.suite import demo_suite_configs, launch_demo_suite

    settings = load_settings(args.workspace)
    launched = launch_demo_suite(settings)
    ids = [launch.job.job_id for launch in launched if launch.job is not None]
    if args.wait:
        store = JobStore.in_workspace(settings.workspace)
        started = time.monotonic()
        while True:
            store.reap()
            jobs = [store.get(i) for i in ids]
            if all(j.status not in ACTIVE for j in jobs):
                break
            time.sleep(1.0)
        print(f"demo suite finished in {time.monotonic() - started:.0f} s", file=sys.stderr)
    rows = [{"dataset": c.dataset, "pipeline": c.label,
             "job": launch.job.job_id if launch.job else "",
             "run": launch.reused_run.run_id if launch.reused_run else ""}
            for launch, c in zip(launched, demo_suite_configs(), strict=True)]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(format_rows(rows, ["dataset", "pipeline", "job", "run"]))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """The job's own kind says what to do (engine/job_kinds.py)."""
    from target_core.engine.workers import run_worker

    return run_worker(args.job_id, load_settings(args.workspace))


JOB_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "jobs": ("list launched runs (jobs) with status and progress", cmd_jobs),
    "cancel": ("cancel a job: it stops, keeping its finished queries", cmd_cancel),
    "resume": ("resume an interrupted, cancelled or failed job in a new worker", cmd_resume),
    "worker": ("the process a job runs in (started by run --detach and the Run page)",
               cmd_worker),
    "demo-suite": ("launch the demo suite as jobs: bm25, tfidf, dense:minilm and hybrid on "
                   "each demo dataset with the heuristic generator", cmd_demo_suite),
}


JOB_ARGUMENTS: options.CommandArguments = {
    "jobs": ("active",), "cancel": ("JOB_ID", "wait:cancel"), "resume": ("JOB_ID",),
    "worker": ("JOB_ID",), "demo-suite": ("wait:demo-suite",),
}


def print_launches(args: argparse.Namespace, launches: list[Launch]) -> int:
    """`ablate --detach` and `reproduce --detach`: one job id per line on stdout for
    each run launched (or found queued or running), a note on stderr for each complete
    one (nothing launched); with --json, all of it as one list."""
    if args.json:
        print(json.dumps([(launch.job.to_dict() | {"existing": launch.existing})
                          if launch.job else {"reused_run": launch.reused_run.run_id
                                              if launch.reused_run else None}
                          for launch in launches], indent=2))
        return 0
    for launch in launches:
        if launch.job is not None:
            print_launch(args, launch, launch.job)
        elif launch.reused_run is not None:
            print(f"complete already: run {launch.reused_run.run_id} "
                  f"({launch.reused_run.config.label}, {launch.reused_run.config.view.label})",
                  file=sys.stderr)
    return 0


def print_launch(args: argparse.Namespace, launch: Launch, job: Job) -> None:
    """`run --detach`'s output: the job id on stdout (the job as JSON with --json)."""
    note = " (already launched)" if launch.existing else ""
    if args.json:
        print(json.dumps(job.to_dict() | {"existing": launch.existing}, indent=2))
    else:
        print(job.job_id)
        print(f"job {job.job_id}{note}: {job.label}, {job.status}; follow it with `jobs`, "
              f"stop it with `cancel {job.job_id}`", file=sys.stderr)
