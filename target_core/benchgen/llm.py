"""Questions written and checked by a model: the LLM question writer and the LLM judge.

The writer follows the data generation prompt of seed 002 (Figure 3), made generic: an
analyst who knows the people using the database reads its schema, the sampled SQL and
the first rows of its result, analyses the query's intent and writes questions that
the result answers fully, for readers from expert analysts to casual users, with
natural variations and the odd typo. Two additions keep the questions true to the SQL:
filter values are to be written exactly as in the SQL (the round-trip check and human
reviewers look for them), and when the template used a time expression the prompt
states today's date and the expression, so "last month" stays "last month" in the
question and the stored reference date resolves it (seed 002, section 2).

The judge is the paper's first validation stage: a model asked whether the question is
answered by exactly this SQL, with the same schema and reference date.

Both talk to any OpenAI-compatible server through `llm.chat.ChatModel.chat_json` (cache,
retries of transient failures only, key scrubbing, structured output negotiated per
server, max tokens TARGET_MAX_TOKENS_WRITER and TARGET_MAX_TOKENS_JUDGE). A failed call
is a `Written` error or an undecided `Verdict`, never an exception; a rejected key
raises ConfigError, since every other call would fail the same way.

`make_writer` / `make_judge` build a writer or judge from its spec, an entry of WRITERS /
QUESTION_JUDGES: `template` / `round-trip` (offline), then every chat backend of
llm.models: `openai[:MODEL]`, or `local:smollm2` / `local:PATH.gguf` (a GGUF model on
llama.cpp inside the process, through the same client). An entry builds a function of
`Needs` (the databases, the cache, ...: what the component reads besides its spec).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from target_core.benchgen.instantiate import SampledQuery
from target_core.benchgen.questions import (
    Judge,
    QuestionWriter,
    RoundTripJudge,
    TemplateWriter,
    Verdict,
    Written,
    WrittenQuestion,
)
from target_core.benchgen.templates import Template
from target_core.benchgen.timeref import TimeRange, describe, is_relative
from target_core.config import Settings
from target_core.errors import UnknownNameError
from target_core.generators.context import read_schema
from target_core.generators.prompts import today_line
from target_core.llm.cache import ResponseCache
from target_core.llm.chat import ChatModel
from target_core.llm.models import cached, role_registry

log = logging.getLogger(__name__)

DEFAULT_QUESTIONS = 3

QUESTION_SYSTEM = ("You are an expert data analyst who helps the people who use a database "
                   "understand their data.")
JUDGE_SYSTEM = ("You are an expert data analyst who checks benchmark questions against the "
                "SQL query that is meant to answer them.")

QUESTIONS_SCHEMA: dict[str, Any] = {
    "name": "benchmark_questions",
    "strict": True,
    "schema": {"type": "object", "additionalProperties": False,
               "required": ["analysis", "questions"],
               "properties": {
                   "analysis": {"type": "string",
                                "description": "The intent of the SQL query."},
                   "questions": {"type": "array", "items": {"type": "string"},
                                 "description": "Questions the query result answers."}}},
}
# "reason" comes first so that a model writing in schema order reasons before it decides
JUDGE_SCHEMA: dict[str, Any] = {
    "name": "question_check",
    "strict": True,
    "schema": {"type": "object", "additionalProperties": False,
               "required": ["reason", "answerable"],
               "properties": {
                   "reason": {"type": "string", "description": "A short explanation."},
                   "answerable": {"type": "boolean",
                                  "description": "True when exactly this SQL answers it."}}},
}

SchemaOf = Callable[[str], str]
"""A database id -> its schema as CREATE statements."""


# --- schema -----------------------------------------------------------------------------

def schema_text(database_path: Path, database_id: str) -> str:
    """The CREATE statements of every table of the database, one after the other."""
    return "\n\n".join(t.create_sql.strip() for t in read_schema(database_id, database_path)
                       if t.create_sql.strip())


def schema_lookup(databases: Mapping[str, Path]) -> SchemaOf:
    """`schema_of(database_id)` over `databases`, reading each schema once (writers
    run in threads)."""
    texts: dict[str, str] = {}
    lock = threading.Lock()

    def schema_of(database_id: str) -> str:
        with lock:
            if database_id not in texts:
                if database_id not in databases:
                    raise UnknownNameError("database", database_id, databases)
                texts[database_id] = schema_text(databases[database_id], database_id)
            return texts[database_id]

    return schema_of


# --- prompts ----------------------------------------------------------------------------

def time_hint(time: Mapping[str, str]) -> str:
    """How the question should name the SQL's period: relative words stay relative."""
    period = TimeRange.from_dict(dict(time))
    dates = (f"from {period.start.isoformat()} up to, not including, "
             f"{period.end.isoformat()}")
    if is_relative(period.expression):
        words = describe(period)
        return (f"The date condition of the SQL is '{words}' relative to today ({dates}). "
                f"Say '{words}' or the same period in other words relative to today; do "
                "not spell out these dates.")
    return (f"The date condition of the SQL is the fixed period {describe(period)} "
            f"({dates}). Name this period itself, not relative to today.")


