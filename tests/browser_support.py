"""What the real-browser tests share: scripts/screenshots.py (serve the app, drive
Debian's chromium) and the rule that chromium's absence skips them, except under CI
(CI=true), where it fails: `make test` installs chromium."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
assert _spec is not None and _spec.loader is not None
screenshots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(screenshots)


def require_chromium() -> None:
    """Call at module level: skip (or, under CI, fail) without chromium."""
    if screenshots.CHROMIUM.exists():
        return
    if os.environ.get("CI"):
        pytest.fail("chromium is missing under CI: `make test` should have installed it",
                    pytrace=False)
    pytest.skip("chromium not installed (apt-get install chromium)", allow_module_level=True)


def wait_for_jobs(workspace: Path, timeout: float = 240) -> list:
    """The workspace's jobs once none is queued or running: runs launched in the browser
    work in worker processes (target_core.engine.workers), not in the page."""
    import time

    from target_core.engine.jobs import JobStore

    store = JobStore.in_workspace(workspace)
    deadline = time.monotonic() + timeout
    while True:
        store.reap()
        jobs = store.list_jobs()
        if not any(job.active for job in jobs):
            return jobs
        if time.monotonic() > deadline:
            raise AssertionError(f"jobs still active after {timeout} s: {jobs}")
        time.sleep(0.3)
