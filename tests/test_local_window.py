"""The context window against the real llama.cpp server (xllamacpp + SmolLM2, as in
tests/test_local_llm.py), issue 24 items 3 and 7:

- a server of 512 tokens per slot never receives a prompt without its table: prompts
  are fitted to what the window leaves, and when it leaves nothing the query fails with
  a message naming the window (and nothing is sent);
- a GTR-T run through llama.cpp's server reached as an external `openai:` server (the
  client path any llama-server gets) has no error the client causes: the DRY
  repetition control is sent with each request, as `local:` servers start with it.

Without the wheels the module is skipped; under CI their absence fails it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from local_llm_support import require_local_llm

require_local_llm()

from target_core.config import load_settings  # noqa: E402
from target_core.engine.presets import pipeline_preset  # noqa: E402
from target_core.engine.runner import run_retrieval  # noqa: E402
from target_core.engine.store import RunStore  # noqa: E402
from target_core.llm.llama_server import (  # noqa: E402
    LlamaServer,
    ServerOptions,
    resolve_model,
    serve,
)
from target_core.run_config import GenerationConfig, RunConfig  # noqa: E402
from target_core.table_view import TableView  # noqa: E402

try:
    from test_local_llm import Recorder
except ImportError:  # pragma: no cover - run from the project root
    from tests.test_local_llm import Recorder

MODEL_ERRORS = {"truncated", "malformed"}
"""Error classes of the model's own doing (a reply cut, a reply that is not the JSON)."""


def _served(options: ServerOptions) -> Iterator[tuple[LlamaServer, Recorder]]:
    server = serve(resolve_model("smollm2"), options)
    proxy = Recorder(server.address)
    direct, server.base_url = server.base_url, f"{proxy.address}/v1"
    yield server, proxy
    server.base_url = direct
    proxy.close()
    server.stop()  # only this one: the session's servers of test_local_llm stay up


@pytest.fixture(scope="module")
def small() -> Iterator[tuple[LlamaServer, Recorder]]:
    """One slot of 512 tokens, one thread."""
    yield from _served(ServerOptions(512, 1, 1))


def test_a_512_token_window_gets_no_prompt_without_its_table(
        small: tuple[LlamaServer, Recorder], tmp_path: Path) -> None:
    _, proxy = small
    environ = {"TARGET_LOCAL_CONTEXT": "512", "TARGET_LOCAL_SLOTS": "1",
               "TARGET_LOCAL_THREADS": "1", "TARGET_OPENAI_TIMEOUT": "600",
               "TARGET_MAX_FAILED_GENERATIONS": "1", "TARGET_MAX_TOKENS_QA": "64"}
    settings = load_settings(tmp_path / "ws", environ=environ)
    store = RunStore.in_workspace(settings.workspace)
    mark = proxy.mark()
    result = run_retrieval(RunConfig("demo-qa", "bm25", limit=5, generation=GenerationConfig(
        "local:smollm2", context_k=3)), settings=settings, store=store, fresh=True)
    sent = proxy.since(mark, "/chat/completions")
    assert sent and all(e.status == 200 for e in sent), [e.response for e in sent]
    for exchange in sent:  # every prompt holds a table, cut to the window
        prompt = exchange.request["messages"][-1]["content"]
        tables = prompt.split("Tables: ", 1)[1].split("\nQuestion: ", 1)[0]
        assert tables.strip(), prompt
    records = [r.generation for r in store.iter_results(result.run.run_id)]
    assert all(g is not None and g["cut"]["window"] == 512 for g in records)
    answered = [g for g in records if g and g["error_class"] != "window"]
    assert len(answered) == len(sent)
    assert all(g["cut"]["tables"] for g in answered)

    # a reply of 448 tokens leaves the prompt nothing: no request, the window named
    mark = proxy.mark()
    tight = load_settings(tmp_path / "ws2", environ={**environ,
                                                     "TARGET_MAX_TOKENS_QA": "448"})
    store = RunStore.in_workspace(tight.workspace)
    failed = run_retrieval(RunConfig("demo-qa", "bm25", limit=2, generation=GenerationConfig(
        "local:smollm2", context_k=3)), settings=tight, store=store, fresh=True)
    assert proxy.since(mark, "/chat/completions") == []
    errors = store.generation_errors(failed.run.run_id)
    assert len(errors) == 2 and {c for _, _, c in errors} == {"window"}
    for _, error, _ in errors:
        assert "the window of 512 tokens (the server's /props)" in error
        assert "lower TARGET_MAX_TOKENS_QA (448) or raise the window " \
               "(TARGET_LOCAL_CONTEXT)" in error


@pytest.fixture(scope="module")
def external() -> Iterator[tuple[LlamaServer, Recorder]]:
    """One slot of 2,048 tokens, reached as any OpenAI-compatible server."""
    yield from _served(ServerOptions(2048, 1, 1))


def test_gtr_t_through_an_external_llama_cpp_server(external: tuple[LlamaServer, Recorder],
                                                    tmp_path: Path) -> None:
    """`openai:smollm2` with OPENAI_BASE_URL at llama.cpp's server: 4 demo-sql queries of
    seed 001's pipeline (each request is checked alike; 10 took ~100 s on 2 busy cores).
    Every request carries the DRY repetition control (measured on 2 cores, max_tokens 512:
    without it 9 of 10 replies looped to max_tokens in 218 s, with it 3 of 10 in 75 s);
    only the model's own failures remain."""
    _, proxy = external
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": "none", "OPENAI_BASE_URL": f"{proxy.address}/v1",
        "TARGET_OPENAI_TIMEOUT": "600", "TARGET_MAX_FAILED_GENERATIONS": "1",
        "TARGET_MAX_TOKENS_SQL": "256"})
    preset = pipeline_preset("gtr-t")
    store = RunStore.in_workspace(settings.workspace)
    mark = proxy.mark()
    result = run_retrieval(RunConfig(
        "demo-sql", preset.retriever, view=TableView.preset(preset.view), limit=4,
        generation=GenerationConfig("openai:smollm2", context=preset.context,
                                    context_k=preset.context_k,
                                    sql_schema=preset.sql_schema)),
        settings=settings, store=store, fresh=True)
    assert result.run.status == "complete", result.run.error
    sent = proxy.since(mark, "/chat/completions")
    assert len(sent) == 4 and all(e.status == 200 for e in sent), [e.response for e in sent]
    assert all(e.request["dry_multiplier"] == 0.8 and e.request["temperature"] == 0
               for e in sent)
    assert all("CREATE TABLE" in e.request["messages"][-1]["content"] for e in sent)
    errors = store.generation_errors(result.run.run_id)
    assert not [(q, e, c) for q, e, c in errors if c not in MODEL_ERRORS], errors
    server_details = result.run.index_info["server"]
    assert server_details["sampling"] == {"temperature": 0.0, "dry_multiplier": 0.8}
    assert server_details["context_window"] == 2048
