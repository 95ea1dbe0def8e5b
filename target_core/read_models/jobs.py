"""The job list's shape, as the sidebar and the Run page draw it, and the Overview's note
on runs under way: which jobs get a line with a progress bar and buttons, which fold into
one short line each, and what links lead to them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from target_core.engine.job_record import Job
from target_core.read_models.links import run_page_link


@dataclass(frozen=True)
class JobGroups:
    """A job list split for drawing: `shown` each with a bar and buttons (running, or
    needing the user: failed, cancelled, interrupted), `queued` and `done` folded, one
    short line each, so that ten queued jobs do not push the page's pickers away."""

    shown: list[Job]
    queued: list[Job]
    done: list[Job]

    @property
    def queued_heading(self) -> str:
        return f"{len(self.queued)} queued"

    @property
    def done_heading(self) -> str:
        return f"{len(self.done)} finished"


def group_jobs(jobs: Sequence[Job]) -> JobGroups:
    """`jobs` (newest first) split into JobGroups; queued ones oldest first, the order
    in which they will start."""
    queued = [job for job in jobs if job.status == "queued"]
    return JobGroups(
        shown=[job for job in jobs if job.status not in ("queued", "done")],
        queued=sorted(queued, key=lambda job: job.created_at),
        done=[job for job in jobs if job.status == "done"])


def under_way_note(jobs: Sequence[Job]) -> str | None:
    """e.g. '12 runs under way (4 running, 8 queued): [demo-qa](run?dataset=demo-qa) 4, ...'
    in markdown, each dataset linked to its Run page, which lists its jobs; None when no
    run job is queued or running."""
    runs = [job for job in jobs if job.runs_config and job.active]
    if not runs:
        return None
    running = sum(1 for job in runs if job.status == "running")
    per_dataset = Counter(job.dataset for job in runs)
    links = ", ".join(f"[{name}]({run_page_link(name)}) {n}"
                      for name, n in sorted(per_dataset.items()))
    return (f"{len(runs)} run(s) under way ({running} running, {len(runs) - running} "
            f"queued): {links}. This page redraws as each one ends.")
