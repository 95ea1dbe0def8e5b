"""Feedback after a click that starts work, in chromium against a real `streamlit run`:
seconds from the click on Home's "Run the demo suite" (12 jobs) and on the Run page's
"Launch" (4 retrievers on demo-qa) until the sidebar lists the new jobs, and until the
first of them reports progress (its row in jobs.sqlite, which the sidebar polls every
2 s). Each round starts a server on a fresh workspace (a cold dashboard, as a first
visit is), clicks once, then cancels the jobs and waits for their workers to end.

Usage: .venv/bin/python -m benchmarks.launch_feedback [--rounds 3] [--max-jobs 2]
Needs /usr/bin/chromium (scripts/screenshots.py drives it).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from target_core.config import PROJECT_ROOT, load_settings
from target_core.engine.jobs import JobStore
from target_core.engine.workers import cancel

_spec = importlib.util.spec_from_file_location(
    "screenshots", PROJECT_ROOT / "scripts" / "screenshots.py")
assert _spec is not None and _spec.loader is not None
screenshots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(screenshots)

SIDEBAR = "[data-testid='stSidebar']"
_LISTED = """() => {
  const bar = document.querySelector("[data-testid='stSidebar']");
  return !!bar && /\\b\\d+ queued\\b|running:|\\bqueued\\b/.test(bar.innerText);
}"""
FLOWS = {
    "demo suite (Home, 12 jobs)": ("", "Run the demo suite"),
    "Run page, 4 retrievers on demo-qa": (
        "/run?dataset=demo-qa&retriever=bm25&retriever=tfidf&retriever=dense:minilm"
        "&retriever=hybrid", "Launch"),
}


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _first_progress(workspace: Path, since: float, timeout: float = 120) -> float:
    """Seconds from `since` (monotonic) until some job of `workspace` reports progress."""
    store = JobStore.in_workspace(workspace)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(job.done or job.total for job in store.list_jobs()):
            return time.monotonic() - since
        time.sleep(0.05)
    return float("nan")


def _stop_jobs(workspace: Path, timeout: float = 180) -> None:
    settings = load_settings(workspace)
    store = JobStore.in_workspace(workspace)
    for job in store.list_jobs():
        cancel(job.job_id, settings)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        store.reap()
        if not any(job.active for job in store.list_jobs()):
            return
        time.sleep(0.3)


def one_round(path: str, button: str, max_jobs: int) -> tuple[float, float]:
    """(seconds until the sidebar lists the jobs, until the first job reports progress)."""
    workspace = Path(tempfile.mkdtemp(prefix="launch-feedback-")) / "ws"
    env = {"TARGET_WORKSPACE": str(workspace), "TARGET_MAX_JOBS": str(max_jobs)}
    try:
        with screenshots.serve_app(env) as base, \
                screenshots.browser_page(width=1500, height=1100) as page:
            screenshots.visit(page, base + path)
            assert "queued" not in page.locator(SIDEBAR).inner_text()
            started = time.monotonic()
            page.get_by_role("button", name=button, exact=True).click()
            page.wait_for_function(_LISTED, timeout=120_000, polling=20)
            listed = time.monotonic() - started
            progress = _first_progress(workspace, started)
            screenshots.settle(page, 300)
    finally:
        _stop_jobs(workspace)
    return listed, progress


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-jobs", type=int, default=2, help="TARGET_MAX_JOBS")
    args = parser.parse_args(argv)
    print(f"load average at start: {loadavg()}; TARGET_MAX_JOBS={args.max_jobs}")
    for name, (path, button) in FLOWS.items():
        figures = [one_round(path, button, args.max_jobs) for _ in range(args.rounds)]
        listed = [f[0] for f in figures]
        progress = [f[1] for f in figures]
        print(f"{name}: jobs listed median {statistics.median(listed):.2f} s "
              f"({', '.join(f'{s:.2f}' for s in listed)}); first progress median "
              f"{statistics.median(progress):.2f} s "
              f"({', '.join(f'{s:.2f}' for s in progress)}); load {loadavg()}")
    print(f"load average at end: {loadavg()}")


if __name__ == "__main__":
    main()
