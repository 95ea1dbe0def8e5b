"""A retriever's own LLM calls (HySE's hypothetical tables, LLM table summaries) under the
one failure policy (retrievers/llm_calls.py, llm/policy.py): a run whose calls all
failed, or more than TARGET_MAX_FAILED_GENERATIONS of them, is marked failed before any
query is stored and the CLI exits non-zero naming the failure; within the tolerance the
run completes with the tally and each failed item stored and shown; a rerun asks only
the calls that failed (failures are never cached). On the fake OpenAI server and a
closed port, with hand-made-qa (3 queries, 4 tables) and MiniLM."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from target_core.cli.main import main
from target_core.config import Settings, load_settings
from target_core.engine.jobs import JobStore
from target_core.engine.runner import RunFailed, run_retrieval
from target_core.engine.store import RunStore
from target_core.engine.workers import run_worker
from target_core.llm.policy import LLMStepFailed
from target_core.read_models.runs import fallback_notes
from target_core.retrievers.llm_calls import LLMCalls, llm_call_notes
from target_core.run_config import RunConfig

HYSE = "hyse:minilm@openai:m"
SUMMARY = "summary:minilm@openai:m"
SCHEMAS = {"schemas": [[["Lake", "Max depth (m)"], ["Orin", 102]],
                       [["Marathon", "Winner"], ["Norland", "Mia Holt"]]]}
SUMMARY_REPLY = {"table_name": "Results", "table_summary": "Who finished where."}


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environ(tmp_path: Path, base_url: str, **extra: str) -> dict[str, str]:
    return {"TARGET_WORKSPACE": str(tmp_path / "ws"), "OPENAI_API_KEY": "sk-test-steps",
            "OPENAI_BASE_URL": base_url, "TARGET_OPENAI_RETRIES": "0",
            "TARGET_OPENAI_TIMEOUT": "10", "TARGET_GENERATION_CONCURRENCY": "1", **extra}


def _responder(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    return json.dumps(SCHEMAS if "database schemas" in system else SUMMARY_REPLY)


@pytest.fixture
def fake(fake_openai: Any) -> Any:
    fake_openai.chat_responder = _responder
    return fake_openai


def _settings(tmp_path: Path, fake: Any, **extra: str) -> Settings:
    return load_settings(environ=_environ(tmp_path, fake.base_url, **extra))


def _chats(fake: Any) -> int:
    return len([r for r in fake.requests if r.path.endswith("/chat/completions")])


# --- the server is down ---------------------------------------------------------------

@pytest.mark.parametrize(("spec", "reason"), [
    (HYSE, "HySE: 3 of 3 hypothetical tables failed (connection 3); the first, query q"),
    (SUMMARY, "Summaries: 4 of 4 summaries failed (connection 4); the first, table "),
])
def test_server_down_the_cli_exits_non_zero_and_nothing_complete_is_stored(
        spec: str, reason: str, tmp_path: Path, handmade_dir: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in _environ(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1").items():
        monkeypatch.setenv(name, value)
    argv = ["run", "--dataset", str(handmade_dir), "--retriever", spec, "--json"]
    for _ in range(2):  # a rerun retries the failed run, never reuses it
        assert main(argv) == 2
        out = capsys.readouterr()
        assert out.out == ""
        store = RunStore.in_workspace(tmp_path / "ws")
        (run,) = store.list_runs()
        assert run.status == "failed" and run.n_done == 0
        assert run.error is not None and run.error.startswith(reason), run.error
        assert "cannot connect" in run.error
        assert out.err.strip().splitlines()[-1] == f"error: run {run.run_id} failed: " \
                                                   f"{run.error}"
    assert store.complete_run(run.config, run.dataset_fingerprint) is None


def test_server_down_a_job_fails_with_the_reason(tmp_path: Path, handmade_dir: Path) -> None:
    settings = load_settings(environ=_environ(tmp_path,
                                              f"http://127.0.0.1:{_closed_port()}/v1"))
    jobs = JobStore.in_workspace(settings.workspace)
    job = jobs.create(RunConfig(str(handmade_dir), SUMMARY))
    assert run_worker(job.job_id, settings) == 2
    done = jobs.get(job.job_id)
    run = RunStore.in_workspace(settings.workspace).get_run(done.run_id or "")
    assert done.status == "failed" and run.status == "failed"
    assert done.error == f"run {run.run_id} failed: {run.error}"
    assert run.error is not None and run.error.startswith("Summaries: 4 of 4 summaries")


# --- some calls fail ----------------------------------------------------------------------

def test_within_tolerance_the_run_completes_with_its_fallbacks_stored_and_shown(
        tmp_path: Path, fake: Any, handmade_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = _settings(tmp_path, fake)
    fake.fail_next(1, "500")  # one worker: the first query's write (q1) fails
    run = run_retrieval(RunConfig(str(handmade_dir), HYSE), settings=settings).run
    assert run.status == "complete" and run.n_done == 3
    record = run.index_info["llm_calls"]["hyse"]
    assert record["first_error"].startswith("q1: HTTP 500")
    assert {k: record[k] for k in ("calls", "failed", "classes", "failed_items")} == {
        "calls": 3, "failed": 1, "classes": {"http": 1}, "failed_items": {"q1": "http"}}
    assert run.index_info["hyse_writes_failed"] == 1
    (note,) = llm_call_notes(run.index_info)
    assert note.startswith("HySE: 1 of 3 hypothetical tables failed and fell back to the "
                           "query (http 1); first: query q1: HTTP 500")
    assert fallback_notes([run]) == [f"Run {run.run_id} ({run.config.label}): {note}"]

    assert main(["show", run.run_id, "--workspace", str(tmp_path / "ws")]) == 0
    assert f"fallback     {note}" in capsys.readouterr().out.splitlines()
    assert main(["show", run.run_id, "--json", "--workspace", str(tmp_path / "ws")]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["index_info"]["llm_calls"]["hyse"]["failed_items"] == {"q1": "http"}


def test_summaries_within_tolerance(tmp_path: Path, fake: Any, handmade_dir: Path,
                                    caplog: pytest.LogCaptureFixture) -> None:
    settings = _settings(tmp_path, fake)
    fake.fail_next(2, "502")  # 2 of 4: the share allows half
    with caplog.at_level(logging.WARNING, logger="target_core.engine.runner"):
        run = run_retrieval(RunConfig(str(handmade_dir), SUMMARY), settings=settings).run
    assert run.status == "complete"
    record = run.index_info["llm_calls"]["summary"]
    assert (record["calls"], record["failed"], record["classes"]) == (4, 2, {"http": 2})
    assert list(record["failed_items"]) == ["Lakes_of_Norland_0", "2019_Norland_Marathon_0"]
    (note,) = llm_call_notes(run.index_info)
    assert note.startswith("Summaries: 2 of 4 summaries failed and the table was indexed "
                           "under its name alone (http 2); first: table Lakes_of_Norland_0:")
    assert f"run {run.run_id}: {note}" in caplog.messages  # `run` says so on stderr


@pytest.mark.parametrize(("spec", "n_failed", "n_calls", "what"), [
    (HYSE, 2, 3, "HySE: 2 of 3 hypothetical tables failed (http 2), more than the 50% "
                 "TARGET_MAX_FAILED_GENERATIONS allows; the first, query q1: HTTP 500"),
    (SUMMARY, 3, 4, "Summaries: 3 of 4 summaries failed (http 3), more than the 50% "
                    "TARGET_MAX_FAILED_GENERATIONS allows; the first, table "
                    "Lakes_of_Norland_0: HTTP 500"),
])
def test_beyond_tolerance_fails_and_a_rerun_asks_only_the_failed_calls(
        spec: str, n_failed: int, n_calls: int, what: str, tmp_path: Path, fake: Any,
        handmade_dir: Path) -> None:
    settings = _settings(tmp_path, fake)
    config = RunConfig(str(handmade_dir), spec)
    fake.fail_next(n_failed, "500")
    with pytest.raises(RunFailed) as raised:
        run_retrieval(config, settings=settings)
    assert isinstance(raised.value.__cause__, LLMStepFailed)
    failed = raised.value.run
    assert failed.status == "failed" and failed.n_done == 0
    assert failed.error is not None and failed.error.startswith(what), failed.error
    assert _chats(fake) == n_calls
    # the server is back: only the failed calls are asked again, and the run resumes
    result = run_retrieval(config, settings=settings)
    assert _chats(fake) == n_calls + n_failed
    assert result.resumed and result.run.run_id == failed.run_id
    assert result.run.status == "complete" and result.run.n_done == 3
    assert result.run.index_info["llm_calls"][spec.split(":")[0]]["failed"] == 0
    assert llm_call_notes(result.run.index_info) == []
    # complete now: reused, nothing asked
    assert run_retrieval(config, settings=settings).reused and _chats(fake) == n_calls + n_failed


def test_the_share_is_the_setting(tmp_path: Path, fake: Any, handmade_dir: Path) -> None:
    """TARGET_MAX_FAILED_GENERATIONS=0: one failed table fails the run."""
    settings = _settings(tmp_path, fake, TARGET_MAX_FAILED_GENERATIONS="0")
    fake.fail_next(1, "500")
    with pytest.raises(RunFailed, match="1 of 3 hypothetical tables failed"):
        run_retrieval(RunConfig(str(handmade_dir), HYSE), settings=settings)


def test_heuristic_writers_make_no_llm_calls(settings: Settings, handmade_dir: Path) -> None:
    for spec in ("hyse", "summary:minilm"):
        run = run_retrieval(RunConfig(str(handmade_dir), spec), settings=settings).run
        assert run.status == "complete" and "llm_calls" not in run.index_info


def test_a_reply_without_tables_is_malformed() -> None:
    calls = LLMCalls("hyse", "HySE", "hypothetical tables", "query", "fell back to the query",
                     2, (("Who won?", "the reply has no table under 'schemas'", "malformed"),))
    named = calls.named({"Who won?": "q7"})
    assert named.record()["failed_items"] == {"q7": "malformed"}
    named.enforce(0.5)  # 1 of 2: within the share
    with pytest.raises(LLMStepFailed, match=r"^HySE: 1 of 2 hypothetical tables failed "
                       r"\(malformed 1\), more than the 40%"):
        named.enforce(0.4)


def test_the_run_page_says_which_calls_fell_back(app: Any, tmp_path: Path, fake: Any,
                                                 handmade_dir: Path) -> None:
    settings = _settings(tmp_path, fake, TARGET_DATASETS=str(handmade_dir))
    fake.fail_next(1, "500")
    run = run_retrieval(RunConfig("handmade-qa", HYSE), settings=settings).run
    assert run.status == "complete"
    at = app(page="pages/run.py", dataset="handmade-qa")
    (warning,) = at.warning  # Markdown-escaped by the page
    assert warning.value.replace("\\", "").startswith(
        f"Run {run.run_id} (hyse:minilm@openai:m): HySE: 1 of 3 hypothetical tables failed "
        "and fell back to the query (http 1); first: query q1: HTTP 500")


PLUGIN = '''
from target_core.retrievers.llm_calls import LLMCalls


class Mine:
    """A py: retriever that asked a model for every table and got nothing back."""

    def index(self, texts, *, corpus_key, progress=None):
        self.n = len(texts)

    def search(self, queries, *, top_k):
        return [[(i, 1.0 / (i + 1)) for i in range(min(top_k, self.n))] for _ in queries]

    def llm_calls(self):
        return [LLMCalls("mine", "Mine", "descriptions", "table", "kept its text", 2,
                         (("t1", "cannot connect to x: connection refused", None),
                          ("t2", "cannot connect to x: connection refused", None)))]
'''


def test_a_py_retrievers_own_llm_calls_follow_the_policy(settings: Settings,
                                                         handmade_dir: Path,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text(PLUGIN, encoding="utf-8")
    with pytest.raises(RunFailed, match=r"Mine: 2 of 2 descriptions failed \(connection 2\); "
                                        r"the first, table t1: cannot connect"):
        run_retrieval(RunConfig(str(handmade_dir), f"py:{path}:Mine"), settings=settings)
