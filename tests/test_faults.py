"""Faults: runs killed with SIGKILL while embedding and while generating resume with
nothing lost or duplicated, runs started at once on one workspace, and a generation
run that completes through 429s, 500s, malformed bodies and timeouts.

The killed and concurrent runs are real `python -m target_core run` processes against
the fake OpenAI-compatible server of tests/fake_openai.py, running in this process. The
server holds requests back so that each kill lands at a known point, found by polling
the server and the run store, never by sleeping. test_runner.py and
test_generation_runs.py have the complementary kills: a run that kills itself from its
progress callback, without a network.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from fake_openai import HeldChat

from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval, select_queries
from target_core.engine.store import RunStore
from target_core.retrievers.dense import EMBED_CHUNK
from target_core.run_config import GenerationConfig, RunConfig

if TYPE_CHECKING:  # registered by tests/conftest.py (pytest_plugins)
    from fake_openai import FakeOpenAI, Recorded

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-faults"
HOLD_LIMIT = 30.0
"""Seconds a held chat request waits for release before it answers anyway."""


# --- helpers --------------------------------------------------------------------------------

def cli_env(workspace: Path, server: FakeOpenAI, **extra: str) -> dict[str, str]:
    """This environment without TARGET_* / OPENAI_* settings, plus the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TARGET_", "OPENAI_"))}
    return env | {"TARGET_WORKSPACE": str(workspace), "OPENAI_API_KEY": KEY,
                  "OPENAI_BASE_URL": server.base_url, **extra}


@dataclass
class Cli:
    """A `python -m target_core run ... --json` process, output in files (no pipe to fill)."""

    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    @classmethod
    def start(cls, folder: Path, env: dict[str, str], *args: str) -> Cli:
        folder.mkdir(parents=True, exist_ok=True)
        out, err = folder / "stdout", folder / "stderr"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen([sys.executable, "-m", "target_core", "run", *args,
                                        "--json"], cwd=ROOT, env=env, stdout=stdout,
                                       stderr=stderr)
        return cls(process, out, err)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")[-3000:]

    def finish(self, timeout: float = 60) -> dict[str, Any]:
        code = self.process.wait(timeout)
        assert code == 0, self.stderr()
        return json.loads(self.out.read_text())

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        assert self.process.wait(10) == -signal.SIGKILL


def wait_for(condition: Callable[[], bool], what: str, *running: Cli,
             timeout: float = 20) -> None:
    """Poll `condition` until it holds; fail early when a process ends meanwhile."""
    deadline = time.monotonic() + timeout
    while not condition():
        for cli in running:
            assert cli.process.poll() is None, f"ended before {what}:\n{cli.stderr()}"
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        time.sleep(0.02)


def stored_results(workspace: Path) -> int:
    path = workspace / "runs.sqlite"
    if not path.exists():  # connecting would create it
        return 0
    try:
        with closing(sqlite3.connect(path, timeout=5)) as db:
            return db.execute("SELECT COUNT(*) FROM query_results").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def integrity(path: Path) -> str:
    assert path.exists(), path
    with closing(sqlite3.connect(path)) as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def user_message(request: Recorded) -> str:
    return request.body["messages"][-1]["content"]


def chat_cache_keys(workspace: Path) -> list[str]:
    with closing(sqlite3.connect(workspace / "cache" / "chat.sqlite")) as db:
        return [row[0] for row in db.execute("SELECT key FROM replies")]


# --- 1. SIGKILL while embedding ---------------------------------------------------------------

