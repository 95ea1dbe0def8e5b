"""Page visits in a real browser: every page's first visit, timed (prints; not a test).

    .venv/bin/python -m benchmarks.page_visits --demo [--workspace DIR] [--repeats 3] [--json]
    .venv/bin/python -m benchmarks.page_visits --scale DIR [--repeats 3] [--json]

Serves the dashboard as `make run` does (pages/_ui/launch.py: `streamlit run app.py`
with the legacy pages-folder mode off; scripts/screenshots.py's serve_app) on a free
loopback port against one workspace, and drives Debian's chromium (/usr/bin/chromium)
with Playwright, at 1,500 × 1,100 pixels.

Workspaces: --demo fills a fresh temporary workspace with the demo suite on the bundled
demo data (`python -m target_core demo-suite --wait`: minutes), or reuses
`--workspace DIR`; --scale DIR is a folder made by benchmarks.scale (DIR/ws, with its
two bm25 runs, and the dataset DIR/synthetic).

What is timed, for each page:
* (a) sidebar: in a new browser context, open Home, stay READ_S (2 s; --read) as a user
  reading it, then click the page's sidebar link (back to Home through its link between
  pages): the page's first visit in a session, as a user makes it. Home's own figure is
  its load in the new context. In those seconds the tab loads the code of every kind of
  element (pages/_ui/preload.py); a click within about 1.5 s of Home being drawn waits
  for part of it (--read 0 shows that).
* (b) deep link: a new browser context opens the page's URL with its parameters: a
  browser that never saw the dashboard, which loads Streamlit's scripts first.
* (b') deep link, cached: the same URL in a new tab of one browser context that opened
  Home once before (its HTTP cache holds Streamlit's scripts): a new session, as when
  someone who has used the dashboard opens a shared link.
Each repetition is a new context, so every visit is a first visit in its session; the
first repetition is also the first on a freshly started server (cold caches). Targets
(issue 28, which measured a page's first visit from Home): 1 s on the demo workspace,
2 s at 100,000 tables, for (a), each page's first visit in a session. A new session's
load (Home's in (a), every deep link) also loads Streamlit's own page and scripts, which
a bare one-line Streamlit app takes 0.7-1.7 s to do on this machine by its load (below):
those rows carry no target but how far their median is above the bare app's.

The timing rule (finished_at): chromium logs every change of the `stApp` element's
`data-test-script-state` with its time. A visit starts at the click (or at navigation
start for a deep link) and is over once the state, after having been `running` at least
once since the start, is `notRunning` and has stayed so for QUIET_MS (a page may rerun
itself right after its first run, see pages/_ui/shell.py); its time is when that last
`notRunning` began. Right after a click the old `notRunning` still shows, so it never
counts: the script must be seen running first. A run so short that the browser never
drew its `running` state (its start and end drawn in one render: Home's, once
Streamlit's collection after each run is off) is told apart by the app's websocket
messages: chromium also logs when each arrives, and such a visit ends at the last
message since the start, once QUIET_MS have passed without another and the state is
`notRunning`. Nor is a page drawn while an element still shows Streamlit's grey
placeholder (`stSkeleton`), which stands in for a chart, grid or widget until its code
has loaded: in a new browser context that is plotly's 4.7 MB and the grid's, and the
placeholders outlived the script's run by up to 2 s (the Failures page at 100,000
tables); the visit ends when the last one went, if that is later. Once a page is drawn,
the tab's first page loads the code of every other kind of element (pages/_ui/preload.py)
in a short run of its own, which the user does not see: it is left out (finished_at). A
page that then shows an exception (`stException`) or an error alert
(`stAlertContentError`) is reported as ERROR.

(c) The pages-folder flash: on another freshly started server, the first request is a
deep link to /query?run=...; while it loads, every 50 ms the sidebar's navigation links
are read: a link named "app" or after a file in pages/ ("benchmark builder") is
Streamlit's legacy pages-folder navigation (see pages/_ui/shell.py). Reported: seen or
not, and for how long, for a server started as `make run` does and for a plain
`streamlit run app.py`.

Also reported: the dashboard process's peak resident memory (VmHWM) after the tour, and,
measured in the same rounds as (b) and alternating with it, a deep link to a bare
Streamlit app of one line (BARE_APP, served beside the dashboard): the floor any
Streamlit page pays on this machine under its load at that moment, so that a day when
the machine is slower shows in the table itself (benchmarks.deep_link_floor splits it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from pages._ui.preload import WARMED_AT
from scripts.screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, serve_app

QUIET_MS = 800  # the state must stay notRunning this long (as screenshots.settle waits)
READ_S = 2.0  # on Home before the first sidebar click, as a user reads it (--read)
WARM_DRAWN_MS = 100  # the warm-up's script waits for two drawn checks 100 ms apart
VISIT_TIMEOUT_S = 300
START_TIMEOUT_S = 20  # a click after which no script run starts this long was lost
TARGET_S = {"demo": 1.0, "scale": 2.0}
VIEWPORT = {"width": 1500, "height": 1100}
STATE = "[data-testid='stApp']"
ERRORS = "[data-testid='stException'], [data-testid='stAlertContentError']"
FILE_NAMES = {"app"} | {stem for p in (ROOT / "pages").glob("*.py") for stem in
                        (p.stem, p.stem.replace("_", " "))}

# Installed in every document of a context before its own scripts: logs each change of
# the script state (a MutationObserver sees every one) and, every 50 ms, the sidebar's
# navigation labels when they change. Times are performance.now(): ms since navigation
# start; a click inside the app does not navigate, so the clock runs on.
TRACKER = """(() => {
  const pv = window.__pv = {t0: 0, log: [], nav: [], heard: [], waiting: []};
  const Socket = window.WebSocket;  // when each of the app's messages arrives
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => pv.heard.push(performance.now()));
    }
  };
  let last = null, lastNav = null, lastShown = false;
  const PLACEHOLDER = "[data-testid='stSkeleton']";
  const look = () => {
    const app = document.querySelector("[data-testid='stApp']");
    const state = app ? app.getAttribute("data-test-script-state") : null;
    if (state !== last) { last = state; pv.log.push([performance.now(), state]); }
    const shown = Array.from(document.querySelectorAll(PLACEHOLDER)).some(
      e => e.checkVisibility());
    if (shown !== lastShown) { lastShown = shown; pv.waiting.push([performance.now(), shown]); }
  };
  const labels = () => Array.from(document.querySelectorAll(
      "[data-testid='stSidebarNav'] [data-testid='stSidebarNavLink']"),
    a => { const l = a.querySelector("span[label]"), i = a.querySelector(
      "[data-testid='stIconMaterial']"); return l ? l.getAttribute("label")
      : a.textContent.replace(i ? i.textContent : "", "").trim(); });
  new MutationObserver(look).observe(document, {subtree: true, childList: true,
    attributes: true, attributeFilter: ["data-test-script-state"]});
  setInterval(() => {
    look();
    const nav = labels(), key = JSON.stringify(nav);
    if (key !== lastNav) { lastNav = key; pv.nav.push([performance.now(), nav]); }
  }, 50);
})();"""


@dataclass(frozen=True)
class PageSpec:
    """A page: its sidebar title, its path, its deep link's parameters."""
    title: str
    path: str
    params: dict[str, str] = field(default_factory=dict)

    def link(self) -> str:
        return f"/{self.path}" + (f"?{urlencode(self.params, safe=',')}" if self.params else "")


