"""The OpenAI-compatible chat generator against a fake server on loopback.

`PromptModel` plays the model from the prompt alone, as a real one would: it reads
the system message to know the task and answers from what the user message holds
(the question, the tables or the schema), never from gold data. Faults (429, 500,
timeouts, malformed bodies, a rejected key, a server without structured outputs)
come from the fake server, so the real `openai` client meets them on the wire.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from target_core.cli import main
from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.engine.export import export_run
from target_core.engine.runner import RunResult, run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import ConfigError
from target_core.generators import Generator, build_generator
from target_core.generators.base import Context, GenerationRequest
from target_core.generators.openai_chat import OpenAIGenerator
from target_core.generators.prompts import (
    FACT_SYSTEM,
    NO_CONTEXT,
    QA_SYSTEM,
    SQL_FIELDS,
    SQL_RESPONSE_SCHEMA,
    SQL_SYSTEM,
    SUMMARY_SYSTEM,
    build_messages,
)
from target_core.llm.cache import ResponseCache
from target_core.llm.chat import DEFAULT_MODEL
from target_core.run_config import GenerationConfig, RunConfig
from target_core.sql import ERROR_CLASSES
from target_core.types import Table

if TYPE_CHECKING:  # registered by tests/conftest.py (pytest_plugins)
    from fake_openai import FakeOpenAI, Recorded

KEY = "sk-test-0123456789abcdef"
PLANTED = "sk-test-PLANTED-123"
_WORDS = re.compile(r"\w+")

MEDALS = Table("wiki", "1994_Winter_Games_medal_table_1",
               ("Rank", "Nation", "Gold", "Silver", "Bronze", "Total"),
               ((1, "Norway", 11, 7, 5, 23), (2, "Germany", 9, 6, 9, 24),
                (3, "Canada", 4, 8, 3, 15), (4, "Italy", 7, 5, 8, 20)),
               {"title": "1994 Winter Games medal table", "section_title": "Medal table"})
MEDALS_TEXT = ("Title: 1994 Winter Games medal table\n| Rank | Nation | Gold | Total |\n"
               "| --- | --- | --- | --- |\n| 1 | Norway | 11 | 23 |\n| 2 | Germany | 9 | 24 |")
SCHEMA_TEXT = ("\nDatabase Name: school\nSchema:\n\nCREATE TABLE students (\n    id INTEGER,\n"
               "    name TEXT,\n    PRIMARY KEY (id)\n)\n\nCREATE TABLE teachers (\n"
               "    id INTEGER\n)\n\n---\n\nDatabase Name: library\nSchema:\n\n"
               "CREATE TABLE books (\n    id INTEGER\n)\n\n---\n")


# --- a model that answers from the prompt -------------------------------------------------

def _after(text: str, marker: str) -> str:
    return text.rsplit(marker, 1)[1].strip() if marker in text else ""


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


class PromptModel:
    """A chat responder that answers TARGET's prompts from their text.

    - QA: "Answer: " and the question without its question mark.
    - fact: "True" when one table row holds every number of the statement and another
      of its words, "Not Enough Information" without tables, else "False".
    - SQL: a JSON object counting the rows of the first table of the first database
      in the schema, with that database as database_id.
    - summary: a JSON object naming the table by its title, summarizing its header.
    It records every SQL request's response_format and the most requests it served at
    once (`delay` seconds per answer make overlapping requests visible).
    """

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.sql_formats: list[Any] = []
        self.unexpected: list[str] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            return self.answer(body)
        finally:
            with self._lock:
                self._in_flight -= 1

    def answer(self, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        system = messages[0]["content"] if messages else ""
        user = messages[-1]["content"] if messages else ""
        if system == QA_SYSTEM:
            return "Answer: " + _after(user, "\nQuestion: ").rstrip("?")
        if system == FACT_SYSTEM:
            statement = _after(user, "\nStatement: ")
            tables = _after(user.rsplit("\nStatement: ", 1)[0], "Tables: ")
            if not tables or tables.startswith("Some or all tables are not available"):
                return "Not Enough Information"
            rows = [_words(line) for line in tables.splitlines() if line.startswith("|")]
            numbers = {w for w in _words(statement) if w.isdigit()}
            names = _words(statement) - numbers
            return "True" if any(numbers <= row and names & row for row in rows) else "False"
        if system == SQL_SYSTEM:
            with self._lock:
                self.sql_formats.append(body.get("response_format"))
            database = re.search(r"Database Name: (\S+)", user)
            table = re.search(r'CREATE TABLE "?(\w+)', user)
            return json.dumps({
                "chain_of_thought_reasoning": "Count the rows of the first table shown.",
                "sql_query": f"SELECT COUNT(*) FROM {table.group(1)}" if table else "SELECT 1",
                "database_id": database.group(1) if database else ""})
        if system == SUMMARY_SYSTEM:
            table = user.partition("\nTable: ")[2]  # the table text may hold "Table: ID"
            title = _after(table.splitlines()[0], "Title:") if table else ""
            header = next((line for line in table.splitlines() if line.startswith("|")), "")
            columns = ", ".join(c.strip() for c in header.strip("|").split("|") if c.strip())
            return json.dumps({"table_name": title or "untitled table",
                               "table_summary": f"A table of {title} with columns {columns}."})
        with self._lock:
            self.unexpected.append(system)
        return "I do not know this prompt."


@pytest.fixture
def model(fake_openai: FakeOpenAI) -> PromptModel:
    responder = PromptModel()
    fake_openai.chat_responder = responder
    return responder


def openai_settings(workspace: Path, server: FakeOpenAI, key: str = KEY,
                    **environ: str) -> Settings:
    return load_settings(workspace, environ={
        "OPENAI_API_KEY": key, "OPENAI_BASE_URL": server.base_url,
        "TARGET_GENERATION_CONCURRENCY": "2", **environ})


def make_generator(tmp_path: Path, server: FakeOpenAI, *, model: str = DEFAULT_MODEL,
                   cache: ResponseCache | None = None, **options: Any) -> OpenAIGenerator:
    options.setdefault("timeout", 5.0)
    options.setdefault("max_retries", 2)
    return OpenAIGenerator(openai_settings(tmp_path / "workspace", server), model,
                           cache=cache, **options)


def qa_request(query: str = "Which nation won 11 gold medals?") -> GenerationRequest:
    context = Context(mode="oracle", tables=(MEDALS,), text=MEDALS_TEXT)
    return GenerationRequest("qa", query, context, build_messages("qa", query, MEDALS_TEXT))


def fact_request(statement: str) -> GenerationRequest:
    context = Context(mode="oracle", tables=(MEDALS,), text=MEDALS_TEXT)
    return GenerationRequest("fact", statement, context,
                             build_messages("fact", statement, MEDALS_TEXT))


def sql_request(query: str = "How many students are there?") -> GenerationRequest:
    context = Context(mode="retrieved", databases=("school", "library"), text=SCHEMA_TEXT)
    return GenerationRequest("sql", query, context, build_messages("sql", query, SCHEMA_TEXT))


# --- one request at a time ------------------------------------------------------------------

def test_implements_the_protocol(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    generator = make_generator(tmp_path, fake_openai, model="my-local-model", concurrency=3)
    assert isinstance(generator, Generator)
    assert generator.spec == "openai:my-local-model"
    assert generator.label == f"my-local-model (OpenAI-compatible, 127.0.0.1:{fake_openai.port})"
    assert fake_openai.chat_requests() == []  # building it asks the model nothing
    assert generator.concurrency == 3  # the fake reports no slots: as asked
    assert KEY not in repr(generator) and KEY not in generator.label
    assert fake_openai.chat_requests() == []


def test_registry_builds_it_and_needs_a_key(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    settings = openai_settings(tmp_path, fake_openai, TARGET_GENERATION_CONCURRENCY="5",
                               TARGET_OPENAI_TIMEOUT="7.5")
    built = build_generator("openai:gpt-4o", settings)
    assert isinstance(built, OpenAIGenerator)
    assert (built.spec, built.concurrency, built.timeout) == ("openai:gpt-4o", 5, 7.5)
    assert build_generator("openai", settings).spec == f"openai:{DEFAULT_MODEL}"
    assert (tmp_path / "cache" / "chat.sqlite").is_file()
    no_key = load_settings(tmp_path, environ={"OPENAI_BASE_URL": fake_openai.base_url})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_generator("openai", no_key)
    assert fake_openai.chat_requests() == []


def test_qa_request_and_answer(tmp_path: Path, fake_openai: FakeOpenAI,
                               model: PromptModel) -> None:
    request = qa_request()
    generation = make_generator(tmp_path, fake_openai).generate(request)
    assert generation.error is None and not generation.cached
    assert generation.answer == "Answer: Which nation won 11 gold medals"
    assert generation.database_id is None and generation.reasoning is None
    assert generation.tokens_in and generation.tokens_out and generation.ms > 0
    (sent,) = fake_openai.chat_requests()
    assert sent.body == {"model": DEFAULT_MODEL, "temperature": 0, "max_tokens": 256,
                         "messages": [dict(m) for m in request.messages]}
    assert sent.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(("statement", "label"), [
    ("Norway won 11 gold medals.", "True"),
    ("Norway won 12 gold medals.", "False"),
])
def test_fact_request_and_answer(tmp_path: Path, fake_openai: FakeOpenAI, model: PromptModel,
                                 statement: str, label: str) -> None:
    generation = make_generator(tmp_path, fake_openai).generate(fact_request(statement))
    assert (generation.answer, generation.error) == (label, None)
    (sent,) = fake_openai.chat_requests()
    assert sent.body["messages"][0]["content"] == FACT_SYSTEM
    assert "response_format" not in sent.body


def test_sql_request_asks_for_the_json_schema(tmp_path: Path, fake_openai: FakeOpenAI,
                                              model: PromptModel) -> None:
    request = sql_request()
    generation = make_generator(tmp_path, fake_openai).generate(request)
    assert generation.error is None
    assert generation.answer == "SELECT COUNT(*) FROM students"
    assert generation.database_id == "school"
    assert generation.reasoning == "Count the rows of the first table shown."
    (sent,) = fake_openai.chat_requests()
    assert sent.body["model"] == DEFAULT_MODEL and sent.body["temperature"] == 0
    assert sent.body["messages"] == [dict(m) for m in request.messages]
    response_format = sent.body["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]
    assert schema["strict"] is True
    assert schema["schema"]["required"] == list(SQL_FIELDS) == [
        "chain_of_thought_reasoning", "sql_query", "database_id"]
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_sql_reply_in_a_fence_with_an_empty_database(tmp_path: Path,
                                                     fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_responder = lambda body: (
        'Here it is:\n```json\n{"chain_of_thought_reasoning": "", "sql_query": '
        '" SELECT 1 ", "database_id": ""}\n```')
    generation = make_generator(tmp_path, fake_openai).generate(sql_request())
    assert (generation.answer, generation.database_id, generation.reasoning,
            generation.error) == ("SELECT 1", None, None, None)


# --- faults -------------------------------------------------------------------------------

@pytest.mark.parametrize("fault", ["429", "502", "503"])
def test_retried_then_succeeds(tmp_path: Path, fake_openai: FakeOpenAI, model: PromptModel,
                               fault: str) -> None:
    fake_openai.fail_next(1, fault)
    generation = make_generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.error is None
    assert generation.answer == "Answer: Which nation won 11 gold medals"
    assert len(fake_openai.chat_requests()) == 2


def test_gives_up_after_retries(tmp_path: Path, fake_openai: FakeOpenAI,
                                model: PromptModel) -> None:
    fake_openai.fail_next(3, "429")
    generation = make_generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.answer == ""
    assert generation.error == (f"HTTP 429 from 127.0.0.1:{fake_openai.port} (model "
                                f"{DEFAULT_MODEL}): Rate limit reached (fake) (3 attempts)")
    assert len(fake_openai.chat_requests()) == 3


def test_server_error_is_not_retried(tmp_path: Path, fake_openai: FakeOpenAI,
                                     model: PromptModel) -> None:
    # a 500 is the server's answer to this request (llama-cpp-python's validation errors
    # are 500s): sending it again gives the same answer
    fake_openai.fail_next(1, "500")
    generation = make_generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.error == (f"HTTP 500 from 127.0.0.1:{fake_openai.port} (model "
                                f"{DEFAULT_MODEL}): Internal error (fake 500)")
    assert len(fake_openai.chat_requests()) == 1


def test_timeout_becomes_an_error(tmp_path: Path, fake_openai: FakeOpenAI,
                                  model: PromptModel) -> None:
    fake_openai.fail_next(2, "sleep", seconds=3)
    generator = make_generator(tmp_path, fake_openai, timeout=0.3, max_retries=1)
    started = time.monotonic()
    generation = generator.generate(qa_request())
    assert time.monotonic() - started < 2.5  # gave up before the server's 3 s
    assert generation.answer == ""
    assert generation.error == (
        f"no reply from 127.0.0.1:{fake_openai.port} (model {DEFAULT_MODEL}) within 0.3 s "
        "(TARGET_OPENAI_TIMEOUT); not sent again, since the server may still be computing it")
    assert len(fake_openai.chat_requests()) == 1  # the server may still be computing it


def test_server_down_becomes_an_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on once the socket closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = load_settings(tmp_path, environ={
        "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    generation = OpenAIGenerator(settings, max_retries=0).generate(qa_request())
    assert generation.answer == ""
    assert generation.error == (f"cannot connect to 127.0.0.1:{port} (model {DEFAULT_MODEL}): "
                                "connection refused; check OPENAI_BASE_URL and that the "
                                "server is up")
    retried = OpenAIGenerator(settings, max_retries=1).generate(qa_request())
    assert retried.error is not None and "refused (2 attempts)" in retried.error


def test_malformed_body_becomes_an_error(tmp_path: Path, fake_openai: FakeOpenAI,
                                         model: PromptModel) -> None:
    fake_openai.fail_next(1, "malformed")
    generator = make_generator(tmp_path, fake_openai)
    generation = generator.generate(qa_request())
    assert generation.answer == "" and generation.error is not None
    assert generation.error.startswith("malformed response")
    assert len(fake_openai.chat_requests()) == 1  # not retried
    assert generator.generate(qa_request()).error is None  # the next call is fine


@pytest.mark.parametrize("body", [
    {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
    {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
     "choices": [{"index": 0, "finish_reason": "stop",
                  "message": {"role": "assistant", "content": None}}]},
])
def test_reply_without_text_becomes_an_error(tmp_path: Path, fake_openai: FakeOpenAI,
                                             body: dict[str, Any]) -> None:
    fake_openai.chat_responder = lambda request: body
    generation = make_generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.answer == "" and generation.error is not None
    assert "no choices" in generation.error or "no text content" in generation.error


def test_sql_reply_that_is_not_json(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    prose = "I would count the students: SELECT COUNT(*) FROM students"
    fake_openai.chat_responder = lambda body: prose
    generation = make_generator(tmp_path, fake_openai).generate(sql_request())
    assert generation.answer == "" and generation.database_id is None
    assert generation.error is not None and "JSON object" in generation.error
    assert "sql_query" in generation.error
    assert generation.reasoning == prose  # the raw reply is kept for the Query page


def test_rejected_key_stops_and_is_not_repeated(tmp_path: Path, fake_openai: FakeOpenAI,
                                                model: PromptModel) -> None:
    fake_openai.fail_next(1, "401")
    generator = make_generator(tmp_path, fake_openai)
    with pytest.raises(ConfigError, match=r"rejected the API key \(HTTP 401\)") as error:
        generator.generate(qa_request())
    assert KEY not in str(error.value) and KEY[:12] not in str(error.value)
    assert error.value.__cause__ is None and error.value.__suppress_context__
    assert len(fake_openai.chat_requests()) == 1  # 401 is not retried
    fake_openai.fail_next(1, "401")
    with pytest.raises(ConfigError):
        generator.summarize(MEDALS)


# --- cache --------------------------------------------------------------------------------

def test_cache_hits_misses_and_persistence(tmp_path: Path, fake_openai: FakeOpenAI,
                                           model: PromptModel) -> None:
    path = tmp_path / "cache" / "chat.sqlite"
    cache = ResponseCache(path)
    generator = make_generator(tmp_path, fake_openai, cache=cache)
    first = generator.generate(sql_request())
    again = generator.generate(sql_request())
    assert (first.cached, again.cached) == (False, True)
    assert len(fake_openai.chat_requests()) == 1
    assert (again.answer, again.database_id, again.reasoning) == (
        first.answer, first.database_id, first.reasoning)
    assert (again.tokens_in, again.tokens_out) == (first.tokens_in, first.tokens_out)

    other_question = generator.generate(sql_request("How many teachers are there?"))
    assert not other_question.cached and len(fake_openai.chat_requests()) == 2
    other_model = make_generator(tmp_path, fake_openai, model="gpt-4o", cache=cache)
    assert not other_model.generate(sql_request()).cached
    assert len(fake_openai.chat_requests()) == 3
    assert fake_openai.chat_requests()[-1].body["model"] == "gpt-4o"

    reopened = make_generator(tmp_path, fake_openai, cache=ResponseCache(path))
    assert reopened.generate(sql_request()).cached
    assert len(fake_openai.chat_requests()) == 3 and len(ResponseCache(path)) == 3


def test_failures_are_not_cached(tmp_path: Path, fake_openai: FakeOpenAI,
                                 model: PromptModel) -> None:
    cache = ResponseCache(tmp_path / "chat.sqlite")
    generator = make_generator(tmp_path, fake_openai, cache=cache)
    fake_openai.fail_next(1, "malformed")
    assert generator.generate(qa_request()).error is not None
    assert len(cache) == 0
    retried = generator.generate(qa_request())
    assert retried.error is None and not retried.cached and len(cache) == 1


# --- a server without structured outputs ----------------------------------------------------

def test_server_without_response_format(tmp_path: Path, fake_openai: FakeOpenAI,
                                        model: PromptModel,
                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="target_core.llm.chat")
    fake_openai.reject_response_format = True
    generator = make_generator(tmp_path, fake_openai, cache=ResponseCache(tmp_path / "c.db"))
    generation = generator.generate(sql_request())
    assert generation.error is None
    assert (generation.answer, generation.database_id) == ("SELECT COUNT(*) FROM students",
                                                           "school")
    first, second, third = fake_openai.chat_requests()
    assert first.body["response_format"]["type"] == "json_schema"
    assert second.body["response_format"] == {
        "type": "json_object", "schema": SQL_RESPONSE_SCHEMA["schema"]}
    assert "response_format" not in third.body
    assert third.body["messages"] == first.body["messages"]  # the prompt asks for the JSON
    assert "refuses response_format json_schema" in caplog.text
    # remembered: the next SQL request and a summary go without it at once
    generator.generate(sql_request("How many books are there?"))
    assert generator.summarize(MEDALS).error is None
    assert ["response_format" in r.body for r in fake_openai.chat_requests()] == [
        True, True, False, False, False]


def test_other_bad_requests_are_errors(tmp_path: Path, fake_openai: FakeOpenAI,
                                       model: PromptModel) -> None:
    fake_openai.reject_response_format = True
    generation = make_generator(tmp_path, fake_openai).generate(qa_request())
    assert generation.error is None  # QA sends no response_format: nothing to reject
    fake_openai.chat_responder = lambda body: {"unexpected": "shape"}
    broken = make_generator(tmp_path, fake_openai).generate(qa_request())
    assert broken.answer == "" and broken.error is not None


# --- summaries ------------------------------------------------------------------------------

def test_summarize(tmp_path: Path, fake_openai: FakeOpenAI, model: PromptModel) -> None:
    summary = make_generator(tmp_path, fake_openai).summarize(MEDALS, rows=2)
    assert summary.error is None
    assert summary.name == "1994 Winter Games medal table"
    assert summary.summary == ("A table of 1994 Winter Games medal table with columns Rank, "
                               "Nation, Gold, Silver, Bronze, Total.")
    (sent,) = fake_openai.chat_requests()
    assert sent.body["messages"][0]["content"] == SUMMARY_SYSTEM
    assert sent.body["response_format"]["type"] == "json_schema"
    assert sent.body["max_tokens"] == 256
    prompt = sent.body["messages"][1]["content"]
    assert "Germany" in prompt and "Canada" not in prompt  # header and first rows only


def test_summarize_failures(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    generator = make_generator(tmp_path, fake_openai)
    fake_openai.fail_next(1, "malformed")
    failed = generator.summarize(MEDALS)
    assert (failed.name, failed.summary) == ("1994 Winter Games medal table", "")
    assert failed.error is not None and failed.error.startswith("malformed response")

    fake_openai.chat_responder = lambda body: "A table about medals."
    no_json = generator.summarize(Table("db", "t_7", ("a",), ((1,),)))
    assert (no_json.name, no_json.summary) == ("t_7", "")
    assert no_json.error == "the reply has no 'table_summary'"


# --- runs, end to end ---------------------------------------------------------------------

def run(dataset: str, settings: Settings, *, limit: int = 8, fresh: bool = False,
        **generation: Any) -> RunResult:
    """A bm25 run of `dataset` answered by the openai generator (GenerationConfig options)."""
    config = RunConfig(dataset, "bm25", limit=limit,
                       generation=GenerationConfig(generator="openai", **generation))
    return run_retrieval(config, settings=settings, fresh=fresh)


def records(result: RunResult, settings: Settings) -> list[dict[str, Any]]:
    store = RunStore.in_workspace(settings.workspace)
    found = [r.generation for r in store.iter_results(result.run.run_id)]
    assert all(g is not None for g in found)
    return found  # type: ignore[return-value]


def question_of(request: Recorded) -> str:
    return _after(request.body["messages"][1]["content"], "\nQuestion: ")


def test_run_demo_qa(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    model = PromptModel(delay=0.05)
    fake_openai.chat_responder = model
    settings = openai_settings(tmp_path, fake_openai)
    result = run("demo-qa", settings)
    metrics = result.run.metrics
    assert result.run.status == "complete" and result.n_new == 8
    assert {"sacrebleu", "rouge_l", "generation_ms_p50", "generation_ms_p90"} <= set(metrics)
    assert 0 < metrics["rouge_l"] <= 1 and 0 < metrics["sacrebleu"] <= 100
    assert (metrics["generation_errors"], metrics["n_generated"]) == (0, 8)
    assert result.run.index_info["generator"] == (
        f"{DEFAULT_MODEL} (OpenAI-compatible, 127.0.0.1:{fake_openai.port})")
    sent = fake_openai.chat_requests()
    assert len(sent) == 8 and model.unexpected == []
    assert model.max_in_flight == 2  # TARGET_GENERATION_CONCURRENCY
    by_question = {question_of(r): r for r in sent}
    dataset = load_dataset("demo-qa", settings)
    for stored in RunStore.in_workspace(settings.workspace).iter_results(result.run.run_id):
        record, query = stored.generation, dataset.query(stored.query_id)
        assert record is not None and record["error"] is None
        assert record["generator"] == f"openai:{DEFAULT_MODEL}"
        assert record["answer"] == "Answer: " + query.query.rstrip("?")  # its own question
        request = by_question[query.query]
        assert request.body["messages"][0]["content"] == QA_SYSTEM
        # the tables recorded as its context are the ones its prompt showed, in rank order
        assert record["context"] == "retrieved"
        assert [list(k) for k, _ in stored.ranked[:len(record["context_keys"])]] == (
            record["context_keys"])
        prompt = request.body["messages"][1]["content"]
        titles = [dataset.table(tuple(k)).title for k in record["context_keys"]]
        assert [prompt.index(f"Title: {t}\n") for t in titles] == sorted(
            prompt.index(f"Title: {t}\n") for t in titles)


def test_run_demo_fact(tmp_path: Path, fake_openai: FakeOpenAI, model: PromptModel) -> None:
    settings = openai_settings(tmp_path, fake_openai)
    result = run("demo-fact", settings)
    metrics = result.run.metrics
    assert {"fact_accuracy", "fact_precision", "fact_recall", "fact_f1", "fact_macro_f1",
            "fact_nei_rate"} <= set(metrics)
    assert 0 <= metrics["fact_accuracy"] <= 1 and metrics["fact_nei_rate"] == 0
    assert metrics["generation_errors"] == 0
    sent = fake_openai.chat_requests()
    assert len(sent) == 8 and {r.body["messages"][0]["content"] for r in sent} == {FACT_SYSTEM}
    labels = {"True": 1, "False": 0}
    for stored in RunStore.in_workspace(settings.workspace).iter_results(result.run.run_id):
        record = stored.generation
        assert record is not None and record["answer"] in labels
        assert record["fact"]["pred"] == labels[record["answer"]]
        assert stored.metrics["fact_correct"] == float(record["fact"]["pred"]
                                                       == record["fact"]["gold"])
    again = run("demo-fact", settings, fresh=True)  # a complete run is not reopened
    assert again.run.run_id != result.run.run_id and again.n_new == 8
    assert len(fake_openai.chat_requests()) == 8  # answered from the cache
    assert again.run.metrics["fact_accuracy"] == metrics["fact_accuracy"]


def test_run_without_context(tmp_path: Path, fake_openai: FakeOpenAI,
                             model: PromptModel) -> None:
    result = run("demo-fact", openai_settings(tmp_path, fake_openai), limit=3, context="none")
    assert result.run.metrics["fact_nei_rate"] == 1.0
    for sent in fake_openai.chat_requests():
        assert f"Tables: {NO_CONTEXT}\nStatement: " in sent.body["messages"][1]["content"]


def test_run_demo_sql_and_rerun_from_cache(tmp_path: Path, fake_openai: FakeOpenAI,
                                           model: PromptModel) -> None:
    settings = openai_settings(tmp_path, fake_openai)
    result = run("demo-sql", settings)
    metrics = result.run.metrics
    assert {"execution_accuracy", "execution_accuracy_strict", "exact_set_match"} <= set(
        metrics)
    assert metrics["generation_errors"] == 0 and metrics["n_generated"] == 8
    assert len(model.sql_formats) == 8 and model.unexpected == []
    assert all(f["type"] == "json_schema" and f["json_schema"]["schema"]["required"]
               == list(SQL_FIELDS) for f in model.sql_formats)
    stored = records(result, settings)
    for record in stored:
        sql = record["sql"]
        # the model counted the first table of the first database it was shown
        assert record["database_id"] == record["databases"][0] == sql["database_id"]
        assert record["answer"].startswith("SELECT COUNT(*) FROM ")
        assert record["reasoning"] == "Count the rows of the first table shown."
        assert sql["error_class"] in ERROR_CLASSES
        assert sql["gold"]["error"] is None and sql["gold"]["n_rows"] >= 1
        assert sql["pred"]["error"] is None and sql["pred"]["n_rows"] == 1
    matches = [r["sql"]["flags"]["execution_match"] for r in stored]
    assert metrics["execution_accuracy"] == pytest.approx(sum(matches) / 8)

    reused = run("demo-sql", settings)  # complete already: the stored run, nothing sent
    assert reused.reused and reused.run.run_id == result.run.run_id and reused.n_new == 0
    assert len(fake_openai.chat_requests()) == 8
    rerun = run("demo-sql", settings, fresh=True)  # asked for: a new run
    assert not rerun.resumed and not rerun.reused and rerun.n_new == 8
    assert len(fake_openai.chat_requests()) == 8  # every answer came from the cache
    again = records(rerun, settings)
    assert all(g["cached"] for g in again)
    assert [g["answer"] for g in again] == [r["answer"] for r in stored]
    assert [g["sql"]["error_class"] for g in again] == [r["sql"]["error_class"]
                                                         for r in stored]
    assert rerun.run.metrics["execution_accuracy"] == metrics["execution_accuracy"]


def test_run_recovers_from_a_rate_limit(tmp_path: Path, fake_openai: FakeOpenAI,
                                        model: PromptModel) -> None:
    fake_openai.fail_next(1, "429")
    metrics = run("demo-qa", openai_settings(tmp_path, fake_openai)).run.metrics
    assert metrics["generation_errors"] == 0 and metrics["n_generated"] == 8
    assert len(fake_openai.chat_requests()) == 9


def test_run_with_timeouts_and_a_malformed_reply(tmp_path: Path, fake_openai: FakeOpenAI,
                                                 model: PromptModel) -> None:
    # The first two calls (one per worker) time out and are not sent again (the server
    # may still be computing them); the next reply is malformed, which is not retried:
    # three queries fail and the run goes on.
    settings = openai_settings(tmp_path, fake_openai, TARGET_OPENAI_TIMEOUT="1")
    fake_openai.fail_next(2, "sleep", seconds=3)
    fake_openai.fail_next(1, "malformed")
    started = time.monotonic()
    result = run("demo-sql", settings)
    assert time.monotonic() - started < 10
    assert result.run.n_done == 8
    assert result.run.metrics["generation_errors"] == 3
    assert result.run.metrics["n_generated"] == 8
    failed = [r for r in records(result, settings) if r["error"]]
    assert sorted(r["error"].split(" ")[0] for r in failed) == ["malformed", "no", "no"]
    assert all(r["sql"]["error_class"] == "generation_failed" for r in failed)
    assert all(r["answer"] == "" and r["sql"]["flags"]["execution_match"] is False
               for r in failed)
    assert len(fake_openai.chat_requests()) == 8  # nothing sent twice


def test_summary_retriever_through_chat(tmp_path: Path, fake_openai: FakeOpenAI,
                                        model: PromptModel) -> None:
    # demo-sql: its 43 tables keep this fast (demo-qa has 440 to summarize and embed)
    settings = openai_settings(tmp_path, fake_openai, TARGET_GENERATION_CONCURRENCY="4")
    config = RunConfig("demo-sql", "summary:minilm@openai", limit=5)

    def summary_requests() -> int:
        return sum(1 for r in fake_openai.chat_requests()
                   if r.body["messages"][0]["content"] == SUMMARY_SYSTEM)

    first = run_retrieval(config, settings=settings).run
    tables = first.index_info["n_texts"]
    assert summary_requests() == tables == 43
    assert first.index_info["summaries_failed"] == 0
    assert first.index_info["summarizer"].startswith(DEFAULT_MODEL)
    assert "\nA table of " in first.text_example  # "name\nsummary" was embedded
    assert first.metrics["mrr"] > 0
    second = run_retrieval(config, settings=settings, fresh=True).run
    assert second.run_id != first.run_id and second.status == "complete"
    assert summary_requests() == tables  # every summary came from the cache
    assert second.text_fingerprint == first.text_fingerprint


# --- the command line ---------------------------------------------------------------------

def test_cli_run_with_the_openai_generator(tmp_path: Path, fake_openai: FakeOpenAI,
                                           model: PromptModel, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("TARGET_GENERATION_CONCURRENCY", "2")
    for name in ("TARGET_OPENAI_TIMEOUT", "TARGET_DATASETS", "TARGET_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    argv = ["run", "--dataset", "demo-sql", "--retriever", "bm25", "--generator", "openai",
            "--limit", "5", "--json", "--workspace", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["config"]["generation"]["generator"] == "openai"
    assert 0 <= summary["metrics"]["execution_accuracy"] <= 1
    assert summary["metrics"]["n_generated"] == 5
    assert "estimate for" not in out.err  # a server other than OpenAI's bills nothing we know
    assert len(fake_openai.chat_requests()) == 5
    assert all(r.headers["authorization"] == f"Bearer {PLANTED}"
               for r in fake_openai.chat_requests())

    fake_openai.fail_next(1, "401")
    argv[2] = "demo-qa"  # other prompts: nothing cached
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == ""
    (error,) = out.err.splitlines()  # the one-line error
    assert error.startswith("error: ") and "rejected the API key" in error
    assert PLANTED not in out.err


# --- the key stays out of everything written -----------------------------------------------

def test_key_is_never_written(tmp_path: Path, fake_openai: FakeOpenAI, model: PromptModel,
                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    workspace = tmp_path / "workspace"
    settings = openai_settings(workspace, fake_openai, key=PLANTED)
    fake_openai.fail_next(1, "503")
    fake_openai.fail_next(1, "429")
    fake_openai.fail_next(1, "malformed")  # a query fails: its error is stored
    sql_run = run("demo-sql", settings, limit=5)
    assert sql_run.run.metrics["generation_errors"] == 1
    fact_run = run("demo-fact", settings, limit=3)
    fake_openai.fail_next(100, "401")  # the key echoed back by the server
    before = len(fake_openai.chat_requests())
    with pytest.raises(ConfigError, match="rejected the API key") as error:
        run("demo-qa", settings, limit=30)
    assert PLANTED not in str(error.value)
    # the run stops: a few requests were in flight or picked up meanwhile, not all 30
    assert len(fake_openai.chat_requests()) - before < 10
    store = RunStore.in_workspace(settings.workspace)
    failed = store.list_runs(status="failed")
    assert len(failed) == 1 and "rejected the API key" in (failed[0].error or "")
    assert all(r.headers["authorization"] == f"Bearer {PLANTED}"
               for r in fake_openai.requests)  # it was sent: the checks below mean something

    written: list[Path] = []
    for run_id in (sql_run.run.run_id, fact_run.run.run_id, failed[0].run_id):
        for fmt in ("target", "trec", "csv"):
            written += export_run(store, run_id, fmt, tmp_path / "exports" / f"{run_id}.{fmt}")
    files = [p for p in workspace.rglob("*") if p.is_file()]
    assert workspace / "runs.sqlite" in files and workspace / "cache" / "chat.sqlite" in files
    for path in files + written:
        data = path.read_bytes()
        assert PLANTED.encode() not in data, path
        assert PLANTED.encode("utf-16-le") not in data, path
    assert caplog.text and PLANTED not in caplog.text
    assert all(PLANTED not in r.getMessage() and PLANTED not in str(r.args)
               for r in caplog.records)


def test_cache_is_per_server(tmp_path: Path) -> None:
    """The same model name on two servers is two models: no shared cached answers."""
    from fake_openai import start_fake_openai

    from target_core.generators.openai_chat import OpenAIGenerator
    from target_core.generators.prompts import build_messages
    from target_core.llm.cache import ResponseCache

    first, second = start_fake_openai(), start_fake_openai()
    try:
        cache = ResponseCache(tmp_path / "chat.sqlite")
        request = GenerationRequest("qa", "Which lake?", Context(mode="none"),
                                    build_messages("qa", "Which lake?", "", no_context=True))
        for server in (first, second):
            settings = load_settings(tmp_path / "ws", environ={
                "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url})
            assert not OpenAIGenerator(settings, cache=cache).generate(request).cached
            assert len(server.chat_requests()) == 1
    finally:
        first.stop()
        second.stop()


HOSTILE_SQL = ["DROP TABLE students", "DELETE FROM students", "UPDATE students SET gpa = 0",
               "ATTACH DATABASE 'stolen.sqlite' AS s", "PRAGMA writable_schema=1",
               "VACUUM INTO 'copy.sqlite'",
               "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
               "SELECT count(*) FROM c"]


def test_hostile_generated_sql_changes_nothing(tmp_path: Path, fake_openai,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that answers with writes, ATTACH, PRAGMA, VACUUM INTO and a runaway CTE:
    each is refused or stopped, the run completes, and the database file is byte for
    byte what it was."""
    import hashlib
    import shutil

    from target_core import sql as sql_module
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import GenerationConfig, RunConfig

    demo = Path(__file__).resolve().parent.parent / "data" / "demo" / "demo-sql"
    folder = tmp_path / "hostile-sql"
    shutil.copytree(demo, folder)
    (folder / "dataset.json").write_text(json.dumps({"name": "hostile-sql", "task": "sql"}))
    lines = (folder / "queries.jsonl").read_text().splitlines()
    university = [line for line in lines if json.loads(line)["database_id"] == "university"]
    (folder / "queries.jsonl").write_text("\n".join(university[:len(HOSTILE_SQL)]) + "\n")
    database = folder / "databases" / "university" / "university.sqlite"
    before = hashlib.sha256(database.read_bytes()).hexdigest()

    monkeypatch.setattr(sql_module, "DEFAULT_TIMEOUT_S", 0.5)  # keep the CTE short
    monkeypatch.chdir(tmp_path)  # where a relative ATTACH / VACUUM INTO would write
    answers = iter(HOSTILE_SQL)
    fake_openai.chat_responder = lambda body: json.dumps({
        "chain_of_thought_reasoning": "", "sql_query": next(answers),
        "database_id": "university"})
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url,
        "TARGET_GENERATION_CONCURRENCY": "1", "TARGET_DATASETS": str(folder)})
    run = run_retrieval(RunConfig("hostile-sql", "bm25",
                                  generation=GenerationConfig("openai", context="oracle")),
                        settings=settings).run
    assert run.status == "complete" and run.n_done == len(HOSTILE_SQL)
    results = RunStore.in_workspace(tmp_path / "ws").iter_results(run.run_id)
    classes = {r.generation["answer"]: r.generation["sql"]["error_class"] for r in results}
    assert classes == {sql: ("timeout" if sql.startswith("WITH") else "refused")
                       for sql in HOSTILE_SQL}
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    assert not (tmp_path / "stolen.sqlite").exists() and not (tmp_path / "copy.sqlite").exists()
