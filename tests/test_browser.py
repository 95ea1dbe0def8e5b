"""The dashboard in a real browser (Debian's chromium via Playwright).

Skipped where chromium is absent, except under CI (CI=true), where its absence fails:
`make test` installs it when it can.
"""

from __future__ import annotations

import os
from pathlib import Path

from browser_support import require_chromium, screenshots, wait_for_jobs

from pages._ui import preload

require_chromium()


def _shot_dir(tmp_path: Path) -> Path:
    """Screenshots go to $TARGET_SCREENSHOTS when set (to look at them), else a temp dir."""
    return Path(os.environ.get("TARGET_SCREENSHOTS", tmp_path))


def test_deep_links_and_every_demo_dataset(tmp_path: Path) -> None:
    out = _shot_dir(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    env = {"TARGET_WORKSPACE": str(tmp_path / "ws")}
    targets = [  # the first request deep-links into a freshly started server
        "datasets?dataset=demo-sql&section=Queries",
        "",
        "datasets?dataset=demo-qa",
        "datasets?dataset=demo-fact&section=Tables",
    ]
    with screenshots.serve_app(env) as base, screenshots.browser_page() as page:
        for target in targets:
            screenshots.visit(page, f"{base}/{target}")
            page.screenshot(path=str(out / screenshots.file_name(target)), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0, target
            assert "Page not found" not in page.locator("body").inner_text(), target
            sidebar = page.locator("[data-testid='stSidebar']").inner_text()
            assert "TARGET Explorer" in sidebar, f"app.py did not run for {target}"
            heading = page.locator("h1").first.inner_text().strip()
            if target:
                assert heading == target.split("dataset=")[1].split("&")[0]
            else:
                assert heading == "TARGET Explorer"


def test_launch_runs_then_overview_and_query(tmp_path: Path) -> None:
    out = _shot_dir(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    env = {"TARGET_WORKSPACE": str(tmp_path / "ws")}
    with screenshots.serve_app(env) as base, screenshots.browser_page() as page:
        screenshots.visit(page, f"{base}/run?dataset=demo-qa")
        page.get_by_role("button", name="Launch").click()
        page.get_by_text("job(s) launched").wait_for(timeout=120_000)
        assert all(j.status == "done" for j in wait_for_jobs(tmp_path / "ws"))
        screenshots.settle(page)
        page.screenshot(path=str(out / "run_launched.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        for target in ("overview", "query?dataset=demo-qa"):
            screenshots.visit(page, f"{base}/{target}")
            page.screenshot(path=str(out / screenshots.file_name(target)), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0, target
            assert "Page not found" not in page.locator("body").inner_text(), target
        assert page.locator("h1").first.inner_text().startswith("Query ")


def test_query_page_shows_generated_sql_and_answers(tmp_path: Path) -> None:
    """A failed text-to-SQL query and a QA query of generation runs, in the browser."""
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import GenerationConfig, RunConfig

    out = _shot_dir(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    workspace = tmp_path / "ws"
    settings = load_settings(workspace)
    store = RunStore.in_workspace(workspace)
    runs = {name: run_retrieval(RunConfig(name, "bm25", limit=40,
                                          generation=GenerationConfig("heuristic")),
                                settings=settings).run for name in ("demo-sql", "demo-qa")}
    failed_sql = next(r.query_id for r in store.iter_results(runs["demo-sql"].run_id)
                      if r.generation["sql"]["error_class"] != "correct")
    qa_query = next(iter(store.iter_results(runs["demo-qa"].run_id))).query_id
    pages = {f"query?run={runs['demo-sql'].run_id}&query={failed_sql}": "Generated SQL",
             f"query?run={runs['demo-qa'].run_id}&query={qa_query}": "Generated answer"}
    with screenshots.serve_app({"TARGET_WORKSPACE": str(workspace)}) as base, \
            screenshots.browser_page() as page:
        for target, heading in pages.items():
            screenshots.visit(page, f"{base}/{target}")
            page.get_by_role("heading", name=heading).wait_for(timeout=60_000)
            screenshots.settle(page)
            page.screenshot(path=str(out / screenshots.file_name(target)), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0, target
            assert "heuristic (offline baseline, no model)" in page.locator("body").inner_text()


_SKELETONS = """(() => {
  window.__shown = [];
  new MutationObserver(() => document.querySelectorAll("[data-testid='stSkeleton']")
      .forEach(e => { if (e.checkVisibility()) window.__shown.push(location.pathname); }))
    .observe(document, {subtree: true, childList: true});
})();"""
_SCRIPTS = ("() => performance.getEntriesByType('resource').map(e => e.name)"
            ".filter(n => n.endsWith('.js'))")


def test_after_the_first_page_no_page_waits_for_element_code(tmp_path: Path) -> None:
    """In chromium: Home draws; the warm-up then loads the code (plotly's once) unseen;
    every other page opened from the sidebar afterwards fetches no script and shows no
    grey placeholder; the warm-up is not drawn again in the session."""
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import RunConfig

    workspace = tmp_path / "ws"
    settings = load_settings(workspace)
    for retriever in ("bm25", "tfidf"):  # Compare, Query and Failures draw their charts
        run_retrieval(RunConfig("demo-qa", retriever, limit=20), settings=settings)
    with screenshots.serve_app({"TARGET_WORKSPACE": str(workspace)}) as base, \
            screenshots.browser_page(width=1500, height=1100) as page:
        page.add_init_script(_SKELETONS)
        screenshots.visit(page, f"{base}/")
        page.wait_for_function(f"() => window.{preload.WARMED_AT} > 0", timeout=30_000)
        page.evaluate("() => { window.__shown = []; }")  # Home's own, before: first page
        warm = page.locator(f".st-key-{preload.KEY}")
        page.wait_for_function(  # drawn, hidden: every kind, none waiting for its code
            f"""() => document.querySelectorAll(".st-key-{preload.KEY} "
                + "[data-testid='stElementContainer']").length >= {len(preload.WARMED)}
              && !document.querySelector(".st-key-{preload.KEY} [data-testid='stSkeleton']")
              && performance.getEntriesByType('resource')
                   .some(e => e.name.includes('/PlotlyChart.'))""", timeout=60_000)
        assert not warm.is_visible() and warm.bounding_box() is None
        assert sum("/PlotlyChart." in name for name in page.evaluate(_SCRIPTS)) == 1
        assert page.evaluate("() => window.__shown") == []
        loaded = set(page.evaluate(_SCRIPTS))
        links = page.locator("[data-testid='stSidebarNav'] a")
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert len(hrefs) == 10
        for href in hrefs[1:]:
            page.locator(f"[data-testid='stSidebarNav'] a[href='{href}']").click()
            screenshots.settle(page)
            assert page.locator("[data-testid='stException']").count() == 0, href
            assert set(page.evaluate(_SCRIPTS)) == loaded, (href, set(
                page.evaluate(_SCRIPTS)) - loaded)
            assert page.evaluate("() => window.__shown") == [], href
            assert warm.count() == 0, href  # once per session
        assert page.locator("[data-testid='stPlotlyChart']").count() == 0  # last: builder
