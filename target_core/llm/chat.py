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
_JUDGE, _HYSE); a reply the server cut is kept, marked `truncated`, its error saying
what cut it (llm.replies). `prompt_limit(task)` says what the context window leaves for
a prompt, and a refusal as too long teaches it (llm.window).

Sampling follows the settings (TARGET_TEMPERATURE, _FREQUENCY_PENALTY,
_PRESENCE_PENALTY in OpenAI's vocabulary; llama.cpp's _REPEAT_PENALTY and
_DRY_MULTIPLIER only to a llama.cpp server, so an external one gets the repetition
control `local:` gets); what was sent is in `run_details()` and in the cache key.

Requests in flight (`concurrency`) are TARGET_GENERATION_CONCURRENCY
capped by the server's slots; unset, the slots, else 1 for a server on this machine,
else 4.

Structured output is negotiated per server and model (llm.negotiation). The model id
the server answers with is kept (`served_model`); another than asked for is logged once.
Replies are cached under (server, model, max tokens, sampling other than temperature 0,
messages, response format), hashed: a rerun costs nothing. A cached reply keeps the
server's finish_reason (a cache from before: one that used all its max tokens counts as
truncated).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from target_core.config import MAX_TOKENS, Settings
from target_core.errors import ConfigError
from target_core.llm.cache import CachedReply, ResponseCache, cache_key
from target_core.llm.client import (
    OPENAI_SAMPLING,
    CallFailed,
    ChatReply,
    FormatRejected,
    LLMClient,
    WindowExceeded,
)
from target_core.llm.negotiation import (
    FORMAT_STEPS,
    format_step,
    learned_window,
    recall_format,
    refuse_format,
    remember_format,
    response_format,
)
from target_core.llm.replies import JsonReply, cut_note, parse_json_object
from target_core.llm.servers import is_local, is_openai, same_model
from target_core.llm.window import PromptLimit, learn_from_refusal, prompt_limit
from target_core.tokens import get_counter

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gpt-4o-mini"

REPLY_SETTINGS = ("context_window", "sampling", "max_tokens")
"""What of a model's `run_details` shapes its replies: a run's replies made under two
values of one of them are not one run's."""


