"""Failures are loud: a run whose generations failed (all of them, or more than the
TARGET_MAX_FAILED_GENERATIONS share) is marked failed with its reason; `run` exits 3, a
job fails, the Overview, compare and matrix never rank it, it is never reused as
complete, and running it again asks the failed queries again. `show --queries --json`
gives each query's answer, SQL, error class and error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from target_core.cli.main import EXIT_RUN_FAILED, main
from target_core.config import Settings, load_settings
from target_core.engine.jobs import JobStore
from target_core.engine.runner import RunFailed, run_retrieval
from target_core.engine.store import RunStore
from target_core.engine.workers import run_worker
from target_core.generators import GENERATORS, Generation, GenerationRequest, TableSummary
from target_core.llm.error_classes import ERROR_CLASSES, classify_error, error_class_of
from target_core.llm.policy import failure_reason as generation_failure
from target_core.registry import Entry
from target_core.run_config import GenerationConfig, RunConfig
from target_core.types import Table

LIMIT = 10


@dataclass
class Script:
    """What the test generator does: fail the queries `fail` picks, with `error`."""

    fail: set[str] | None = None
    """Query texts that fail (None: every query)."""
    error: str = "HTTP 500 after 2 retries: Input should be 'text' or 'json_object'"
    asked: list[str] = field(default_factory=list)


class ScriptedGenerator:
    """A test-only generator: answers with the query's first word, or fails as told."""

    spec = "scripted"
    label = "scripted (test only)"
    concurrency = 1

    def __init__(self, script: Script) -> None:
        self.script = script

    def generate(self, request: GenerationRequest) -> Generation:
        self.script.asked.append(request.query)
        if self.script.fail is None or request.query in self.script.fail:
            return Generation(answer="", error=self.script.error)
        return Generation(answer=request.query.split()[0])

    def summarize(self, table: Table, *, rows: int = 3) -> TableSummary:
        return TableSummary(name=table.table_id, summary="")


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    script = Script()
    monkeypatch.setitem(GENERATORS._entries, "scripted",
                        Entry("scripted", "test only", lambda arg, s: ScriptedGenerator(script),
                              ("scripted",)))
    return script


def config(dataset: str = "demo-qa", retriever: str = "bm25") -> RunConfig:
    return RunConfig(dataset, retriever, limit=LIMIT,
                     generation=GenerationConfig(generator="scripted"))


def queries_of(settings: Settings, run_id: str) -> list[str]:
    from target_core.datasets import load_dataset

    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(store.get_run(run_id).config.dataset, settings)
    return [dataset.query(r.query_id).query for r in store.iter_results(run_id)]


# --- the rule -------------------------------------------------------------------------------------

def test_generation_failure_rule() -> None:
    errors = [(f"q{i}", "timed out after 60 s", None) for i in range(6)]
    assert generation_failure([], 10, 0.5) is None
    assert generation_failure(errors[:5], 10, 0.5) is None  # 50% is not more than 50%
    reason = generation_failure(errors, 10, 0.5)
    assert reason == ("6 of 10 generations failed (timeout 6), more than the 50% "
                      "TARGET_MAX_FAILED_GENERATIONS allows; the first, query q0: "
                      "timed out after 60 s")
    assert generation_failure(errors[:1], 10, 0.0) is not None  # 0: any failure
    every = [("a", "HTTP 500: x", None), ("b", "cut", "truncated")]
    assert generation_failure(every, 2, 1.0) == (  # all failed: failed at any share
        "2 of 2 generations failed (http 1, truncated 1); the first, query a: HTTP 500: x")
    assert generation_failure([], 0, 0.5) is None  # retrieval only


