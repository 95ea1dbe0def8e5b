"""The Query page's "What if?" in a real browser: open a failed query, add its gold
table's title words to it, probe, and see the gold table's new ranks (those the library
computes), then save the probe as a note on the query."""

from __future__ import annotations

from pathlib import Path

from browser_support import require_chromium, screenshots

require_chromium()


def test_editing_a_failed_query_shows_the_gold_tables_new_ranks(tmp_path: Path) -> None:
    from target_core.analysis.probe import probe
    from target_core.config import load_settings
    from target_core.datasets import load_dataset
    from target_core.engine.notes import notes
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import RunConfig
    from target_core.table_view import TableView

    workspace = tmp_path / "ws"
    settings = load_settings(workspace)
    no_title = TableView(title=False, section_title=False)
    run = run_retrieval(RunConfig("demo-qa", "bm25", view=no_title, limit=40),
                        settings=settings).run
    store = RunStore.in_workspace(workspace)
    failed = next(r for r in store.iter_results(run.run_id) if r.failed_at(10))
    dataset = load_dataset("demo-qa", settings)
    query = dataset.query(failed.query_id)
    gold = dataset.table(query.gold[0])
    edited = f"{query.query} {gold.title}"
    expected = probe(store, dataset, settings, query.query_id, edited, "title on")
    (rank,) = [r for r in expected.ranks if r.table == "/".join(gold.key)]
    assert rank.original == failed.gold_ranks[gold.key] and rank.probed is not None
    assert rank.probed < rank.original  # the title words bring it up, under "title on"

    with screenshots.serve_app({"TARGET_WORKSPACE": str(workspace)}) as base, \
            screenshots.browser_page(1500, 1100) as page:
        screenshots.visit(page, f"{base}/query?run={run.run_id}&query={query.query_id}")
        page.get_by_role("heading", name="What if?").scroll_into_view_if_needed()
        page.get_by_label("Query text", exact=True).fill(edited)
        option = page.get_by_role("option", name="title on", exact=True)
        for _ in range(5):  # a rerun still drawing the page can close the list: open again
            page.get_by_label("Table view", exact=True).click()
            try:
                option.wait_for(timeout=5000)
                break
            except Exception:  # noqa: BLE001 - playwright's TimeoutError; try again
                screenshots.settle(page)
        option.click()
        page.get_by_role("button", name="Probe", exact=True).click()
        screenshots.settle(page)
        assert page.locator("[data-testid='stException']").count() == 0
        note = page.get_by_label("Note", exact=True)
        shown = note.input_value()
        assert f"bm25 {rank.table}: {rank.original} → {rank.probed}" in shown, shown
        page.screenshot(path=str(tmp_path / "what-if.png"))
        page.get_by_role("button", name="Save as a note on this query").click()
        screenshots.settle(page)
        assert "Notes on this query" in page.locator("body").inner_text()
    (saved,) = notes(store, run.config.dataset, query.query_id)
    assert saved["text"] == shown and saved["probe"]["change"] == "title on"