@dataclass
class Figures:
    page: str
    path: str
    how: str  # "sidebar", "link" or "link, cached"
    seconds: list[float]
    target: float | None  # None: a new session's load, set against the bare app instead
    errors: list[str] = field(default_factory=list)  # what any visit showed instead
    floor: float | None = None  # the bare app's median in the same rounds (links only)

    @property
    def first(self) -> float:
        return self.seconds[0]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def ok(self) -> bool | None:
        """Within the target at its first visit and its median; None without a target."""
        if self.target is None:
            return None if not self.errors else False
        return not self.errors and max(self.first, self.median) < self.target

    @property
    def over_floor(self) -> float | None:
        """How far the median is above the bare app's (links only)."""
        return None if self.floor is None else self.median - self.floor


def finished_at(log: Sequence[tuple[float, str | None]], t0: float, now: float,
                quiet_ms: float = QUIET_MS, heard: Sequence[float] = (),
                waiting: Sequence[tuple[float, bool]] = (),
                warmed_at: float | None = None) -> float | None:
    """Milliseconds from `t0` until the script's last run finished and the page was
    drawn, or None while it may still be going: the state is not `notRunning`, or
    neither a `running` state nor (for a run whose `running` was never drawn) a message
    of the app (`heard`: arrival times) was logged since `t0` yet, or an element still
    waits for its code (`waiting`: when a placeholder began or ceased to show), or the
    last of those came less than `quiet_ms` before `now`.

    The element-code warm-up (pages/_ui/preload.py), which a drawn page starts once per
    tab, is not part of the visit: when it started (`warmed_at`) after `t0`, what came
    from then on is left out, provided the page had been drawn (`notRunning`, no
    placeholder) for WARM_DRAWN_MS by then; otherwise it counts."""
    if warmed_at is not None and warmed_at >= t0:
        before = [(t, state) for t, state in log if t < warmed_at]
        shown = [(t, s) for t, s in waiting if t < warmed_at]
        drawn = bool(before) and before[-1][1] == "notRunning" and not (shown and shown[-1][1])
        since = max([*(t for t, _ in before[-1:]), *(t for t, _ in shown[-1:])],
                    default=warmed_at)
        if drawn and warmed_at - since >= WARM_DRAWN_MS:
            log, waiting, heard = before, shown, [t for t in heard if t < warmed_at]
    last_t, last_state = log[-1]
    if last_state != "notRunning" or (waiting and waiting[-1][1]):
        return None
    if any(state == "running" for t, state in log if t >= t0):
        end = last_t
    elif messages := [t for t in heard if t >= t0]:
        end = max(messages)
    else:
        return None
    end = max([end, *(t for t, shown in waiting if t >= t0 and not shown)])
    return None if now - end < quiet_ms else end - t0