@pytest.mark.parametrize(("message", "kind"), [
    ("timed out after 60 s (4 retries)", "timeout"),
    ("cannot connect to localhost:8080 (model m) (4 retries)", "connection"),
    ("rate limited (HTTP 429) after 4 retries", "rate_limit"),
    ("localhost:8080 rejected the API key (HTTP 401); check OPENAI_API_KEY", "auth"),
    ("HTTP 500 after 4 retries: Error code: 500 - timeout in the server's words", "http"),
    ("the reply was cut at max_tokens (finish_reason: length)", "truncated"),
    ("malformed response (ValueError)", "malformed"),
    ("the reply is not the JSON object asked for (no 'sql_query' string)", "malformed"),
    ("heuristic: ZeroDivisionError: division by zero", "other"),
    # the wording of the client for real servers (llm_client)
    ("no reply from localhost:8080 (model m) within 60 s (TARGET_OPENAI_TIMEOUT); not sent "
     "again, since the server may still be computing it", "timeout"),
    ("cannot connect to localhost:8080 (model m): the connection broke; check "
     "OPENAI_BASE_URL and that the server is up", "connection"),
    ("HTTP 500 from localhost:8080 (model m): Input should be 'text' or 'json_object'",
     "http"),
    ("HTTP 429 from localhost:8080 (model m): Rate limit reached (3 attempts)", "rate_limit"),
    ("the reply is not the JSON object asked for (no 'sql_query' string); the reply was "
     "cut at 512 tokens", "truncated"),
    ("malformed response from localhost:8080 (model m) (ValueError)", "malformed"),
])
def test_error_classes(message: str, kind: str) -> None:
    assert classify_error(message) == kind and kind in ERROR_CLASSES
    assert error_class_of({"error": message}) == kind
    assert error_class_of({"error": message, "error_class": "auth"}) == "auth"  # recorded
    assert error_class_of({"error": None, "error_class": None}) is None
    assert Generation(answer="", error=message).to_dict()["error_class"] == kind


# --- a run whose every generation fails ---------------------------------------------------------

def test_all_failed_run_is_marked_failed_and_never_ranked(settings: Settings,
                                                           script: Script) -> None:
    from target_core.analysis.leaderboard import latest_complete, leaderboard
    from target_core.datasets import load_dataset
    from target_core.read_models.compare import compare_choices
    from target_core.read_models.matrix import matrix_choices
    from target_core.read_models.runs import failed_banner, failed_notes, runs_frame

    script.fail = set()
    good = run_retrieval(config(retriever="tfidf"), settings=settings)
    assert good.run.status == "complete"
    script.fail = None
    result = run_retrieval(config(), settings=settings)
    run = result.run
    assert result.failed and run.status == "failed" and run.n_done == LIMIT
    assert run.error is not None and run.error.startswith(
        f"{LIMIT} of {LIMIT} generations failed (http {LIMIT}); the first, query ")
    assert run.error.endswith(script.error)  # the server's words, whole
    assert run.metrics["generation_errors"] == LIMIT  # the numbers are kept
    assert run.finished_at is not None

    store = RunStore.in_workspace(settings.workspace)
    runs = store.list_runs()
    assert [r.run_id for r in latest_complete(runs)] == [good.run.run_id]
    board = leaderboard(runs)
    assert list(board.runs.values()) == [good.run.run_id]
    assert not any(label.startswith("bm25") for label, _ in board.table.index)
    queries = load_dataset("demo-qa", settings).queries
    assert [r.run_id for r in matrix_choices(store, "demo-qa", queries).runs] == [
        good.run.run_id]
    assert [r.run_id for r in compare_choices(store).by_dataset["demo-qa"]] == [
        good.run.run_id]
    frame = runs_frame(runs).set_index("run_id")
    assert frame.loc[run.run_id, "status"] == "failed"
    assert frame.loc[run.run_id, "answers"] != frame.loc[run.run_id, "answers"]  # NaN
    assert failed_notes(runs) == [f"Run {run.run_id} (bm25 → scripted) failed: {run.error}. "
                                  "It is not ranked; launching it again resumes it."]
    assert run.error in (failed_banner(run) or "")
    assert failed_banner(good.run) is None

    # never reused as complete: the same configuration resumes it and asks the failed
    # queries again; answered this time, the run is complete
    script.fail = set()
    script.asked.clear()
    again = run_retrieval(config(), settings=settings)
    assert again.resumed and not again.reused and again.run.run_id == run.run_id
    assert sorted(script.asked) == sorted(queries_of(settings, run.run_id))
    assert again.run.status == "complete" and again.run.error is None
    assert again.run.metrics["generation_errors"] == 0
    assert run.run_id in [r.run_id for r in latest_complete(store.list_runs())]


