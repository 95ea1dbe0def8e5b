"""The Failures and Ablations pages driven with AppTest: deep links reopen a run, a
category and an ablation; the ablation button runs the missing variants; a generation run
shows its attribution."""

from __future__ import annotations

from pathlib import Path

import pytest
from jobs_support import wait_for_jobs

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.run_config import GenerationConfig, RunConfig
from target_core.table_view import TableView

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def app(app, tmp_path: Path):
    """The shared AppTest starter and the settings of its workspace."""
    return app, load_settings(tmp_path / "ws")


def _run(settings, **config) -> str:
    return run_retrieval(RunConfig(**config), settings=settings).run.run_id


def test_failures_page_deep_link_to_a_category(app) -> None:
    start, settings = app
    titled = _run(settings, dataset="demo-qa", retriever="bm25", limit=80)
    untitled = _run(settings, dataset="demo-qa", retriever="bm25", limit=80,
                    view=TableView(title=False, section_title=False))
    at = start("pages/failures.py", run=untitled, category="title-dependent")
    assert at.title[0].value == "Failures"
    assert not at.error
    assert at.selectbox(key=f"failures-cat-{untitled}-10").value == "title-dependent"
    cases = at.dataframe[-1].value
    assert len(cases) > 0 and cases["open"].str.startswith(f"query?run={untitled}").all()
    assert not [i for i in at.info if "ablate" in i.value]  # the pair run exists
    assert at.query_params["run"] == [untitled] or at.query_params["run"] == untitled
    # without the pair, a note says how to get title-dependent
    at = start("pages/failures.py", run=titled)
    assert any("Every query" in s.value for s in at.success) or at.dataframe


def test_failures_page_attribution_for_a_generation_run(app) -> None:
    start, settings = app
    config = {"dataset": "demo-fact", "retriever": "bm25", "limit": 60}
    retrieved = _run(settings, **config, generation=GenerationConfig("heuristic"))
    _run(settings, **config, generation=GenerationConfig("heuristic", context="oracle"))
    at = start("pages/failures.py", run=retrieved)
    assert "Retrieval or generation?" in [h.value for h in at.subheader]
    labels = [m.label for m in at.metric]
    assert {"Retrieval-caused", "Generation-caused", "Oracle worse"} <= set(labels)
    assert not at.error


def test_failures_page_counts_explain_each_other(app) -> None:
    """Regression (issue 25): on Spider the headline said 199 queries missed a gold table
    within k = 10 and the attribution table counted 609 "gold missed" (the generator saw
    the top table only, k = 1), captioned "among the table"; nothing said why."""
    from target_core.datasets import load_dataset
    from target_core.engine.store import RunStore
    from target_core.read_models.failures import attribution_view, failures_report

    start, settings = app
    run_id = _run(settings, dataset="demo-sql", retriever="bm25", limit=60,
                  generation=GenerationConfig("heuristic"))
    store = RunStore.in_workspace(settings.workspace)
    run = store.get_run(run_id)
    assert run.config.generation is not None and run.config.generation.context_k == 1
    report = failures_report(store, load_dataset("demo-sql", settings=settings), run_id, 10)
    view = attribution_view(store, run, 10)
    assert view is not None and view.misses is not None
    misses, table = view.misses, view.table.set_index("")
    assert (misses.k, misses.context_k) == (10, 1)
    assert misses.missed_within_k == report.n_failed
    assert misses.missed_in_context == table.loc["a gold table not in the top table"].sum()
    assert misses.between > 0  # the demo has queries whose gold is ranked 2..10
    assert misses.missed_in_context - misses.missed_within_k == misses.between
    assert f"{misses.between} more: their gold was within k = 10 but the generator saw " \
           "only the top table" in misses.note
    assert "in the top table retrieved" in (view.caption or "")
    at = start("pages/failures.py", run=run_id)
    assert not at.exception and not at.error
    captions = [c.value for c in at.caption]
    assert misses.note in captions
    assert not [c for c in captions if "among the table" in c]
    at = start("pages/failures.py", run=run_id, k="1")  # the same cut: the same queries
    assert any(c.value.startswith("The generator was given the top table, the cut of the "
                                  "count above (k = 1): the same") for c in at.caption)


def test_ablations_page_runs_the_missing_variants(app) -> None:
    start, settings = app
    at = start("pages/ablations.py", dataset="demo-qa", retriever="bm25", limit="40")
    assert "No variant" in at.info[0].value
    at.multiselect(key="ablation-rows").set_value(["all rows", "header only"])
    at.multiselect(key="ablation-formats").set_value(["markdown"])
    at.run()
    button = at.button[0]
    assert button.label == "Run 4 missing variant(s)"
    button.click()
    at.run(timeout=120)
    assert not at.exception and not at.error
    assert "Launched 4 variant(s) as jobs" in at.success[0].value
    # each variant is a job in a worker process; when they end, every variant is stored
    jobs = wait_for_jobs(settings.workspace)
    assert len(jobs) == 4 and {j.status for j in jobs} == {"done"}
    at.run()
    assert at.button[0].label == "All variants are stored"
    assert "Table 2 layout" in [h.value for h in at.subheader]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Only with the title"]) > 0
    # the URL keeps the settings
    assert at.query_params["retriever"] in ("bm25", ["bm25"])


def test_run_choices_are_kept_one_after_another(app) -> None:
    """Choosing run B, then run C, lands on C (the URL echo must not reset the widget),
    on the Failures and the Query page; a link (a changed URL) still wins."""
    start, settings = app
    runs = [_run(settings, dataset="demo-qa", retriever=spec, limit=30)
            for spec in ("bm25", "tfidf", "no-context")]
    for page, key in (("pages/failures.py", "failures-run"), ("pages/query.py", "query-run")):
        at = start(page)
        for run_id in (runs[1], runs[0], runs[2]):
            at.sidebar.selectbox(key=key).set_value(run_id).run()
            assert not at.exception
            assert at.sidebar.selectbox(key=key).value == run_id, page
            assert at.query_params["run"] in (run_id, [run_id])
        at.query_params["run"] = runs[0]
        at.run()
        assert at.sidebar.selectbox(key=key).value == runs[0]
