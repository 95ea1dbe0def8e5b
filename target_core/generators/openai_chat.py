"""Generation with OpenAI or any OpenAI-compatible chat server (vLLM, Ollama, llama.cpp).

Spec `openai` or `openai:MODEL` (default gpt-4o-mini), temperature 0 as TARGET. The
key and server come from settings (OPENAI_API_KEY, OPENAI_BASE_URL) and are passed to
the SDK explicitly; the key is never logged, stored or put into a message. The SDK
retries 429, 5xx, timeouts and connection errors `max_retries` times with exponential
backoff (or the server's retry-after). What still fails becomes `Generation.error` on
that query and the run goes on; only a rejected key (HTTP 401) stops the run, since
every other query would fail the same way.

Text-to-SQL asks for a JSON object (reasoning, SQL, database id) with a strict JSON
schema; a server that rejects `response_format` is asked again without it (the prompt
asks for the same JSON), and that is remembered for the rest of the run. Replies are
cached under (server, model, messages, response format), hashed: a rerun costs nothing.
`chat_json` gives other callers (the benchmark builder's question writer and judge) the
same call for a JSON object, with the same cache, retries and fallback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from target_core.config import Settings
from target_core.errors import ConfigError
from target_core.generators.base import Generation, GenerationRequest, TableSummary, first_rows
from target_core.generators.cache import CachedReply, ResponseCache, cache_key
from target_core.generators.prompts import (
    SQL_RESPONSE_SCHEMA,
    parse_json_object,
    summary_messages,
)
from target_core.openai_common import DEFAULT_BASE_URL, retries_text, scrub, server_label
from target_core.serialize import table_text
from target_core.types import Table, TableView

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gpt-4o-mini"


def table_summary_messages(table: Table, rows: int) -> tuple[dict[str, str], ...]:
    """The messages asking for `table`'s name and summary from its header and first `rows`
    rows (what `summarize` sends, and what costs.py counts)."""
    return summary_messages(table_text(first_rows(table, rows), TableView(table_id=True)))


class _CallFailed(Exception):
    """A call that failed after the SDK's retries; the message is safe to show."""


@dataclass(frozen=True)
class JsonReply:
    """A JSON object asked of the model (`chat_json`), or why there is none.

    `data` is None exactly when `error` is set; the error is safe to show (no key).
    """

    data: dict[str, Any] | None
    error: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cached: bool = False