def test_a_few_failures_under_the_share_stay_complete(settings: Settings,
                                                     script: Script) -> None:
    from target_core.datasets import load_dataset
    from target_core.engine.runner import select_queries

    chosen = select_queries(load_dataset("demo-qa", settings), LIMIT, 0)
    script.fail = {q.query for q in chosen[:5]}  # 5 of 10: not more than half
    run = run_retrieval(config(), settings=settings).run
    assert run.status == "complete" and run.error is None
    assert run.metrics["generation_errors"] == 5
    strict = load_settings(environ={"TARGET_WORKSPACE": str(settings.workspace),
                                    "TARGET_MAX_FAILED_GENERATIONS": "0.4"})
    script.fail = {q.query for q in chosen[:5]}
    failed = run_retrieval(config(), settings=strict, fresh=True).run
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.startswith("5 of 10 generations failed (http 5), more than the 40% "
                                   "TARGET_MAX_FAILED_GENERATIONS allows")


def test_setting_is_a_share(tmp_path: Path) -> None:
    from target_core.errors import ConfigError

    assert load_settings(environ={}).max_failed_generations == 0.5
    assert load_settings(environ={"TARGET_MAX_FAILED_GENERATIONS": "0"}
                         ).max_failed_generations == 0
    for bad in ("1.5", "-0.1", "half"):
        with pytest.raises(ConfigError, match="TARGET_MAX_FAILED_GENERATIONS"):
            load_settings(environ={"TARGET_MAX_FAILED_GENERATIONS": bad})


# --- the command line and jobs --------------------------------------------------------------------

