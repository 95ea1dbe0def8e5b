"""Generation with OpenAI or any OpenAI-compatible chat server (vLLM, Ollama, llama.cpp).

Spec `openai` or `openai:MODEL` (default gpt-4o-mini), temperature 0 as TARGET. The
generator is a `llm.chat.ChatModel` (the one door to servers: client, window, cache,
negotiation) that answers the Generator protocol: TARGET's prompts in, an answer, a
label or a SQL query out (`generate`), and a table's name and summary (`summarize`,
the summary retriever's). What fails becomes `Generation.error` on that query and the
run goes on; only a rejected key (HTTP 401) stops the run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

from target_core.generators.base import Generation, GenerationRequest, TableSummary, first_rows
from target_core.generators.prompts import SQL_RESPONSE_SCHEMA, summary_messages
from target_core.llm.chat import ChatModel
from target_core.llm.client import CallFailed
from target_core.llm.replies import parse_json_object
from target_core.metrics.facts import names_a_label
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tasks import task_rules
from target_core.types import Table

log = logging.getLogger(__name__)

SUMMARY_SCHEMA: dict[str, Any] = {
    "name": "table_summary", "strict": True,
    "schema": {"type": "object", "additionalProperties": False,
               "required": ["table_name", "table_summary"],
               "properties": {"table_name": {"type": "string"},
                              "table_summary": {"type": "string"}}}}


def table_summary_messages(table: Table, rows: int) -> tuple[dict[str, str], ...]:
    """The messages asking for `table`'s name and summary from its header and first `rows`
    rows (what `summarize` sends, and what costs.py counts)."""
    return summary_messages(table_text(first_rows(table, rows), TableView(table_id=True)))


class OpenAIGenerator(ChatModel):
    """The Generator protocol on a ChatModel: TARGET's prompts in, answers out."""

    def generate(self, request: GenerationRequest) -> Generation:
        started = time.perf_counter()
        reply_kind = task_rules(request.task).reply
        text_sql = reply_kind == "sql" and request.sql_reply == "text"
        schema = SQL_RESPONSE_SCHEMA if reply_kind == "sql" and not text_sql else None
        try:
            reply, cached = self._complete(request.messages, request.task,
                                           schema=schema, structured=schema is not None)
        except CallFailed as exc:
            return Generation(answer="", error=str(exc), ms=_ms(started))
        answered = Generation(answer="", tokens_in=reply.tokens_in,
                              tokens_out=reply.tokens_out, cached=cached, ms=_ms(started),
                              truncated=reply.truncated, served_model=reply.served_model)
        if reply_kind == "label" and not names_a_label(reply.content):
            return replace(answered, reasoning=reply.content[:4000],
                           error="the reply names no label (True, False or Not Enough "
                                 "Information)" + self._cut_note(reply, request.task))
        if reply_kind != "sql":
            return replace(answered, answer=reply.content.strip())
        if text_sql:  # seed 002's prompt: prose, the SQL in a fence
            from target_core.generators.sql_prompt_options import extract_sql

            sql, why = extract_sql(reply.content)
            return replace(answered, answer=sql, reasoning=why, error=None if sql else (
                "the reply holds no SQL query" + self._cut_note(reply, request.task)))
        parsed = parse_json_object(reply.content)
        if parsed is None or not isinstance(parsed.get("sql_query"), str):
            return replace(answered, reasoning=reply.content[:4000],
                           error="the reply is not the JSON object asked for (no "
                                 "'sql_query' string)" + self._cut_note(reply, request.task))
        database = parsed.get("database_id")
        return replace(answered, answer=parsed["sql_query"].strip(),
                       database_id=str(database) if database not in (None, "") else None,
                       reasoning=str(parsed.get("chain_of_thought_reasoning") or "") or None)

    def summarize(self, table: Table, *, rows: int = 3) -> TableSummary:
        try:
            reply, _ = self._complete(table_summary_messages(table, rows), "summary",
                                      schema=SUMMARY_SCHEMA, structured=True)
        except CallFailed as exc:
            return TableSummary(name=table.title or table.table_id, summary="", error=str(exc))
        parsed = parse_json_object(reply.content) or {}
        name = str(parsed.get("table_name") or table.title or table.table_id)
        summary = str(parsed.get("table_summary") or "")
        if summary:
            return TableSummary(name=name, summary=summary)
        return TableSummary(name=name, summary="", error="the reply has no 'table_summary'"
                            + self._cut_note(reply, "summary"),
                            error_class="truncated" if reply.truncated else "malformed")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
