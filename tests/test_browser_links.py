"""Links never lie, in a real browser: an unknown or malformed URL parameter shows an
error naming it (no traceback, no other data), and /home leads to Home. The AppTest
side of every page and parameter is tests/test_links.py."""

from __future__ import annotations

from pathlib import Path

from browser_support import require_chromium, screenshots

require_chromium()


def _bad_links(bm25: str, tfidf: str, query: str) -> list[str]:
    """Every page with an unknown or malformed value of each parameter it reads (Home
    reads none): the value must be named, ?PARAM=VALUE, in the page's one error."""
    runs = f"{bm25},{tfidf}"
    return [
        "datasets?dataset=demo-q", "datasets?dataset=demo-qa&section=Nope",
        "datasets?dataset=demo-qa&section=Tables&table=nope/nope",
        "datasets?dataset=demo-qa&section=Queries&query=qa-9999",
        "run?dataset=nonexistent",
        "ablations?dataset=nonexistent", "ablations?dataset=demo-qa&retriever=nonexistent",
        "ablations?dataset=demo-qa&top_k=abc", "ablations?dataset=demo-qa&limit=-5",
        "overview?mode=nonexistent", "overview?mode=reproduce&dataset=nonexistent",
        "overview?mode=reproduce&dataset=demo-qa&paper=nonexistent",
        "overview?slice=nonexistent",
        "query?run=nonexistent", f"query?run={bm25}&query=qa-9999",
        f"query?run={bm25}&query={query}&table=nope/nope",
        f"compare?runs={bm25},nonexistent", f"compare?runs={runs}&dataset=nonexistent",
        f"compare?runs={runs}&k=abc", f"compare?runs={runs}&slice=nonexistent",
        "matrix?dataset=nonexistent", "matrix?dataset=demo-qa&k=abc",
        "matrix?dataset=demo-qa&field=nonexistent",
        "matrix?dataset=demo-qa&field=difficulty&value=nonexistent",
        "matrix?dataset=demo-qa&outcome=most",
        "failures?run=nonexistent", f"failures?run={bm25}&k=0", f"failures?run={bm25}&k=abc",
        f"failures?run={bm25}&category=nonexistent",
        "benchmark_builder?draft=nonexistent", "benchmark_builder?draft=air&pair=999999",
        "benchmark_builder?draft=air&pair=abc", "benchmark_builder?run=nonexistent",
    ]


def _bad_param(target: str) -> str:
    """The URL's last parameter, as the error quotes it: ?name=value (of a list, the
    bad item: ?runs=a,nonexistent is quoted ?runs=nonexistent)."""
    name, value = target.rsplit("?", 1)[1].split("&")[-1].split("=", 1)
    return f"?{name}={value.split(',')[-1]}"


def test_bad_links_show_an_error_naming_the_parameter(tmp_path: Path) -> None:
    from target_core.benchgen.build import sample_draft
    from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, load_templates
    from target_core.config import load_settings
    from target_core.datasets import load_dataset
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import RunConfig

    workspace = tmp_path / "ws"
    settings = load_settings(workspace)
    bm25, tfidf = (run_retrieval(RunConfig("demo-qa", spec, limit=20), settings=settings)
                   .run.run_id for spec in ("bm25", "tfidf"))
    draft = sample_draft(settings, load_dataset("demo-sql", settings),
                 load_templates(EXAMPLE_TEMPLATES_DIR), database="airline", name="air", n=1,
                 seed=0, reference_date=None, writer_spec="template",
                 judge_spec="round-trip", templates_label="examples")[0]
    pair = draft.pairs()[-1]  # the last: unlinked, the Review tab opens on the first
    draft.close()
    from target_core.engine.store import RunStore

    query = next(RunStore.in_workspace(workspace).iter_results(bm25)).query_id
    targets = _bad_links(bm25, tfidf, query)
    with screenshots.serve_app({"TARGET_WORKSPACE": str(workspace)}) as base, \
            screenshots.browser_page() as page:
        for n, target in enumerate(targets):  # the first deep-links into a fresh server
            # an error page stops its script and never reruns itself: settled twice 0.3 s
            # apart is enough (the default 0.8 s twice was 54 of this test's 77 s)
            screenshots.visit(page, f"{base}/{target}", settle_ms=800 if n == 0 else 300)
            assert page.locator("[data-testid='stException']").count() == 0, target
            body = page.locator("body").inner_text()
            assert "Traceback" not in body, target
            errors = page.locator("[data-testid='stAlertContentError']")
            assert errors.count() == 1, (target, body[:2000])
            assert _bad_param(target) in errors.first.inner_text(), (target, body[:2000])
            assert page.locator("[data-testid='stDataFrame']").count() == 0, target
            assert page.locator("[data-testid='stPlotlyChart']").count() == 0, target
        page.screenshot(path=str(tmp_path / "last.png"), full_page=True)
        screenshots.visit(page, f"{base}/home")
        body = page.locator("body").inner_text()
        assert "Page not found" not in body
        assert page.locator("h1").first.inner_text().strip() == "TARGET Explorer"
        # the datasets (the element-code warm-up's hidden grid, pages/_ui/preload.py, aside)
        assert page.locator("[data-testid='stDataFrame']:visible").count() == 1

        # a good link to a draft's pair opens that pair in the Review tab (issue 28)
        screenshots.visit(page, f"{base}/benchmark_builder?draft=air&pair={pair.pair_id}")
        assert page.get_by_role("tab", name="2 · Review").get_attribute("aria-selected") \
            == "true"
        editor = page.locator(f".st-key-bg-edit-air-{pair.pair_id} textarea")
        assert editor.is_visible() and editor.input_value() == pair.question
