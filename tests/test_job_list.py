"""Feedback at once after a click that starts work: the job list folds its queued jobs
(one line each) so the page's pickers stay in view, the step after the last query has
its own name instead of "N/N", the Overview says how many runs are under way, and the
Home page's demo-suite button shows its jobs in the sidebar on the same click."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from target_core.cli.main import main
from target_core.config import load_settings
from target_core.engine.job_record import UnknownJobKindError
from target_core.engine.jobs import JobStore
from target_core.engine.runner import run_retrieval
from target_core.engine.workers import resume, resume_interrupted, run_worker
from target_core.progress import SCORING, SCORING_ANSWERS
from target_core.read_models.jobs import group_jobs, under_way_note
from target_core.read_models.links import job_link
from target_core.read_models.resources import recent_jobs
from target_core.run_config import GenerationConfig, RunConfig

ROOT = Path(__file__).resolve().parent.parent


def _queue(workspace: Path, n: int, dataset: str = "demo-qa") -> list[str]:
    """n queued run jobs without a worker (queued moments ago: being spawned)."""
    store = JobStore.in_workspace(workspace)
    return [store.create(RunConfig(dataset, "bm25", limit=10 + i)).job_id for i in range(n)]


def test_queued_jobs_fold_and_running_ones_stay_shown(tmp_path: Path) -> None:
    store = JobStore.in_workspace(tmp_path)
    ids = _queue(tmp_path, 4)
    store.update(ids[1], status="running", total=60, done=12, what="retrieving")
    store.update(ids[2], status="done")
    groups = group_jobs(store.list_jobs())
    assert [j.job_id for j in groups.shown] == [ids[1]]
    assert [j.job_id for j in groups.queued] == [ids[0], ids[3]]  # oldest first
    assert [j.job_id for j in groups.done] == [ids[2]]
    assert groups.queued_heading == "2 queued"


def test_the_step_after_the_last_query_is_named_not_counted(tmp_path: Path) -> None:
    store = JobStore.in_workspace(tmp_path)
    (job_id,) = _queue(tmp_path, 1)
    store.update(job_id, status="running", done=260, total=260, what=SCORING_ANSWERS)
    assert store.get(job_id).describe() == "running: scoring answers"
    store.update(job_id, what="retrieving + generating", done=259)
    assert store.get(job_id).describe() == "running: retrieving + generating 259/260"


@pytest.mark.parametrize(("generation", "step"), [
    (GenerationConfig("heuristic"), SCORING_ANSWERS), (None, SCORING)])
def test_a_run_reports_its_scoring_step_after_the_last_query(
        tmp_path: Path, generation: GenerationConfig | None, step: str) -> None:
    reported: list[tuple[int, int, str]] = []
    run_retrieval(RunConfig("demo-qa", "bm25", limit=6, generation=generation),
                  settings=load_settings(tmp_path / "ws"),
                  progress=lambda done, total, what: reported.append((done, total, what)))
    assert reported[-1] == (6, 6, step)
    assert reported[-2][2] != step  # the queries' own step came first


def test_under_way_note_counts_and_links_each_dataset(tmp_path: Path) -> None:
    store = JobStore.in_workspace(tmp_path)
    assert under_way_note(store.list_jobs()) is None
    ids = _queue(tmp_path, 3) + _queue(tmp_path, 1, dataset="demo-sql")
    store.update(ids[0], status="running")
    store.update(ids[1], status="done")
    note = under_way_note(store.list_jobs())
    assert note is not None
    assert note.startswith("3 run(s) under way (1 running, 2 queued)")
    assert "[demo-qa](run?dataset=demo-qa) 2" in note
    assert "[demo-sql](run?dataset=demo-sql) 1" in note


def test_a_job_whose_kind_was_removed_is_listed_but_not_resumed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    store = JobStore.in_workspace(settings.workspace)
    (run_job,) = _queue(settings.workspace, 1)
    gone = store.create_job("judge", {"dataset": "demo-qa", "run_id": "r1",
                                      "judge": "heuristic", "limit": None}).job_id
    # saved by a version that had the kind "retired", whose worker died since
    store.update(gone, kind="retired", status="interrupted", error="the worker is gone")

    jobs = recent_jobs(settings, None, 60)  # what the sidebar lists
    job = next(j for j in jobs if j.job_id == gone)
    assert job.label == "unknown job kind 'retired' on demo-qa"
    assert job.pipeline == "unknown job kind 'retired'"
    assert job.describe() == "interrupted: the worker is gone"
    assert job_link(job) == ("run page", "run?dataset=demo-qa")
    assert group_jobs(jobs).shown == [job]
    note = under_way_note(jobs)
    assert note is not None and note.startswith("1 run(s) under way (0 running, 1 queued)")
    assert store.active_like(RunConfig("demo-qa", "bm25", limit=10)).job_id == run_job

    assert main(["jobs", "--workspace", str(settings.workspace)]) == 0
    assert "unknown job kind 'retired'" in capsys.readouterr().out
    assert main(["resume", gone, "--workspace", str(settings.workspace)]) == 2
    assert "unknown job kind 'retired'" in capsys.readouterr().err
    with pytest.raises(UnknownJobKindError, match="'retired'.*cannot be run or resumed"):
        resume(gone, settings)
    assert resume_interrupted(settings) == []  # the dashboard's start skips it
    assert store.get(gone).status == "interrupted"

    store.update(run_job, status="cancelled")  # a free slot: a worker started by hand
    store.update(gone, status="queued")
    assert run_worker(gone, settings) == 2
    failed = store.get(gone)
    assert failed.status == "failed" and "unknown job kind 'retired'" in (failed.error or "")


def test_sidebar_folds_ten_queued_jobs_and_overview_says_they_are_coming(
        app, tmp_path: Path) -> None:
    _queue(tmp_path / "ws", 10)
    at = app(page="pages/overview.py")
    (folded,) = [e for e in at.sidebar.expander if e.label == "10 queued"]
    assert len(folded.markdown) == 10  # one line each
    assert not at.sidebar.get("progress")  # no bar for a job that has not started
    assert any(i.value.startswith("10 run(s) under way (0 running, 10 queued)")
               for i in at.info), [i.value for i in at.info]


def test_home_demo_suite_lists_its_jobs_in_the_sidebar_on_the_click(
        app, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Launching is faked (queued jobs; the workers' start recorded, not done): the real
    suite takes minutes. The click only queues; the sidebar lists the jobs, then asks
    for their workers."""
    import target_core.actions.runs as actions_runs
    import target_core.experiments.suite as suite
    from pages._ui import jobs as sidebar_jobs
    from target_core.engine.workers import Launch

    def fake(settings, spawn=True):
        assert not spawn  # the page queues, the sidebar starts
        store = JobStore.in_workspace(settings.workspace)
        return [Launch(store.create(config)) for config in suite.demo_suite_configs()]

    started = []
    monkeypatch.setattr(actions_runs, "launch_demo_suite", fake)  # the Home page's action
    monkeypatch.setattr(sidebar_jobs, "start_waiting", lambda settings: started.append(1))
    app(page="pages/home.py")  # the workspace and caches as every page test has them
    # from the default route, as a first visit opens it: app.py runs on every rerun
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    assert not at.sidebar.expander
    at.button(key="home-demo-suite").click().run()
    assert not at.exception and not at.error
    assert "12 queued" in [e.label for e in at.sidebar.expander]
    assert "12 run(s) launched" in at.success[0].value
    assert started, "the sidebar did not start the queued jobs' workers"
