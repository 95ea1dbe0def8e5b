"""Chat with OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp): the one
place a chat request is made, for every caller (generators, HySE's writer, table
summaries, the benchmark builder's writer and judge, the truthfulness judge).

`ChatModel(settings, model)` talks to OPENAI_BASE_URL with OPENAI_API_KEY, or to the
`base_url=` and `api_key=` it is given (the `local:` models pass their own port and key
and leave the settings alone). The key is never logged, stored or put into a message.
Every request goes through `llm.client.LLMClient`: retries of transient failures only
(TARGET_OPENAI_RETRIES), no re-send of a request that timed out (TARGET_OPENAI_TIMEOUT),
the server's message whole. A failed call is a `CallFailed` inside, an error on the
reply outside (`JsonReply.error`, `Generation.error`); only a rejected key (HTTP 401)
raises, as ConfigError, since every other call would fail the same way.

Each task sends its `max_tokens` (TARGET_MAX_TOKENS_QA, _FACT, _SQL, _SUMMARY, _WRITER,
_JUDGE, _HYSE); a reply the server cut there (finish_reason "length") is kept and marked
`truncated`. `prompt_limit(task)` says what the context window leaves for a prompt
(llm.window). Requests in flight (`concurrency`) are TARGET_GENERATION_CONCURRENCY
capped by the server's slots; unset, the slots, else 1 for a server on this machine,
else 4.

Structured output is negotiated per server and model: strict json_schema, then
json_object with the schema, then the prompt alone; a refusal steps down once and is
remembered for the process and in the response cache. The model id the server answers
with is kept (`served_model`); one that is not the model asked for is logged once.
Replies are cached under (server, model, max tokens, messages, response format),
hashed: a rerun costs nothing. A cached reply that used all its max tokens counts as
truncated.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from target_core.config import MAX_TOKENS, Settings
from target_core.errors import ConfigError
from target_core.llm.cache import CachedReply, ResponseCache, cache_key
from target_core.llm.client import (
    FORMAT_STEPS,
    CallFailed,
    ChatReply,
    FormatRejected,
    LLMClient,
    format_step,
    learned_window,
    refuse_format,
    response_format,
)
from target_core.llm.servers import is_local, is_openai, same_model
from target_core.llm.window import (
    FOREIGN_COUNT_SHARE,
    PROMPT_MARGIN,
    PromptLimit,
    ServerCounter,
)
from target_core.tokens import TokenCounter, get_counter

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gpt-4o-mini"


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's reply: the whole text, a ```json fence, or the
    outermost {...}; None when there is none."""
    candidates = [text.strip()]
    if "```" in text:
        for block in text.split("```")[1::2]:
            candidates.append(block.removeprefix("json").strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, TypeError):
            continue
        if isinstance(value, dict):
            return value
    return None


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
    truncated: bool = False
    served_model: str | None = None


