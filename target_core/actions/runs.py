"""Launching runs as jobs and steering jobs: the Run page's launch, the demo suite, a
page's "run the missing ones" button, and Cancel / Resume in the job lists (engine/
workers.py: each job works in its own process)."""

from __future__ import annotations

from collections.abc import Sequence

from target_core.config import Settings
from target_core.engine.workers import (
    Launch,
    cancel,
    launch_run,
    resume,
    resume_interrupted,
    start_waiting,
)
from target_core.errors import TargetError
from target_core.experiments.suite import launch_demo_suite
from target_core.run_config import RunConfig
from target_core.types import TableLookup

__all__ = ["cancel", "demo_suite", "launch_notes", "queue_runs", "resume",
           "resume_interrupted", "start_waiting", "suite_summary"]


def queue_runs(configs: Sequence[RunConfig], settings: Settings, dataset: TableLookup
               ) -> list[Launch]:
    """Queue each configuration as a job (workers.start_waiting starts them): a page's
    "Run N missing ..." button."""
    return [launch_run(config, settings=settings, dataset=dataset, spawn=False)
            for config in configs]


def suite_summary(launched: Sequence[Launch]) -> str:
    """What launching the demo suite did, in one sentence."""
    new = sum(1 for launch in launched if launch.job is not None and not launch.existing)
    running = sum(1 for launch in launched if launch.existing)
    done = sum(1 for launch in launched if launch.reused_run is not None)
    return (f"Demo suite: {new} run(s) launched, {running} already queued or running, "
            f"{done} complete already. Progress is in the sidebar; the Overview fills as "
            "runs finish.")


def demo_suite(settings: Settings, *, spawn: bool = True) -> str:
    """Launch the demo suite (experiments/suite.py) and say what happened."""
    return suite_summary(launch_demo_suite(settings, spawn=spawn))


def launch_notes(configs: Sequence[RunConfig], *, settings: Settings, fresh: bool,
                 dataset: TableLookup, spawn: bool = True) -> list[tuple[str, str]]:
    """Launch each configuration as a job; what happened, as (kind, sentence) for a page:
    an error per refused spec, a note per configuration complete already (reused), one
    success naming the jobs launched. With `spawn` False the jobs are only queued
    (workers.start_waiting starts them)."""
    notes: list[tuple[str, str]] = []
    launched = []
    for config in configs:
        try:
            launch = launch_run(config, settings=settings, fresh=fresh, dataset=dataset,
                                spawn=spawn)
        except TargetError as exc:
            notes.append(("error", f"{config.retriever}: {exc}"))
            continue
        if launch.job is None:
            done = launch.reused_run.run_id if launch.reused_run else "?"
            notes.append(("info", f"{config.retriever}: this configuration is complete "
                          f"already as run {done}; tick Fresh run to run it again."))
            continue
        launched.append(launch.job.job_id)
    if launched:
        notes.append(("success", f"{len(launched)} job(s) launched: " + ", ".join(launched)
                      + ". They work on when you leave this page; follow them here or in "
                      "the sidebar."))
    return notes