def changed_settings(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """"name [key] before -> now" for each REPLY_SETTINGS entry (or key of one) recorded
    in `before` that differs now ([] when nothing was recorded, as for a run stored
    before they were)."""
    changed = []
    for name in (n for n in REPLY_SETTINGS if n in before):
        old, new = before[name], now.get(name)
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            changed += [f"{name} {key} {old.get(key)} -> {new.get(key)}"
                        for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]
        elif old != new:
            changed.append(f"{name} {old} -> {new}")
    return changed


def default_model(client: LLMClient) -> str:
    """The model an `openai` spec without one asks for: gpt-4o-mini on OpenAI; on another
    server the one model it lists (GET /v1/models: vLLM, llama.cpp and most servers serve
    one, and vLLM refuses any other name), so the run is labelled by the model that
    answers; gpt-4o-mini, with a warning, when it lists none or several."""
    if is_openai(client.base_url):
        return DEFAULT_MODEL
    listed = client.probe(DEFAULT_MODEL).models
    if len(listed) == 1:
        return listed[0]
    log.warning("%s lists %s; asking for %s (name a model with openai:MODEL)", client.server,
                f"{len(listed)} models" if listed else "no models", DEFAULT_MODEL)
    return DEFAULT_MODEL


class ChatModel:
    """Chat completions on an OpenAI-compatible server (see the module docstring)."""

    def __init__(self, settings: Settings, model: str | None = None, *,
                 cache: ResponseCache | None = None, timeout: float | None = None,
                 max_retries: int | None = None, concurrency: int | None = None,
                 base_url: str | None = None, api_key: str | None = None,
                 max_tokens: Mapping[str, int] | None = None,
                 context_window: int | None = None, cache_identity: str | None = None
                 ) -> None:
        """`model` None: gpt-4o-mini on OpenAI, elsewhere the one model the server lists
        (`default_model`). `cache_identity` names the model in the response cache
        (default: the server's URL and the model): a caller whose server changes port per
        process (`local:`) passes the model file's identity, so a rerun reuses its
        replies."""
        key = api_key or settings.openai_api_key
        if not key:
            raise ConfigError(
                "an OpenAI-compatible model needs an API key: set OPENAI_API_KEY (for a local "
                "OpenAI-compatible server that ignores keys, any non-empty value), and "
                "OPENAI_BASE_URL to use a compatible server such as vLLM, Ollama or "
                "llama.cpp (e.g. http://localhost:11434/v1)")
        self.client = LLMClient(base_url or settings.openai_base_url, key,
                                timeout=timeout or settings.openai_timeout,
                                retries=(settings.openai_retries if max_retries is None
                                         else max_retries))
        self.base_url = self.client.base_url
        self.model = model = model or default_model(self.client)
        self.spec = f"openai:{model}"
        self.cache_identity = cache_identity or f"{self.base_url}|{self.model}"
        self.label = f"{model} (OpenAI-compatible, {self.server})"
        self.timeout = self.client.timeout
        self.max_retries = self.client.retries
        self.max_tokens = {**MAX_TOKENS, **settings.max_tokens, **(max_tokens or {})}
        self.cache = cache
        self._asked_concurrency = concurrency or settings.generation_concurrency
        self._concurrency: int | None = None
        self._default_window = context_window or settings.context_window
        self._sampling = dict(settings.sampling)
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
        """What the window leaves for a `task` prompt (llm.window.prompt_limit)."""
        return prompt_limit(self.client.probe(self.model), self.client, self.base_url,
                            self.model, task,
                            reply=self.max_tokens.get(task, MAX_TOKENS["qa"]),
                            default_window=self._default_window,
                            local=self.spec.startswith("local:"),
                            fallback=get_counter(timeout=self._token_timeout))

    def run_details(self) -> dict[str, Any]:
        """What a run records about the server: the context window, slots, the models
        it lists, the sampling settings sent to it and the max tokens per task (the
        REPLY_SETTINGS among them shape every reply: `changed_settings`)."""
        info = self.client.probe(self.model)
        return {"context_window": learned_window(self.base_url, self.model)
                or info.context_window or self._default_window,
                "server_slots": info.slots, "server_models": list(info.models),
                "sampling": self.sampling(), "max_tokens": dict(self.max_tokens)}

    def enforces_schema_bounds(self) -> bool:
        """The server compiles a JSON schema into a grammar that enforces every bound,
        string lengths included (llama.cpp); OpenAI's strict mode lists no maxLength, so
        a caller adds such bounds only where this is true."""
        return self.client.probe(self.model).llama_cpp

    def sampling(self) -> dict[str, float]:
        """The sampling settings this server is sent (ServerInfo.sampling); the server
        is asked what it is only when a setting is not OpenAI's."""
        if all(name in OPENAI_SAMPLING for name in self._sampling):
            return dict(self._sampling)
        return self.client.probe(self.model).sampling(self._sampling)

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
        sampling = self.sampling()
        # greedy decoding alone keeps the key it had before sampling was a setting
        varied = {k: v for k, v in sorted(sampling.items()) if (k, v) != ("temperature", 0)}
        identity = f"{self.cache_identity}|max{max_tokens}" + (
            f"|{json.dumps(varied)}" if varied else "")
        self._read_formats()
        step = format_step(self.base_url, self.model) if structured else len(FORMAT_STEPS) - 1
        if schema is None and structured:
            step = max(step, FORMAT_STEPS.index("json_object"))
        while True:
            form = response_format(step, schema)
            # the server is part of the model's identity: "llama3" on Ollama and vLLM differ
            key = cache_key(identity, messages, form)
            if self.cache is not None and (hit := self.cache.get(key)) is not None:
                out = hit.tokens_out
                return ChatReply(hit.content, hit.tokens_in, out, hit.finish_reason or (
                    "length" if out is not None and out >= max_tokens else "stop")), True
            try:
                reply = self.client.chat(messages, model=self.model, max_tokens=max_tokens,
                                         response_format=form, sampling=sampling)
            except WindowExceeded as exc:
                self._learn_count(exc, messages, task)
                raise
            except FormatRejected as exc:
                refuse_format(self.base_url, self.model, step)
                if self.cache is not None:
                    remember_format(self.cache, self.cache_identity, self.base_url, self.model)
                log.info("%s refuses response_format %s (%s); asking with %s from now on",
                         self.server, FORMAT_STEPS[step], exc, FORMAT_STEPS[step + 1])
                step = format_step(self.base_url, self.model)
                continue
            self._check_served(reply)
            if self.cache is not None:
                self.cache.put(key, self.model, CachedReply(
                    reply.content, reply.tokens_in, reply.tokens_out, reply.finish_reason))
            return reply, False

    def _check_served(self, reply: ChatReply) -> None:
        self.served_model = reply.served_model or self.served_model
        if same_model(self.model, reply.served_model) or self._served_warned:
            return
        self._served_warned = True
        log.warning("%s answered with model %r, not %r as asked; each query records the "
                    "model that answered", self.server, reply.served_model, self.model)

    def _learn_count(self, exc: WindowExceeded, messages: Sequence[Mapping[str, str]],
                     task: str) -> None:
        """After a refusal as too long: the share of the window our counts may fill."""
        learn_from_refusal(exc.overflow, self.prompt_limit(task), messages, self.base_url,
                           self.model)

    def _cut_note(self, reply: ChatReply, task: str) -> str:
        """What cut a truncated reply, and the setting that would help (llm.replies)."""
        return cut_note(reply, task, self.max_tokens.get(task, MAX_TOKENS["qa"]),
                        lambda: self.prompt_limit(task))

    def _read_formats(self) -> None:
        """The step the response cache remembers, once per model (llm.negotiation)."""
        with self._lock:
            if self._formats_read or self.cache is None:
                return
            self._formats_read = True
            recall_format(self.cache, self.cache_identity, self.base_url, self.model)
