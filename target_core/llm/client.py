"""One client for OpenAI-compatible servers (OpenAI, vLLM, Ollama, llama.cpp): chat,
embeddings, and what the server says about itself.

Point it at a server with `LLMClient(base_url, api_key, timeout=..., retries=...)`; the
generator and embedder build theirs from settings (OPENAI_BASE_URL, OPENAI_API_KEY,
TARGET_OPENAI_TIMEOUT, TARGET_OPENAI_RETRIES) or from their own `base_url=` / `api_key=`
arguments, so a caller (the `local:` models) can use its own port without touching the
global settings.

Requests go through the `openai` SDK with its retries off (`max_retries=0`); this module
retries, and only what is transient: HTTP 429, 502, 503, 504 and a connection that was
refused or timed out before the server accepted the request, waiting as `retry-after`
(or `retry-after-ms`) says, else 0.5 s doubling up to 8 s. A request that timed out
after the server accepted it is never sent again: a one-slot local server keeps
computing an abandoned request, and a second copy would only queue behind it. Other
errors are deterministic and fail at once. Messages keep the server's own words whole
(the key scrubbed), say the status once, and count attempts only when there were more
than one.

What a server says about itself (`probe`, once per server and model, remembered for
PROBE_TTL_S so a server restarted on the same address with another model is seen):
llama.cpp's `GET /props` (the context per slot `default_generation_settings.n_ctx`,
`total_slots`) and `POST /tokenize` (exact counts), else the models list (`GET
/v1/models`: vLLM's `max_model_len`, llama.cpp's `meta.n_ctx_train`), else OpenAI's known
windows, else nothing (the caller's setting applies).

Structured output is negotiated per server and model: strict `json_schema`, then
`{"type": "json_object", "schema": ...}` (llama.cpp and llama-cpp-python take a schema
there), then the prompt alone. A server that refuses a response_format answers 400, 422
or, as llama-cpp-python does, 500 with a message naming it; that step is remembered for
the process (llm/negotiation.py) and never retried.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from target_core.errors import ConfigError
from target_core.llm import negotiation
from target_core.llm.negotiation import learn_window
from target_core.llm.servers import (
    DEFAULT_BASE_URL,
    is_openai,
    known_window,
    scrub,
    server_label,
)
from target_core.llm.window import Overflow, overflow_in

log = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT = frozenset({429, 502, 503, 504})
"""Statuses worth sending again: the server did not start on the request."""
MAX_WAIT = 60.0
"""The longest retry-after honoured, in seconds."""
_REJECTS_FORMAT = re.compile(r"response_format|json_schema|json_object|schema", re.I)
OPENAI_SAMPLING = ("temperature", "frequency_penalty", "presence_penalty")
"""Sampling settings in OpenAI's vocabulary (every compatible server takes them)."""


