"""The Benchmark builder page driven with AppTest: sample a draft, review pairs one by one
(accept, edit, reject, skip), accept by the automatic check, export a dataset, then
evaluate a run on it by error source; a deep link reopens one pair of a draft."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jobs_support import wait_for_jobs

from target_core.benchgen.draft import Draft, default_draft_name, list_drafts
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.run_config import GenerationConfig, RunConfig

PAGE = "pages/benchmark_builder.py"


@pytest.fixture
def app(app, tmp_path: Path):
    return app, load_settings(tmp_path / "ws")


def _button(at, label: str):
    """The button whose label is `label`, or starts with it when `label` ends in '…'."""
    if label.endswith("…"):
        return next(b for b in at.button if b.label.startswith(label[:-1]))
    return next(b for b in at.button if b.label == label)


def _sample(at, database: str, n: int, name: str):
    """Launch the sampling job and wait for it; the page as it shows the job's end."""
    at.selectbox(key="bg-database").set_value(database)
    at.number_input(key="bg-n").set_value(n)
    at.text_input(key="bg-name").set_value(name)
    at = _button(at, "Sample and write questions").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    (job,) = [j for j in wait_for_jobs(Path(os.environ["TARGET_WORKSPACE"]))
              if j.spec.get("name") == name]
    assert job.kind == "draft" and job.status == "done", job
    return at.run()


def test_sample_review_export_evaluate(app) -> None:
    start, settings = app
    at = start(PAGE)
    assert at.title[0].value == "Benchmark builder"
    at = _sample(at, "hospital", 2, "hosp")
    assert not at.exception and not at.error, (at.exception, at.error)
    assert any("Draft 'hosp'" in s.value for s in at.success)
    counts = at.dataframe[0].value  # per template; an empty first error is blank
    assert counts["kept"].sum() > 0 and not counts["first_error"].isna().any()

    with Draft.open(settings.workspace, "hosp") as draft:
        pairs = draft.pairs()
    first, second, third = pairs[0], pairs[1], pairs[2]
    at = start(PAGE, draft="hosp")
    assert at.text_area(key=f"bg-edit-hosp-{first.pair_id}").value == first.question
    at.text_area(key=f"bg-edit-hosp-{first.pair_id}").set_value("Edited question?")
    _button(at, "Accept").click().run()
    assert not at.exception
    assert at.query_params["pair"] in (str(second.pair_id), [str(second.pair_id)])
    _button(at, "Reject").click().run()
    _button(at, "Skip").click().run()
    with Draft.open(settings.workspace, "hosp") as draft:
        by_id = {p.pair_id: p for p in draft.pairs()}
        assert by_id[first.pair_id].status == "accepted"
        assert by_id[first.pair_id].final_question == "Edited question?"
        assert by_id[second.pair_id].status == "rejected"
        assert by_id[third.pair_id].status == "pending"  # skipped
    assert at.query_params["pair"] in (str(pairs[3].pair_id), [str(pairs[3].pair_id)])
    rate = next(m for m in at.metric if m.label == "Acceptance rate")
    assert rate.value == "50.0%"

    _button(at, "Accept the…").click().run()  # the automatic check for the rest
    with Draft.open(settings.workspace, "hosp") as draft:
        summary = draft.summary()
    assert summary.pending == 0 and summary.accepted == summary.total - 1

    at.session_state["bg-tab"] = "3 · Export and evaluate"  # the user opens tab 3
    at.run()
    at.text_input(key="bg-export-name").set_value("hosp-sql")
    _button(at, "Export").click().run()
    assert not at.exception and not at.error, at.error
    dataset = load_dataset("hosp-sql", settings)
    assert len(dataset.queries) == summary.accepted
    assert dataset.queries[0].query == "Edited question?"

    run = run_retrieval(RunConfig(dataset="hosp-sql", retriever="bm25", top_k=5,
                                  generation=GenerationConfig("heuristic")),
                        settings=settings).run.run_id
    at = start(PAGE, run=run)
    assert not at.exception and not at.error
    table = at.dataframe[-4].value  # Table 1, by difficulty, definitions, per query
    assert list(table.columns)[:3] == ["Overall", "EA", "Alt"]
    rows = at.dataframe[-1].value
    assert len(rows) == len(dataset.queries)
    assert rows["open"].str.startswith(f"query?run={run}").all()


def test_deep_link_opens_one_pair_and_bad_links_say_so(app) -> None:
    start, settings = app
    at = _sample(start(PAGE), "airline", 1, "air")
    with Draft.open(settings.workspace, "air") as draft:
        pairs = draft.pairs()
    target = pairs[4]
    at = start(PAGE, draft="air", pair=str(target.pair_id))
    assert at.text_area(key=f"bg-edit-air-{target.pair_id}").value == target.question
    at = start(PAGE, draft="air", pair="999999")  # unknown pair: said, nothing else shown
    assert at.error and "'999999'" in at.error[0].value and not at.text_area
    at = start(PAGE, draft="no-such-draft")
    assert at.error and "'no\\-such\\-draft'" in at.error[0].value  # more in test_links.py


