"""How much of a cold deep link is Streamlit's own start in the browser (prints; not a test).

    .venv/bin/python -m benchmarks.deep_link_floor --workspace DIR [--repeats 5] [--json]

A deep link opened in a new browser context (a browser that never saw the dashboard)
loads Streamlit's scripts, opens its websocket, starts a session and runs the page. To
tell what the dashboard costs from what any Streamlit app costs, this serves side by side
the dashboard (as `make run` does, on the workspace DIR) and a bare Streamlit app of one
line (`st.write`), and opens, alternating, in a new context each, the bare app's `/` and
every page's deep link (benchmarks.page_visits' links, on demo-qa and its runs). Each
visit is split, on the page's own clock (ms since navigation start), into:

* scripts: until the last of Streamlit's script and style files loaded before the
  first run has loaded;
* session: until the script state first reads `running` (websocket, session, the
  server starting the run);
* run: until the state settles on `notRunning` (the script's run, its messages drawn);
* draw: until no element waits for its code any more (page_visits.finished_at's rule:
  a chart's or grid's code is loaded and run when a page in the tab first draws one).

The bare app's total is the floor a deep link into any Streamlit app pays on this
machine; what a page adds over it is the dashboard's own.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.page_visits import (
    BARE_TITLE,
    bare_app,
    browser,
    page_specs,
    session,
    subjects,
    wait_finished,
)
from scripts.screenshots import serve_app

PHASES = ("scripts", "session", "run", "draw", "total")
DATASET = "demo-qa"


def visit(chromium: Any, url: str) -> dict[str, float]:
    """One cold deep link to `url`, split into its phases (seconds)."""
    with session(chromium) as page:
        page.goto(url)
        total, _ = wait_finished(page, 0.0, url)
        log, loaded = page.evaluate(
            "() => [window.__pv.log, performance.getEntriesByType('resource')"
            ".filter(e => /\\.(js|css)$/.test(new URL(e.name).pathname))"
            ".map(e => e.responseEnd)]")
    return phases([(t, state) for t, state in log], loaded, total)


def phases(log: Sequence[tuple[float, str | None]], loaded: Sequence[float], total: float
           ) -> dict[str, float]:
    """The phases (seconds) of a visit that took `total` seconds, from its script-state
    log and the times its script and style files finished loading (ms since navigation
    start). Files loaded after the first run began (a chart's or a grid's code, loaded
    when first drawn) belong to the run or the drawing; the run ends when the state last
    became `notRunning`, and the rest of the visit is drawing."""
    running = next(t for t, state in log if state == "running")
    scripts = max([0.0, *(t for t in loaded if t < running)])
    ended = min(log[-1][0] / 1000, total)
    return {"scripts": scripts / 1000, "session": (running - scripts) / 1000,
            "run": ended - running / 1000, "draw": total - ended, "total": total}


def measure(workspace: Path, repeats: int) -> dict[str, list[dict[str, float]]]:
    env = {"TARGET_WORKSPACE": str(workspace)}
    with browser() as chromium, serve_app(env) as ours, bare_app() as bare:
        runs, query = subjects(workspace, DATASET)
        links = {f"{BARE_TITLE} `/`": bare + "/"} | {
            f"{spec.title} `{spec.link()}`": ours + spec.link()
            for spec in page_specs(DATASET, runs, query)}
        for url in links.values():  # each server's first visit (cold caches) left out
            visit(chromium, url)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in links}
        for _ in range(repeats):  # alternating, so load changes hit all alike
            for name, url in links.items():
                results[name].append(visit(chromium, url))
    return results


def table(results: dict[str, list[dict[str, float]]]) -> str:
    lines = ["| link | " + " | ".join(f"{p} s (median)" for p in PHASES) + " | total min-max |",
             "|---|" + "---|" * (len(PHASES) + 1)]
    for name, visits in results.items():
        medians = [statistics.median(v[p] for v in visits) for p in PHASES]
        totals = [v["total"] for v in visits]
        lines.append(f"| {name} | " + " | ".join(f"{m:.2f}" for m in medians)
                     + f" | {min(totals):.2f}-{max(totals):.2f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, required=True,
                        help="a workspace with two complete demo-qa runs (the demo suite's)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    load = Path("/proc/loadavg").read_text().split()[:3]
    results = measure(args.workspace, args.repeats)
    print(json.dumps(results, indent=1) if args.json else table(results))
    print(f"load average before: {' '.join(load)}; after: "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}; "
          f"{args.repeats} repetition(s), alternating")


if __name__ == "__main__":
    main()
