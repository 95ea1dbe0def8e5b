"""The OpenAI-compatible client against servers that behave like real ones (the fake server
of tests/fake_openai.py playing llama-cpp-python, llama.cpp's server and vLLM): structured
output negotiated and remembered, no retry of deterministic errors, retries of transient
ones honouring retry-after, max tokens per task, truncation, the context window and the
prompt fitted to it, slots, the served model, per-token embeddings, whole messages."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest

from target_core.config import load_settings
from target_core.embeddings.base import EmbeddingError
from target_core.embeddings.openai_embedder import SPECIAL_TOKENS, OpenAIEmbedder
from target_core.generators.base import Context, GenerationRequest
from target_core.generators.context import ContextBuilder
from target_core.generators.openai_chat import OpenAIGenerator
from target_core.generators.prompts import SQL_RESPONSE_SCHEMA, build_messages
from target_core.llm.cache import ResponseCache
from target_core.llm.client import retry_delay
from target_core.llm.window import PROMPT_MARGIN
from target_core.run_config import GenerationConfig, RunConfig
from target_core.table_view import TableView
from target_core.tokens import get_counter
from target_core.types import Dataset, Query, Table

try:
    from fake_openai import FakeOpenAI, fake_tokens, llama_cpp_props
except ImportError:  # pragma: no cover - run from the project root
    from tests.fake_openai import FakeOpenAI, fake_tokens, llama_cpp_props

KEY = "sk-test-planted-0123456789abcdef"
SQL_REPLY = ('{"chain_of_thought_reasoning": "count", "sql_query": "SELECT 1", '
             '"database_id": "school"}')


def generator(tmp_path: Path, server: FakeOpenAI, model: str = "test-model",
              **options: Any) -> OpenAIGenerator:
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url, "TARGET_OPENAI_TIMEOUT": "5"})
    return OpenAIGenerator(settings, model, **options)


def sql_request(query: str = "How many students?") -> GenerationRequest:
    text = "CREATE TABLE students (id INTEGER)"
    return GenerationRequest("sql", query, Context(mode="retrieved", databases=("school",),
                                                   text=text),
                             tuple(build_messages("sql", query, text)))


def qa_request(query: str = "Who won?") -> GenerationRequest:
    return GenerationRequest("qa", query, Context(mode="none"),
                             tuple(build_messages("qa", query, "", no_context=True)))


# --- structured output --------------------------------------------------------------------

def test_llama_cpp_python_steps_down_once_and_is_remembered(
        tmp_path: Path, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    fake_openai.llama_cpp_python = True
    fake_openai.chat_responder = lambda body: SQL_REPLY
    cache = ResponseCache(tmp_path / "chat.sqlite")
    first = generator(tmp_path, fake_openai, cache=cache).generate(sql_request())
    assert first.error is None and first.answer == "SELECT 1"
    sent = [r.body.get("response_format") for r in fake_openai.chat_requests()]
    assert sent == [{"type": "json_schema", "json_schema": SQL_RESPONSE_SCHEMA},
                    {"type": "json_object", "schema": SQL_RESPONSE_SCHEMA["schema"]}]
    # the 500 was a refusal, not a failure: never retried, and not asked again
    second = generator(tmp_path, fake_openai).generate(sql_request("How many teachers?"))
    assert second.error is None
    assert len(fake_openai.chat_requests()) == 3
    assert fake_openai.chat_requests()[2].body["response_format"]["type"] == "json_object"


def test_refusal_is_remembered_in_the_response_cache(tmp_path: Path,
                                                     fake_openai: FakeOpenAI) -> None:
    from target_core.llm import negotiation

    fake_openai.llama_cpp_python = True
    fake_openai.chat_responder = lambda body: SQL_REPLY
    cache = ResponseCache(tmp_path / "chat.sqlite")
    generator(tmp_path, fake_openai, cache=cache).generate(sql_request())
    negotiation._FORMATS.clear()  # a new process: only the cache remembers
    before = len(fake_openai.chat_requests())
    generator(tmp_path, fake_openai, cache=cache).generate(sql_request("Other?"))
    (sent,) = fake_openai.chat_requests()[before:]
    assert sent.body["response_format"]["type"] == "json_object"


# --- retries -----------------------------------------------------------------------------

def test_deterministic_500_is_not_retried(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(3, "500")
    generation = generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.error is not None and "(fake 500)" in generation.error
    assert "attempts" not in generation.error
    assert len(fake_openai.chat_requests()) == 1


def test_503_retried_after_the_servers_retry_after(tmp_path: Path,
                                                  fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, "503")  # retry-after: 0.2 (seconds)
    fake_openai.fail_next(1, "429")
    started = time.monotonic()
    generation = generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.error is None
    assert time.monotonic() - started >= 0.2
    assert len(fake_openai.chat_requests()) == 3


def test_retry_delay() -> None:
    assert retry_delay({"retry-after-ms": "250"}, 1) == 0.25
    assert retry_delay({"retry-after": "3"}, 1) == 3.0
    assert retry_delay({"retry-after": "9999"}, 1) == 60.0
    assert [retry_delay(None, n) for n in (1, 2, 5, 9)] == [0.5, 1.0, 8.0, 8.0]


def test_timeout_is_not_sent_again(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, "sleep", seconds=3)
    generation = generator(tmp_path, fake_openai, timeout=0.3, max_retries=3).generate(
        qa_request())
    assert generation.error is not None and "not sent again" in generation.error
    assert len(fake_openai.chat_requests()) == 1


def test_message_is_whole_and_scrubbed(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_message = "x" * 400 + f" the key {KEY} was seen " + "y" * 400
    fake_openai.fail_next(1, "500")
    generation = generator(tmp_path, fake_openai).generate(qa_request())
    where = f"127.0.0.1:{fake_openai.port} (model test-model)"
    assert generation.error == (f"HTTP 500 from {where}: " + "x" * 400 + " the key *** was "
                                "seen " + "y" * 400)


# --- max tokens, truncation, served model ---------------------------------------------------

def test_max_tokens_per_task(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_responder = lambda body: SQL_REPLY
    made = generator(tmp_path, fake_openai)
    made.generate(qa_request())
    made.generate(GenerationRequest("fact", "s", Context(mode="none"),
                                    tuple(build_messages("fact", "s", "", no_context=True))))
    made.generate(sql_request())
    made.chat_json([{"role": "user", "content": "w"}], task="writer")
    made.chat_json([{"role": "user", "content": "j"}], task="judge")
    assert [r.body["max_tokens"] for r in fake_openai.chat_requests()] == [
        256, 64, 512, 768, 256]


def test_truncation_is_recorded(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.finish_reason = "length"
    cache = ResponseCache(tmp_path / "chat.sqlite")
    made = generator(tmp_path, fake_openai, cache=cache)
    generation = made.generate(qa_request())
    assert generation.truncated and generation.to_dict()["truncated"] is True
    fake_openai.chat_responder = lambda body: '{"sql_query": "SELECT'  # cut mid-string
    sql = made.generate(sql_request())
    assert sql.truncated and sql.error is not None
    assert "cut at 512 tokens (raise TARGET_MAX_TOKENS_SQL)" in sql.error


def test_served_model_recorded_and_warned_once(tmp_path: Path, fake_openai: FakeOpenAI,
                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    fake_openai.served_model = "other-model"
    made = generator(tmp_path, fake_openai)
    first, second = made.generate(qa_request()), made.generate(qa_request("Again?"))
    assert first.served_model == second.served_model == "other-model"
    assert first.to_dict()["served_model"] == "other-model"
    assert caplog.text.count("answered with model 'other-model'") == 1
    fake_openai.served_model = "test-model-2024-07-18"  # a dated snapshot is the same model
    caplog.clear()
    generator(tmp_path, fake_openai).generate(qa_request("Third?"))
    assert "answered with model" not in caplog.text


# --- the context window, slots ----------------------------------------------------------------

def test_llama_cpp_window_slots_and_exact_counts(tmp_path: Path,
                                                 fake_openai: FakeOpenAI) -> None:
    fake_openai.props = llama_cpp_props(n_ctx=1024, total_slots=2)
    fake_openai.tokenize = True
    made = generator(tmp_path, fake_openai)
    assert made.concurrency == 2  # unset: the server's slots
    limit = made.prompt_limit("qa")
    assert (limit.window, limit.reply_tokens) == (1024, 256)
    assert limit.tokens == 1024 - 256 - PROMPT_MARGIN
    assert limit.counter.count("Hello, world!") == len(fake_tokens("Hello, world!"))
    capped = generator(tmp_path, fake_openai, concurrency=8)
    assert capped.concurrency == 2  # capped by the slots


def test_window_from_the_models_list(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.models = [{"id": "test-model", "object": "model", "max_model_len": 2048}]
    limit = generator(tmp_path, fake_openai).prompt_limit("sql")
    assert (limit.window, limit.reply_tokens) == (2048, 512)
    assert limit.source == "the server's models list"


def test_a_restarted_server_is_asked_again(tmp_path: Path, fake_openai: FakeOpenAI,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """What a server said is believed for PROBE_TTL_S, then asked again (a server restarted
    on the same address with another window is seen); a stopped server is forgotten."""
    from target_core.llm import client

    fake_openai.models = [{"id": "test-model", "max_model_len": 2048}]
    assert generator(tmp_path, fake_openai).prompt_limit("sql").window == 2048
    fake_openai.models = [{"id": "test-model", "max_model_len": 4096}]
    assert generator(tmp_path, fake_openai).prompt_limit("sql").window == 2048
    now = time.monotonic()
    monkeypatch.setattr(client.time, "monotonic", lambda: now + client.PROBE_TTL_S + 1)
    assert generator(tmp_path, fake_openai).prompt_limit("sql").window == 4096
    fake_openai.models = [{"id": "test-model", "max_model_len": 1024}]
    client.forget_server(fake_openai.base_url)
    assert generator(tmp_path, fake_openai).prompt_limit("sql").window == 1024


def test_a_stopped_server_is_forgotten_with_all_it_taught() -> None:
    """forget_server drops every fact learned from one server (all models), and only
    that server's: the format step, a named window, an embedding limit, the share."""
    from target_core.llm import negotiation, window
    from target_core.llm.client import forget_server

    gone, kept = "http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"
    for url in (gone, kept):
        negotiation.refuse_format(url, "m", 0)
        negotiation.learn_window(url + "/", "m", 2048)
        negotiation.INPUT_LIMITS.put(url, "e", 500)
        window._SHARES.put(url, "m", 0.5)
    forget_server(gone + "/")
    facts = [(negotiation.format_step(u, "m"), negotiation.learned_window(u, "m"),
              negotiation.INPUT_LIMITS.get(u, "e"), window._SHARES.get(u, "m"))
             for u in (gone, kept)]
    assert facts == [(0, None, None, None), (1, 2048, 500, 0.5)]
    forget_server(kept)


