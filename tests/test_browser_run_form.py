"""The Run form is a view, in a real browser (issue 28): k and Queries survive a trip to
Overview and Failures through the sidebar, and a link's k opens in the form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import require_chromium, screenshots

require_chromium()


def _value(page: Any, label: str) -> str:
    return page.get_by_label(label, exact=True).input_value()


def _sidebar(page: Any, title: str) -> None:
    page.locator("[data-testid='stSidebarNav'] a", has_text=title).first.click()
    screenshots.settle(page)


def test_run_form_survives_navigation_and_opens_from_a_link(tmp_path: Path) -> None:
    env = {"TARGET_WORKSPACE": str(tmp_path / "ws")}
    with screenshots.serve_app(env) as base, \
            screenshots.browser_page(width=1500, height=1100) as page:
        screenshots.visit(page, f"{base}/run?dataset=demo-sql")
        for label, value in (("k (tables per query)", "5"), ("Queries (0 = all)", "50")):
            page.get_by_label(label, exact=True).fill(value)
            page.get_by_label(label, exact=True).press("Enter")
            screenshots.settle(page)
        assert "k=5" in page.url and "limit=50" in page.url
        for title in ("Overview", "Failures", "Run"):
            _sidebar(page, title)
        assert page.locator("h1").first.inner_text().strip() == "Run"
        assert _value(page, "k (tables per query)") == "5"
        assert _value(page, "Queries (0 = all)") == "50"
        assert "k=5" in page.url and "limit=50" in page.url
        page.screenshot(path=str(tmp_path / "run-back.png"))

        screenshots.visit(page, f"{base}/run?dataset=demo-qa&k=7")
        assert _value(page, "k (tables per query)") == "7"
        assert "on demo-qa" in page.locator("[data-testid='stMain']").inner_text()
        page.screenshot(path=str(tmp_path / "run-link.png"))
