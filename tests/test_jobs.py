"""Runs as jobs: a launched run works in a detached worker process, writes its progress
to the workspace, can be cancelled (keeping its finished queries) and resumed, survives
the death of its worker (found by pid, resumed), and at most TARGET_MAX_JOBS work at
once. Real worker processes throughout; a sitecustomize on the workers' PYTHONPATH
slows BM25's search down so that a run lasts long enough to be caught mid-way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from target_core.config import Settings, load_settings
from target_core.engine.job_record import Job
from target_core.engine.jobs import JobStore
from target_core.engine.pids import pid_alive
from target_core.engine.store import RunStore
from target_core.engine.workers import cancel, launch_run, resume, resume_interrupted
from target_core.errors import TargetError
from target_core.run_config import RunConfig

ROOT = Path(__file__).resolve().parent.parent

SLOW = """
import os, time
delay = float(os.environ.get("TEST_SLOW_SEARCH_S", "0"))
if delay:
    from target_core.retrievers import bm25
    _search = bm25.BM25Retriever.search
    def search(self, queries, *, top_k):
        time.sleep(delay)
        return _search(self, queries, top_k=top_k)
    bm25.BM25Retriever.search = search
"""


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(SLOW)
    monkeypatch.setenv("PYTHONPATH", str(slow))
    monkeypatch.setenv("TEST_SLOW_SEARCH_S", "0.04")
    monkeypatch.delenv("TARGET_MAX_JOBS", raising=False)
    return load_settings(tmp_path / "ws")


def _wait(settings: Settings, job_id: str, until, timeout: float = 120) -> Job:
    store = JobStore.in_workspace(settings.workspace)
    deadline = time.monotonic() + timeout
    while True:
        store.reap()
        job = store.get(job_id)
        if until(job):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def _finished(job: Job) -> bool:
    return not job.active


def _log(settings: Settings, job: Job) -> str:
    path = settings.workspace / "jobs" / f"{job.job_id}.log"
    return path.read_text() if path.exists() else ""


def test_a_job_runs_in_a_worker_and_completes(settings: Settings) -> None:
    config = RunConfig("demo-qa", "bm25", limit=20)
    launch = launch_run(config, settings=settings)
    assert launch.job is not None and launch.job.pid not in (None, os.getpid())
    assert launch_run(config, settings=settings).job.job_id == launch.job.job_id  # no twin
    job = _wait(settings, launch.job.job_id, _finished)
    assert job.status == "done", _log(settings, job)
    assert (job.done, job.total) == (20, 20)
    run = RunStore.in_workspace(settings.workspace).get_run(job.run_id)
    assert run.status == "complete" and run.n_done == 20
    # launched again: the configuration is complete, so its run is shown, no job
    again = launch_run(config, settings=settings)
    assert again.job is None and again.reused_run.run_id == run.run_id


def test_cancel_keeps_finished_queries_and_launching_again_resumes(settings: Settings) -> None:
    config = RunConfig("demo-qa", "bm25", limit=120)
    job = launch_run(config, settings=settings).job
    job = _wait(settings, job.job_id, lambda j: j.what.startswith("retrieving")
                and j.done >= 40)
    cancel(job.job_id, settings)
    job = _wait(settings, job.job_id, _finished)
    assert job.status == "cancelled", _log(settings, job)
    runs = RunStore.in_workspace(settings.workspace)
    run = runs.get_run(job.run_id)
    assert run.status == "cancelled" and 32 <= run.n_done < 120
    # launching the same configuration again resumes the run, keeping what it had
    again = launch_run(config, settings=settings).job
    assert again.job_id != job.job_id
    again = _wait(settings, again.job_id, _finished)
    assert again.status == "done" and again.run_id == run.run_id
    assert runs.get_run(run.run_id).status == "complete"
    assert runs.get_run(run.run_id).n_done == 120


def test_cancel_stops_work_that_never_calls_progress(settings: Settings,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each search holds the worker 60 s without a progress call (as a reply from a slow
    model does): the cancel still ends the job within seconds, with its run cancelled and
    its worker gone (engine.cancel_watch), and the job resumes to the end."""
    from target_core.engine.cancel_watch import CANCEL_GRACE_S

    monkeypatch.setenv("TEST_SLOW_SEARCH_S", "60")
    job = launch_run(RunConfig("demo-qa", "bm25", limit=3), settings=settings).job
    job = _wait(settings, job.job_id, lambda j: j.what.startswith("retrieving")
                and j.run_id is not None)
    asked = time.monotonic()
    cancel(job.job_id, settings)
    job = _wait(settings, job.job_id, _finished, timeout=CANCEL_GRACE_S + 20)
    assert job.status == "cancelled", _log(settings, job)
    assert time.monotonic() - asked < CANCEL_GRACE_S + 20  # not the search's 60 s
    assert "did not stop within" in _log(settings, job)
    runs = RunStore.in_workspace(settings.workspace)
    assert runs.get_run(job.run_id).status == "cancelled"
    monkeypatch.setenv("TEST_SLOW_SEARCH_S", "0")  # the resumed worker inherits it
    resume(job.job_id, settings)
    job = _wait(settings, job.job_id, _finished)
    assert job.status == "done" and runs.get_run(job.run_id).n_done == 3


