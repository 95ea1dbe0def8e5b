"""Every page of the dashboard in a real browser (Debian's chromium via Playwright), with
the main action of each performed by clicking, as a user would: launch a run, open a
failed query, compare two runs, run an ablation, build and review a benchmark item.
Each page must show no exception; a screenshot of each lands in $TARGET_SCREENSHOTS
(else a temp dir). Dataset text with HTML and Markdown tricks must render as inert
text: no script runs, no element is injected.

Skipped where chromium is absent, except under CI (CI=true), where its absence fails:
`make test` installs it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from browser_support import require_chromium, screenshots, wait_for_jobs

require_chromium()

EXCEPTION = "[data-testid='stException']"
LONG = 180_000  # ms: a click that runs retrieval on a busy 2-core CI machine
WIDER = {"matrix": "a column per run, by design"}
"""Pages whose tables may be wider than a 1,500-pixel screen, and why."""
_GRID_WIDTHS = """() => Array.from(document.querySelectorAll("[data-testid='stDataFrame']"))
  .filter(e => e.checkVisibility()).map(e => {
    const s = e.querySelector('.dvn-scroller');
    const head = Array.from(e.querySelectorAll('[role=columnheader]')).map(h => h.innerText);
    return s ? [s.scrollWidth, s.clientWidth, head.join('|')] : null; }).filter(x => x)"""


def _out(tmp_path: Path) -> Path:
    out = Path(os.environ.get("TARGET_SCREENSHOTS", tmp_path / "shots"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def _check(page: Any, out: Path, name: str, *, fits: bool = True) -> str:
    """Screenshot the page, assert it ran through app.py and shows no exception, and with
    `fits` that its tables fit the page (unless WIDER names it)."""
    page.screenshot(path=str(out / f"tour_{name}.png"), full_page=True)
    body = page.locator("body").inner_text()
    assert page.locator(EXCEPTION).count() == 0, f"{name}: {body[:2000]}"
    assert "Page not found" not in body, name
    assert "TARGET Explorer" in page.locator("[data-testid='stSidebar']").inner_text(), name
    if fits and name not in WIDER:  # no column scrolled out of sight
        wide = [g for g in page.evaluate(_GRID_WIDTHS) if g[0] > g[1]]
        assert not wide, f"{name}: tables wider than the page (scroll, visible, columns): {wide}"
    return body


def test_every_page_with_its_main_action(tmp_path: Path) -> None:
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import RunConfig
    from target_core.table_view import TableView

    out = _out(tmp_path)
    workspace = tmp_path / "ws"
    settings = load_settings(workspace)
    # A second run to compare with the one the browser launches (computed here: faster).
    untitled = run_retrieval(RunConfig("demo-qa", "bm25", limit=60, view=TableView(
        title=False, section_title=False, table_id=False)), settings=settings).run.run_id
    store = RunStore.in_workspace(workspace)
    env = {"TARGET_WORKSPACE": str(workspace)}
    with screenshots.serve_app(env) as base, screenshots.browser_page(1500, 1800) as page:
        screenshots.visit(page, f"{base}/")
        _check(page, out, "home")

        screenshots.visit(page, f"{base}/datasets?dataset=demo-sql&section=Tables")
        _check(page, out, "datasets")

        # Run: launch the default retrievers on demo-qa.
        screenshots.visit(page, f"{base}/run?dataset=demo-qa")
        page.get_by_role("button", name="Launch").click()
        page.get_by_text("job(s) launched").wait_for(timeout=LONG)
        assert all(j.status == "done" for j in wait_for_jobs(workspace, LONG / 1000))
        screenshots.settle(page)
        _check(page, out, "run")
        launched = [r for r in store.list_runs() if r.run_id != untitled]
        assert launched and all(r.n_done == r.n_queries for r in launched)
        titled = next(r.run_id for r in launched if r.config.retriever == "bm25")

        screenshots.visit(page, f"{base}/overview?dataset=demo-qa")
        _check(page, out, "overview")

        # Failures: the untitled run's failures, then open one failed query.
        screenshots.visit(page, f"{base}/failures?run={untitled}")
        body = _check(page, out, "failures")
        assert "Drill down" in body
        failed = next(r.query_id for r in store.iter_results(untitled)
                      if r.best_rank is None or r.best_rank > 10)
        screenshots.visit(page, f"{base}/query?run={untitled}&query={failed}")
        body = _check(page, out, "query")
        assert page.locator("h1").first.inner_text().strip() == f"Query {failed}"

        # Compare the launched bm25 run with the untitled one.
        screenshots.visit(page, f"{base}/compare?dataset=demo-qa&runs={titled},{untitled}")
        body = _check(page, out, "compare")
        assert "win" in body.lower()

        # All runs: every run of demo-qa side by side, a cell opens the query in its run
        screenshots.visit(page, f"{base}/matrix?dataset=demo-qa&outcome=split")
        body = _check(page, out, "matrix")
        assert "All runs" in body and "most disputed" in body.lower()

        # Ablations: run the missing variants of bm25 on 30 queries.
        screenshots.visit(page, f"{base}/ablations?dataset=demo-qa&retriever=bm25&limit=30")
        page.get_by_role("button", name="missing variant").click()
        page.get_by_text("as jobs").first.wait_for(timeout=LONG)
        # the variants work as jobs; when the last ends, the page redraws with them all
        page.get_by_text("All variants are stored").wait_for(timeout=LONG)
        screenshots.settle(page)
        body = _check(page, out, "ablations")
        assert "All variants are stored" in body
        # the ablation runs' long view labels: the Run page's list and the Overview fit
        screenshots.visit(page, f"{base}/run?dataset=demo-qa")
        _check(page, out, "run_with_ablations")
        screenshots.visit(page, f"{base}/overview?dataset=demo-qa")
        page.get_by_text("Show every view variant").first.click()
        screenshots.settle(page)
        _check(page, out, "overview_every_variant")

        # Benchmark builder: sample, accept one pair, see the acceptance rate.
        screenshots.visit(page, f"{base}/benchmark_builder")
        page.get_by_role("button", name="Sample and write questions").click()
        review = page.get_by_role("button", name="Review draft")
        review.wait_for(timeout=LONG)
        _check(page, out, "benchmark_sample")
        review.click()  # opens the new draft in Review
        screenshots.settle(page)
        page.get_by_role("button", name="Accept", exact=True).click()
        screenshots.settle(page, 1500)
        page.get_by_role("tab", name="2 · Review").click()
        screenshots.settle(page)
        body = _check(page, out, "benchmark_review")
        assert "100.0%" in body  # one accepted, none rejected


XSS = {
    "script": "<script>window.__xss = 'script'</script>",
    "img": "<img src=x onerror=\"window.__xss = 'img'\">",
    "markdown": "[click](javascript:window.__xss='md') **bold** :red[red] $x$",
    "html_entity": "&lt;b&gt; & <b>bold?</b>",
}


def _hostile_dataset(root: Path) -> Path:
    folder = root / "hostile"
    folder.mkdir(parents=True)
    title = f"Lakes {XSS['script']} {XSS['img']}"
    header = ["name", XSS["img"], "depth"]
    rows = [["Lake <b>One</b>", XSS["script"], 10], ["Lake Two", XSS["markdown"], 20]]
    (folder / "dataset.json").write_text(json.dumps({"name": "hostile", "task": "qa"}))
    (folder / "corpus.jsonl").write_text(json.dumps({
        "database_id": "wiki", "table_id": "lakes<script>", "table": [header, *rows],
        "context": {"title": title, "section_title": XSS["html_entity"]}}) + "\n")
    queries = [{"query_id": f"q{i}", "query": f"How deep is Lake One? {text}",
                "answer": f"10 {XSS['img']}", "table_id": "lakes<script>",
                "database_id": "wiki"} for i, text in enumerate(XSS.values())]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    return folder


def test_hostile_dataset_text_renders_inert(tmp_path: Path) -> None:
    """Cells, titles, ids, questions and answers holding <script>, <img onerror>,
    Markdown links and Streamlit's :color[] syntax are shown as text on every page that
    shows them; no script runs and no <img>/<script> element comes from the data."""
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import GenerationConfig, RunConfig

    out = _out(tmp_path)
    workspace = tmp_path / "ws"
    _hostile_dataset(tmp_path / "datasets")
    os.environ["TARGET_DATASETS"] = str(tmp_path / "datasets")
    try:
        settings = load_settings(workspace)
        run = run_retrieval(RunConfig("hostile", "bm25", generation=GenerationConfig(
            "heuristic")), settings=settings).run.run_id
    finally:
        del os.environ["TARGET_DATASETS"]
    env = {"TARGET_WORKSPACE": str(workspace), "TARGET_DATASETS": str(tmp_path / "datasets")}
    targets = {
        "datasets_tables": "datasets?dataset=hostile&section=Tables&table=wiki/lakes<script>",
        "datasets_queries": "datasets?dataset=hostile&section=Queries&query=q1",
        "query": f"query?run={run}&query=q0",
        "query_img": f"query?run={run}&query=q1",
        "failures": f"failures?run={run}",
        "overview": "overview?dataset=hostile",
    }
    with screenshots.serve_app(env) as base, screenshots.browser_page(height=1800) as page:
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for name, target in targets.items():
            screenshots.visit(page, f"{base}/{target}")
            # its text is long on purpose: that its tables fit is the tour's check
            body = _check(page, out, f"hostile_{name}", fits=False)
            assert page.evaluate("() => window.__xss") is None, name
            injected = page.locator("img[src='x'], script:has-text('__xss')").count()
            assert injected == 0, name
            if name.startswith(("datasets", "query")):
                assert "Lake" in body, name
        assert not dialogs
        # the text itself is visible, as text
        screenshots.visit(page, f"{base}/{targets['query']}")
        assert "<script>" in page.locator("body").inner_text()