def flash_seconds(nav: Sequence[tuple[float, Sequence[str]]], end: float) -> float | None:
    """How long the sidebar showed file-named navigation (None: never), from the log of
    its labels as they changed, up to `end` (ms)."""
    shown: float | None = None
    total = 0.0
    for t, labels in [*nav, (end, [])]:
        legacy = any(label in FILE_NAMES for label in labels)
        if legacy and shown is None:
            shown = t
        elif not legacy and shown is not None:
            total += t - shown
            shown = None
    seen = any(any(label in FILE_NAMES for label in labels) for _, labels in nav)
    return total / 1000 if seen else None


Visit = tuple[float, str | None]  # seconds, and the error the page shows (None: none)


class NoRun(RuntimeError):
    """No script run started after a click."""


def wait_finished(page: Any, t0: float, label: str) -> Visit:
    """Seconds the visit that began at `t0` (page clock, ms) took (see finished_at), and
    the first exception or error alert on the page then."""
    started = time.monotonic()
    while True:
        now, log, heard, waiting, warmed = page.evaluate(
            "() => [performance.now(), window.__pv.log, window.__pv.heard, "
            f"window.__pv.waiting, window.{WARMED_AT} || null]")
        done = finished_at([(t, s) for t, s in log], t0, now, heard=heard,
                           waiting=[(t, shown) for t, shown in waiting], warmed_at=warmed)
        if done is not None:
            break
        waited = time.monotonic() - started
        if waited > START_TIMEOUT_S and not any(t >= t0 for t, _ in log) \
                and not any(t >= t0 for t in heard):
            raise NoRun(f"{label}: no script run {START_TIMEOUT_S} s after the click")
        if waited > VISIT_TIMEOUT_S:
            raise RuntimeError(f"{label}: not finished after {VISIT_TIMEOUT_S} s: {log[-5:]}")
        page.wait_for_timeout(50)
    errors = page.locator(ERRORS)
    shown = " ".join(errors.first.inner_text().split())[:200] if errors.count() else None
    return done / 1000, shown


BARE_APP = "import streamlit as st\n\nst.write('A bare Streamlit app.')\n"
BARE_TITLE = "bare Streamlit app"
BARE = PageSpec(BARE_TITLE, "")


