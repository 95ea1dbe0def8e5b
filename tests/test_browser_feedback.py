"""Feedback at once: after the Home page's demo-suite click, the new jobs are in the
sidebar (folded, "12 queued") without leaving the page; the click only queues them, and
the sidebar then starts one worker per job (benchmarks/launch_feedback.py times it). Debian's
chromium via Playwright, a real `streamlit run`, real worker processes (cancelled at
the end: the suite itself is tests/test_demo_suite.py's and the jobs tests' business).

Skipped where chromium is absent, except under CI (CI=true), where its absence fails.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from browser_support import require_chromium, screenshots, wait_for_jobs

from target_core.engine.job_record import Job
from target_core.engine.pids import pid_alive

require_chromium()

EXCEPTION = "[data-testid='stException']"
SIDEBAR = "[data-testid='stSidebar']"


def _own_worker(job: Job) -> bool:
    """The job ended, or its pid is a live worker process started for it."""
    if not job.active:
        return True
    if job.pid is None or not pid_alive(job.pid, None):
        return False
    try:
        return job.job_id.encode() in Path(f"/proc/{job.pid}/cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return False


def test_demo_suite_jobs_are_in_the_sidebar_within_a_second(tmp_path: Path) -> None:
    from target_core.config import load_settings
    from target_core.engine.jobs import JobStore
    from target_core.engine.workers import cancel

    workspace = tmp_path / "ws"
    out = Path(os.environ.get("TARGET_SCREENSHOTS", tmp_path / "shots"))
    out.mkdir(parents=True, exist_ok=True)
    env = {"TARGET_WORKSPACE": str(workspace), "TARGET_MAX_JOBS": "1"}
    settings = load_settings(workspace)
    try:
        with screenshots.serve_app(env) as base, \
                screenshots.browser_page(width=1500, height=1100) as page:
            screenshots.visit(page, base)
            sidebar = page.locator(SIDEBAR)
            assert sidebar.get_by_text("queued").count() == 0
            button = page.get_by_role("button", name="Run the demo suite")
            started = time.monotonic()
            button.click()
            sidebar.get_by_text("12 queued").or_(sidebar.get_by_text("11 queued")).wait_for(
                timeout=60_000)
            seconds = time.monotonic() - started
            screenshots.settle(page, 300)
            page.screenshot(path=str(out / "demo_suite_feedback.png"))
            assert page.locator(EXCEPTION).count() == 0
            assert page.get_by_text("12 run(s) launched").count() == 1
            print(f"demo-suite jobs in the sidebar {seconds:.2f} s after the click")
            # then each job's worker is started, once: a process of its own, named by it
            store = JobStore.in_workspace(workspace)
            deadline = time.monotonic() + 60
            while not all(_own_worker(job) for job in store.list_jobs()):
                assert time.monotonic() < deadline, store.list_jobs()
                time.sleep(0.1)
            jobs = store.list_jobs()
            assert len(jobs) == 12 and not [j for j in jobs if j.status == "failed"]
            pids = [j.pid for j in jobs if j.active]
            assert len(set(pids)) == len(pids)
            # another page's dataset picker stays in view: the queued jobs are folded
            screenshots.visit(page, f"{base}/datasets?dataset=demo-qa")
            sidebar.get_by_text("queued").first.wait_for(timeout=30_000)
            page.screenshot(path=str(out / "demo_suite_datasets.png"))
            box = sidebar.locator("[data-testid='stSelectbox']").first.bounding_box()
            assert box is not None and box["y"] + box["height"] < 1100, box
    finally:  # the workers: queued ones end at once, a running one at its next step
        for job in JobStore.in_workspace(workspace).list_jobs():
            cancel(job.job_id, settings)
        wait_for_jobs(workspace, timeout=120)
