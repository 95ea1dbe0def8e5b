"""The LLM question writer and judge (target_core.benchgen.llm) against a fake server.

Items are real SQL sampled from the shipped templates on the demo databases. The fake
OpenAI-compatible server plays the model; the tests check what the prompts carry
(schema, SQL, reference date, time reference), how replies become questions and
verdicts, that failures are values and not exceptions, that replies are cached and
that the API key never reaches an error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from target_core.benchgen.instantiate import SampledQuery, sample_queries
from target_core.benchgen.llm import (
    JUDGE_SCHEMA,
    QUESTIONS_SCHEMA,
    LLMJudge,
    LLMQuestionWriter,
    clean_questions,
    make_judge,
    make_writer,
    question_messages,
    schema_lookup,
    schema_text,
)
from target_core.benchgen.questions import (
    RoundTripJudge,
    TemplateWriter,
    Verdict,
    WrittenQuestion,
    round_trip,
)
from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, Template, load_templates
from target_core.benchgen.timeref import TimeRange, describe, is_relative
from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.errors import ConfigError, UnknownNameError
from target_core.generators.openai_chat import OpenAIGenerator
from target_core.generators.prompts import today_line
from target_core.llm.cache import ResponseCache
from target_core.llm.chat import DEFAULT_MODEL

if TYPE_CHECKING:  # registered by tests/conftest.py (pytest_plugins)
    from fake_openai import FakeOpenAI

KEY = "sk-test-benchgen-0123456789"
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
_COMPARED_NUMBER = re.compile(r"[<>=]\s*(\d+(?:\.\d+)?)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[dict[str, Path], dict[str, Template], tuple[SampledQuery, ...]]:
    templates = load_templates(EXAMPLE_TEMPLATES_DIR)
    workspace = tmp_path_factory.mktemp("demo") / "ws"
    databases = dict(load_dataset("demo-sql", load_settings(workspace)).databases)
    report = sample_queries(templates, databases, n=1, seed=0)
    return databases, {t.id: t for t in templates}, report.queries


@pytest.fixture(scope="module")
def databases(demo: Any) -> dict[str, Path]:
    return demo[0]


@pytest.fixture(scope="module")
def templates(demo: Any) -> dict[str, Template]:
    return demo[1]


@pytest.fixture(scope="module")
def items(demo: Any) -> tuple[SampledQuery, ...]:
    return demo[2]


def _pick(items: tuple[SampledQuery, ...], test: Callable[[SampledQuery], bool]
          ) -> SampledQuery:
    return next(q for q in items if test(q))


@pytest.fixture(scope="module")
def relative_item(items: tuple[SampledQuery, ...]) -> SampledQuery:
    return _pick(items, lambda q: q.time is not None and is_relative(q.time["expression"]))


@pytest.fixture(scope="module")
def absolute_item(items: tuple[SampledQuery, ...]) -> SampledQuery:
    return _pick(items, lambda q: q.time is not None and not is_relative(q.time["expression"]))


@pytest.fixture(scope="module")
def timeless_item(items: tuple[SampledQuery, ...]) -> SampledQuery:
    return _pick(items, lambda q: q.time is None and "'" in q.sql)


def openai_settings(tmp_path: Path, server: FakeOpenAI) -> Settings:
    return load_settings(tmp_path / "ws", environ={"OPENAI_API_KEY": KEY,
                                                   "OPENAI_BASE_URL": server.base_url})


def generator(tmp_path: Path, server: FakeOpenAI, *, cache: ResponseCache | None = None
              ) -> OpenAIGenerator:
    return OpenAIGenerator(openai_settings(tmp_path, server), "test-model", cache=cache,
                           timeout=5.0, max_retries=1)


def writer(tmp_path: Path, server: FakeOpenAI, databases: Mapping[str, Path], *,
           n_questions: int = 3, cache: ResponseCache | None = None) -> LLMQuestionWriter:
    return LLMQuestionWriter(generator(tmp_path, server, cache=cache),
                             schema_lookup(databases), n_questions)


def judge(tmp_path: Path, server: FakeOpenAI, databases: Mapping[str, Path], *,
          cache: ResponseCache | None = None) -> LLMJudge:
    return LLMJudge(generator(tmp_path, server, cache=cache), schema_lookup(databases))


def replying(data: Any) -> Callable[[dict[str, Any]], str]:
    return lambda body: json.dumps(data)


def user_prompt(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def _between(text: str, tag: str) -> str:
    return text.split(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0]


def _no_key_in(*texts: str | None) -> bool:
    return all(KEY not in (t or "") and KEY[:14] not in (t or "") for t in texts)


# --- schema -------------------------------------------------------------------------------

def test_schema_text_is_every_create_statement(databases: dict[str, Path]) -> None:
    text = schema_text(databases["retail_store"], "retail_store")
    assert text.count("CREATE TABLE") == 7
    assert "CREATE TABLE orders (" in text and "status TEXT NOT NULL" in text


def test_schema_lookup_reads_each_database_once(databases: dict[str, Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import target_core.benchgen.llm as llm

    calls: list[str] = []
    original = llm.read_schema

    def counting(database_id: str, path: Path) -> Any:
        calls.append(database_id)
        return original(database_id, path)

    monkeypatch.setattr(llm, "read_schema", counting)
    schema_of = schema_lookup(databases)
    assert schema_of("airline") == schema_of("airline")
    schema_of("hospital")
    assert calls == ["airline", "hospital"]
    with pytest.raises(UnknownNameError, match="unknown database 'airlines'; did you mean "
                                               "'airline'"):
        schema_of("airlines")


# --- the writer's prompt ------------------------------------------------------------------

def test_writer_prompt_holds_schema_sql_reference_date_and_time(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], relative_item: SampledQuery) -> None:
    fake_openai.chat_responder = replying({"analysis": "a", "questions": ["Q?"]})
    written = writer(tmp_path, fake_openai, databases).write(
        relative_item, templates[relative_item.template_id])
    assert written.error is None
    (sent,) = fake_openai.chat_requests()
    assert sent.body["model"] == "test-model"
    assert sent.body["response_format"] == {"type": "json_schema",
                                            "json_schema": QUESTIONS_SCHEMA}
    prompt = user_prompt(sent.body)
    assert _between(prompt, "table schema") == schema_text(
        databases[relative_item.database], relative_item.database)
    assert _between(prompt, "sql") == relative_item.sql
    assert relative_item.reference_date == "2024-10-30"
    assert "Today is 2024-10-30 (Wednesday). Weeks start on Monday; 'last week/month/year' " \
           "means the previous full calendar period" in prompt
    assert relative_item.time is not None
    words = describe(TimeRange.from_dict(relative_item.time))
    hint = _between(prompt, "time reference")
    assert f"'{words}' relative to today" in hint and "do not spell out" in hint
    assert "a list of 3 strings" in prompt
    assert "varying levels of data literacy" in prompt and "typos" in prompt
    assert "exactly as it appears in the SQL" in prompt
    result = _between(prompt, "query result")
    assert result.startswith(f"Columns: {', '.join(relative_item.columns)}")
    assert "seller" not in prompt.lower() and "e-commerce" not in prompt.lower()


def test_writer_prompt_without_time_has_no_reference_date(
        databases: dict[str, Path], timeless_item: SampledQuery) -> None:
    schema = schema_lookup(databases)(timeless_item.database)
    system, user = question_messages(timeless_item, schema, 5)
    assert system["role"] == "system" and "people who use a database" in system["content"]
    prompt = user["content"]
    assert timeless_item.sql in prompt and "CREATE TABLE" in prompt
    assert "Today is" not in prompt and "<reference date>" not in prompt
    assert "<time reference>" not in prompt
    assert "write 5 realistic questions" in prompt


def test_fixed_period_is_named_not_made_relative(
        databases: dict[str, Path], absolute_item: SampledQuery) -> None:
    schema = schema_lookup(databases)(absolute_item.database)
    prompt = question_messages(absolute_item, schema)[1]["content"]
    hint = _between(prompt, "time reference")
    assert "fixed period" in hint and "not relative to today" in hint
    assert absolute_item.time is not None and absolute_item.time["start"] in hint


def test_reference_line_names_the_weekday() -> None:
    assert today_line("2025-01-06").startswith("Today is 2025-01-06 (Monday).")
    assert today_line("2024-12-31").startswith("Today is 2024-12-31 (Tuesday).")


# --- replies become questions --------------------------------------------------------------

def test_questions_are_cleaned_deduplicated_and_styled(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], timeless_item: SampledQuery) -> None:
    fake_openai.chat_responder = replying({"analysis": "counts", "questions": [
        "  How many  customers live in Eastport? ", "how many customers live in eastport?",
        "", "   ", 7, "customers in Eastport??", "nr of Eastport custmers", "one too many"]})
    llm_writer = writer(tmp_path, fake_openai, databases)
    written = llm_writer.write(timeless_item, templates[timeless_item.template_id])
    assert written.error is None
    assert written.questions == [
        WrittenQuestion("How many customers live in Eastport?", "llm 1", llm_writer.label),
        WrittenQuestion("customers in Eastport??", "llm 2", llm_writer.label),
        WrittenQuestion("nr of Eastport custmers", "llm 3", llm_writer.label)]
    assert llm_writer.spec == "openai:test-model"
    assert llm_writer.label == f"test-model (OpenAI-compatible, 127.0.0.1:{fake_openai.port})"


def test_clean_questions_edge_cases() -> None:
    assert clean_questions(None, 3) == []
    assert clean_questions({"q": "x"}, 3) == []
    assert clean_questions("Just one?", 3) == ["Just one?"]
    assert clean_questions(["a", "b", "c"], 2) == ["a", "b"]


@pytest.mark.parametrize(("reply", "error"), [
    ("Sure! Here are some questions: how many orders?", "the reply is not a JSON object"),
    (json.dumps({"analysis": "x", "questions": []}), "the reply has no questions"),
    (json.dumps({"analysis": "x", "questions": ["", 3]}), "the reply has no questions"),
    (json.dumps({"analysis": "x"}), "the reply has no questions"),
])
def test_writer_reply_without_questions_is_an_error(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], timeless_item: SampledQuery, reply: str,
        error: str) -> None:
    fake_openai.chat_responder = lambda body: reply
    written = writer(tmp_path, fake_openai, databases).write(
        timeless_item, templates[timeless_item.template_id])
    assert written.questions == []
    assert written.error is not None and written.error.startswith(error)


@pytest.mark.parametrize(("fault", "error"), [("500", "HTTP 500 from"),
                                              ("malformed", "malformed response"),
                                              ("429", "HTTP 429 from")])
def test_writer_failed_call_is_an_error_not_an_exception(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], relative_item: SampledQuery, fault: str,
        error: str) -> None:
    fake_openai.fail_next(2 if fault == "429" else 1, fault)  # 429: the try and its retry
    written = writer(tmp_path, fake_openai, databases).write(
        relative_item, templates[relative_item.template_id])
    assert written.questions == []
    assert written.error is not None and error in written.error
    assert _no_key_in(written.error)


def test_rejected_key_stops_without_repeating_it(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], relative_item: SampledQuery) -> None:
    fake_openai.fail_next(2, "401")
    template = templates[relative_item.template_id]
    with pytest.raises(ConfigError, match=r"rejected the API key") as raised:
        writer(tmp_path, fake_openai, databases).write(relative_item, template)
    assert _no_key_in(str(raised.value))
    with pytest.raises(ConfigError) as raised:
        judge(tmp_path, fake_openai, databases).judge("q?", relative_item, template)
    assert _no_key_in(str(raised.value))


def test_server_without_structured_outputs(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], timeless_item: SampledQuery) -> None:
    fake_openai.reject_response_format = True
    fake_openai.chat_responder = replying({"analysis": "a", "questions": ["Q one?", "Q two?"]})
    written = writer(tmp_path, fake_openai, databases).write(
        timeless_item, templates[timeless_item.template_id])
    assert [q.text for q in written.questions] == ["Q one?", "Q two?"]
    first, second, third = fake_openai.chat_requests()
    assert first.body["response_format"]["type"] == "json_schema"
    assert second.body["response_format"] == {"type": "json_object",
                                              "schema": QUESTIONS_SCHEMA["schema"]}
    assert "response_format" not in third.body and third.body["max_tokens"] == 768
    assert '"questions" (a list of 3 strings)' in user_prompt(third.body)


# --- the judge ------------------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "passed", "reason"), [
    ({"reason": "asks for exactly the count", "answerable": True}, True,
     "asks for exactly the count"),
    ({"reason": "the status filter is missing", "answerable": False}, False,
     "the status filter is missing"),
    ({"answerable": "true"}, True, ""),
    ({"reason": "unsure", "answerable": "maybe"}, None,
     "the reply has no 'answerable' true or false"),
    ({"reason": "forgot"}, None, "the reply has no 'answerable' true or false"),
])
def test_judge_reads_the_verdict(tmp_path: Path, fake_openai: FakeOpenAI,
                                 databases: dict[str, Path], templates: dict[str, Template],
                                 relative_item: SampledQuery, reply: dict[str, Any],
                                 passed: bool | None, reason: str) -> None:
    fake_openai.chat_responder = replying(reply)
    llm_judge = judge(tmp_path, fake_openai, databases)
    verdict = llm_judge.judge("How many flights last month?", relative_item,
                              templates[relative_item.template_id])
    assert verdict == Verdict(passed, [], f"LLM judge ({llm_judge.label})", reason)
    assert llm_judge.spec == "openai:test-model"


def test_judge_prompt(tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
                      templates: dict[str, Template], relative_item: SampledQuery,
                      timeless_item: SampledQuery) -> None:
    fake_openai.chat_responder = replying({"reason": "ok", "answerable": True})
    llm_judge = judge(tmp_path, fake_openai, databases)
    for item in (relative_item, timeless_item):
        llm_judge.judge("The question?", item, templates[item.template_id])
    with_time, without = fake_openai.chat_requests()
    assert with_time.body["response_format"] == {"type": "json_schema",
                                                 "json_schema": JUDGE_SCHEMA}
    prompt = user_prompt(with_time.body)
    assert _between(prompt, "question") == "The question?"
    assert _between(prompt, "sql") == relative_item.sql
    assert _between(prompt, "reference date") == today_line("2024-10-30")
    assert "CREATE TABLE flights" in prompt and "answered by exactly this SQL" in prompt
    assert "<time reference>" not in prompt  # the judge resolves the dates itself
    assert "Today is" not in user_prompt(without.body)


@pytest.mark.parametrize("fault", ["500", "malformed"])
def test_judge_failure_is_undecided(tmp_path: Path, fake_openai: FakeOpenAI,
                                    databases: dict[str, Path], templates: dict[str, Template],
                                    relative_item: SampledQuery, fault: str) -> None:
    fake_openai.fail_next(2, fault)
    verdict = judge(tmp_path, fake_openai, databases).judge(
        "q?", relative_item, templates[relative_item.template_id])
    assert verdict.passed is None and verdict.reason and _no_key_in(verdict.reason)
    assert verdict.to_dict()["passed"] is None


def test_judge_reply_that_is_not_json(tmp_path: Path, fake_openai: FakeOpenAI,
                                      databases: dict[str, Path],
                                      templates: dict[str, Template],
                                      relative_item: SampledQuery) -> None:
    fake_openai.chat_responder = lambda body: "Yes, it is answerable."
    verdict = judge(tmp_path, fake_openai, databases).judge(
        "q?", relative_item, templates[relative_item.template_id])
    assert (verdict.passed, verdict.reason) == (None, "the reply is not a JSON object")


# --- cache ----------------------------------------------------------------------------------

def test_replies_are_cached(tmp_path: Path, fake_openai: FakeOpenAI,
                            databases: dict[str, Path], templates: dict[str, Template],
                            relative_item: SampledQuery) -> None:
    cache = ResponseCache(tmp_path / "chat.sqlite")
    template = templates[relative_item.template_id]

    def respond(body: dict[str, Any]) -> str:
        if body["response_format"]["json_schema"]["name"] == "question_check":
            return json.dumps({"reason": "ok", "answerable": True})
        return json.dumps({"analysis": "a", "questions": ["Q1?", "Q2?"]})

    fake_openai.chat_responder = respond
    first = writer(tmp_path, fake_openai, databases, cache=cache).write(relative_item, template)
    again = writer(tmp_path, fake_openai, databases, cache=cache).write(relative_item, template)
    assert again == first and len(fake_openai.chat_requests()) == 1
    verdicts = [judge(tmp_path, fake_openai, databases, cache=cache).judge(
        "Q1?", relative_item, template) for _ in range(2)]
    assert verdicts[0] == verdicts[1] and verdicts[0].passed is True
    assert len(fake_openai.chat_requests()) == 2
    # another question count is another prompt
    writer(tmp_path, fake_openai, databases, n_questions=4, cache=cache).write(
        relative_item, template)
    assert len(fake_openai.chat_requests()) == 3


def test_failures_are_not_cached(tmp_path: Path, fake_openai: FakeOpenAI,
                                 databases: dict[str, Path], templates: dict[str, Template],
                                 relative_item: SampledQuery) -> None:
    cache = ResponseCache(tmp_path / "chat.sqlite")
    template = templates[relative_item.template_id]
    fake_openai.chat_responder = replying({"analysis": "a", "questions": ["Q?"]})
    fake_openai.fail_next(1, "500")
    llm_writer = writer(tmp_path, fake_openai, databases, cache=cache)
    assert llm_writer.write(relative_item, template).error is not None
    assert len(cache) == 0
    assert [q.text for q in llm_writer.write(relative_item, template).questions] == ["Q?"]


def test_chat_json_reports_tokens_and_cache(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    chat = generator(tmp_path, fake_openai, cache=ResponseCache(tmp_path / "c.sqlite"))
    messages = [{"role": "user", "content": "Give me a JSON object."}]
    first = chat.chat_json(messages)
    assert first.error is None and first.data is not None and not first.cached
    assert first.data["echo"] == "Give me a JSON object."
    assert first.tokens_in == 5 and first.tokens_out
    assert fake_openai.chat_requests()[0].body["response_format"] == {"type": "json_object"}
    again = chat.chat_json(messages)
    assert again.cached and again.data == first.data
    assert len(fake_openai.chat_requests()) == 1


# --- a model that writes from the prompt, checked by the offline round trip -----------------

def prompt_writer(body: dict[str, Any]) -> str:
    """Writes questions from the prompt alone: the SQL's filter values (string literals
    but dates, numbers compared with) and the time reference's words."""
    prompt = user_prompt(body)
    sql = _between(prompt, "sql")
    values = [v.replace("''", "'") for v in _LITERAL.findall(sql)
              if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v)]
    values += _COMPARED_NUMBER.findall(sql)
    words = ""
    if "<time reference>" in prompt:
        hint = _between(prompt, "time reference")
        relative = re.search(r"is '([^']+)' relative to today", hint)
        words = relative.group(1) if relative else hint.split("fixed period ", 1)[1].split(
            " (from", 1)[0]
    text = " ".join(["what about", *values, words]).strip() + "?"
    return json.dumps({"analysis": "from the prompt", "questions": [text, text.upper()]})


