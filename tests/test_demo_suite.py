"""The demo suite: every demo dataset × bm25, tfidf, dense:minilm and hybrid with the
heuristic generator, launched as jobs from the Home page or `demo-suite`."""

from __future__ import annotations

from pathlib import Path

import pytest

from target_core.actions.runs import suite_summary
from target_core.engine.workers import Launch
from target_core.experiments.suite import DEMO_RETRIEVERS, demo_suite_configs

ROOT = Path(__file__).resolve().parent.parent


def test_the_suite_covers_every_demo_dataset_and_retriever() -> None:
    configs = demo_suite_configs()
    assert len(configs) == 12
    assert {(c.dataset, c.retriever) for c in configs} == {
        (d, r) for d in ("demo-qa", "demo-fact", "demo-sql") for r in DEMO_RETRIEVERS}
    assert all(c.generation is not None and c.generation.generator == "heuristic"
               for c in configs)


def test_summary_counts_what_launching_did() -> None:
    job = object()
    launched = [Launch(job), Launch(job), Launch(job, existing=True),  # type: ignore[arg-type]
                Launch(None, reused_run=object())]  # type: ignore[arg-type]
    assert suite_summary(launched).startswith(
        "Demo suite: 2 run(s) launched, 1 already queued or running, 1 complete already.")


def test_home_page_button_launches_the_suite(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    """From the app's default route (/), as a first visit opens it; launching is faked
    here (a real suite takes about a minute: tests/test_jobs.py covers real jobs)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import target_core.actions.runs as suite  # the page's action launches through this name

    calls = []

    def fake(settings, spawn=True):
        calls.append(settings.workspace)
        return [Launch(None, reused_run=object())] * 12  # type: ignore[arg-type]

    monkeypatch.setattr(suite, "launch_demo_suite", fake)
    monkeypatch.setenv("TARGET_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    assert [t.value for t in at.title] == ["TARGET Explorer"]
    at.button(key="home-demo-suite").click().run()
    assert len(calls) == 1 and not at.error and not at.exception
    assert "12 complete already" in at.success[0].value
