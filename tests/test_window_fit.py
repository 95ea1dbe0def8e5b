"""Prompts fitted to the context window, honestly (issue 24, items 3, 4 and 7), against
the fake server (tests/fake_openai.py) playing llama.cpp (with /props and /tokenize),
vLLM, Ollama and a server without /tokenize:

- a window that holds none of a query's tables: the query fails with a message naming
  the window, the prompt's size and the setting that helps, and no request is sent;
- a reply the window cut (fewer tokens than max_tokens): the advice names the window,
  not TARGET_MAX_TOKENS_*, and the cached reply stays `truncated` on a rerun (an old
  cache file without the finish_reason column still opens);
- a server without /tokenize that refuses a prompt as too long, in each server's words:
  the window and the server's count are learned and the query is fitted again and
  accepted on the retry;
- sampling settings in OpenAI's vocabulary sent to every server, llama.cpp's only to
  llama.cpp, recorded with the run and part of the response cache key.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from target_core.config import Settings, load_settings
from target_core.engine.runner import RunResult, run_retrieval
from target_core.engine.store import RunStore
from target_core.generators.base import Context, GenerationRequest
from target_core.generators.openai_chat import OpenAIGenerator
from target_core.generators.prompts import build_messages
from target_core.llm.cache import CachedReply, ResponseCache
from target_core.llm.error_classes import ERROR_CLASSES, classify_error
from target_core.llm.window import overflow_in
from target_core.run_config import GenerationConfig, RunConfig

try:
    from fake_openai import FakeOpenAI, llama_cpp_props, start_fake_openai
except ImportError:  # pragma: no cover - run from the project root
    from tests.fake_openai import FakeOpenAI, llama_cpp_props, start_fake_openai

KEY = "sk-test-window-0123456789"
SQL_REPLY = ('{"chain_of_thought_reasoning": "count", "sql_query": "SELECT 1", '
             '"database_id": "school"}')


def settings_for(tmp_path: Path, server: FakeOpenAI, **environ: str) -> Settings:
    return load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url,
        "TARGET_OPENAI_TIMEOUT": "5", "TARGET_GENERATION_CONCURRENCY": "1",
        "TARGET_MAX_FAILED_GENERATIONS": "1", **environ})


def run(dataset: str, settings: Settings, *, limit: int = 4, retriever: str = "bm25",
        **generation: Any) -> RunResult:
    config = RunConfig(dataset, retriever, limit=limit,
                       generation=GenerationConfig(generator="openai:test-model",
                                                 **generation))
    return run_retrieval(config, settings=settings, fresh=True)


def generations(result: RunResult, settings: Settings) -> list[dict[str, Any]]:
    store = RunStore.in_workspace(settings.workspace)
    return [r.generation for r in store.iter_results(result.run.run_id)
            if r.generation is not None]


@pytest.fixture
def server() -> Any:
    made: list[FakeOpenAI] = []

    def start(**options: Any) -> FakeOpenAI:
        made.append(start_fake_openai(**options))
        return made[-1]

    yield start
    for fake in made:
        fake.stop()


# --- a window that holds no table ------------------------------------------------------------

def test_a_window_without_room_for_a_table_sends_nothing(tmp_path: Path, server: Any) -> None:
    """n_ctx 512 and TARGET_MAX_TOKENS_SQL 512 (the issue's case): the reply's tokens fill
    the window. Before, every prompt went out with no tables and no warning."""
    fake = server(props=llama_cpp_props(512), tokenize=True,
                  chat_responder=lambda body: SQL_REPLY)
    settings = settings_for(tmp_path, fake)
    result = run("demo-sql", settings, limit=3)
    assert fake.chat_requests() == []  # not one prompt without its schema
    records = generations(result, settings)
    assert len(records) == 3
    for record in records:
        error = record["error"]
        assert error.startswith("the prompt does not fit the context window: ")
        assert "the window of 512 tokens (the server's /props)" in error
        assert "minus 512 reply tokens (TARGET_MAX_TOKENS_SQL)" in error
        # the prompt's size, and the knob first: the reply takes the whole window
        assert f"{record['cut']['no_room'].split(' tokens with')[0]}".split(": ")[-1].isdigit()
        assert "; lower TARGET_MAX_TOKENS_SQL (512) or raise the window (the server's " \
               "context size, llama.cpp's --ctx-size per slot)" in error
        assert record["error_class"] == "window" == classify_error(error)
        assert record["cut"]["tables"] == [] and record["cut"]["dropped"]
    assert result.run.status == "failed"


def test_a_small_window_sends_only_prompts_that_hold_a_table(tmp_path: Path,
                                                              server: Any) -> None:
    """700 tokens, 256 for the reply: a few tables of each schema fit, the rest are dropped
    and recorded; every prompt sent holds at least one CREATE TABLE."""
    fake = server(props=llama_cpp_props(700), tokenize=True,
                  chat_responder=lambda body: SQL_REPLY)
    settings = settings_for(tmp_path, fake, TARGET_MAX_TOKENS_SQL="256")
    result = run("demo-sql", settings, limit=4)
    sent = fake.chat_requests()
    assert len(sent) == 4
    assert all("CREATE TABLE" in r.body["messages"][-1]["content"] for r in sent)
    records = generations(result, settings)
    assert all(r["error"] is None and r["cut"]["tables"] for r in records)
    assert any(r["cut"]["dropped"] for r in records)  # the window did cut
    assert all(r["cut"]["window"] == 700 and "no_room" not in r["cut"] for r in records)


def test_the_advice_names_the_window_when_the_reply_is_small(tmp_path: Path,
                                                             server: Any) -> None:
    """A reply of 64 tokens in a window of 300: raising the window is what helps."""
    fake = server(props=llama_cpp_props(300), tokenize=True,
                  chat_responder=lambda body: SQL_REPLY)
    settings = settings_for(tmp_path, fake, TARGET_MAX_TOKENS_SQL="64")
    result = run("demo-sql", settings, limit=1)
    (record,) = generations(result, settings)
    assert fake.chat_requests() == []
    assert record["error"].endswith("; raise the window (the server's context size, "
                                    "llama.cpp's --ctx-size per slot) or lower "
                                    "TARGET_MAX_TOKENS_SQL (64)")


# --- a reply the window cut ------------------------------------------------------------------

def sql_request(query: str = "How many students?") -> GenerationRequest:
    text = "CREATE TABLE students (id INTEGER)"
    return GenerationRequest("sql", query, Context(mode="retrieved", databases=("school",),
                                                   text=text),
                             tuple(build_messages("sql", query, text)))


def test_a_reply_the_window_cut_names_the_window_and_stays_truncated(
        tmp_path: Path, server: Any) -> None:
    """A window of 600 and max_tokens 512 for a prompt of ~200 tokens: the server stops
    at the window's end (finish_reason "length", fewer than 512 tokens). The advice is
    the window, not TARGET_MAX_TOKENS_SQL; from the cache the reply is still truncated."""
    fake = server(props=llama_cpp_props(600), tokenize=True, context_window=600,
                  chat_responder=lambda body: SQL_REPLY)
    settings = settings_for(tmp_path, fake)
    cache = ResponseCache(tmp_path / "chat.sqlite")
    first = OpenAIGenerator(settings, "test-model", cache=cache).generate(sql_request())
    assert first.truncated and first.tokens_out is not None and first.tokens_out < 512
    assert first.error is not None
    assert f"cut at {first.tokens_out} tokens when prompt and reply filled the 600-token " \
           "window (the server's /props)" in first.error
    assert "raising TARGET_MAX_TOKENS_SQL does not help" in first.error
    assert "raise the window (the server's context size" in first.error
    assert "(raise TARGET_MAX_TOKENS_SQL)" not in first.error
    assert classify_error(first.error) == "truncated"
    again = OpenAIGenerator(settings, "test-model", cache=cache).generate(sql_request())
    assert again.cached and len(fake.chat_requests()) == 1
    assert again.truncated and again.error == first.error
    assert classify_error(again.error) == "truncated"  # was "malformed" from the cache


def test_a_cache_file_from_before_the_finish_reason_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "chat.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                    "content TEXT NOT NULL, tokens_in INTEGER, tokens_out INTEGER, "
                    "created_at REAL NOT NULL)")
        old.execute("INSERT INTO replies VALUES ('k', 'm', 'hello', 3, 1, 0)")
    old.close()
    cache = ResponseCache(path)
    assert cache.get("k") == CachedReply("hello", 3, 1, None)
    cache.put("k2", "m", CachedReply("cut", 3, 2, "length"))
    assert cache.get("k2") == CachedReply("cut", 3, 2, "length")
    assert len(ResponseCache(path)) == 2


# --- a server without /tokenize refuses the prompt -------------------------------------------

def test_the_servers_refusals_are_read() -> None:
    """Each server's words (llama.cpp's copied from its server, xllamacpp 2026.10)."""
    llama = overflow_in("request (731 tokens) exceeds the available context size (512 "
                        "tokens), try increasing it",
                        {"code": 400, "n_prompt_tokens": 731, "n_ctx": 512})
    assert (llama.window, llama.prompt_tokens) == (512, 731)  # type: ignore[union-attr]
    vllm = overflow_in("This model's maximum context length is 8192 tokens. However, you "
                       "requested 8728 tokens (8216 in the messages, 512 in the completion). "
                       "Please reduce the length of the messages or completion.")
    assert (vllm.window, vllm.prompt_tokens) == (8192, 8216)  # type: ignore[union-attr]
    newer = overflow_in("This model's maximum context length is 4096 tokens. However, your "
                        "request has 5000 input tokens. Please reduce the length of the "
                        "input messages.")
    assert (newer.window, newer.prompt_tokens) == (4096, 5000)  # type: ignore[union-attr]
    ollama = overflow_in("the input length exceeds the context length")
    assert (ollama.window, ollama.prompt_tokens) == (None, None)  # type: ignore[union-attr]
    assert overflow_in("Internal error (fake 500)") is None
    assert "window" in ERROR_CLASSES
    assert classify_error("HTTP 400 from 127.0.0.1:1 (model m): request (731 tokens) "
                          "exceeds the available context size (512 tokens), try increasing "
                          "it") == "window"


def big_table_dataset(root: Path) -> Path:
    """One QA query whose table is long (300 rows): its prompt fills any budget."""
    import json

    root.mkdir()
    (root / "dataset.json").write_text(json.dumps({"name": "long-table", "task": "qa"}))
    rows = [["Lake", "Depth", "Country"]] + [[f"Lake number {i}", i * 3, f"Land {i % 7}"]
                                             for i in range(300)]
    (root / "corpus.jsonl").write_text(json.dumps(
        {"database_id": "wiki", "table_id": "lakes", "table": rows,
         "context": {"title": "Lakes by depth"}}) + "\n")
    (root / "queries.jsonl").write_text(json.dumps(
        {"query_id": "q1", "query": "Which lake is deepest?", "answer": "Lake number 299",
         "table_id": "lakes", "database_id": "wiki"}) + "\n")
    return root


@pytest.mark.parametrize("words", ["llama.cpp", "vllm", "vllm-new", "ollama"])
def test_a_refused_prompt_is_fitted_on_the_retry(tmp_path: Path, server: Any,
                                                 words: str) -> None:
    """No /props, no /tokenize: our count is tiktoken's, the server's is 1.5 times it
    (a foreign tokenizer), the window 1,500 as TARGET_CONTEXT_WINDOW says. The first
    prompt overflows; the server's answer teaches the count (or, from Ollama, a tighter
    share), the query is fitted again and the second request is accepted."""
    fake = server(context_window=1500, window_error=words, prompt_scale=1.5,
                  chat_responder=lambda body: "Lake number 299")
    settings = settings_for(tmp_path, fake, TARGET_CONTEXT_WINDOW="1500",
                            TARGET_MAX_TOKENS_QA="64")
    result = run(str(big_table_dataset(tmp_path / "long")), settings, limit=1,
                 context="oracle", token_budget=4000)
    first, second = fake.chat_requests()
    assert fake.prompt_tokens(first.body) > 1500 >= fake.prompt_tokens(second.body)
    (record,) = generations(result, settings)
    assert record["error"] is None and record["answer"] == "Lake number 299"
    assert 0 < record["cut"]["tables"][0]["rows_kept"] < 300
    assert result.run.status == "complete"


# --- sampling settings ----------------------------------------------------------------------

LLAMA_ONLY = ("repeat_penalty", "dry_multiplier")


def test_sampling_settings_are_sent_where_the_server_takes_them(tmp_path: Path,
                                                                server: Any) -> None:
    """OpenAI's settings to every server; llama.cpp's repeat_penalty and DRY only to a
    server whose /props says it is llama.cpp and lists them (an external llama.cpp then
    gets the repetition control local: gets)."""
    environ = {"TARGET_FREQUENCY_PENALTY": "0.5", "TARGET_PRESENCE_PENALTY": "-0.25",
               "TARGET_REPEAT_PENALTY": "1.1"}
    llama = server(props=llama_cpp_props(4096), chat_responder=lambda body: SQL_REPLY)
    llama.props["default_generation_settings"]["params"] = {  # type: ignore[index]
        "temperature": 0.8, "repeat_penalty": 1.0, "dry_multiplier": 0.0}
    plain = server(chat_responder=lambda body: SQL_REPLY)
    lists_no_dry = server(props=llama_cpp_props(4096), chat_responder=lambda body: SQL_REPLY)
    lists_no_dry.props["default_generation_settings"]["params"] = {  # type: ignore[index]
        "repeat_penalty": 1.0}
    for fake in (llama, plain, lists_no_dry):
        made = OpenAIGenerator(settings_for(tmp_path, fake, **environ), "test-model")
        assert made.generate(sql_request()).error is None
    (to_llama,), (to_plain,), (to_other,) = (f.chat_requests() for f in
                                             (llama, plain, lists_no_dry))
    openai_words = {"temperature": 0.0, "frequency_penalty": 0.5, "presence_penalty": -0.25}
    assert {k: to_llama.body.get(k) for k in (*openai_words, *LLAMA_ONLY)} == {
        **openai_words, "repeat_penalty": 1.1, "dry_multiplier": 0.8}
    assert {k: to_plain.body.get(k) for k in openai_words} == openai_words
    assert not set(LLAMA_ONLY) & set(to_plain.body)
    assert to_other.body["repeat_penalty"] == 1.1 and "dry_multiplier" not in to_other.body


def test_sampling_is_recorded_with_the_run_and_keys_the_cache(tmp_path: Path,
                                                              server: Any) -> None:
    fake = server(props=llama_cpp_props(4096), tokenize=True,
                  chat_responder=lambda body: SQL_REPLY)
    settings = settings_for(tmp_path, fake)
    result = run("demo-sql", settings, limit=2)
    details = result.run.index_info["server"]
    assert details["sampling"] == {"temperature": 0.0, "dry_multiplier": 0.8}
    assert details["context_window"] == 4096
    assert len(fake.chat_requests()) == 2
    run("demo-sql", settings, limit=2)  # the same settings: every reply from the cache
    assert len(fake.chat_requests()) == 2
    penalised = settings_for(tmp_path, fake, TARGET_FREQUENCY_PENALTY="0.3")
    again = run("demo-sql", penalised, limit=2)  # other settings: other replies
    assert len(fake.chat_requests()) == 4
    assert again.run.index_info["server"]["sampling"]["frequency_penalty"] == 0.3
    assert all(r.body["frequency_penalty"] == 0.3 for r in fake.chat_requests()[2:])


def test_sampling_settings_are_checked() -> None:
    from target_core.errors import ConfigError

    assert load_settings(environ={}).sampling == {"temperature": 0.0, "dry_multiplier": 0.8}
    chosen = load_settings(environ={"TARGET_TEMPERATURE": "0.7", "TARGET_DRY_MULTIPLIER": "0",
                                    "TARGET_REPEAT_PENALTY": "1.15"}).sampling
    assert chosen == {"temperature": 0.7, "repeat_penalty": 1.15, "dry_multiplier": 0.0}
    with pytest.raises(ConfigError, match="TARGET_FREQUENCY_PENALTY='3' must be between -2"):
        load_settings(environ={"TARGET_FREQUENCY_PENALTY": "3"})
    with pytest.raises(ConfigError, match="TARGET_TEMPERATURE='warm' is not a number"):
        load_settings(environ={"TARGET_TEMPERATURE": "warm"})