def test_prompt_carries_what_the_round_trip_checks(
        tmp_path: Path, fake_openai: FakeOpenAI, databases: dict[str, Path],
        templates: dict[str, Template], items: tuple[SampledQuery, ...]) -> None:
    """Every value and time reference the round trip looks for is in the prompt, in a
    form a model can copy (column words are the model's job and are not checked)."""
    fake_openai.chat_responder = prompt_writer
    llm_writer = writer(tmp_path, fake_openai, databases)
    for item in items:
        template = templates[item.template_id]
        written = llm_writer.write(item, template)
        assert len(written.questions) == 1, written  # the upper-case copy is a duplicate
        verdict = round_trip(written.questions[0].text, item, template)
        missing = [m for m in verdict.missing
                   if not m.startswith(tuple(p.name for p in template.placeholders
                                             if p.type in ("column", "group_by")))]
        assert not missing, (item.template_id, written.questions[0].text, missing)


# --- factories ------------------------------------------------------------------------------

def test_factories(tmp_path: Path, fake_openai: FakeOpenAI,
                   databases: dict[str, Path]) -> None:
    settings = openai_settings(tmp_path, fake_openai)
    assert isinstance(make_writer("template", settings, databases), TemplateWriter)
    assert isinstance(make_judge(" round-trip ", settings, databases), RoundTripJudge)
    default = make_writer("openai", settings, databases, n_questions=5)
    assert isinstance(default, LLMQuestionWriter)
    assert (default.spec, default.n_questions) == (f"openai:{DEFAULT_MODEL}", 5)
    assert default.concurrency == 1  # unset: a server on this machine without slots
    named = make_judge("openai:my-model", settings, databases,
                       cache=ResponseCache(tmp_path / "c.sqlite"))
    assert isinstance(named, LLMJudge) and named.spec == "openai:my-model"
    assert named.generator.cache is not None
    assert fake_openai.chat_requests() == []  # building asks the model nothing