def test_a_killed_worker_is_found_and_its_job_resumed(settings: Settings) -> None:
    job = launch_run(RunConfig("demo-qa", "bm25", limit=100), settings=settings).job
    # 40 queries retrieved (not 40 of indexing's progress: killed then, nothing is stored)
    job = _wait(settings, job.job_id, lambda j: j.what.startswith("retrieving")
                and j.done >= 40 and j.run_id is not None)
    assert pid_alive(job.pid, None)
    os.kill(job.pid, signal.SIGKILL)  # as a machine restart would
    job = _wait(settings, job.job_id, lambda j: j.status == "interrupted", timeout=20)
    assert "worker process is gone" in job.error
    partial = RunStore.in_workspace(settings.workspace).get_run(job.run_id)
    assert 32 <= partial.n_done < 100
    (resumed,) = resume_interrupted(settings)  # what the dashboard does when it starts
    assert resumed.job_id == job.job_id and resumed.status == "queued"
    job = _wait(settings, job.job_id, _finished)
    assert job.status == "done", _log(settings, job)
    assert job.run_id == partial.run_id
    assert RunStore.in_workspace(settings.workspace).get_run(job.run_id).n_done == 100


def test_the_concurrency_limit_queues_jobs(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           settings: Settings) -> None:
    monkeypatch.setenv("TARGET_MAX_JOBS", "1")
    settings = load_settings(tmp_path / "ws")
    assert settings.max_jobs == 1
    first = launch_run(RunConfig("demo-qa", "bm25", limit=60), settings=settings).job
    second = launch_run(RunConfig("demo-qa", "bm25", limit=61), settings=settings).job
    _wait(settings, first.job_id, lambda j: j.status == "running" and j.done >= 10)
    assert JobStore.in_workspace(settings.workspace).get(second.job_id).status == "queued"
    first = _wait(settings, first.job_id, _finished)
    second = _wait(settings, second.job_id, _finished)
    assert first.status == second.status == "done"
    assert second.started_at >= first.finished_at