class ChatModel:
    """Chat completions on an OpenAI-compatible server (see the module docstring)."""

    def __init__(self, settings: Settings, model: str = DEFAULT_MODEL, *,
                 cache: ResponseCache | None = None, timeout: float | None = None,
                 max_retries: int | None = None, concurrency: int | None = None,
                 base_url: str | None = None, api_key: str | None = None,
                 max_tokens: Mapping[str, int] | None = None,
                 context_window: int | None = None, cache_identity: str | None = None
                 ) -> None:
        """`cache_identity` names the model in the response cache (default: the server's
        URL and the model): a caller whose server changes port per process (`local:`)
        passes the model file's identity, so a rerun reuses its replies."""
        key = api_key or settings.openai_api_key
        if not key:
            raise ConfigError(
                "an OpenAI-compatible model needs an API key: set OPENAI_API_KEY (for a local "
                "OpenAI-compatible server that ignores keys, any non-empty value), and "
                "OPENAI_BASE_URL to use a compatible server such as vLLM, Ollama or "
                "llama.cpp (e.g. http://localhost:11434/v1)")
        self.model = model
        self.spec = f"openai:{model}"
        self.client = LLMClient(base_url or settings.openai_base_url, key,
                                timeout=timeout or settings.openai_timeout,
                                retries=(settings.openai_retries if max_retries is None
                                         else max_retries))
        self.base_url = self.client.base_url
        self.cache_identity = cache_identity or f"{self.base_url}|{self.model}"
        self.label = f"{model} (OpenAI-compatible, {self.server})"
        self.timeout = self.client.timeout
        self.max_retries = self.client.retries
        self.max_tokens = {**MAX_TOKENS, **settings.max_tokens, **(max_tokens or {})}
        self.cache = cache
        self._asked_concurrency = concurrency or settings.generation_concurrency
        self._concurrency: int | None = None
        self._default_window = context_window or settings.context_window
        self._token_timeout = settings.token_timeout
        self._lock = threading.Lock()
        self._formats_read = False
        self._served_warned = False
        self.served_model: str | None = None
        """The model id of the server's last reply."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, server={self.server!r})"

    @property
    def server(self) -> str:
        return self.client.server

    @property
    def concurrency(self) -> int:
        """Requests in flight at once (asks the server for its slots the first time)."""
        if self._concurrency is None:
            slots = self.client.probe(self.model).slots
            asked = self._asked_concurrency
            if asked is None:
                asked = slots or (1 if is_local(self.base_url) else 4)
            self._concurrency = max(1, min(asked, slots) if slots else asked)
        return self._concurrency

    @concurrency.setter
    def concurrency(self, value: int) -> None:
        self._concurrency = value

    # --- the context window -----------------------------------------------------------------

    def prompt_limit(self, task: str) -> PromptLimit:
        """What the window leaves for a `task` prompt (see the module docstring)."""
        info = self.client.probe(self.model)
        learned = learned_window(self.base_url, self.model)
        window = learned or info.context_window or self._default_window
        source = ("the server's error message" if learned else info.window_source
                  if info.context_window else "TARGET_CONTEXT_WINDOW")
        reply = self.max_tokens.get(task, MAX_TOKENS["qa"])
        room = window - reply - PROMPT_MARGIN
        fallback = get_counter(timeout=self._token_timeout)
        if info.tokenize:
            counter: TokenCounter = ServerCounter(self.client, fallback)
        else:
            counter = fallback
            if not is_openai(self.base_url):
                room = int(room * FOREIGN_COUNT_SHARE)
        return PromptLimit(max(0, room), window, reply, counter, source)

    def run_details(self) -> dict[str, Any]:
        """What a run records about the server: the context window and where it came
        from, slots, and the models it lists."""
        info = self.client.probe(self.model)
        return {"context_window": learned_window(self.base_url, self.model)
                or info.context_window or self._default_window,
                "server_slots": info.slots, "server_models": list(info.models)}

    # --- JSON replies --------------------------------------------------

    def chat_json(self, messages: Sequence[Mapping[str, str]], *,
                  schema: Mapping[str, Any] | None = None, task: str = "writer") -> JsonReply:
        """One JSON object from the model, through the same cache, retries and negotiation.

        `schema` is an OpenAI `json_schema` entry ({"name", "strict", "schema"}); without
        it the server is only asked for some JSON object. `task` names the max tokens
        (TARGET_MAX_TOKENS_WRITER, _JUDGE, ...). A failed call or a reply with no JSON
        object in it is an error, never an exception (a rejected key still raises
        ConfigError, as in `generate`).
        """
        try:
            reply, cached = self._complete(messages, task, schema=schema, structured=True)
        except CallFailed as exc:
            return JsonReply(None, str(exc))
        data = parse_json_object(reply.content)
        error = None if data is not None else ("the reply is not a JSON object"
                                               + self._cut_note(reply, task))
        return JsonReply(data, error, reply.tokens_in, reply.tokens_out, cached,
                         reply.truncated, reply.served_model)

    # --- calls ----------------------------------------------------------------------------

    def _complete(self, messages: Sequence[Mapping[str, str]], task: str, *,
                  schema: Mapping[str, Any] | None, structured: bool
                  ) -> tuple[ChatReply, bool]:
        """The reply and whether it came from the cache; steps down the structured-output
        ladder when the server refuses a format (once per server and model)."""
        max_tokens = self.max_tokens.get(task, MAX_TOKENS["qa"])
        self._read_formats()
        step = format_step(self.base_url, self.model) if structured else len(FORMAT_STEPS) - 1
        if schema is None and structured:
            step = max(step, FORMAT_STEPS.index("json_object"))
        while True:
            form = response_format(step, schema)
            # the server is part of the model's identity: "llama3" on Ollama and vLLM differ
            key = cache_key(f"{self.cache_identity}|max{max_tokens}", messages, form)
            if self.cache is not None and (hit := self.cache.get(key)) is not None:
                out = hit.tokens_out
                return ChatReply(hit.content, hit.tokens_in, out,
                                 "length" if out is not None and out >= max_tokens
                                 else "stop"), True
            try:
                reply = self.client.chat(messages, model=self.model, max_tokens=max_tokens,
                                         response_format=form)
            except FormatRejected as exc:
                refuse_format(self.base_url, self.model, step)
                self._write_formats()
                log.info("%s refuses response_format %s (%s); asking with %s from now on",
                         self.server, FORMAT_STEPS[step], exc, FORMAT_STEPS[step + 1])
                step = format_step(self.base_url, self.model)
                continue
            self._check_served(reply)
            if self.cache is not None:
                self.cache.put(key, self.model, CachedReply(reply.content, reply.tokens_in,
                                                            reply.tokens_out))
            return reply, False

    def _check_served(self, reply: ChatReply) -> None:
        self.served_model = reply.served_model or self.served_model
        if same_model(self.model, reply.served_model) or self._served_warned:
            return
        self._served_warned = True
        log.warning("%s answered with model %r, not %r as asked; each query records the "
                    "model that answered", self.server, reply.served_model, self.model)

    def _cut_note(self, reply: ChatReply, task: str) -> str:
        if not reply.truncated:
            return ""
        return (f"; the reply was cut at {self.max_tokens.get(task)} tokens "
                f"(raise TARGET_MAX_TOKENS_{task.upper()})")

    # the negotiated step outlives the process in the response cache, under its own key
    def _formats_key(self) -> str:
        return cache_key(f"{self.cache_identity}|response_format", [], None)

    def _read_formats(self) -> None:
        with self._lock:
            if self._formats_read or self.cache is None:
                return
            self._formats_read = True
            stored = self.cache.get(self._formats_key())
        if stored is not None and stored.content.isdigit():
            refused = int(stored.content)
            if 0 < refused < len(FORMAT_STEPS):
                refuse_format(self.base_url, self.model, refused - 1)

    def _write_formats(self) -> None:
        if self.cache is not None:
            step = format_step(self.base_url, self.model)
            self.cache.put(self._formats_key(), self.model, CachedReply(str(step), None, None))
