"""First visits of pages on an existing workspace, in AppTest (prints; not a test).

    TARGET_WORKSPACE=WS .venv/bin/python -m benchmarks.first_render [PAGE?PARAMS ...]

Each page gets two fresh processes. In the first, the page is the process's first
script run (every import included); in the second, the Home page runs first (the
server's imports are done, as when a user opens the page from Home), then the page
once (its first visit) and again in a new session (what the process kept). Pages
default to Compare (its default runs; and the newest four complete runs of the dataset
with the most, when it has three or more) and the Benchmark builder. Target: every first visit
under 1 s on the demo workspace, under 2 s at 100,000 tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from urllib.parse import parse_qsl

from benchmarks.page_render import render_seconds


def _one(spec: str, warm: bool) -> list[float]:
    page, _, query = spec.partition("?")
    params = dict(parse_qsl(query))
    if not warm:
        return [render_seconds(f"pages/{page}.py", params)]
    render_seconds("pages/home.py", {})
    return [render_seconds(f"pages/{page}.py", params) for _ in range(2)]


def default_pages() -> list[str]:
    from target_core.config import load_settings
    from target_core.engine.store import RunStore

    by_dataset: dict[str, list[str]] = {}
    for run in RunStore.in_workspace(load_settings().workspace).list_runs(status="complete"):
        by_dataset.setdefault(run.dataset_fingerprint, []).append(run.run_id)
    pages = ["compare"]
    several = max(by_dataset.values(), key=len, default=[])
    if len(several) >= 3:
        pages.append("compare?runs=" + ",".join(reversed(several[:4])))
    return [*pages, "benchmark_builder"]


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--one"]:  # the child: print its figures as JSON
        print(json.dumps(_one(args[2], args[1] == "warm")))
        return
    for spec in args or default_pages():
        figures = [json.loads(subprocess.run(
            [sys.executable, "-m", "benchmarks.first_render", "--one", mode, spec],
            check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            for mode in ("cold", "warm")]
        (cold,), (first, again) = figures
        print(f"{spec}: new process {cold:.2f} s · first visit after Home {first:.2f} s · "
              f"again {again:.2f} s")


if __name__ == "__main__":
    main()
