"""A run launched in the browser is a job: it goes on while the user moves to another
page and while the dashboard's server restarts, and the restarted dashboard shows it
complete (Debian's chromium via Playwright, a real `streamlit run` twice, a real worker
process embedding with all-MiniLM-L6-v2 into Chroma); the sidebar cancels a job and
resumes it.

Skipped where chromium is absent, except under CI (CI=true), where its absence fails.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from browser_support import require_chromium, screenshots
from fake_openai import FakeOpenAI, HeldChat

require_chromium()

EXCEPTION = "[data-testid='stException']"
SIDEBAR = "[data-testid='stSidebar']"
LONG = 240_000  # ms: embedding a corpus on a busy 2-core machine


def _shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("TARGET_SCREENSHOTS", tmp_path / "shots"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_a_launched_run_survives_navigation_and_a_server_restart(tmp_path: Path) -> None:
    from target_core.engine.jobs import JobStore
    from target_core.engine.store import RunStore

    out = _shots(tmp_path)
    workspace = tmp_path / "ws"
    env = {"TARGET_WORKSPACE": str(workspace)}
    jobs = JobStore.in_workspace(workspace)
    with screenshots.serve_app(env) as base, screenshots.browser_page(height=1600) as page:
        screenshots.visit(page, f"{base}/run?dataset=demo-fact")
        retrievers = page.locator("[data-testid='stMultiSelect']").first
        for name in ("bm25", "tfidf"):
            retrievers.get_by_role("button", name=f"Remove {name}").click()
            screenshots.settle(page, 300)
        retrievers.locator("input").fill("dense:minilm")
        retrievers.locator("input").press("Enter")
        page.keyboard.press("Escape")
        screenshots.settle(page, 300)
        limit = page.get_by_label("Queries (0 = all)")
        limit.fill("40")
        limit.press("Enter")
        screenshots.settle(page, 300)
        page.get_by_role("button", name="Launch").click()
        page.get_by_text("1 job(s) launched").wait_for(timeout=60_000)
        screenshots.settle(page)
        page.locator(SIDEBAR).get_by_text("dense:minilm on demo").wait_for(timeout=30_000)
        page.screenshot(path=str(out / "jobs_launched.png"), full_page=True)
        assert page.locator(EXCEPTION).count() == 0
        (job,) = jobs.list_jobs()
        assert job.config.retriever == "dense:minilm" and job.config.limit == 40

        # another page: the job goes on, and the sidebar shows it with its progress
        screenshots.visit(page, f"{base}/datasets?dataset=demo-qa")
        page.locator(SIDEBAR).get_by_text("dense:minilm on demo").wait_for(timeout=30_000)
        sidebar = page.locator(SIDEBAR).inner_text()
        assert "Jobs" in sidebar and page.locator(EXCEPTION).count() == 0
        page.screenshot(path=str(out / "jobs_elsewhere.png"), full_page=True)
        assert jobs.get(job.job_id).active, "the job ended before the server restart"
    # the server is gone (terminated) and the tab with it; the worker is not
    job = jobs.get(job.job_id)
    assert job.pid is not None and job.active
    try:
        with screenshots.serve_app(env) as base, \
                screenshots.browser_page(height=1600) as page:
            screenshots.visit(page, f"{base}/run?dataset=demo-fact")
            # the job list polls; when the job ends, the page reruns with the run listed
            page.locator(SIDEBAR).get_by_text("1 finished").wait_for(timeout=LONG)
            screenshots.settle(page)
            page.screenshot(path=str(out / "jobs_after_restart.png"), full_page=True)
            assert page.locator(EXCEPTION).count() == 0
            job = jobs.get(job.job_id)
            assert job.status == "done", job
            run = RunStore.in_workspace(workspace).get_run(job.run_id)
            assert run.status == "complete" and run.n_done == 40
            # the page reran when the job ended: the runs list holds the run (a grid
            # drawn on a canvas, so its text is not in the page's)
            assert "No runs yet" not in page.locator("body").inner_text()
            assert page.locator("[data-testid='stDataFrame']").count() >= 1
    finally:
        job = jobs.get(job.job_id)
        if job.active and job.pid:
            os.kill(job.pid, signal.SIGKILL)


def test_the_sidebar_cancels_a_job_and_resumes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> None:
    """A generation job whose model server (the fake one of tests/fake_openai.py) answers
    two chat requests and holds the rest is cancelled from the sidebar, the server lets
    go, and the job is resumed: held by waiting, not by work, so this test's machine
    time goes to the browser and the dashboard (it embedded demo-qa with MiniLM before:
    81 s under the suite's load)."""
    import time

    from target_core.config import load_settings
    from target_core.engine.jobs import JobStore
    from target_core.engine.store import RunStore
    from target_core.engine.workers import launch_run
    from target_core.run_config import GenerationConfig, RunConfig

    out = _shots(tmp_path)
    workspace = tmp_path / "ws"
    model = HeldChat(free=2, hold_limit=120)
    fake_openai.chat_responder = model
    env = {"TARGET_WORKSPACE": str(workspace), "OPENAI_API_KEY": "sk-test",
           "OPENAI_BASE_URL": fake_openai.base_url, "TARGET_GENERATION_CONCURRENCY": "1"}
    for name, value in env.items():  # the worker launched here inherits them
        monkeypatch.setenv(name, value)
    settings = load_settings(workspace)
    jobs = JobStore.in_workspace(workspace)
    job = launch_run(RunConfig("demo-qa", "bm25", limit=30,
                               generation=GenerationConfig("openai:test-model")),
                     settings=settings).job
    assert job is not None
    try:
        with screenshots.serve_app(env) as base, \
                screenshots.browser_page(height=1100) as page:
            screenshots.visit(page, f"{base}/overview")
            sidebar = page.locator(SIDEBAR)
            sidebar.get_by_role("button", name="Cancel").click(timeout=60_000)
            deadline = time.monotonic() + 120
            while jobs.get(job.job_id).status != "cancelled":
                assert time.monotonic() < deadline, jobs.get(job.job_id)
                time.sleep(0.5)
            sidebar.get_by_role("button", name="Resume").wait_for(timeout=30_000)
            page.mouse.move(700, 500)  # no tooltip over the job's status
            screenshots.settle(page)
            page.screenshot(path=str(out / "jobs_cancelled.png"), full_page=True)
            assert "cancelled" in sidebar.inner_text()
            cancelled = RunStore.in_workspace(workspace).get_run(jobs.get(job.job_id).run_id)
            assert cancelled.status == "cancelled" and cancelled.n_done < 30
            model.release()  # the request in flight ended with the worker; the rest answer
            sidebar.get_by_role("button", name="Resume").click()
            sidebar.get_by_text("1 finished").wait_for(timeout=LONG)
            screenshots.settle(page)
            page.screenshot(path=str(out / "jobs_resumed.png"), full_page=True)
            assert page.locator(EXCEPTION).count() == 0
            done = jobs.get(job.job_id)
            assert done.status == "done", done
            run = RunStore.in_workspace(workspace).get_run(done.run_id)
            assert run.status == "complete" and run.n_done == 30
            assert run.run_id == cancelled.run_id  # resumed, not started again
    finally:
        job = jobs.get(job.job_id)
        if job.active and job.pid:
            os.kill(job.pid, signal.SIGKILL)
        model.release()
