"""Job kinds are registry entries (target_core/engine/job_kinds.py): one job of every
registered kind runs through the real worker path (JobStore, run_worker) to done on the
demo workspace, its label, pipeline and links read from its entry; the worked example of
docs/extending/job-kind.md (a TREC export) is run exactly as the page shows it; and no
module that dispatches jobs branches on a kind's name."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from docs_examples import code_blocks, page_module
from role_contracts import chat_model_contract

from target_core.benchgen.draft_jobs import DraftSpec
from target_core.config import Settings, load_settings
from target_core.engine import job_kinds
from target_core.engine.job_kinds import JOB_KINDS, JobKind
from target_core.engine.jobs import JobStore
from target_core.engine.runner import run_retrieval
from target_core.engine.workers import run_worker
from target_core.errors import UnknownNameError
from target_core.llm.models import CHAT_MODELS
from target_core.read_models.links import job_link
from target_core.run_config import GenerationConfig, RunConfig

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "extending" / "job-kind.md"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})


def _answered_run(settings: Settings) -> str:
    config = RunConfig("demo-qa", "bm25", limit=4,
                       generation=GenerationConfig(generator="heuristic", context_k=1))
    return run_retrieval(config, settings=settings).run.run_id


SPECS: dict[str, Callable[[Settings], dict[str, Any]]] = {
    "run": lambda settings: RunConfig("demo-qa", "bm25", limit=4).to_dict(),
    "draft": lambda settings: DraftSpec(
        dataset="demo-sql", name="contract", templates=None, templates_label="examples",
        database=None, n=1, seed=0, reference_date="2025-01-01", writer="template",
        judge="round-trip").to_dict(),
    "judge": lambda settings: {"dataset": "demo-qa", "run_id": _answered_run(settings),
                               "judge": "heuristic", "limit": None},
}
"""An example spec of every registered kind (a kind without one fails)."""


def test_every_kind_has_an_example() -> None:
    assert set(SPECS) == set(JOB_KINDS.names())


def _page_exists(link: str) -> bool:
    return (ROOT / "pages" / f"{link.partition('?')[0]}.py").is_file()


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_contract(kind: str, settings: Settings) -> None:
    """A job of `kind` through the worker to done: label, pipeline and links."""
    jobs = JobStore.in_workspace(settings.workspace)
    job = jobs.create_job(kind, SPECS[kind](settings))
    assert job.kind_entry is JOB_KINDS.get(kind) and job.label and job.pipeline
    text, link = job_link(job)
    assert (text, link.partition("?")[0]) == (job.kind_entry.open.text,
                                              job.kind_entry.open.page)
    assert run_worker(job.job_id, settings) == 0
    done = jobs.get(job.job_id)
    assert done.status == "done" and done.describe() == "done", done.error
    assert done.fraction == 1.0 and json.dumps(done.to_dict())
    text, link = job_link(done)
    assert text == done.kind_entry.done.text and _page_exists(link), link
    assert (done.run_id is not None) == (kind != "draft")
    assert done.kind_entry.runs_config == (kind == "run")


def test_each_kind_names_a_task_and_pages_that_exist() -> None:
    for kind in JOB_KINDS:
        assert callable(kind.load_task()), kind.name
        for lead in (kind.done, kind.open):
            assert (ROOT / "pages" / f"{lead.page}.py").is_file(), (kind.name, lead)


def test_an_unknown_kind_is_refused_with_its_name(settings: Settings) -> None:
    jobs = JobStore.in_workspace(settings.workspace)
    with pytest.raises(UnknownNameError, match="job kind 'drat'.*did you mean 'draft'"):
        jobs.create_job("drat", {"dataset": "demo-qa"})
    broken = JobKind("broken", "a task that is not there", str, str,
                     "target_core.engine.jobs:no_such_task", job_kinds.RUN_QUERIES,
                     job_kinds.RUN_PAGE)
    with pytest.raises(Exception, match="no_such_task"):
        broken.load_task()


def test_dispatching_modules_never_name_a_kind() -> None:
    """The modules that list, label, link and run jobs read the entry, not the name."""
    for path in ("target_core/engine/jobs.py", "target_core/engine/job_record.py",
                 "target_core/engine/workers.py",
                 "target_core/cli/jobs.py", "target_core/read_models/links.py",
                 "target_core/read_models/jobs.py", "pages/_ui/jobs.py"):
        source = (ROOT / path).read_text(encoding="utf-8")
        assert not re.search(r"kind\s*[!=]=\s*[\"']", source), path


@pytest.mark.parametrize("spec", CHAT_MODELS.examples())
def test_every_chat_backend_builds(spec: str, tmp_path: Path) -> None:
    """Built with a key against nothing (OpenAI's default model asks no server)."""
    chat_model_contract(spec, load_settings(environ={
        "TARGET_WORKSPACE": str(tmp_path / "ws"), "OPENAI_API_KEY": "sk-test-offline"}))


# --- the worked example of docs/extending/job-kind.md --------------------------------------

def _page_blocks() -> list[str]:
    return code_blocks(PAGE, count=3)  # the module, the registration and the use


def test_the_page_adds_a_job_kind_as_it_says(settings: Settings,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    module_text, registration, use = _page_blocks()
    name = "target_core.engine.export_job"
    module = page_module(name, module_text, PAGE)
    monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(JOB_KINDS, "_kinds", dict(JOB_KINDS._kinds))  # undone after
    exec(registration, dict(vars(job_kinds)))  # noqa: S102 - the end of job_kinds.py
    assert "export" in JOB_KINDS

    run_id = run_retrieval(RunConfig("demo-qa", "bm25", limit=5), settings=settings).run.run_id
    namespace = {"settings": settings, "run_id": run_id}
    exec(use, namespace)  # noqa: S102
    job = namespace["jobs"].get(namespace["job"].job_id)
    assert job.status == "done", job.error
    assert job.label == f"TREC file of run {run_id} on demo-qa"
    assert job.pipeline == f"export {run_id}"
    trec = Path(settings.workspace) / "exports" / f"{run_id}.trec"
    assert job.result == {"files": [str(trec), str(trec) + ".qrels"]}
    assert str(job.result) in capsys.readouterr().out
    lines = trec.read_text().splitlines()
    assert lines and all(len(line.split()) == 6 and line.split()[1] == "Q0" for line in lines)
    assert job_link(job) == ("queries", f"query?run={run_id}")
    # the page's module keeps to the engine's floor (tests/test_architecture.py)
    from test_architecture import FLOOR_OF, imports_of

    ours = {i.split(".")[1] for i in imports_of(name, module_text)
            if i.startswith("target_core.")}
    assert ours and all(FLOOR_OF[top] <= FLOOR_OF["engine"] for top in ours), ours
