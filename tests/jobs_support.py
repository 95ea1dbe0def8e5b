"""What tests of launched runs share: waiting for the workspace's jobs, which work in
worker processes (target_core.engine.workers), not in the page or test that launched
them."""

from __future__ import annotations

import time
from pathlib import Path

from target_core.engine.job_record import Job
from target_core.engine.jobs import JobStore


def wait_for_jobs(workspace: Path, timeout: float = 240) -> list[Job]:
    """The workspace's jobs once none is queued or running."""
    store = JobStore.in_workspace(workspace)
    deadline = time.monotonic() + timeout
    while True:
        store.reap()
        jobs = store.list_jobs()
        if not any(job.active for job in jobs):
            return jobs
        if time.monotonic() > deadline:
            raise AssertionError(f"jobs still active after {timeout} s: {jobs}")
        time.sleep(0.2)
