"""Links never lie, in a real browser: an unknown or malformed URL parameter shows an
error naming it (no traceback, no other data), and /home leads to Home. The AppTest
side of every page and parameter is tests/test_links.py."""

from __future__ import annotations

from pathlib import Path

from browser_support import require_chromium, screenshots

require_chromium()


def test_bad_links_show_an_error_naming_the_parameter(tmp_path: Path) -> None:
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.types import RunConfig

    workspace = tmp_path / "ws"
    settings = load_settings(workspace)
    bm25, tfidf = (run_retrieval(RunConfig("demo-qa", spec, limit=20), settings=settings)
                   .run.run_id for spec in ("bm25", "tfidf"))
    targets = {  # the first request deep-links into a freshly started server
        "query?run=nonexistent": "Unknown run 'nonexistent' in the link (?run=nonexistent)",
        f"query?run={bm25}&query=qa-9999": "Unknown query 'qa-9999' in the link",
        "datasets?dataset=demo-q": "Did you mean 'demo-qa'",
        "ablations?dataset=demo-qa&top_k=abc": "Invalid top_k 'abc' in the link",
        "ablations?dataset=demo-qa&limit=-5": "Invalid limit '-5' in the link",
        f"compare?runs={bm25},nonexistent": "Unknown run 'nonexistent'",
        f"compare?runs={bm25},{tfidf}&k=abc": "Invalid k 'abc' in the link",
        f"failures?run={bm25}&k=0": "Invalid k '0' in the link",
        "matrix?dataset=demo-qa&outcome=most": "Unknown outcome 'most' in the link",
    }
    with screenshots.serve_app({"TARGET_WORKSPACE": str(workspace)}) as base, \
            screenshots.browser_page() as page:
        for target, expected in targets.items():
            screenshots.visit(page, f"{base}/{target}")
            page.screenshot(path=str(tmp_path / screenshots.file_name(target)),
                            full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0, target
            body = page.locator("body").inner_text()
            assert expected in body, (target, body[:2000])
            assert "Traceback" not in body, target
            errors = page.locator("[data-testid='stAlertContentError']")
            assert errors.count() == 1, target
            assert page.locator("[data-testid='stDataFrame']").count() == 0, target
        screenshots.visit(page, f"{base}/home")
        body = page.locator("body").inner_text()
        assert "Page not found" not in body
        assert page.locator("h1").first.inner_text().strip() == "TARGET Explorer"
        assert page.locator("[data-testid='stDataFrame']").count() == 1  # the datasets
