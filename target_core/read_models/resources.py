"""What the pages' shared resources are made of (pages/_ui/resources.py caches them
across reruns): settings, the run store and the job table, dataset discovery, loads
and lookups, the added datasets' names, and run cost estimates."""

from __future__ import annotations

import time

from target_core.config import Settings, load_settings
from target_core.costs import RunCostEstimate, estimate_run_cost
from target_core.datasets import DatasetInfo, discover, list_datasets, load_dataset, open_lookup
from target_core.datasets.add import added_names
from target_core.datasets.lookup import DatasetLookup
from target_core.engine.job_record import Job
from target_core.engine.jobs import JobStore
from target_core.engine.store import RunRecord, RunStore
from target_core.progress import Progress

__all__ = ["DatasetInfo", "DatasetLookup", "Job", "Progress", "RunCostEstimate", "RunRecord",
           "RunStore", "Settings", "added_names", "discover", "estimate_run_cost", "get_job",
           "list_datasets", "load_dataset", "load_settings", "open_lookup", "recent_jobs"]


def recent_jobs(settings: Settings, dataset: str | None, within_s: float) -> list[Job]:
    """The jobs (of one dataset, or all) active or ended within `within_s` seconds, after
    marking those whose worker died as interrupted (JobStore.reap)."""
    store = JobStore.in_workspace(settings.workspace)
    store.reap()
    return store.list_jobs(dataset=dataset, since=time.time() - within_s)


def get_job(settings: Settings, job_id: str) -> Job:
    """One job as it stands (UnknownNameError for an unknown id)."""
    return JobStore.in_workspace(settings.workspace).get(job_id)