def test_sigkill_while_embedding_resumes_from_the_stored_chunks(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """demo-qa's 440 tables go to the server in chunks of EMBED_CHUNK: the first is
    answered and stored in Chroma, the second is held until the process is killed. The
    rerun sends exactly the chunk that was in flight, then finishes the same run."""
    workspace = tmp_path / "ws"
    env = cli_env(workspace, fake_openai)
    args = ("--dataset", "demo-qa", "--retriever", "dense:openai", "--limit", "20")
    fake_openai.fail_next(1, "sleep", seconds=0)  # the first chunk: answered at once
    fake_openai.fail_next(1, "sleep", seconds=HOLD_LIMIT)  # the second: held
    killed = Cli.start(tmp_path / "killed", env, *args)
    wait_for(lambda: len(fake_openai.embedding_requests()) == 2, "second embedding request",
             killed)
    killed.kill()

    first, in_flight = (r.body["input"] for r in fake_openai.embedding_requests())
    dataset = load_dataset("demo-qa", load_settings(workspace))
    n_tables = len(dataset.tables)
    assert len(first) == EMBED_CHUNK and len(in_flight) == n_tables - EMBED_CHUNK
    store = RunStore.in_workspace(workspace)
    (partial,) = store.list_runs()
    assert partial.status == "running" and partial.n_done == 0
    assert integrity(workspace / "runs.sqlite") == "ok"
    assert integrity(workspace / "chroma" / "chroma.sqlite3") == "ok"

    summary = Cli.start(tmp_path / "rerun", env, *args).finish()
    assert summary["run_id"] == partial.run_id  # resumed, not started over
    rerun_inputs = [text for r in fake_openai.embedding_requests()[2:] for text in
                    r.body["input"]]
    queries = select_queries(dataset, 20, 0)
    query_texts = {q.query for q in queries}
    documents = [text for text in rerun_inputs if text not in query_texts]
    assert documents == in_flight  # the stored chunk was not embedded again

    run = store.get_run(partial.run_id)
    assert run.status == "complete" and run.n_done == 20 and run.metrics["mrr"] > 0
    assert run.index_info["embedded"] == n_tables - EMBED_CHUNK
    assert run.index_info["cached"] == EMBED_CHUNK
    ids = [r.query_id for r in store.iter_results(run.run_id)]
    assert ids == [q.query_id for q in queries]  # each query once, in order
    assert integrity(workspace / "runs.sqlite") == "ok"
    assert integrity(workspace / "chroma" / "chroma.sqlite3") == "ok"
    assert_collection(workspace / "chroma", first + in_flight, fake_openai)


def assert_collection(path: Path, texts: list[str], server: FakeOpenAI) -> None:
    """The one collection holds each table's id once, with the vector of its own text."""
    import chromadb
    from chromadb.api.client import SharedSystemClient
    from chromadb.config import Settings as ChromaSettings

    client = chromadb.PersistentClient(path=str(path),
                                       settings=ChromaSettings(anonymized_telemetry=False))
    try:
        (collection,) = client.list_collections()
        assert collection.count() == len(texts)
        got = collection.get(include=["embeddings"])
        assert len(got["ids"]) == len(set(got["ids"])) == len(texts)
        by_id = dict(zip(got["ids"], got["embeddings"], strict=True))
        assert set(by_id) == {str(i) for i in range(len(texts))}
        expected = np.array([server.vector(t) for t in texts], dtype=np.float32)
        stored = np.array([by_id[str(i)] for i in range(len(texts))], dtype=np.float32)
        np.testing.assert_allclose(stored, expected, atol=1e-6)
    finally:
        SharedSystemClient.clear_system_cache()  # let go of the files in tmp_path


# --- 2. SIGKILL while generating --------------------------------------------------------------

def test_sigkill_while_generating_resumes_without_asking_again(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """80 queries, 4 chat requests at a time, results saved per batch of 32. The server
    answers 40 requests and holds the next: the first batch is stored, 8 queries of the
    second are answered (so in the chat cache) but not stored, 4 are in flight. After the
    kill, the rerun asks exactly the 40 never answered and nothing twice."""
    workspace = tmp_path / "ws"
    model = HeldChat(free=40, hold_limit=HOLD_LIMIT)
    fake_openai.chat_responder = model
    env = cli_env(workspace, fake_openai, TARGET_GENERATION_CONCURRENCY="4")
    args = ("--dataset", "demo-qa", "--retriever", "bm25", "--generator", "openai:test-model",
            "--limit", "80")
    killed = Cli.start(tmp_path / "killed", env, *args)
    # every worker held: each has finished (and cached) what it took before
    wait_for(lambda: stored_results(workspace) == 32 and model.waiting == 4,
             "the first batch stored and 4 requests held", killed)
    killed.kill()
    answered_before = list(model.answered)
    held = [user_message(r) for r in fake_openai.chat_requests()[40:]]
    model.release()
    assert len(answered_before) == len(set(answered_before)) == 40 and len(held) == 4

    store = RunStore.in_workspace(workspace)
    (partial,) = store.list_runs()
    assert partial.status == "running" and partial.n_done == 32
    kept = {r.query_id: r for r in store.iter_results(partial.run_id)}
    assert len(chat_cache_keys(workspace)) == 40  # replies are cached as they arrive
    assert integrity(workspace / "runs.sqlite") == "ok"
    assert integrity(workspace / "cache" / "chat.sqlite") == "ok"

    sent_before = len(fake_openai.chat_requests())
    summary = Cli.start(tmp_path / "rerun", env, *args).finish()
    assert summary["run_id"] == partial.run_id
    asked_after = [user_message(r) for r in fake_openai.chat_requests()[sent_before:]]
    assert len(asked_after) == len(set(asked_after)) == 80 - 40
    assert not set(asked_after) & set(answered_before)  # answered once is never asked again
    assert set(held) <= set(asked_after)  # the ones in flight were asked again

    run = store.get_run(partial.run_id)
    assert run.status == "complete" and run.n_done == 80
    assert run.metrics["n_generated"] == 80 and run.metrics["generation_errors"] == 0
    results = list(store.iter_results(run.run_id))
    queries = select_queries(load_dataset("demo-qa", load_settings(workspace)), 80, 0)
    assert [r.query_id for r in results] == [q.query_id for q in queries]
    for result in results:
        assert result.generation is not None and result.generation["error"] is None
        if result.query_id in kept:  # stored before the kill: left as it was, but for
            # SAS, which the finished run adds to every answer (engine.answer_scores)
            assert "sas" in result.metrics and "sas" not in kept[result.query_id].metrics
            metrics = {k: v for k, v in result.metrics.items() if k != "sas"}
            assert replace(result, metrics=metrics) == kept[result.query_id]
    cached = [r.query_id for r in results if r.generation and r.generation["cached"]]
    assert len(cached) == 8  # answered before the kill, stored after it from the cache
    assert not set(cached) & set(kept)
    assert len(chat_cache_keys(workspace)) == 80
    assert integrity(workspace / "runs.sqlite") == "ok"
    assert integrity(workspace / "cache" / "chat.sqlite") == "ok"


# --- 3. runs at once on one workspace ---------------------------------------------------------

GENERATE_40 = ("--dataset", "demo-qa", "--generator", "openai:test-model", "--limit", "40")


def run_two_at_once(tmp_path: Path, server: FakeOpenAI, first: tuple[str, ...],
                    second: tuple[str, ...]) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Start both runs together on one fresh workspace; chat requests are held until both
    processes have 4 in flight, so their generation surely overlaps."""
    workspace = tmp_path / "ws"
    model = HeldChat(hold_limit=HOLD_LIMIT)
    server.chat_responder = model
    env = cli_env(workspace, server, TARGET_GENERATION_CONCURRENCY="4")
    clis = [Cli.start(tmp_path / "a", env, *first), Cli.start(tmp_path / "b", env, *second)]
    try:
        wait_for(lambda: model.waiting == 8, "8 held requests, 4 per process", *clis,
                 timeout=40)
    finally:
        model.release()
    return workspace, clis[0].finish(), clis[1].finish()


def assert_complete(store: RunStore, run_id: str, n: int) -> None:
    run = store.get_run(run_id)
    assert run.status == "complete" and run.n_done == n == run.n_queries
    assert run.metrics["n_generated"] == n and run.metrics["generation_errors"] == 0
    ids = [r.query_id for r in store.iter_results(run_id)]
    assert len(ids) == len(set(ids)) == n


def test_two_runs_at_once_on_one_workspace(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """bm25 and tfidf answered by the same model at the same time: two complete runs
    in one run store, sharing the chat cache."""
    workspace, bm25, tfidf = run_two_at_once(tmp_path, fake_openai,
                                             ("--retriever", "bm25", *GENERATE_40),
                                             ("--retriever", "tfidf", *GENERATE_40))
    assert bm25["run_id"] != tfidf["run_id"]
    store = RunStore.in_workspace(workspace)
    assert {r.run_id for r in store.list_runs()} == {bm25["run_id"], tfidf["run_id"]}
    for summary in (bm25, tfidf):
        assert_complete(store, summary["run_id"], 40)
    asked = {user_message(r) for r in fake_openai.chat_requests()}
    assert len(chat_cache_keys(workspace)) == len(asked)  # every distinct prompt, once
    assert integrity(workspace / "runs.sqlite") == "ok"
    assert integrity(workspace / "cache" / "chat.sqlite") == "ok"


def test_the_same_run_started_twice_is_one_run(tmp_path: Path,
                                               fake_openai: FakeOpenAI) -> None:
    """The store resumes any run of a configuration that is not complete, so the second
    process joins the first one's run: both compute every query and write the same
    rows (a query is one row per run), and both report that one run. The work, and so
    uncached chat requests, can be done twice: at most two requests per prompt."""
    args = ("--retriever", "bm25", *GENERATE_40)
    workspace, first, second = run_two_at_once(tmp_path, fake_openai, args, args)
    assert first["run_id"] == second["run_id"]
    assert first["metrics"]["n_generated"] == second["metrics"]["n_generated"] == 40
    store = RunStore.in_workspace(workspace)
    assert [r.run_id for r in store.list_runs()] == [first["run_id"]]
    assert_complete(store, first["run_id"], 40)
    asked = Counter(user_message(r) for r in fake_openai.chat_requests())
    assert len(asked) == 40 and max(asked.values()) <= 2
    assert len(chat_cache_keys(workspace)) == 40
    assert integrity(workspace / "runs.sqlite") == "ok"
    assert integrity(workspace / "cache" / "chat.sqlite") == "ok"


def open_at_once(path: Path, configs: list[RunConfig]) -> list[tuple[str, str]]:
    """One thread per config opens the store at `path` and starts its run, all released
    at the same moment; returns (retriever, run id) per thread, raises the first error."""
    barrier = threading.Barrier(len(configs))
    started: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def open_and_start(config: RunConfig) -> None:
        barrier.wait()
        try:
            store = RunStore(path)
            run, _ = store.start_run(config, dataset_fingerprint="f", task="qa",
                                     n_queries=3, versions={})
            started.append((config.retriever, run.run_id))
            store.db.close()
        except BaseException as exc:  # noqa: BLE001 - raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=open_and_start, args=(c,)) for c in configs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    if errors:
        raise errors[0]
    return started


def test_stores_opened_at_once_by_many_writers(tmp_path: Path) -> None:
    """Regression: opening a store is a write only when it needs a migration, and every
    write takes the lock first, so connections that open one new store and start runs
    at the same moment all succeed (deferred transactions failed with "database is
    locked", about every other attempt, when one connection wrote between another's
    read and its write). Identical configurations get one run."""
    configs = [RunConfig("demo-qa", retriever, top_k=5)
               for retriever in ("bm25", "tfidf") * 3]
    for attempt in range(8):
        path = tmp_path / f"store-{attempt}" / "runs.sqlite"
        started = open_at_once(path, configs)
        assert len(started) == len(configs)
        runs = {retriever: {run_id for r, run_id in started if r == retriever}
                for retriever in ("bm25", "tfidf")}
        assert all(len(ids) == 1 for ids in runs.values()), runs
        assert integrity(path) == "ok"


# --- 4. a generation run through server faults -----------------------------------------------

def test_generation_run_completes_through_server_faults(tmp_path: Path,
                                                        fake_openai: FakeOpenAI) -> None:
    """One request at a time, so each fault lands on a known query (the registry's
    generator sends a transient failure again 4 times, TARGET_OPENAI_RETRIES):
    q1: 429 five times -> error; q2: 500 -> error (deterministic: not retried); q3:
    malformed -> error (not retried); q4: a 503, a 429 and a 502, then answered slowly
    but within the timeout; q5: past the timeout -> error, not sent again (the server
    may still be computing it); q6-q8: answered. The run completes with metrics; a rerun
    asks only the four failed queries again (failures are not cached) and answers them."""
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_openai.base_url,
        "TARGET_GENERATION_CONCURRENCY": "1", "TARGET_OPENAI_TIMEOUT": "1",
        "TARGET_OPENAI_RETRIES": "4", "TARGET_MAX_FAILED_GENERATIONS": "0.9"})
    fake_openai.fail_next(5, "429")
    fake_openai.fail_next(1, "500")
    fake_openai.fail_next(1, "malformed")
    fake_openai.fail_next(1, "503")
    fake_openai.fail_next(1, "429")
    fake_openai.fail_next(1, "502")
    fake_openai.fail_next(1, "sleep", seconds=0.3)
    fake_openai.fail_next(1, "sleep", seconds=3)
    config = RunConfig("demo-qa", "bm25", limit=8,
                       generation=GenerationConfig(generator="openai:test-model"))
    started = time.monotonic()
    result = run_retrieval(config, settings=settings)
    assert time.monotonic() - started < 20

    requests = fake_openai.chat_requests()
    assert len(requests) == 5 + 1 + 1 + 4 + 1 + 3
    per_query = Counter(user_message(r) for r in requests)
    assert sorted(per_query.values(), reverse=True) == [5, 4, 1, 1, 1, 1, 1, 1]
    run = result.run
    assert run.status == "complete" and run.n_done == 8
    assert run.metrics["n_generated"] == 8 and run.metrics["generation_errors"] == 4
    assert {"sacrebleu", "rouge_l", "mrr"} <= set(run.metrics)
    store = RunStore.in_workspace(settings.workspace)
    records = [r.generation for r in store.iter_results(run.run_id)]
    assert all(g is not None for g in records)
    errors = [g["error"] for g in records if g is not None]
    where = f"127.0.0.1:{fake_openai.port} (model test-model)"
    assert errors[0] == f"HTTP 429 from {where}: Rate limit reached (fake) (5 attempts)"
    assert errors[1] == f"HTTP 500 from {where}: Internal error (fake 500)"
    assert errors[2] is not None and errors[2].startswith("malformed response")
    assert errors[3] is None
    assert errors[4] == (f"no reply from {where} within 1 s (TARGET_OPENAI_TIMEOUT); not "
                         "sent again, since the server may still be computing it")
    assert errors[5:] == [None, None, None]
    assert [g["answer"] for g in records if g is not None][:3] == ["", "", ""]

    again = run_retrieval(config, settings=settings, fresh=True)  # complete: a fresh run
    assert not again.resumed and again.run.metrics["generation_errors"] == 0
    retried = [user_message(r) for r in fake_openai.chat_requests()[len(requests):]]
    assert retried == [user_message(requests[i]) for i in (0, 5, 6, 11)]  # q1, q2, q3, q5