class CallFailed(Exception):
    """A call that failed; the message is safe to show (no key) and whole."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class FormatRejected(CallFailed):
    """The server refused the response_format (deterministic: step down, never retry)."""


class WindowExceeded(CallFailed):
    """The server refused the prompt as longer than its context (llm.window.overflow_in)."""

    def __init__(self, message: str, overflow: Overflow, *, status: int, body: str) -> None:
        super().__init__(message, status=status, body=body)
        self.overflow = overflow


@dataclass(frozen=True)
class ChatReply:
    content: str
    tokens_in: int | None
    tokens_out: int | None
    finish_reason: str | None = None
    served_model: str | None = None

    @property
    def truncated(self) -> bool:
        """The server stopped at max_tokens (or the context's end)."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class ServerInfo:
    """What a server says about itself; None where it says nothing."""

    context_window: int | None = None
    """Tokens of one request (prompt + reply): llama.cpp's per-slot n_ctx."""
    window_source: str = ""
    slots: int | None = None
    tokenize: bool = False
    """llama.cpp's POST /tokenize answers (exact counts for its model)."""
    batch: int | None = None
    """llama.cpp's n_ubatch when /props reports it (the embedding input limit)."""
    llama_cpp: bool = False
    models: tuple[str, ...] = ()
    """Ids the models list names."""
    params: tuple[str, ...] = ()
    """Sampling settings llama.cpp's /props lists (repeat_penalty, dry_multiplier, ...)."""

    def sampling(self, wanted: Mapping[str, float]) -> dict[str, float]:
        """What of `wanted` this server takes: OpenAI's settings always, the others
        (llama.cpp's repeat_penalty, dry_multiplier) only on llama.cpp, where it lists them."""
        return {name: value for name, value in wanted.items()
                if name in OPENAI_SAMPLING or (self.llama_cpp and (
                    not self.params or name in self.params))}


PROBE_TTL_S = 60.0
"""How long what a server said about itself is believed: a run's requests ask once, and a
server restarted on the same address (another model, another window) is asked again for
the next run a minute later at most."""

_INFO: dict[tuple[str, str], tuple[float, ServerInfo]] = {}
"""(server, model) -> when the server was asked, and what it said (probe)."""
_INFO_LOCK = threading.Lock()


def forget_server(base_url: str) -> None:
    """Forget what `base_url` said about itself and what was learned from its replies, for
    every model (a server that stopped: another may start on its address)."""
    with _INFO_LOCK:
        for key in [k for k in _INFO if k[0] == base_url.rstrip("/")]:
            del _INFO[key]
    negotiation.forget(base_url)


class LLMClient:
    """Requests to one OpenAI-compatible server (see the module docstring)."""

    def __init__(self, base_url: str | None, api_key: str, *, timeout: float,
                 retries: int) -> None:
        from openai import OpenAI

        if timeout <= 0 or retries < 0:
            raise ValueError("timeout must be positive and retries non-negative")
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self._key = api_key
        self._sdk = OpenAI(api_key=api_key, base_url=self.base_url, max_retries=0,
                           timeout=timeout)

    @property
    def server(self) -> str:
        return server_label(self.base_url)

    @property
    def root(self) -> str:
        """The server's root (llama.cpp's /props and /tokenize live there)."""
        return re.sub(r"/v1$", "", self.base_url)

    def scrub(self, text: object) -> str:
        return scrub(text, self._key)

    # --- chat ---------------------------------------------------------------------------

    def chat(self, messages: Sequence[Mapping[str, str]], *, model: str, max_tokens: int,
             response_format: Mapping[str, Any] | None = None,
             sampling: Mapping[str, float] | None = None) -> ChatReply:
        """One chat completion, at temperature 0 unless `sampling` says otherwise (other
        than OPENAI_SAMPLING's settings go in the body as they are: ServerInfo.sampling
        says which a server takes). Raises CallFailed (FormatRejected when the server
        refuses `response_format`, WindowExceeded when the prompt is too long) or
        ConfigError (a rejected key)."""
        # OpenAI's newer models refuse max_tokens; other servers may not know the new name
        limit = "max_completion_tokens" if is_openai(self.base_url) else "max_tokens"
        wanted = {"temperature": 0, **(sampling or {})}
        options: dict[str, Any] = {"model": model, limit: max_tokens,
                                   "messages": [dict(m) for m in messages],
                                   **{k: v for k, v in wanted.items() if k in OPENAI_SAMPLING}}
        if extra := {k: v for k, v in wanted.items() if k not in OPENAI_SAMPLING}:
            options["extra_body"] = extra
        if response_format is not None:
            options["response_format"] = dict(response_format)
        where = f"{self.server} (model {model})"
        response = self._send(lambda: self._sdk.chat.completions.create(**options), where,
                              formats=response_format is not None, model=model)
        try:
            choice = response.choices[0]
            content = choice.message.content
        except (AttributeError, IndexError, TypeError):
            raise CallFailed(f"malformed response from {where} (no choices)") from None
        if not isinstance(content, str):
            raise CallFailed(f"the reply from {where} has no text content")
        usage = getattr(response, "usage", None)
        served = getattr(response, "model", None)
        return ChatReply(content, getattr(usage, "prompt_tokens", None),
                         getattr(usage, "completion_tokens", None),
                         getattr(choice, "finish_reason", None),
                         served if isinstance(served, str) and served else None)

    def embeddings(self, texts: list[str], *, model: str) -> Any:
        """The raw embeddings response (the caller checks its shape)."""
        return self._send(lambda: self._sdk.embeddings.create(
            model=model, input=texts, encoding_format="float"),
            f"{self.server} (model {model})", formats=False, model=model)

    # --- retries ------------------------------------------------------------------------

    def _send(self, request: Callable[[], T], where: str, *, formats: bool,
              model: str) -> T:
        import openai

        attempt = 0
        while True:
            attempt += 1
            again = attempt <= self.retries
            tried = f" ({attempt} attempts)" if attempt > 1 else ""
            try:
                return request()
            except openai.AuthenticationError:
                raise ConfigError(f"{where} rejected the API key (HTTP 401); check "
                                  "OPENAI_API_KEY") from None
            except openai.APITimeoutError as exc:
                if _cause(exc) == "ConnectTimeout" and again:
                    self._wait(None, attempt)
                    continue
                raise CallFailed(
                    f"no reply from {where} within {self.timeout:g} s (TARGET_OPENAI_TIMEOUT)"
                    f"{tried}; not sent again, since the server may still be computing it")\
                    from None
            except openai.APIConnectionError as exc:
                refused = _cause(exc) == "ConnectError"
                if refused and again:
                    self._wait(None, attempt)
                    continue
                reason = "connection refused" if refused else "the connection broke"
                raise CallFailed(f"cannot connect to {where}: {reason}{tried}; check "
                                 "OPENAI_BASE_URL and that the server is up") from None
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status in TRANSIENT and again:
                    self._wait(exc.response.headers, attempt)
                    continue
                raw = _body_text(exc)
                message = self.scrub(_server_message(exc, raw))
                if formats and status in (400, 422, 500) and _REJECTS_FORMAT.search(raw):
                    raise FormatRejected(f"HTTP {status} from {where}: {message}",
                                         status=status, body=raw) from None
                if status in (400, 413, 500) and (over := overflow_in(raw, exc.body)):
                    if over.window is not None:
                        learn_window(self.base_url, model, over.window)
                    raise WindowExceeded(f"HTTP {status} from {where}: {message}", over,
                                         status=status, body=raw) from None
                raise CallFailed(f"HTTP {status} from {where}: {message}{tried}",
                                 status=status, body=raw) from None
            except (openai.APIError, ValueError) as exc:  # malformed JSON, unexpected shapes
                raise CallFailed(f"malformed response from {where} "
                                 f"({type(exc).__name__})") from None

    def _wait(self, headers: Any, attempt: int) -> None:
        time.sleep(retry_delay(headers, attempt))

    # --- what the server says about itself ------------------------------------------------

    def probe(self, model: str) -> ServerInfo:
        """What the server reports (see the module docstring); asked again once what it
        said is PROBE_TTL_S old."""
        key = (self.base_url, model)
        with _INFO_LOCK:
            asked = _INFO.get(key)
        if asked is not None and time.monotonic() - asked[0] < PROBE_TTL_S:
            return asked[1]
        info = self._probe(model)
        with _INFO_LOCK:
            _INFO[key] = (time.monotonic(), info)
        return info

    def _probe(self, model: str) -> ServerInfo:
        window, source, slots, batch, tokenize, llama = None, "", None, None, False, False
        params: tuple[str, ...] = ()
        if not is_openai(self.base_url):
            props = self._get_json(f"{self.root}/props")
            settings = props.get("default_generation_settings") if props else None
            if isinstance(settings, dict):
                llama = True
                window = _positive(settings.get("n_ctx"))
                source = "the server's /props" if window else ""
                slots = _positive(props.get("total_slots")) if props else None
                batch = _positive(settings.get("n_ubatch") or (props or {}).get("n_ubatch"))
                tokenize = self.tokenize("a") is not None
                listed_params = settings.get("params")
                params = tuple(listed_params) if isinstance(listed_params, dict) else ()
        listed = self._get_json(f"{self.base_url}/models") or {}
        entries = [e for e in listed.get("data") or [] if isinstance(e, dict)]
        models = tuple(str(e.get("id")) for e in entries if e.get("id"))
        if window is None:
            mine = [e for e in entries if e.get("id") == model] or entries[:1]
            for entry in mine:
                meta = entry.get("meta")
                window = _positive(entry.get("max_model_len")) or _positive(
                    meta.get("n_ctx_train") if isinstance(meta, dict) else None)
                if window:
                    source = "the server's models list"
                    break
        # a model named like OpenAI's elsewhere (a proxy, Ollama) may have any window
        if window is None and is_openai(self.base_url) and (window := known_window(model)):
            source = "OpenAI's published window"
        return ServerInfo(window, source, slots, tokenize, batch, llama, models, params)

    def _get_json(self, url: str, body: Any = None) -> dict[str, Any] | None:
        """A JSON object from the server (GET, or POST with `body`), or None for any
        failure: these questions are optional, a server may not know them."""
        from urllib.error import URLError
        from urllib.request import Request, urlopen

        data = None if body is None else json.dumps(body).encode()
        request = Request(url, data=data, headers={"Authorization": f"Bearer {self._key}",
                                                   "Content-Type": "application/json"})
        try:
            with urlopen(request, timeout=min(self.timeout, 10)) as response:  # noqa: S310
                answer = json.loads(response.read())
        except (URLError, OSError, ValueError):
            return None
        return answer if isinstance(answer, dict) else None

    def tokenize(self, text: str) -> int | None:
        """Tokens of `text` by llama.cpp's own tokenizer (POST /tokenize), or None."""
        answer = self._get_json(f"{self.root}/tokenize", {"content": text})
        tokens = answer.get("tokens") if answer else None
        return len(tokens) if isinstance(tokens, list) else None


def retry_delay(headers: Any, attempt: int) -> float:
    """Seconds to wait before attempt `attempt` + 1: the server's retry-after(-ms) when it
    gives one (at most MAX_WAIT), else 0.5 s doubling up to 8 s."""
    if headers is not None:
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value = headers.get(name)
            try:
                if value is not None:
                    return min(MAX_WAIT, max(0.0, float(value) * scale))
            except ValueError:
                pass  # an HTTP date: use the backoff
    return min(8.0, 0.5 * 2 ** (attempt - 1))


def _cause(exc: BaseException) -> str:
    """The class name of the transport error under an SDK error (httpx or httpx2)."""
    return type(exc.__cause__).__name__ if exc.__cause__ is not None else ""


def _body_text(exc: Any) -> str:
    try:
        return str(exc.response.text)
    except Exception:  # noqa: BLE001 - a body that cannot be read is empty
        return ""


def _server_message(exc: Any, raw: str) -> str:
    """The server's own message: error.message, message or detail of a JSON body, else
    the body's text, else the SDK's."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            text = error.get("message") or error.get("detail") or body.get("detail")
            if text:
                return text if isinstance(text, str) else json.dumps(text)
        elif isinstance(error, str) and error:
            return error
    return raw.strip() or str(exc.message)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None