class OpenAIGenerator:
    """Chat completions on an OpenAI-compatible server (see the module docstring)."""

    def __init__(self, settings: Settings, model: str = DEFAULT_MODEL, *,
                 cache: ResponseCache | None = None, timeout: float | None = None,
                 max_retries: int = 4, concurrency: int | None = None) -> None:
        if not settings.openai_api_key:
            raise ConfigError(
                "the openai generator needs an API key: set OPENAI_API_KEY (for a local "
                "OpenAI-compatible server that ignores keys, any non-empty value), and "
                "OPENAI_BASE_URL to use a compatible server such as vLLM, Ollama or "
                "llama.cpp (e.g. http://localhost:11434/v1)")
        from openai import OpenAI

        self.model = model
        self.spec = f"openai:{model}"
        self.base_url = settings.openai_base_url or DEFAULT_BASE_URL
        self.label = f"{model} (OpenAI-compatible, {self.server})"
        self.timeout = timeout or settings.openai_timeout
        self.max_retries = max_retries
        self.concurrency = concurrency or settings.generation_concurrency
        self.cache = cache
        self._structured = True
        self._structured_lock = threading.Lock()
        self._client = OpenAI(api_key=settings.openai_api_key, base_url=self.base_url,
                              max_retries=max_retries, timeout=self.timeout)

    def __repr__(self) -> str:
        return f"OpenAIGenerator(model={self.model!r}, server={self.server!r})"

    @property
    def server(self) -> str:
        return server_label(self.base_url)

    # --- the protocol ---------------------------------------------------------------------

    def generate(self, request: GenerationRequest) -> Generation:
        started = time.perf_counter()
        response_format = ({"type": "json_schema", "json_schema": SQL_RESPONSE_SCHEMA}
                           if request.task == "sql" else None)
        try:
            reply, cached = self._complete(request.messages, response_format)
        except _CallFailed as exc:
            return Generation(answer="", error=str(exc), ms=_ms(started))
        answered = Generation(answer="", tokens_in=reply.tokens_in,
                              tokens_out=reply.tokens_out, cached=cached, ms=_ms(started))
        if request.task != "sql":
            return replace(answered, answer=reply.content.strip())
        parsed = parse_json_object(reply.content)
        if parsed is None or not isinstance(parsed.get("sql_query"), str):
            return replace(answered, reasoning=reply.content[:4000],
                           error="the reply is not the JSON object asked for (no "
                                 "'sql_query' string)")
        database = parsed.get("database_id")
        return replace(answered, answer=parsed["sql_query"].strip(),
                       database_id=str(database) if database not in (None, "") else None,
                       reasoning=str(parsed.get("chain_of_thought_reasoning") or "") or None)

    def summarize(self, table: Table, *, rows: int = 3) -> TableSummary:
        try:
            reply, _ = self._complete(table_summary_messages(table, rows),
                                      {"type": "json_object"})
        except _CallFailed as exc:
            return TableSummary(name=table.title or table.table_id, summary="", error=str(exc))
        parsed = parse_json_object(reply.content) or {}
        name = str(parsed.get("table_name") or table.title or table.table_id)
        summary = str(parsed.get("table_summary") or "")
        error = None if summary else "the reply has no 'table_summary'"
        return TableSummary(name=name, summary=summary, error=error)

    # --- other callers (benchmark builder) --------------------------------------------------

    def chat_json(self, messages: Sequence[Mapping[str, str]], *,
                  schema: Mapping[str, Any] | None = None) -> JsonReply:
        """One JSON object from the model, through the same cache, retries and fallback.

        `schema` is an OpenAI `json_schema` entry ({"name", "strict", "schema"}); without
        it the server is only asked for some JSON object. A failed call or a reply with
        no JSON object in it is an error, never an exception (a rejected key still
        raises ConfigError, as in `generate`).
        """
        response_format = ({"type": "json_schema", "json_schema": dict(schema)}
                           if schema else {"type": "json_object"})
        try:
            reply, cached = self._complete(messages, response_format)
        except _CallFailed as exc:
            return JsonReply(None, str(exc))
        data = parse_json_object(reply.content)
        return JsonReply(data, None if data is not None else "the reply is not a JSON object",
                         reply.tokens_in, reply.tokens_out, cached)

    # --- calls ----------------------------------------------------------------------------

    def _complete(self, messages: Any, response_format: Mapping[str, Any] | None
                  ) -> tuple[CachedReply, bool]:
        if response_format is not None and not self._structured:
            response_format = None
        # the server is part of the model's identity: "llama3" on Ollama and on vLLM differ
        key = cache_key(f"{self.base_url.rstrip('/')}|{self.model}", messages, response_format)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit, True
        try:
            reply = self._call(messages, response_format)
        except _StructuredRejected:
            with self._structured_lock:
                self._structured = False
            log.info("%s rejects response_format; asking for JSON in the prompt only",
                     self.server)
            return self._complete(messages, None)
        if self.cache is not None:
            self.cache.put(key, self.model, reply)
        return reply, False

    def _call(self, messages: Any, response_format: Mapping[str, Any] | None) -> CachedReply:
        import openai

        where = f"{self.server} (model {self.model})"
        options: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages],
                                   "temperature": 0}
        if response_format is not None:
            options["response_format"] = dict(response_format)
        try:
            response = self._client.chat.completions.create(**options)
        except openai.AuthenticationError:
            raise ConfigError(f"{where} rejected the API key (HTTP 401); check "
                              "OPENAI_API_KEY") from None
        except openai.APITimeoutError:
            raise _CallFailed(f"timed out after {self.timeout:g} s ({self._retries})") from None
        except openai.APIConnectionError:
            raise _CallFailed(f"cannot connect to {where} ({self._retries})") from None
        except openai.RateLimitError:
            raise _CallFailed(f"rate limited (HTTP 429) after {self._retries}") from None
        except openai.BadRequestError as exc:
            if response_format is not None and "response_format" in str(exc.message):
                raise _StructuredRejected from None
            raise _CallFailed(f"HTTP 400: {self._scrub(exc.message)}") from None
        except openai.APIStatusError as exc:
            raise _CallFailed(f"HTTP {exc.status_code} after {self._retries}: "
                              f"{self._scrub(exc.message)}") from None
        except (openai.APIError, ValueError) as exc:  # malformed JSON, unexpected shapes
            raise _CallFailed(f"malformed response ({type(exc).__name__})") from None
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise _CallFailed("malformed response (no choices)") from None
        if not isinstance(content, str):
            raise _CallFailed("the reply has no text content")
        usage = getattr(response, "usage", None)
        return CachedReply(content, getattr(usage, "prompt_tokens", None),
                           getattr(usage, "completion_tokens", None))

    @property
    def _retries(self) -> str:
        return retries_text(self.max_retries)

    def _scrub(self, message: str) -> str:
        return scrub(message, self._client.api_key)


class _StructuredRejected(Exception):
    pass


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