def test_unknown_window_is_the_setting(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    made = generator(tmp_path, fake_openai)
    limit = made.prompt_limit("qa")
    assert (limit.window, limit.source) == (8192, "TARGET_CONTEXT_WINDOW")
    assert made.concurrency == 1  # a server on this machine that reports no slots


def big_dataset() -> Dataset:
    header = ["Nation", "Gold", "Silver", "Bronze", "Notes"]
    rows = [[f"Nation {i}", str(i), str(i * 2), str(i * 3), f"remark number {i} about it"]
            for i in range(400)]
    table = Table("db", "medals", tuple(header), tuple(tuple(r) for r in rows),
                  {"title": "Medals"})
    query = Query("q1", "Which nation won 7 gold medals?", "Nation 7", (("db", "medals"),),
                  "db")
    return Dataset(name="big", task="qa", tables=(table,), queries=(query,))


def test_prompt_fitted_to_the_window(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.props = llama_cpp_props(n_ctx=1024, total_slots=1)
    fake_openai.tokenize = True
    made = generator(tmp_path, fake_openai)
    dataset = big_dataset()
    builder = ContextBuilder(dataset, GenerationConfig("openai", context="oracle"),
                             TableView(), get_counter(), top_k=1, limit=made.prompt_limit)
    query = dataset.queries[0]
    context = builder.build(query, [])
    assert 0 < context.cut["tables"][0]["rows_kept"] < 400
    assert context.cut["window"] == 1024 and context.cut["budget"] < 8000
    messages = build_messages("qa", query.query, context.text)
    prompt_tokens = sum(len(fake_tokens(m["content"])) for m in messages)
    assert prompt_tokens <= 1024 - 256


# --- embeddings -----------------------------------------------------------------------------

def embedder(tmp_path: Path, server: FakeOpenAI, **options: Any) -> OpenAIEmbedder:
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url, "TARGET_OPENAI_TIMEOUT": "5"})
    return OpenAIEmbedder(settings, "nomic-embed", **options)