@contextmanager
def bare_app() -> Iterator[str]:
    """A Streamlit app of one line (BARE_APP), served as plain `streamlit run app.py` on
    a free port from a temporary folder; yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="bare-app-") as root:
        (Path(root) / "app.py").write_text(BARE_APP, encoding="utf-8")
        with serve_app(root=Path(root), plain=True) as base:
            yield base


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@contextmanager
def session(chromium: Any) -> Iterator[Any]:
    """A page in a new browser context (a new Streamlit session), tracker installed."""
    context = chromium.new_context(viewport=VIEWPORT)
    context.add_init_script(TRACKER)
    try:
        yield context.new_page()
    finally:
        context.close()


def open_link(chromium: Any, base: str, spec: PageSpec) -> Visit:
    """(b): a cold deep link in a new context, timed from navigation start."""
    with session(chromium) as page:
        page.goto(base + spec.link())
        return wait_finished(page, 0.0, spec.link())


def click_link(page: Any, spec: PageSpec) -> Visit:
    """Click the sidebar link to `spec` and time the page's run (see finished_at). A
    click that starts no script run is made once more, and reported as an error."""
    href = "/" if spec.path == "" else f"/{spec.path}"
    link = page.locator(f"[data-testid='stSidebarNav'] a[href$='{href}']").first
    for attempt in range(2):
        t0 = page.evaluate("() => window.__pv.t0 = performance.now()")
        link.click()
        try:
            seconds, error = wait_finished(page, t0, f"sidebar {spec.title}")
        except NoRun as lost:
            if attempt:
                raise
            first_error = f"{lost} (from {page.url}); clicked again"
            print(first_error, file=sys.stderr)
            continue
        return seconds, error if not attempt else first_error
    raise AssertionError("unreachable")


def open_links_cached(chromium: Any, base: str, specs: Sequence[PageSpec]
                      ) -> dict[str, Visit]:
    """(b'): each deep link in a new tab (a new session) of one context whose cache
    Home filled first."""
    context = chromium.new_context(viewport=VIEWPORT)
    context.add_init_script(TRACKER)
    try:
        first = context.new_page()
        first.goto(base + "/")
        wait_finished(first, 0.0, "Home")
        first.close()
        times: dict[str, Visit] = {}
        for spec in specs:
            page = context.new_page()
            try:
                page.goto(base + spec.link())
                times[spec.title] = wait_finished(page, 0.0, f"{spec.link()} (cached)")
            finally:
                page.close()
        return times
    finally:
        context.close()


def tour(chromium: Any, base: str, specs: Sequence[PageSpec], read_s: float = READ_S
         ) -> dict[str, Visit]:
    """(a): Home in a new context, read for `read_s`, then each page through its
    sidebar link from Home."""
    times: dict[str, Visit] = {}
    with session(chromium) as page:
        page.goto(base + "/")
        times[specs[0].title] = wait_finished(page, 0.0, "Home")
        page.wait_for_timeout(read_s * 1000)
        for spec in specs[1:]:
            times[spec.title] = click_link(page, spec)
            click_link(page, specs[0])
    return times


def flash_check(chromium: Any, base: str, spec: PageSpec) -> dict[str, Any]:
    """(c): the first deep link into a fresh server; file-named navigation seen?"""
    with session(chromium) as page:
        page.goto(base + spec.link())
        seconds, error = wait_finished(page, 0.0, spec.link())
        page.wait_for_timeout(200)
        now, nav = page.evaluate("() => [performance.now(), window.__pv.nav]")
    shown = flash_seconds([(t, labels) for t, labels in nav], now)
    legacy = sorted({label for _, labels in nav for label in labels if label in FILE_NAMES})
    return {"link": spec.link(), "seconds": seconds, "error": error,
            "flash": shown is not None, "flash_s": shown, "file_named_links": legacy}


def dashboard_pid(base: str) -> int:
    """The pid of the dashboard (a child of this process) serving `base`."""
    port = base.rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and port.encode() in argv:
            return int(entry.name)
    raise RuntimeError(f"no dashboard process of this one on port {port}")


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of `pid` (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def page_specs(dataset: str, runs: Sequence[str], query: str) -> list[PageSpec]:
    """Every page in the sidebar's order, with the deep link's parameters."""
    d = {"dataset": dataset}
    return [PageSpec("Home", ""), PageSpec("Overview", "overview", d),
            PageSpec("Datasets", "datasets", d), PageSpec("Run", "run", d),
            PageSpec("Query", "query", {"run": runs[0], "query": query}),
            PageSpec("Compare", "compare", {**d, "runs": ",".join(runs[:2])}),
            PageSpec("All runs", "matrix", d),
            PageSpec("Ablations", "ablations", {**d, "retriever": "bm25"}),
            PageSpec("Failures", "failures", {"run": runs[0]}),
            PageSpec("Benchmark builder", "benchmark_builder")]


def subjects(workspace: Path, dataset: str) -> tuple[list[str], str]:
    """Two complete runs of `dataset` (bm25 first when there is one) and a query the
    first one failed at 10 (else its first query)."""
    from target_core.engine.store import RunStore

    store = RunStore.in_workspace(workspace)
    runs = sorted(store.list_runs(dataset=dataset, status="complete"),
                  key=lambda r: (r.config.retriever != "bm25", r.created_at))
    if len(runs) < 2:
        raise SystemExit(f"{workspace} has {len(runs)} complete run(s) of {dataset}; need 2")
    results = list(store.iter_results(runs[0].run_id))
    failed = [r.query_id for r in results if r.best_rank is None or r.best_rank > 10]
    return [r.run_id for r in runs[:2]], (failed or [results[0].query_id])[0]


def demo_workspace(into: Path) -> Path:
    """A workspace filled with the demo suite (on the bundled demo data only)."""
    workspace = into / "ws"
    env = {k: v for k, v in os.environ.items() if k != "TARGET_DATASETS"}
    env["TARGET_WORKSPACE"] = str(workspace)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "target_core", "demo-suite", "--wait"], cwd=ROOT,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"demo suite: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return workspace


def measure(env: dict[str, str], specs: list[PageSpec], repeats: int, target: float,
            read_s: float = READ_S) -> dict[str, Any]:
    """(c) on one fresh server, then (a) and (b) on another; with the server's peak RSS."""
    with browser() as chromium:
        flash: dict[str, dict[str, Any]] = {}
        for how, plain in (("make run", False), ("streamlit run app.py", True)):
            with serve_app(env, plain=plain) as base:
                flash[how] = flash_check(chromium, base, specs[4])
        sidebar: dict[str, list[Visit]] = {s.title: [] for s in specs}
        link: dict[str, list[Visit]] = {s.title: [] for s in specs}
        cached: dict[str, list[Visit]] = {s.title: [] for s in specs}
        floor: list[Visit] = []
        with serve_app(env) as base, bare_app() as bare:
            open_link(chromium, bare, BARE)  # its server's first visit (cold) left out
            for _ in range(repeats):
                for title, visit in tour(chromium, base, specs, read_s).items():
                    sidebar[title].append(visit)
                for spec in specs:
                    link[spec.title].append(open_link(chromium, base, spec))
                    floor.append(open_link(chromium, bare, BARE))  # alternating
                for title, visit in open_links_cached(chromium, base, specs).items():
                    cached[title].append(visit)
            peak = peak_rss_mb(dashboard_pid(base))
    return {"rows": figures(specs, {"sidebar": sidebar, "link": link, "link, cached": cached},
                            floor, target), "flash": flash, "peak_rss_mb": peak}


def figures(specs: Sequence[PageSpec], visits: dict[str, dict[str, list[Visit]]],
            floor: Sequence[Visit], target: float) -> list[Figures]:
    """The table's rows: `visits` by how ("sidebar", "link", "link, cached") and page,
    then the bare app's (`floor`). The target is for a page's first visit in a session
    (a sidebar visit); a new session's load (Home's sidebar figure, a deep link) is set
    against the bare app's median instead, which was opened cold as they were (the
    links with a warm browser cache get neither)."""
    bare = statistics.median(t for t, _ in floor)
    rows = [Figures(s.title, s.link(), how, [t for t, _ in by_page[s.title]],
                    target if how == "sidebar" and s.path else None,
                    [e for _, e in by_page[s.title] if e],
                    bare if how == "link" or (how == "sidebar" and not s.path) else None)
            for how, by_page in visits.items() for s in specs]
    return [*rows, Figures(BARE_TITLE, "/", "link", [t for t, _ in floor], None,
                           [e for _, e in floor if e])]


def verdict(row: Figures) -> str:
    if row.errors:
        return f"ERROR ({len(row.errors)}): {row.errors[0]}"
    if row.target is None:
        return "" if row.over_floor is None else f"{row.over_floor:+.2f} s on the bare app"
    return "ok" if row.ok else "MISSED"


def table(rows: Sequence[Figures]) -> str:
    lines = ["| page | path | first visit s | median s | target | |", "|---|---|---|---|---|---|"]
    for r in rows:
        path = "/ (its load in a new session)" if r.how == "sidebar" and r.path == "/" else (
            "sidebar link" if r.how == "sidebar" else f"`{r.path}`"
            + (" (browser cache warm)" if r.how == "link, cached" else ""))
        target = "" if r.target is None else f"< {r.target:g} s"
        lines.append(f"| {r.page} | {path} | {r.first:.2f} | {r.median:.2f} | {target} | "
                     f"{verdict(r)} |")
    return "\n".join(lines)


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--demo", action="store_true",
                       help="the bundled demo data, in a new workspace with the demo suite")
    which.add_argument("--scale", type=Path, metavar="DIR",
                       help="a benchmarks.scale folder: DIR/ws and DIR/synthetic")
    parser.add_argument("--workspace", type=Path, metavar="DIR",
                        help="with --demo: reuse this workspace (the demo suite run in it)")
    parser.add_argument("--dataset", help="the dataset the links name (default: demo-qa "
                        "with --demo, synthetic with --scale)")
    parser.add_argument("--repeats", type=int, default=3, help="visits per page (default 3)")
    parser.add_argument("--read", type=float, default=READ_S, metavar="S",
                        help="seconds on Home before the first sidebar click (default "
                             f"{READ_S:g}: a user reading it)")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as JSON (and the table on stderr)")
    args = parser.parse_args(argv)
    if args.workspace and not args.demo:
        parser.error("--workspace goes with --demo")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, not {args.repeats}")
    if args.read < 0:
        parser.error(f"--read must be 0 or more seconds, not {args.read:g}")
    args.dataset = args.dataset or ("demo-qa" if args.demo else "synthetic")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    with tempfile.TemporaryDirectory(prefix="page-visits-") as tmp:
        if args.scale:
            workspace = args.scale / "ws"
            env = {"TARGET_WORKSPACE": str(workspace),
                   "TARGET_DATASETS": str(args.scale / "synthetic")}
        else:
            workspace = args.workspace or demo_workspace(Path(tmp))
            os.environ.pop("TARGET_DATASETS", None)  # the bundled demo data only
            env = {"TARGET_WORKSPACE": str(workspace)}
        runs, query = subjects(workspace, args.dataset)
        specs = page_specs(args.dataset, runs, query)
        result = measure(env, specs, args.repeats, TARGET_S["scale" if args.scale else "demo"],
                         args.read)
    load = Path("/proc/loadavg").read_text().split()[:3]
    out = sys.stderr if args.json else sys.stdout  # with --json, the table goes to stderr
    print(table(result["rows"]) + "\n", file=out)
    for how, flash in result["flash"].items():
        print(f"Pages-folder flash on a fresh server's ({how}) first {flash['link']}: "
              + (f"yes, {flash['flash_s']:.2f} s ({', '.join(flash['file_named_links'])})"
                 if flash["flash"] else "no") + f"; that visit took {flash['seconds']:.2f} s"
              + (f"; ERROR: {flash['error']}" if flash["error"] else ""), file=out)
    print(f"Dashboard peak RSS after the tour: {result['peak_rss_mb']:.0f} MB; "
          f"load average {' '.join(load)}; {args.repeats} repetition(s); Home read "
          f"{args.read:g} s before the first sidebar click", file=out)
    if args.json:
        print(json.dumps({**result, "rows": [asdict(r) | {"first": r.first, "median": r.median,
                                                           "ok": r.ok, "over_floor": r.over_floor}
                                                          for r in result["rows"]],
                          "workspace": str(workspace), "loadavg": load}, indent=1))


if __name__ == "__main__":
    main()