def test_sampling_errors_are_shown_and_nothing_is_replaced(app, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    start, settings = app
    at = _sample(start(PAGE), "airline", 1, "air")
    with Draft.open(settings.workspace, "air") as draft:
        draft.review(draft.pairs()[0].pair_id, "accepted")
    _button(at, "Sample and write questions").click().run()  # same name, not replaced
    assert not at.exception and any("exists" in e.value for e in at.error)
    with Draft.open(settings.workspace, "air") as draft:
        assert draft.summary().accepted == 1
    at.checkbox(key="bg-replace").check()
    _button(at, "Sample and write questions").click().run()
    wait_for_jobs(settings.workspace)
    with Draft.open(settings.workspace, "air") as draft:
        assert draft.summary().accepted == 0
    at.selectbox(key="bg-writer").set_value("openai")
    at.text_input(key="bg-name").set_value("air-llm")
    _button(at, "Sample and write questions").click().run()
    assert not at.exception and any("OPENAI_API_KEY" in e.value for e in at.error)


def test_a_link_opens_the_tab_it_names_and_errors_show_above_the_tabs(app) -> None:
    start, settings = app
    at = start(PAGE)
    assert at.session_state["bg-tab"] == "1 · Sample" and at.button(key="bg-go")
    at = _sample(at, "airline", 1, "air")
    with Draft.open(settings.workspace, "air") as draft:
        target = draft.pairs()[3]
    for params in ({"draft": "air", "pair": str(target.pair_id)}, {"pair": str(target.pair_id)}):
        at = start(PAGE, **params)  # the sidebar's review link, or a pair's own link
        assert not at.exception and not at.error, at.error
        assert at.session_state["bg-tab"] == "2 · Review"
        assert at.text_area(key=f"bg-edit-air-{target.pair_id}").value == target.question
        assert not [b for b in at.button if b.key == "bg-go"]  # only the open tab runs
        judge = at.dataframe[-1].value["judge"]  # the review list: no judge ran, blank
        assert judge.tolist() == [""] * len(judge), judge.tolist()
    at = start(PAGE, draft="air")
    assert at.session_state["bg-tab"] == "2 · Review" and not at.error
    for bad in ({"draft": "air", "pair": "99999"}, {"pair": "99999"}):
        at = start(PAGE, **bad)
        assert len(at.error) == 1 and "99999" in at.error[0].value
        assert not at.tabs  # the page stopped above the tabs: the error is in sight


def test_the_draft_name_follows_the_seed_and_the_new_draft_opens_in_review(app) -> None:
    start, settings = app
    at = start(PAGE)
    at.selectbox(key="bg-database").set_value("airline")
    at.number_input(key="bg-n").set_value(1)
    names = []
    for seed in (3, 4):  # no name typed: a second sample with another seed is another draft
        at.number_input(key="bg-seed").set_value(seed).run()
        at = _button(at, "Sample and write questions").click().run()
        assert not at.exception and not at.error, at.error
        wait_for_jobs(settings.workspace)
        at = at.run()
        names.append(f"demo-sql-airline-seed{seed}")
        assert any(f"Draft '{_md(names[-1])}'" in s.value for s in at.success)
    assert sorted(list_drafts(settings.workspace)) == names
    at = at.button(key="bg-open-review").click().run()
    assert not at.exception and at.session_state["bg-tab"] == "2 · Review"
    assert at.selectbox(key="bg-draft").value == names[-1]


def _md(text: str) -> str:
    """`text` as plain() escapes it in Markdown."""
    return text.replace("-", "\\-").replace(".", "\\.")


def test_default_draft_name() -> None:
    assert default_draft_name("demo-sql", None, 0) == "demo-sql-seed0"
    assert default_draft_name("demo-sql", "air line", 7) == "demo-sql-air-line-seed7"
    assert len(default_draft_name("x" * 100, "db", 1)) <= 80


def test_the_sql_datasets_are_listed_without_loading_any(tmp_path: Path) -> None:
    """The builder's dataset choice is list_datasets' text-to-SQL datasets with databases,
    found from dataset.json and databases/ alone: a broken SQL folder is offered (its
    error shows once chosen), a QA folder with databases is not."""
    from dataclasses import replace

    from target_core.datasets import list_datasets, registry
    from target_core.read_models.benchmark import sql_dataset_names

    extra = tmp_path / "extra"
    for name, task in (("broken-sql", "sql"), ("qa-with-db", "qa")):
        (extra / name / "databases" / "db").mkdir(parents=True)
        (extra / name / "databases" / "db" / "db.sqlite").write_bytes(b"")
        (extra / name / "dataset.json").write_text(f'{{"name": "{name}", "task": "{task}"}}')
        (extra / name / "corpus.jsonl").write_text("not json\n")
    settings = replace(load_settings(tmp_path / "ws"), datasets_path=(extra,))
    registry._cache.clear()
    names = sql_dataset_names(settings)
    assert not registry._cache  # nothing loaded
    loadable = [i.name for i in list_datasets(settings) if i.task == "sql" and i.databases]
    assert names == [*loadable, "broken-sql"]
    assert "demo-sql" in names and "qa-with-db" not in names