def _cell(value: Any) -> str:
    return format(value, ".10g") if isinstance(value, float) else str(value)


def result_text(item: SampledQuery) -> str:
    """The SQL's result columns and first rows, as plain lines."""
    lines = [f"Columns: {', '.join(item.columns)}"] if item.columns else []
    shown = len(item.result_preview)
    if shown:
        lines.append(f"First {shown} of {item.n_rows} rows:" if item.n_rows > shown
                     else "The only row:" if shown == 1 else f"All {shown} rows:")
        lines += [" | ".join(_cell(v) for v in row) for row in item.result_preview]
    return "\n".join(lines)


def _tagged(tag: str, text: str) -> str:
    return f"<{tag}>\n{text}\n</{tag}>"


def _context(item: SampledQuery, schema: str, *, with_time_hint: bool) -> list[str]:
    parts = [_tagged("table schema", schema), _tagged("sql", item.sql)]
    if item.reference_date:
        parts.append(_tagged("reference date", today_line(item.reference_date)))
    if with_time_hint and item.time:
        parts.append(_tagged("time reference", time_hint(item.time)))
    return parts


def question_messages(item: SampledQuery, schema: str,
                      n_questions: int = DEFAULT_QUESTIONS) -> list[dict[str, str]]:
    """The writer's prompt (seed 002, Figure 3, for any database)."""
    result = result_text(item)
    parts = ["Your task is to write authentic questions, as the people who use this "
             "database would ask them, that can be answered using the results of the "
             "following SQL query.",
             *_context(item, schema, with_time_hint=True),
             *([_tagged("query result", result)] if result else []),
             "To complete the task follow these steps:\n"
             "1. Analyze the intent of the SQL query and write your analysis in the "
             "\"analysis\" field.\n"
             "2. Consider the perspective of the people who use this database and the "
             "questions they commonly ask. Map the SQL query output to real scenarios.\n"
             f"3. Based on your reasoning, write {n_questions} realistic questions that\n"
             "  - can be fully answered by the query results without additional analysis "
             "or reasoning steps;\n"
             "  - reflect varying levels of data literacy, from an expert analyst to a "
             "casual user;\n"
             "  - include natural language variations and occasional typos, as people "
             "really write;\n"
             "  - mention every filter value exactly as it appears in the SQL;\n"
             "  - phrase time references relative to today when the time reference above "
             "is relative.",
             "Respond with a JSON object with the fields \"analysis\" (a string) and "
             f"\"questions\" (a list of {n_questions} strings), and nothing else."]
    return [{"role": "system", "content": QUESTION_SYSTEM},
            {"role": "user", "content": "\n".join(parts)}]


def judge_messages(question: str, item: SampledQuery, schema: str) -> list[dict[str, str]]:
    """The judge's prompt: is `question` answered by exactly this SQL?"""
    parts = ["Decide whether the question below is answered by exactly this SQL query: "
             "its result must give the full answer without further analysis, every filter, "
             "grouping, ordering, limit and time period of the query must follow from the "
             "question, and the question must ask for nothing the query does not return.",
             *_context(item, schema, with_time_hint=False),
             *([_tagged("result columns", ", ".join(item.columns))] if item.columns else []),
             _tagged("question", question),
             "Respond with a JSON object with the fields \"reason\" (a short explanation) "
             "and \"answerable\" (true or false), and nothing else."]
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": "\n".join(parts)}]


# --- replies ----------------------------------------------------------------------------

def clean_questions(raw: Any, limit: int) -> list[str]:
    """The reply's questions: strings only, trimmed, no blanks, no repeats (ignoring
    case and spacing), at most `limit`."""
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    kept: list[str] = []
    seen: set[str] = set()
    for text in items:
        if not isinstance(text, str) or not (text := " ".join(text.split())):
            continue
        if (folded := text.casefold()) not in seen:
            seen.add(folded)
            kept.append(text)
    return kept[:limit]


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


# --- the writer and the judge -------------------------------------------------------------