@pytest.mark.parametrize(("make", "spec", "suggestion"), [
    (make_writer, "tempate", "template"), (make_writer, "round-trip", None),
    (make_writer, "anthropic:claude", None), (make_judge, "roundtrip", "round-trip"),
    (make_judge, "template", None)])
def test_factories_reject_unknown_specs(tmp_path: Path, fake_openai: FakeOpenAI,
                                        databases: dict[str, Path], make: Any, spec: str,
                                        suggestion: str | None) -> None:
    with pytest.raises(UnknownNameError) as raised:
        make(spec, openai_settings(tmp_path, fake_openai), databases)
    assert raised.value.name == spec and "openai" in str(raised.value)
    assert raised.value.suggestion == suggestion


def test_factories_need_a_key_for_openai(tmp_path: Path, databases: dict[str, Path]) -> None:
    no_key = load_settings(tmp_path / "ws", environ={})
    assert isinstance(make_writer("template", no_key, databases), TemplateWriter)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_writer("openai", no_key, databases)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_judge("openai:gpt-4o", no_key, databases)


def test_a_draft_written_and_judged_by_the_openai_generator(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """The whole sample step from the command line with `--writer openai --judge openai`:
    the questions in the draft are the model's and every pair carries the judge's
    verdict. Accepting by the automatic validation rejects what the judge rejected, and
    the round trip vetoes what the judge approved (issue 24: four meaningless questions
    were accepted): these questions mention none of their SQL's values, so they stay
    pending for a person."""
    import json
    import os
    import subprocess
    import sys

    def responder(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        if "answerable" in json.dumps(body.get("response_format") or {}) or \
                "<question>" in prompt:
            verdict = "llm question two?" not in prompt  # the casual phrasing fails
            return json.dumps({"reason": "checked", "answerable": verdict})
        return json.dumps({"analysis": "counts", "questions": [
            "LLM question one?", "llm question two?", "LLM question one?"]})

    fake_openai.chat_responder = responder
    env = {**os.environ, "TARGET_WORKSPACE": str(tmp_path / "ws"), "OPENAI_API_KEY": KEY,
           "OPENAI_BASE_URL": fake_openai.base_url}
    root = Path(__file__).resolve().parent.parent

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "target_core", "benchgen", *args,
                               "--json"], capture_output=True, text=True, env=env, cwd=root,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert KEY not in done.stdout + done.stderr
        return json.loads(done.stdout)

    made = cli("sample", "--database", "hospital", "--n", "1", "--writer", "openai:test-model",
               "--judge", "openai:test-model", "--draft", "llm")
    questions = [q for item in made["items"] for q in item["questions"]]
    assert questions and {q["text"] for q in questions} == {"LLM question one?",
                                                            "llm question two?"}
    assert all(q["writer"].startswith("test-model") for q in questions)
    assert all(q["judge"]["passed"] in (True, False) for q in questions)
    assert all(q["judge"]["method"].startswith("LLM judge") for q in questions)
    judged_ok = sum(q["judge"]["passed"] for q in questions)
    assert not any(q["round_trip"] for q in questions)  # no value of the SQL in them
    assert made["summary"]["automatic_passed"] == 0
    reviewed = cli("review", "llm", "--accept-automatic")
    assert reviewed["accepted"] == 0  # whatever the judge said
    assert reviewed["rejected"] == len(questions) - judged_ok
    assert reviewed["pending"] == judged_ok
    assert len(fake_openai.chat_requests()) == len(made["items"]) * 3  # 1 writer + 2 judge
    assert 0 < judged_ok < len(questions)  # the judge, not a constant, decided


def test_a_draft_with_a_few_failed_writings_is_kept_and_a_rerun_asks_only_those(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """Within TARGET_MAX_FAILED_GENERATIONS the draft is saved with the writer's error on
    the failed item; failures are not cached, so doing it again asks only that call."""
    from target_core.benchgen.build import sample_draft

    fake_openai.chat_responder = replying({"analysis": "a", "questions": ["Q one?"]})
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_openai.base_url,
        "TARGET_OPENAI_RETRIES": "0"})
    dataset = load_dataset("demo-sql", settings)

    def sample() -> tuple[int, list[tuple[SampledQuery, str]]]:
        draft, report, _, _ = sample_draft(
            settings, dataset, load_templates(EXAMPLE_TEMPLATES_DIR), database="hospital",
            name="few", n=1, seed=0, reference_date=None, writer_spec="openai:test-model",
            judge_spec="round-trip", templates_label="examples", replace=True)
        with draft:
            return len(report.queries), draft.writer_errors()

    fake_openai.fail_next(1, "500")
    n_items, errors = sample()
    assert n_items >= 3 and len(errors) == 1 and "HTTP 500" in errors[0][1]
    assert len(fake_openai.chat_requests()) == n_items
    n_again, errors = sample()
    assert n_again == n_items and errors == []
    assert len(fake_openai.chat_requests()) == n_items + 1  # only the failed one again


def test_a_draft_job_whose_writer_cannot_reach_the_server_ends_failed(
        tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Benchmark builder page's job: failed, with the reason, and no draft."""
    from target_core.benchgen.draft import list_drafts
    from target_core.benchgen.draft_jobs import DraftSpec
    from target_core.cli.main import main
    from target_core.engine.jobs import JobStore

    fake_openai.stop()  # the server is down
    for key, value in {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_openai.base_url,
                       "TARGET_OPENAI_RETRIES": "0"}.items():
        monkeypatch.setenv(key, value)
    workspace = tmp_path / "ws"
    spec = DraftSpec(dataset="demo-sql", name="down", templates=None,
                     templates_label="examples", database="hospital", n=1, seed=0,
                     reference_date=None, writer="openai:test-model", judge="round-trip")
    jobs = JobStore.in_workspace(workspace)
    job = jobs.create_job("draft", spec.to_dict())
    assert main(["worker", job.job_id, "--workspace", str(workspace)]) == 2
    failed = jobs.get(job.job_id)
    assert failed.status == "failed" and "question writings failed (connection" in failed.error
    assert KEY not in failed.error and list_drafts(workspace) == []
