"""A dataset added on the Datasets page, by a folder path on the server and by an
uploaded zip, is selectable and runnable at once: bm25 launched from the Run page runs
on each in a worker process, with no server restart. Debian's chromium via Playwright,
a real `streamlit run`.

Skipped where chromium is absent, except under CI (CI=true), where its absence fails.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

from browser_support import require_chromium, screenshots, wait_for_jobs

require_chromium()

ROOT = Path(__file__).resolve().parent.parent
EXCEPTION = "[data-testid='stException']"


def _demo_copy(folder: Path, name: str | None) -> Path:
    """demo-qa under another folder; `name` in its dataset.json (None: left as demo-qa,
    so the page's Name field must give it one)."""
    shutil.copytree(ROOT / "data" / "demo" / "demo-qa", folder)
    if name:
        meta = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
        (folder / "dataset.json").write_text(json.dumps(meta | {"name": name}),
                                             encoding="utf-8")
    return folder


def _open_form(page) -> None:
    field = page.get_by_label("Folder or archive on the server", exact=True)
    if not field.is_visible():
        page.get_by_text("Add a dataset").click()
        field.wait_for()


def _fill(page, label: str, value: str) -> None:
    """Type into a text field and leave it, then wait for the rerun that commits it: a
    button clicked while the field still has focus can be ignored (Streamlit's issue
    8725; seen here once in a full run: the "not a dataset" error never came)."""
    field = page.get_by_label(label, exact=True)
    field.fill(value)
    field.press("Tab")
    screenshots.settle(page)


def _launch_bm25(page, base: str, dataset: str) -> None:
    screenshots.visit(page, f"{base}/run?dataset={dataset}")
    assert f"on {dataset} (qa, 440 tables, 260 queries)" in page.locator("body").inner_text()
    retrievers = page.locator("[data-testid='stMultiSelect']").first
    retrievers.get_by_role("button", name="Remove tfidf").click()
    screenshots.settle(page, 300)
    page.get_by_role("button", name="Launch").click()
    page.get_by_text("1 job(s) launched").wait_for(timeout=60_000)
    screenshots.settle(page)
    assert page.locator(EXCEPTION).count() == 0


def test_datasets_added_by_path_and_upload_run_without_a_restart(tmp_path: Path) -> None:
    from target_core.engine.store import RunStore

    out = Path(os.environ.get("TARGET_SCREENSHOTS", tmp_path / "shots"))
    out.mkdir(parents=True, exist_ok=True)
    workspace = tmp_path / "ws"
    by_path = _demo_copy(tmp_path / "server" / "my-qa", "my-qa")
    upload_src = _demo_copy(tmp_path / "upload" / "qa-copy", None)
    archive = tmp_path / "qa-copy.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for file in sorted(upload_src.iterdir()):
            zipped.write(file, f"qa-copy/{file.name}")

    with screenshots.serve_app({"TARGET_WORKSPACE": str(workspace)}) as base, \
            screenshots.browser_page(width=1500, height=1100) as page:
        screenshots.visit(page, f"{base}/datasets?dataset=demo-qa")
        # a path that is no dataset: the error names it, nothing else changes
        _open_form(page)
        _fill(page, "Folder or archive on the server", str(tmp_path))
        page.get_by_role("button", name="Add dataset").click()
        screenshots.settle(page)
        error = page.locator("[data-testid='stAlertContentError']").inner_text()
        assert f"{tmp_path}: not a dataset" in error
        assert page.locator("h1").first.inner_text().startswith("demo-qa")

        # by path on the server
        _fill(page, "Folder or archive on the server", str(by_path))
        page.screenshot(path=str(out / "datasets_add_form.png"))
        page.get_by_role("button", name="Add dataset").click()
        page.get_by_text("Added my-qa").wait_for(timeout=60_000)
        screenshots.settle(page)
        assert page.locator("h1").first.inner_text().startswith("my-qa")
        assert page.locator(EXCEPTION).count() == 0

        # by upload, named in the form (its dataset.json says demo-qa, which is taken)
        _open_form(page)
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
            str(archive))
        page.get_by_text("qa-copy.zip").first.wait_for()
        _fill(page, "Name (optional)", "my-upload")
        page.get_by_role("button", name="Add dataset").click()
        page.get_by_text("Added my-upload").wait_for(timeout=60_000)
        screenshots.settle(page)
        page.screenshot(path=str(out / "datasets_added_upload.png"))
        assert page.locator("h1").first.inner_text().startswith("my-upload")
        assert page.locator(EXCEPTION).count() == 0

        # both run from the Run page, in worker processes, on the same server
        _launch_bm25(page, base, "my-qa")
        _launch_bm25(page, base, "my-upload")
        jobs = wait_for_jobs(workspace)
        assert [j.status for j in jobs] == ["done", "done"], jobs
        runs = {r.config.dataset: r for r in RunStore.in_workspace(workspace).list_runs()}
        assert set(runs) == {"my-qa", "my-upload"}
        for run in runs.values():
            assert run.status == "complete" and run.n_done == 260
            assert run.config.retriever == "bm25"
        assert runs["my-qa"].metrics["recall@10"] == runs["my-upload"].metrics["recall@10"]