class LLMQuestionWriter:
    """Questions from a model (seed 002, Figure 3): at most `n_questions`, cleaned by
    `clean_questions`, styled "llm 1", "llm 2", ...; the model's analysis is only logged
    (debug), since `Written` has no place for it."""

    def __init__(self, generator: ChatModel, schema_of: SchemaOf,
                 n_questions: int = DEFAULT_QUESTIONS) -> None:
        if n_questions < 1:
            raise ValueError("n_questions must be at least 1")
        self.generator = generator
        self.schema_of = schema_of
        self.n_questions = n_questions
        self.spec = generator.spec
        self.label = generator.label
        self.concurrency = generator.concurrency  # the builder writes this many at once

    def write(self, item: SampledQuery, template: Template) -> Written:
        messages = question_messages(item, self.schema_of(item.database), self.n_questions)
        reply = self.generator.chat_json(messages, schema=QUESTIONS_SCHEMA, task="writer")
        if reply.data is None:
            return Written([], error=reply.error)
        texts = clean_questions(reply.data.get("questions"), self.n_questions)
        if not texts:
            return Written([], error="the reply has no questions (a 'questions' list of "
                                     "strings)")
        log.debug("%s: %s", item.template_id, reply.data.get("analysis"))
        return Written([WrittenQuestion(t, f"llm {i}", self.label)
                        for i, t in enumerate(texts, start=1)])


class LLMJudge:
    """The model's verdict on whether exactly this SQL answers the question."""

    def __init__(self, generator: ChatModel, schema_of: SchemaOf) -> None:
        self.generator = generator
        self.schema_of = schema_of
        self.spec = generator.spec
        self.label = generator.label
        self.method = f"LLM judge ({generator.label})"

    def judge(self, question: str, item: SampledQuery, template: Template) -> Verdict:
        messages = judge_messages(question, item, self.schema_of(item.database))
        reply = self.generator.chat_json(messages, schema=JUDGE_SCHEMA, task="judge")
        if reply.data is None:
            return Verdict(None, method=self.method, reason=reply.error or "")
        passed = _as_bool(reply.data.get("answerable"))
        if passed is None:
            return Verdict(None, method=self.method,
                           reason="the reply has no 'answerable' true or false")
        return Verdict(passed, method=self.method, reason=str(reply.data.get("reason") or ""))


# --- factories ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Needs:
    """What a writer or judge is made with besides its spec."""

    databases: Mapping[str, Path]
    """Database id -> SQLite path, for the schema in the prompt."""
    cache: ResponseCache | None = None
    """The model's response cache; None: the workspace's."""
    n_questions: int = DEFAULT_QUESTIONS


def _llm_writer(model: ChatModel, settings: Settings) -> Callable[[Needs], QuestionWriter]:
    return lambda needs: LLMQuestionWriter(cached(model, settings, needs.cache),
                                           schema_lookup(needs.databases), needs.n_questions)


def _llm_judge(model: ChatModel, settings: Settings) -> Callable[[Needs], Judge]:
    return lambda needs: LLMJudge(cached(model, settings, needs.cache),
                                  schema_lookup(needs.databases))


def _template() -> Callable[[Needs], QuestionWriter]:
    return lambda needs: TemplateWriter()


def _round_trip() -> Callable[[Needs], Judge]:
    return lambda needs: RoundTripJudge()


WRITERS = role_registry("question writer", (
    "template", "the template's own questions, offline", _template), _llm_writer)
QUESTION_JUDGES = role_registry("question judge", (
    "round-trip", "the round-trip check of the question's values, offline", _round_trip),
    _llm_judge)
WRITER_SPECS = WRITERS.examples()
JUDGE_SPECS = QUESTION_JUDGES.examples()
"""Every writer's and judge's example specs, for error messages and pickers."""


def make_writer(spec: str, settings: Settings, databases: Mapping[str, Path], *,
                cache: ResponseCache | None = None,
                n_questions: int = DEFAULT_QUESTIONS) -> QuestionWriter:
    """`template` (offline), `openai[:MODEL]` or `local:...` (WRITERS); `databases` maps
    id -> SQLite path for the schema in the prompt. No API key is a ConfigError here,
    before any call."""
    return WRITERS.build(spec, settings)(Needs(databases, cache, n_questions))


def make_judge(spec: str, settings: Settings, databases: Mapping[str, Path], *,
               cache: ResponseCache | None = None) -> Judge:
    """`round-trip` (offline), `openai[:MODEL]` or `local:...` (QUESTION_JUDGES), as
    `make_writer`."""
    return QUESTION_JUDGES.build(spec, settings)(Needs(databases, cache))
