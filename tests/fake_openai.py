"""A fake OpenAI-compatible server on 127.0.0.1, for tests that use the real `openai` client.

    def test_x(fake_openai):                       # the pytest fixture below
        fake_openai.fail_next(1, "429")           # then answer normally
        client = OpenAI(api_key="sk-test", base_url=fake_openai.base_url)

Endpoints:
- POST /v1/embeddings: deterministic vectors from `fake_embedding` (a hashed bag of
  words, 64 dimensions, L2-normalized: texts sharing words are near), `encoding_format`
  "float" or "base64", and `usage` with word counts as tokens.
- POST /v1/chat/completions: the message content comes from `chat_responder(request
  body)`, by default `echo_json` (a JSON object echoing the last user message). With
  `reject_response_format=True` a request that carries `response_format` gets HTTP 400
  naming it, as servers without structured outputs answer.

It can play real servers:
- `llama_cpp_python=True`: a chat request whose response_format is json_schema gets
  HTTP 500 with llama-cpp-python's validation message ("Input should be 'text' or
  'json_object'"); json_object with a "schema" is accepted.
- `props={...}`: GET /props answers it, as llama.cpp's server does
  (`llama_cpp_props(n_ctx, total_slots)`); `tokenize=True`: POST /tokenize answers
  {"tokens": [...]}, one token per word or punctuation mark (`fake_tokens`).
- `models=[...]`: GET /v1/models lists them (e.g. vLLM's {"id", "max_model_len"}).
- `served_model="..."`: replies name that model, whatever was asked for.
- `finish_reason="length"`: replies say the server stopped at max_tokens (and count
  max_tokens completion tokens).
- `context_window=N`: a server without /tokenize (unless `tokenize=True`) whose window
  is N tokens. A chat prompt over N gets HTTP 400 in the words of `window_error`:
  "llama.cpp" (its message, with `n_prompt_tokens` and `n_ctx` in the body, as
  xllamacpp 2026.10 answers), "vllm" ("... maximum context length is N tokens. However,
  you requested ... (P in the messages, M in the completion)"), "vllm-new" ("... your
  request has P input tokens") or "ollama" ("the input length exceeds the context
  length", no numbers). A prompt that fits but leaves less than max_tokens gets a reply
  the window cut: its first half, finish_reason "length", window - prompt completion
  tokens (fewer than max_tokens). Prompts are counted as `prompt_tokens(body)`: 4 per
  message plus `fake_tokens` of each, or, with `prompt_scale=F`, F times tiktoken's count
  (target_core.tokens), so a client counting with tiktoken counts too few, as with a
  foreign tokenizer.
- `per_token_embeddings=True`: each input gets one vector per word (no pooling).
- `embedding_batch=N`: an embedding input of more than N tokens gets llama.cpp's 500.

Faults (`fail_next(n, kind, seconds=...)`) apply to the next n chat or embeddings
requests (not to /props, /tokenize or the models list): "401" (the message echoes the
key, as OpenAI's does: callers must not repeat it), "429", "500", "502" and "503" (with
`retry-after-ms: 10` so retries stay fast; "503" with `retry-after: 0.2`, in seconds),
"malformed" (200 with a body that is not JSON) and "sleep" (wait `seconds`, then answer
normally; waiting ends early when the server stops). Every request is recorded with its
method, path, JSON body and headers (lower-cased), so a test can check the API key was
sent.

The server is a ThreadingHTTPServer on a free port in a daemon thread; `stop()` shuts
it down and joins the thread with a time limit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from target_core.llm.client import forget_server

DIMENSION = 64
FAULTS = ("401", "429", "500", "502", "503", "malformed", "sleep")
_WORDS = re.compile(r"\w+", re.UNICODE)
_TOKENS = re.compile(r"\w+|[^\w\s]", re.UNICODE)
LLAMA_CPP_PYTHON_500 = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': "
    "{'expected': \"'text' or 'json_object'\"}}]")


def fake_tokens(text: str) -> list[int]:
    """The fake tokenizer: one token per word or punctuation mark."""
    return [len(t) for t in _TOKENS.findall(text)]


def llama_cpp_props(n_ctx: int, total_slots: int = 1) -> dict[str, Any]:
    """What llama.cpp's GET /props says about a server with `total_slots` slots of
    `n_ctx` tokens each."""
    return {"default_generation_settings": {"n_ctx": n_ctx, "params": {}},
            "total_slots": total_slots, "model_path": "/models/fake.gguf"}


def fake_embedding(text: str, dimension: int = DIMENSION) -> np.ndarray:
    """Hashed bag of words: each word adds +-1 at a position chosen by its blake2b hash;
    the sum is L2-normalized. A text without words maps to the first unit vector."""
    vector = np.zeros(dimension, dtype=np.float64)
    for word in _WORDS.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[digest[0] % dimension] += 1.0 if digest[1] & 1 else -1.0
    norm = np.linalg.norm(vector)
    if norm == 0:
        vector[0] = 1.0
        return vector
    return vector / norm


def echo_json(body: dict[str, Any]) -> str:
    """The default chat responder: {"echo": <last user message>, "model": <model>}."""
    messages = body.get("messages") or []
    last = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    return json.dumps({"echo": last, "model": body.get("model")})


class HeldChat:
    """A chat responder (FakeOpenAI.chat_responder) that answers the first `free`
    requests at once and holds the others until `release()` (at most `hold_limit`
    seconds). Answers are {"answer": "free"} or {"answer": "held"}."""

    def __init__(self, free: int = 0, hold_limit: float = 30.0) -> None:
        self.free = free
        self.hold_limit = hold_limit
        self.arrived = 0
        self.waiting = 0
        self.answered: list[str] = []
        """User messages answered, in order (held ones once released)."""
        self._lock = threading.Lock()
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def __call__(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.arrived += 1
            held = self.arrived > self.free
            self.waiting += held
        if held:
            self._released.wait(self.hold_limit)
            with self._lock:
                self.waiting -= 1
        with self._lock:
            self.answered.append(body["messages"][-1]["content"])
        return json.dumps({"answer": "held" if held else "free"})


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _Fault:
    kind: str
    seconds: float = 0.0


@dataclass
class FakeOpenAI:
    """State of one server; create with `start_fake_openai()` or the `fake_openai` fixture."""

    host: str = "127.0.0.1"
    port: int = 0
    dimension: int = DIMENSION
    chat_responder: Callable[[dict[str, Any]], str | dict[str, Any]] = echo_json
    """Returns the assistant's content, or a whole response body (a dict)."""
    reject_response_format: bool = False
    """Answer HTTP 400 to chat requests with a `response_format` (no structured outputs)."""
    llama_cpp_python: bool = False
    props: dict[str, Any] | None = None
    tokenize: bool = False
    models: list[dict[str, Any]] | None = None
    served_model: str | None = None
    finish_reason: str = "stop"
    per_token_embeddings: bool = False
    embedding_batch: int | None = None
    """llama.cpp's physical batch: an input of more tokens (one added, as its BOS) gets
    its HTTP 500 "input (N tokens) is too large to process ..." (message copied from
    llama.cpp's server, xllamacpp 2026.10)."""
    fail_message: str | None = None
    context_window: int | None = None
    window_error: str = "llama.cpp"
    prompt_scale: float | None = None
    """The message of "500" faults (default "Internal error (fake 500)")."""
    requests: list[Recorded] = field(default_factory=list)
    _faults: list[_Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def fail_next(self, n: int, kind: str, *, seconds: float = 0.0) -> None:
        """The next `n` requests get fault `kind` (one of FAULTS)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULTS}")
        with self._lock:
            self._faults.extend(_Fault(kind, seconds) for _ in range(n))

    def vector(self, text: str) -> np.ndarray:
        """The embedding this server answers for `text`."""
        return fake_embedding(text, self.dimension)

    def embedding_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_fault(self) -> _Fault | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> FakeOpenAI:
        self._server = ThreadingHTTPServer((self.host, self.port), _handler_for(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers in a "sleep" fault
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        # the next fake may get this port: it must be asked anew, as a restarted server is
        forget_server(self.base_url)

    # --- responses ---------------------------------------------------------------------
    def embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            raise _BadRequest("'input' must be a string or a list of strings")
        if any(t == "" for t in inputs):
            raise _BadRequest("'input' cannot contain an empty string")
        for text in inputs:
            n = len(fake_tokens(text)) + 1
            if self.embedding_batch is not None and n > self.embedding_batch:
                raise _ServerError(f"input ({n} tokens) is too large to process. increase "
                                   "the physical batch size (current batch size: "
                                   f"{self.embedding_batch})")
        data = []
        for i, text in enumerate(inputs):
            vector = fake_embedding(text, self.dimension)
            if self.per_token_embeddings:
                words = _WORDS.findall(text) or [text]
                data.append({"object": "embedding", "index": i,
                             "embedding": [fake_embedding(w, self.dimension).tolist()
                                           for w in words]})
                continue
            if body.get("encoding_format") == "base64":
                embedding: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode()
            else:
                embedding = vector.tolist()
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        tokens = sum(len(_WORDS.findall(t)) for t in inputs)
        return {"object": "list", "data": data, "model": body.get("model", ""),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """This server's count of a chat prompt (see `context_window`)."""
        texts = [str(m.get("content", "")) for m in body.get("messages") or []]
        if self.prompt_scale is None:
            return sum(4 + len(fake_tokens(t)) for t in texts)
        from target_core.tokens import get_counter

        counter = get_counter()
        return sum(4 + math.ceil(self.prompt_scale * counter.count(t)) for t in texts)

    def window_refusal(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The 400 body refusing a prompt over `context_window`, or None."""
        window = self.context_window
        prompt = self.prompt_tokens(body)
        if window is None or prompt <= window:
            return None
        asked = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        messages = {
            "llama.cpp": f"request ({prompt} tokens) exceeds the available context size "
                         f"({window} tokens), try increasing it",
            "vllm": f"This model's maximum context length is {window} tokens. However, you "
                    f"requested {prompt + asked} tokens ({prompt} in the messages, {asked} "
                    "in the completion). Please reduce the length of the messages or "
                    "completion.",
            "vllm-new": f"This model's maximum context length is {window} tokens. However, "
                        f"your request has {prompt} input tokens. Please reduce the length "
                        "of the input messages.",
            "ollama": "the input length exceeds the context length"}
        error: dict[str, Any] = {"code": 400, "message": messages[self.window_error],
                                 "type": "exceed_context_size_error"
                                 if self.window_error == "llama.cpp"
                                 else "invalid_request_error"}
        if self.window_error == "llama.cpp":
            error |= {"n_prompt_tokens": prompt, "n_ctx": window}
        return {"error": error}

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.chat_responder(body)
        if isinstance(answer, dict):
            return answer
        prompt = sum(len(_WORDS.findall(str(m.get("content", ""))))
                     for m in body.get("messages") or [])
        completion = len(_WORDS.findall(answer))
        finish = self.finish_reason
        asked = body.get("max_tokens") or body.get("max_completion_tokens")
        if finish == "length" and isinstance(asked, int):
            completion = asked
        if self.context_window is not None:
            prompt = self.prompt_tokens(body)
            if isinstance(asked, int) and prompt + asked > self.context_window:
                answer, finish = answer[:len(answer) // 2], "length"
                completion = self.context_window - prompt
        return {"id": f"chatcmpl-fake-{len(self.requests)}", "object": "chat.completion",
                "created": 0, "model": self.served_model or body.get("model", ""),
                "choices": [{"index": 0, "finish_reason": finish,
                             "message": {"role": "assistant", "content": answer}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}}


class _BadRequest(Exception):
    pass


class _ServerError(Exception):
    pass


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    routes = {"/v1/embeddings": fake.embeddings, "/v1/chat/completions": fake.chat}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None
                  ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def _error(self, status: int, message: str, kind: str,
                   headers: dict[str, str] | None = None) -> None:
            body = {"error": {"message": message, "type": kind, "code": None}}
            self._send(status, json.dumps(body).encode(), headers)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            fake._record(Recorded("GET", self.path,
                                  {k.lower(): v for k, v in self.headers.items()}, None))
            if self.path == "/props" and fake.props is not None:
                return self._send(200, json.dumps(fake.props).encode())
            if self.path == "/v1/models" and fake.models is not None:
                return self._send(200, json.dumps({"object": "list",
                                                   "data": fake.models}).encode())
            return self._error(404, f"no route {self.path}", "invalid_request_error")

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = None
            fake._record(Recorded("POST", self.path,
                                  {k.lower(): v for k, v in self.headers.items()}, body))
            if self.path == "/tokenize":
                if not fake.tokenize or not isinstance(body, dict):
                    return self._error(404, "no route /tokenize", "invalid_request_error")
                tokens = fake_tokens(str(body.get("content", "")))
                return self._send(200, json.dumps({"tokens": tokens}).encode())
            fault = fake._next_fault() if self.path in routes else None
            fast_retry = {"retry-after-ms": "10"}
            if fault is not None and fault.kind == "401":  # as OpenAI: part of the key echoed
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                return self._error(401, f"Incorrect API key provided: {key}.",
                                   "invalid_request_error")
            if fault is not None and fault.kind == "429":
                return self._error(429, "Rate limit reached (fake)", "rate_limit_exceeded",
                                   fast_retry)
            if fault is not None and fault.kind in ("500", "502"):
                return self._error(int(fault.kind), (fault.kind == "500" and fake.fail_message)
                                   or f"Internal error (fake {fault.kind})", "server_error",
                                   fast_retry)
            if fault is not None and fault.kind == "503":
                return self._error(503, "Loading model (fake)", "unavailable_error",
                                   {"retry-after": "0.2"})
            if fault is not None and fault.kind == "malformed":
                return self._send(200, b'{"object": "list", "data": [ this is not json')
            if fault is not None and fault.kind == "sleep" and fake._stopping.wait(
                    fault.seconds):
                return None
            if (fake.reject_response_format and self.path == "/v1/chat/completions"
                    and isinstance(body, dict) and "response_format" in body):
                return self._error(400, "response_format is not supported by this server "
                                   "(fake)", "invalid_request_error")
            form = body.get("response_format") if isinstance(body, dict) else None
            if (fake.llama_cpp_python and self.path == "/v1/chat/completions"
                    and isinstance(form, dict) and form.get("type") == "json_schema"):
                return self._error(500, LLAMA_CPP_PYTHON_500, "internal_server_error")
            if (self.path == "/v1/chat/completions" and isinstance(body, dict)
                    and (refusal := fake.window_refusal(body)) is not None):
                return self._send(400, json.dumps(refusal).encode())
            route = routes.get(self.path)
            if route is None:
                return self._error(404, f"no route {self.path}", "invalid_request_error")
            if not isinstance(body, dict):
                return self._error(400, "body is not a JSON object", "invalid_request_error")
            try:
                answer = route(body)
            except _BadRequest as exc:
                return self._error(400, str(exc), "invalid_request_error")
            except _ServerError as exc:
                return self._error(500, str(exc), "server_error")
            return self._send(200, json.dumps(answer).encode())

    return Handler


def start_fake_openai(**options: Any) -> FakeOpenAI:
    return FakeOpenAI(**options).start()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI-compatible server; stopped after the test."""
    server = start_fake_openai()
    try:
        yield server
    finally:
        server.stop()