def test_cli_run_exits_3_and_show_gives_each_querys_answer_and_error(
        tmp_path: Path, script: Script, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = str(tmp_path / "ws")
    argv = ["run", "--dataset", "demo-qa", "--retriever", "bm25", "--generator", "scripted",
            "--limit", str(LIMIT), "--workspace", workspace]
    assert main([*argv, "--json"]) == EXIT_RUN_FAILED == 3
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["status"] == "failed" and summary["error"].startswith("10 of 10")
    run_id = summary["run_id"]
    assert out.err.strip().splitlines()[-1] == f"error: run {run_id} failed: " \
                                               f"{summary['error']}"

    assert main(["runs", "--workspace", workspace]) == 0
    header, row = capsys.readouterr().out.splitlines()
    status = header.index("status")
    assert row.startswith(run_id) and row[status:status + 6] == "failed"
    assert main(["runs", "--json", "--workspace", workspace]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["status"], listed["error"]) == ("failed", summary["error"])

    assert main(["show", run_id, "--queries", "--json", "--workspace", workspace]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "failed" and shown["error"] == summary["error"]
    assert len(shown["queries"]) == LIMIT
    for query in shown["queries"]:
        assert query["answer"] == "" and query["sql"] is None
        assert query["error_class"] == "http" and query["error"] == script.error
        assert query["answer_metric"] == "sentence_bleu" and query["answer_score"] == 0.0

    assert main(["show", run_id, "--workspace", workspace]) == 0
    text = capsys.readouterr().out
    assert f"error        {summary['error']}" in text


def test_show_queries_json_of_text_to_sql(tmp_path: Path, script: Script,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    workspace = str(tmp_path / "ws")
    script.fail = set()
    assert main(["run", "--dataset", "demo-sql", "--retriever", "bm25", "--generator",
                 "heuristic", "--limit", "4", "--json", "--workspace", workspace]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["show", run_id, "--queries", "--json", "--workspace", workspace]) == 0
    queries = json.loads(capsys.readouterr().out)["queries"]
    for query in queries:
        assert query["sql"] == query["answer"] and query["sql"]
        assert query["database_id"] is not None
        assert query["error"] is None and query["error_class"] is None
        assert query["answer_metric"] == "execution_match"
        assert query["answer_score"] in (0.0, 1.0)
    assert main(["run", "--dataset", "demo-sql", "--retriever", "bm25", "--limit", "2",
                 "--json", "--workspace", workspace]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["show", run_id, "--queries", "--json", "--workspace", workspace]) == 0
    query = json.loads(capsys.readouterr().out)["queries"][0]
    assert [query[k] for k in ("answer", "sql", "error_class", "error", "answer_metric",
                               "answer_score")] == [None] * 6  # retrieval only


def test_a_job_whose_run_failed_fails_with_the_reason(settings: Settings,
                                                      script: Script) -> None:
    jobs = JobStore.in_workspace(settings.workspace)
    job = jobs.create(config())
    assert run_worker(job.job_id, settings) == 2
    done = jobs.get(job.job_id)
    assert done.status == "failed" and done.run_id is not None
    run = RunStore.in_workspace(settings.workspace).get_run(done.run_id)
    assert run.status == "failed"
    assert done.error == str(RunFailed(run)) == f"run {run.run_id} failed: {run.error}"


def test_overview_never_bolds_a_failed_runs_ex(settings: Settings, script: Script) -> None:
    """A text-to-SQL run whose every generation failed has EX 0.000: the Overview's
    leaderboard leaves it out even when handed every run, so it is never 'best'."""
    from target_core.read_models.overview import leaderboard_view

    heuristic = run_retrieval(RunConfig("demo-sql", "bm25", limit=LIMIT,
                                        generation=GenerationConfig(generator="heuristic")),
                              settings=settings).run
    failed = run_retrieval(config("demo-sql", "tfidf"), settings=settings).run
    assert failed.status == "failed" and failed.metrics["execution_accuracy"] == 0.0
    store = RunStore.in_workspace(settings.workspace)
    view = leaderboard_view(store, store.list_runs(), significance=lambda runs: {})
    assert list(view.board.runs.values()) == [heuristic.run_id]
    assert [label for label, _ in view.board.table.index] == ["bm25 → heuristic"]
    assert bool(view.bold[("demo-sql", "EX")].iloc[0])


def test_pages_open_a_failed_run_with_its_reason(app, tmp_path: Path, script: Script) -> None:
    run = run_retrieval(config(), settings=load_settings(tmp_path / "ws")).run
    assert run.status == "failed" and run.error
    at = app(page="pages/run.py", dataset="demo-qa")
    assert [e.value for e in at.error] == [f"Run {run.run_id} (bm25 → scripted) failed: "
                                           f"{run.error}. It is not ranked; launching it "
                                           "again resumes it."]
    for page in ("pages/query.py", "pages/failures.py"):
        at = app(page=page, run=run.run_id)
        assert at.error and run.error in at.error[0].value, page
        assert at.title  # the run still opens
    overview = app(page="pages/overview.py")
    assert not overview.dataframe  # nothing complete to rank
    (warning,) = overview.warning  # and it says what it left out, and why
    assert warning.value.startswith("1 failed run is left out of the leaderboard")
    assert run.run_id in warning.value and run.error in warning.value


def test_a_server_that_answers_500_to_everything_fails_the_run(tmp_path: Path,
                                                               fake_openai) -> None:
    """The issue's first finding: every request answered HTTP 500. The run is failed,
    each query's error is the server's, classed http, and nothing is ranked."""
    from target_core.analysis.leaderboard import latest_complete

    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url,
        "TARGET_GENERATION_CONCURRENCY": "1"})
    fake_openai.fail_next(10_000, "500")
    run = run_retrieval(RunConfig("demo-sql", "bm25", limit=4,
                                  generation=GenerationConfig(generator="openai:test-model")),
                        settings=settings).run
    assert run.status == "failed" and run.error is not None
    assert run.error.startswith("4 of 4 generations failed (http 4); the first, query ")
    store = RunStore.in_workspace(settings.workspace)
    records = [r.generation for r in store.iter_results(run.run_id)]
    assert all(g is not None and g["error_class"] == "http" and "500" in g["error"]
               for g in records)
    assert latest_complete(store.list_runs()) == []