def test_a_queued_job_cancels_at_once_and_resume_restarts_it(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             settings: Settings) -> None:
    monkeypatch.setenv("TARGET_MAX_JOBS", "1")
    settings = load_settings(tmp_path / "ws")
    first = launch_run(RunConfig("demo-qa", "bm25", limit=25), settings=settings).job
    second = launch_run(RunConfig("demo-qa", "bm25", limit=26), settings=settings).job
    assert cancel(second.job_id, settings).status == "cancelled"
    assert resume(second.job_id, settings).status == "queued"
    assert _wait(settings, first.job_id, _finished).status == "done"
    assert _wait(settings, second.job_id, _finished).status == "done"


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "target_core", *args, "--workspace",
                           str(settings.workspace)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_run_detach_jobs_and_cancel(settings: Settings) -> None:
    started = time.monotonic()
    # 200 queries at 0.04 s: ~8 s for the three CLI calls below (each starts Python and
    # imports the package, 1-2 s on 2 busy cores) to find the job still running
    out = _cli(settings, "run", "--detach", "--dataset", "demo-qa", "--retriever", "bm25",
               "--limit", "200")
    assert out.returncode == 0, out.stderr
    job_id = out.stdout.strip()
    assert job_id.startswith("job-") and "cancel " + job_id in out.stderr
    assert time.monotonic() - started < 30  # returned without running 200 queries
    _wait(settings, job_id, lambda j: j.done >= 5)
    listed = json.loads(_cli(settings, "jobs", "--json").stdout)
    assert [j["job_id"] for j in listed] == [job_id]
    assert listed[0]["status"] == "running" and listed[0]["total"] >= 5
    assert "bm25" in _cli(settings, "jobs").stdout
    cancelled = _cli(settings, "cancel", job_id, "--wait", "60", "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    assert json.loads(cancelled.stdout)["status"] == "cancelled"
    unknown = _cli(settings, "cancel", "job-nope")
    assert unknown.returncode == 2 and "unknown job" in unknown.stderr
    resumed = _cli(settings, "resume", job_id, "--json")
    assert json.loads(resumed.stdout)["status"] in ("queued", "running")
    assert _wait(settings, job_id, _finished).status == "done"


def test_one_worker_per_job(settings: Settings) -> None:
    """A second worker for a job that has a live one exits at once; resuming twice starts
    one worker."""
    from target_core.engine.workers import run_worker

    job = launch_run(RunConfig("demo-qa", "bm25", limit=80), settings=settings).job
    job = _wait(settings, job.job_id, lambda j: j.status == "running")
    started = time.monotonic()
    assert run_worker(job.job_id, settings) == 0  # in this process: not its worker
    assert time.monotonic() - started < 5
    assert JobStore.in_workspace(settings.workspace).get(job.job_id).pid == job.pid
    cancel(job.job_id, settings)
    _wait(settings, job.job_id, _finished)
    first, second = resume(job.job_id, settings), resume(job.job_id, settings)
    assert first.pid is not None and second.pid == first.pid
    assert _wait(settings, job.job_id, _finished).status == "done"


def test_the_sidebar_cancels_and_resumes_a_job(settings: Settings, app) -> None:
    job = launch_run(RunConfig("demo-qa", "bm25", limit=120), settings=settings).job
    _wait(settings, job.job_id, lambda j: j.status == "running" and j.done > 0)
    at = app(page="pages/overview.py")
    assert any("bm25 on demo" in m.value for m in at.sidebar.markdown)
    cancel_button = next(b for b in at.sidebar.button if b.label == "Cancel")
    cancel_button.click().run()
    job = _wait(settings, job.job_id, _finished)
    assert job.status == "cancelled"
    at = app(page="pages/overview.py")
    next(b for b in at.sidebar.button if b.label == "Resume").click().run()
    assert not at.exception
    job = _wait(settings, job.job_id, _finished)
    assert job.status == "done", _log(settings, job)
    assert RunStore.in_workspace(settings.workspace).get_run(job.run_id).n_done == 120


def test_a_job_label_tells_ablation_variants_apart(settings: Settings) -> None:
    from target_core.table_view import TableView

    store = JobStore.in_workspace(settings.workspace)
    header = store.create(RunConfig("demo-qa", "bm25", view=TableView(rows=0)), fresh=False)
    default = store.create(RunConfig("demo-qa", "bm25"), fresh=False)
    assert header.label == "bm25 on demo-qa · header-only"
    assert default.label == "bm25 on demo-qa · default"


def test_a_page_run_reads_the_job_table_once_per_listing(app, monkeypatch) -> None:
    looks: list[str | None] = []
    real = JobStore.list_jobs

    def counted(self, *args, **kwargs):
        if "statuses" not in kwargs:  # not the resume of interrupted jobs at start
            looks.append(kwargs.get("dataset"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(JobStore, "list_jobs", counted)
    app(page="pages/datasets.py")
    assert looks == [None]  # the sidebar's
    looks.clear()
    app(page="pages/run.py", dataset="demo-fact")
    assert len(looks) == 2 and set(looks) == {"demo-fact", None}  # sidebar, page


def test_cli_ablate_and_reproduce_detach_launch_jobs(settings: Settings) -> None:
    out = _cli(settings, "ablate", "--detach", "--dataset", "demo-qa", "--retriever", "bm25",
               "--limit", "20", "--rows", "all,0", "--formats", "markdown")
    assert out.returncode == 0, out.stderr
    ids = out.stdout.split()
    assert len(ids) == 4 and all(i.startswith("job-") for i in ids)  # 2 rows × title
    jobs = {j.job_id: j for j in JobStore.in_workspace(settings.workspace).list_jobs()}
    assert {jobs[i].config.view.rows for i in ids} == {None, 0}
    for job_id in ids:
        assert _wait(settings, job_id, _finished).status == "done"
    again = _cli(settings, "ablate", "--detach", "--dataset", "demo-qa", "--retriever",
                 "bm25", "--limit", "20", "--rows", "all,0", "--formats", "markdown")
    assert again.stdout.strip() == "" and again.stderr.count("complete already") == 4
    shown = _cli(settings, "ablate", "--dataset", "demo-qa", "--retriever", "bm25",
                 "--limit", "20", "--rows", "all,0", "--formats", "markdown", "--json")
    done = {JobStore.in_workspace(settings.workspace).get(i).run_id for i in ids}
    table = json.loads(shown.stdout)["table"]
    assert {row["run"] for row in table} == done  # the jobs' runs, not run again

    out = _cli(settings, "reproduce", "--detach", "--dataset", "demo-qa", "--paper",
               "OTTQA", "--limit", "10", "--json")
    assert out.returncode == 0, out.stderr
    launched = json.loads(out.stdout)
    assert len(launched) >= 3 and all(item["job_id"].startswith("job-") for item in launched)
    for item in launched:
        _cli(settings, "cancel", item["job_id"])


def test_a_draft_job_samples_in_a_worker_and_reports_its_counts(settings: Settings) -> None:
    from target_core.benchgen.draft import Draft
    from target_core.benchgen.draft_jobs import DraftSpec, draft_report, keep_upload, launch_draft
    from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR
    from target_core.read_models.links import job_link

    source = sorted(EXAMPLE_TEMPLATES_DIR.iterdir())[0]
    kept = keep_upload(settings, source.name, source.read_bytes())
    assert keep_upload(settings, "again" + source.suffix, source.read_bytes()) == kept
    spec = DraftSpec(dataset="demo-sql", name="up", templates=str(kept),
                     templates_label=source.name, database=None, n=2, seed=1,
                     reference_date="2025-01-01", writer="template", judge="round-trip")
    job = launch_draft(spec, settings)
    assert job.kind == "draft" and job.label == "questions for draft up on demo-sql"
    done = _wait(settings, job.job_id, _finished)
    assert done.status == "done", _log(settings, done)
    with Draft.open(settings.workspace, "up") as draft:
        assert done.result["questions"] == draft.summary().total > 0
        assert draft.meta()["templates"] == source.name
    report = draft_report(done)
    assert report is not None and sum(c.kept for c in report.counts.values()) == \
        done.result["queries"] > 0
    assert job_link(done) == ("review", "benchmark_builder?draft=up")
    assert job_link(job) == ("builder", "benchmark_builder")  # not done: the builder
    with pytest.raises(TargetError, match="exists"):  # checked before anything starts
        launch_draft(spec, settings)
    listed = json.loads(_cli(settings, "jobs", "--json").stdout)
    assert listed[0]["kind"] == "draft" and listed[0]["result"]["draft"] == "up"


def test_an_older_jobs_table_gains_the_result_column(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "jobs.sqlite"
    with sqlite3.connect(path) as db:  # the table as the first version made it
        db.execute("CREATE TABLE jobs (job_id TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                   "config TEXT NOT NULL, fresh INTEGER NOT NULL DEFAULT 0, cwd TEXT NOT "
                   "NULL, status TEXT NOT NULL, pid INTEGER, pid_start TEXT, done INTEGER "
                   "NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0, what TEXT NOT NULL "
                   "DEFAULT '', run_id TEXT, reused INTEGER NOT NULL DEFAULT 0, cancel "
                   "INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, queued_at REAL "
                   "NOT NULL, started_at REAL, finished_at REAL, error TEXT)")
        db.execute("INSERT INTO jobs (job_id, kind, config, cwd, status, created_at, "
                   "queued_at) VALUES ('job-old', 'run', ?, '.', 'done', 1, 1)",
                   [json.dumps(RunConfig("demo-qa", "bm25").to_dict())])
    store = JobStore(path)
    old = store.get("job-old")
    assert old.result is None and old.config.retriever == "bm25"
    store.update("job-old", result=json.dumps({"x": 1}))
    assert store.get("job-old").result == {"x": 1}
