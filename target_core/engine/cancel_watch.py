"""A worker stops within seconds of a cancel even when its work does not call progress
for a long time: a reply from a model on a CPU (a minute or more), a request held by a
slow server, one long library call. The run's own progress callback stops it between
queries (workers._JobProgress); this thread, started by the worker, ends the process
when that has not happened CANCEL_GRACE_S after the cancel was asked for. Stopping so is
what a SIGKILL would do, and what every job survives: results are stored a batch per
transaction, chat replies as they arrive, Chroma chunks as they are added; resuming the
job continues its run."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from target_core.engine.jobs import JobStore
from target_core.engine.store import RunStore

log = logging.getLogger(__name__)

CANCEL_GRACE_S = 3.0
"""How long a cancelled job's work has to stop at its next progress call (every 0.5 s
while it runs queries) before the worker stops itself."""
WATCH_EVERY_S = 0.5


def watch_for_cancel(workspace: Path, job_id: str) -> None:
    """Start a daemon thread that, once the job's cancel has waited CANCEL_GRACE_S,
    marks its run and the job cancelled and ends the process (os._exit). The thread ends
    when the job is no longer running."""
    def watch() -> None:
        jobs = JobStore.in_workspace(workspace)  # its own connection: another thread
        asked_at: float | None = None
        while True:
            time.sleep(WATCH_EVERY_S)
            job = jobs.get(job_id)
            if job.status != "running":
                return
            if not job.cancel_requested:
                continue
            asked_at = asked_at or time.monotonic()
            if time.monotonic() - asked_at < CANCEL_GRACE_S:
                continue
            log.warning("job %s: cancelled, its work did not stop within %.0f s; stopping",
                        job_id, CANCEL_GRACE_S)
            if job.run_id:
                RunStore.in_workspace(workspace).cancel_run(job.run_id)
            jobs.update(job_id, status="cancelled", finished_at=time.time(), pid=None)
            os._exit(0)

    threading.Thread(target=watch, name=f"cancel-watch-{job_id}", daemon=True).start()
