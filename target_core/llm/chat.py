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
_JUDGE, _HYSE); a reply the server cut (finish_reason "length") is kept and marked
`truncated`, and its error says what cut it: max_tokens, or the context window when
prompt and reply filled it first (then raising max_tokens does not help).
`prompt_limit(task)` says what the context window leaves for a prompt (llm.window); a
server's refusal of a prompt as too long teaches it the window and how far our count
is from the server's (`llm.window.learn_share`), so the next prompt fits.

Sampling follows the settings (TARGET_TEMPERATURE, _FREQUENCY_PENALTY,
_PRESENCE_PENALTY in OpenAI's vocabulary; llama.cpp's _REPEAT_PENALTY and
_DRY_MULTIPLIER only to a llama.cpp server, so an external one gets the repetition
control `local:` gets); what was sent is in `run_details()` and in the cache key.

Requests in flight (`concurrency`) are TARGET_GENERATION_CONCURRENCY
capped by the server's slots; unset, the slots, else 1 for a server on this machine,
else 4.

Structured output is negotiated per server and model: strict json_schema, then
json_object with the schema, then the prompt alone; a refusal steps down once and is
remembered for the process and in the response cache. The model id the server answers
with is kept (`served_model`); one that is not the model asked for is logged once.
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
from dataclasses import dataclass
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
    refuse_format,
    response_format,
)
from target_core.llm.servers import is_local, is_openai, same_model
from target_core.llm.window import (
    FOREIGN_COUNT_SHARE,
    PROMPT_MARGIN,
    PromptLimit,
    ServerCounter,
    learn_share,
    learned_share,
    share_after,
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
        """What the window leaves for a `task` prompt (see the module docstring)."""
        info = self.client.probe(self.model)
        learned = learned_window(self.base_url, self.model)
        window = learned or info.context_window or self._default_window
        source = ("the server's error message" if learned else info.window_source
                  if info.context_window else "TARGET_CONTEXT_WINDOW")
        reply = self.max_tokens.get(task, MAX_TOKENS["qa"])
        room = window - reply - PROMPT_MARGIN
        fallback = get_counter(timeout=self._token_timeout)
        counter: TokenCounter = (ServerCounter(self.client, fallback) if info.tokenize
                                 else fallback)
        share = learned_share(self.base_url, self.model) or (
            1.0 if info.tokenize or is_openai(self.base_url) else FOREIGN_COUNT_SHARE)
        where = ("TARGET_LOCAL_CONTEXT" if self.spec.startswith("local:") else
                 "TARGET_CONTEXT_WINDOW" if source == "TARGET_CONTEXT_WINDOW" else
                 "the server's context size, llama.cpp's --ctx-size per slot"
                 if info.llama_cpp else "the server's context length")
        return PromptLimit(max(0, int(room * share)), window, reply, counter, source,
                           f"TARGET_MAX_TOKENS_{task.upper()}", where, share)

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
                self._write_formats()
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
        limit = self.prompt_limit(task)
        ours = sum(limit.counter.count(m["content"]) for m in messages)
        share = share_after(exc.overflow, ours, limit.share)
        learn_share(self.base_url, self.model, share)
        log.warning("%s refused a prompt of %d tokens by our count (%s by its own) as too "
                    "long; prompts now fill %.0f%% of the window's room", self.server, ours,
                    exc.overflow.prompt_tokens or "no count", share * 100)

    def _cut_note(self, reply: ChatReply, task: str) -> str:
        """What cut a truncated reply, and the setting that would help."""
        if not reply.truncated:
            return ""
        asked = self.max_tokens.get(task, MAX_TOKENS["qa"])
        out = reply.tokens_out
        if out is None or out >= asked:
            return (f"; the reply was cut at {asked} tokens (raise "
                    f"TARGET_MAX_TOKENS_{task.upper()})")
        limit = self.prompt_limit(task)
        if reply.tokens_in is not None and reply.tokens_in + out + 8 < limit.window:
            return (f"; the reply was cut at {out} tokens, below its max_tokens ({asked}): "
                    "the server's own cap on a reply (llama.cpp's --n-predict) cut it")
        return (f"; the reply was cut at {out} tokens when prompt and reply filled the "
                f"{limit.window}-token window ({limit.source}), below its max_tokens "
                f"({asked}: raising TARGET_MAX_TOKENS_{task.upper()} does not help); raise "
                f"the window ({limit.window_setting}) or give the prompt fewer tokens "
                "(the run's token budget)")

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