def test_per_token_embeddings_name_the_fix(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.per_token_embeddings = True
    with pytest.raises(EmbeddingError, match=r"one vector per token .*--pooling mean"):
        embedder(tmp_path, fake_openai).embed(["two words"], kind="document")


def test_embedding_limit_from_llama_cpp(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.props = llama_cpp_props(n_ctx=256, total_slots=1)
    fake_openai.tokenize = True
    made = embedder(tmp_path, fake_openai)
    # the server took the probe of more than a slot: the slot's context, less BOS/EOS room
    assert made.max_tokens == 256 - SPECIAL_TOKENS
    made.embed(["word " * 1000], kind="document")
    probe, sent = fake_openai.embedding_requests()
    assert made.last_truncated == 1 and len(fake_tokens(sent.body["input"][0])) <= 248


def test_embedding_batch_named_by_llama_cpp(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """/props does not report n_ubatch: the limit is the batch llama.cpp names when it
    refuses the probe (its own words, checked against the real server)."""
    fake_openai.props = llama_cpp_props(n_ctx=2048, total_slots=1)
    fake_openai.tokenize = True
    fake_openai.embedding_batch = 64
    made = embedder(tmp_path, fake_openai)
    assert made.max_tokens == 64 - SPECIAL_TOKENS
    vectors = made.embed(["word " * 300, "short text"], kind="document")
    probe, sent = fake_openai.embedding_requests()
    assert len(fake_tokens(probe.body["input"][0])) > 2048
    assert vectors.shape == (2, fake_openai.dimension) and made.last_truncated == 1
    assert max(len(fake_tokens(t)) for t in sent.body["input"]) <= 56


def test_a_refused_input_teaches_the_limit(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """A server that refuses an input as too large names its batch: the texts are cut to
    it and sent once more, and the next embedder for that server starts from it."""
    fake_openai.embedding_batch = 100
    made = embedder(tmp_path, fake_openai)
    assert made.max_tokens == 512  # a server that says nothing: most models' limit
    made.embed(["word " * 300], kind="document")
    refused, accepted = fake_openai.embedding_requests()
    assert len(fake_tokens(refused.body["input"][0])) > 100
    assert len(fake_tokens(accepted.body["input"][0])) <= 100 - SPECIAL_TOKENS
    assert made.max_tokens == embedder(tmp_path, fake_openai).max_tokens == 92


def test_unknown_embedding_model_limit(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    assert embedder(tmp_path, fake_openai).max_tokens == 512
    settings = load_settings(tmp_path, environ={"OPENAI_API_KEY": KEY,
                                                "TARGET_EMBEDDING_MAX_TOKENS": "300"})
    assert OpenAIEmbedder(settings, "nomic-embed").max_tokens == 300


def test_a_query_is_embedded_once(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    made = embedder(tmp_path, fake_openai)
    first = made.embed(["which lake?"], kind="query")
    again = made.embed(["which lake?"], kind="query")
    assert (first == again).all() and len(fake_openai.embedding_requests()) == 1


def test_cost_estimate_promises_no_more_than_the_window() -> None:
    from target_core.costs import generation_cost

    dataset = big_dataset()  # its one table is thousands of tokens
    config = GenerationConfig("openai:local-model", context="oracle")
    capped = generation_cost(dataset, config, top_k=1, n_queries=1, model="local-model",
                             window=1000)
    assert capped.tokens_in == 1000 - 256  # the window less the QA reply's max tokens
    wide = generation_cost(dataset, config, top_k=1, n_queries=1, model="gpt-4o-mini")
    assert wide.tokens_in > 1000  # 128k: the token budget is the cap


def test_a_run_shows_which_model_answered(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """The model the server answered with is stored with each generation and summed up
    for the run (`show`): a server that serves another model than asked is visible."""
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore

    fake_openai.served_model = "other-model"
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url})
    run = run_retrieval(RunConfig("demo-qa", "bm25", limit=4,
                                  generation=GenerationConfig("openai:test-model")),
                        settings=settings).run
    assert RunStore.in_workspace(settings.workspace).served_models(run.run_id) == {
        "other-model": 4}


def test_the_cache_names_the_model_by_its_identity(tmp_path: Path,
                                                   fake_openai: FakeOpenAI) -> None:
    """A local server gets another port in every process: its replies are cached under
    the model file's identity, so a rerun reuses them (the URL would never match)."""
    cache = ResponseCache(tmp_path / "chat.sqlite")

    def asked(identity: str) -> int:
        before = len(fake_openai.chat_requests())
        generator(tmp_path, fake_openai, cache=cache, cache_identity=identity).generate(
            qa_request())
        return len(fake_openai.chat_requests()) - before

    assert asked("local:smollm2:abc") == 1
    assert asked("local:smollm2:abc") == 0  # the same model, whatever the port
    assert asked("local:other:def") == 1


def test_the_cache_column_migration_tolerates_a_process_that_added_it_first(
        tmp_path: Path) -> None:
    """Two runs started together open an old cache file at once: both may see
    finish_reason missing, and the second to add it must not fail its run (it did:
    'duplicate column name'). New files have the column from the start."""
    import sqlite3

    from target_core.llm.cache import ResponseCache, add_finish_reason

    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                   "content TEXT NOT NULL, tokens_in INTEGER, tokens_out INTEGER, "
                   "created_at REAL NOT NULL)")
    first, second = sqlite3.connect(old), sqlite3.connect(old)
    add_finish_reason(first)
    first.commit()
    add_finish_reason(second)  # the column is there already: no error
    assert "finish_reason" in {r[1] for r in second.execute("PRAGMA table_info(replies)")}
    ResponseCache(old)
    fresh = ResponseCache(tmp_path / "new.sqlite")
    sql = fresh._db.execute("SELECT sql FROM sqlite_master WHERE name = 'replies'").fetchone()
    assert "finish_reason" in sql[0]
