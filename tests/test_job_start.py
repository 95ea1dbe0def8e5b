"""Jobs queued first, their workers started after (issue 28: feedback within a second):
a page queues its jobs (launch_run with spawn=False) and lists them; start_waiting then
starts one worker per job in a background thread, however many pages or threads try,
and a worker that cannot be started fails its job with the reason. Real SQLite and real
worker processes, except where Popen is made to fail."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from jobs_support import wait_for_jobs

from target_core.config import Settings, load_settings
from target_core.engine import workers
from target_core.engine.jobs import JobStore
from target_core.engine.workers import WorkerStartError, launch_run, start_waiting
from target_core.run_config import RunConfig


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("TARGET_MAX_JOBS", raising=False)
    return load_settings(tmp_path / "ws")


def _queue(settings: Settings, *limits: int) -> list[str]:
    ids = []
    for limit in limits:
        job = launch_run(RunConfig("demo-qa", "bm25", limit=limit), settings=settings,
                         spawn=False).job
        assert job is not None
        ids.append(job.job_id)
    return ids


def test_queued_jobs_have_no_worker_until_started_and_then_exactly_one(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _queue(settings, 5, 6, 7)
    store = JobStore.in_workspace(settings.workspace)
    assert [store.get(i).pid for i in ids] == [None, None, None]
    assert [store.get(i).status for i in ids] == ["queued"] * 3
    started: list[str] = []
    popen = workers._popen_worker
    lock = threading.Lock()

    def counted(job, settings):  # type: ignore[no-untyped-def]
        with lock:
            started.append(job.job_id)
        return popen(job, settings)

    monkeypatch.setattr(workers, "_popen_worker", counted)
    # three pages' sidebars at once (and one more later): each job is started once
    for thread in [start_waiting(settings) for _ in range(3)]:
        thread.join(timeout=60)
    start_waiting(settings).join(timeout=60)
    assert sorted(started) == sorted(ids)
    jobs = wait_for_jobs(settings.workspace, timeout=120)
    assert {job.status for job in jobs} == {"done"}, [j.error for j in jobs]


def test_a_worker_that_cannot_start_fails_its_job_with_the_reason(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise BlockingIOError(11, "Resource temporarily unavailable")

    (queued,) = _queue(settings, 5)
    monkeypatch.setattr(workers.subprocess, "Popen", refuse)
    start_waiting(settings).join(timeout=60)
    job = JobStore.in_workspace(settings.workspace).get(queued)
    assert job.status == "failed" and job.pid is None
    assert "could not be started" in (job.error or "")
    assert "Resource temporarily unavailable" in (job.error or "")
    assert job.describe().startswith("failed: its worker process could not be started")
    # launched at once (the command line's way), the launcher hears it too
    with pytest.raises(WorkerStartError, match="could not be started"):
        launch_run(RunConfig("demo-qa", "bm25", limit=6), settings=settings)
    assert [j.status for j in JobStore.in_workspace(settings.workspace).list_jobs()] == [
        "failed", "failed"]


def test_a_worker_adopts_its_job_before_its_spawner_records_the_pid(
        settings: Settings) -> None:
    """The spawner's pid stands for the worker until set_pid: a worker that claims
    first (a slow parent) adopts the job instead of leaving it as another's."""
    import os

    (queued,) = _queue(settings, 5)
    store = JobStore.in_workspace(settings.workspace)
    assert store.take(queued, os.getpid())
    assert not store.take(queued, os.getpid())  # taken once
    assert store.claim(queued, 2, pid=os.getpid() + 1, parent=12345) == "taken"
    assert store.claim(queued, 2, pid=os.getpid() + 1, parent=os.getpid()) == "claimed"
    assert store.get(queued).pid == os.getpid() + 1
    store.update(queued, status="cancelled", pid=None)
