"""What the LLM client learns about a server and model, remembered for the process:
which structured-output step it accepts (strict `json_schema`, then `json_object` with
the schema inside, as llama.cpp reads it, then the prompt alone; a refused step is never
tried again), the context window a server named in an error and the embedding input
limit it named (later embedders start from it), each a `Learned`, as is the prompt
share llm/window.py learns. `forget` drops all of it for a server that stopped
(llm/client.py's `forget_server`). llm/client.py learns
them from responses; llm/chat.py asks before each request. A refused step also outlives
the process: it is kept in the response cache under the model's own key
(`remember_format`, `recall_format`), so a rerun does not ask with it again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from target_core.llm.cache import CachedReply, ResponseCache, cache_key
from target_core.llm.servers import server_label

log = logging.getLogger(__name__)

T = TypeVar("T", int, float)

FORMAT_STEPS = ("json_schema", "json_object", "prompt")
"""Structured-output steps, strictest first."""

class Learned(Generic[T]):
    """Values learned per server and model in this process (a server's URL without its
    trailing slash, a model name); `forget` drops every instance's for one server."""

    _every: ClassVar[list[Learned[Any]]] = []

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], T] = {}
        self._lock = threading.Lock()
        Learned._every.append(self)

    def get(self, base_url: str, model: str) -> T | None:
        with self._lock:
            return self._values.get((base_url.rstrip("/"), model))

    def put(self, base_url: str, model: str, value: T) -> None:
        with self._lock:
            self._values[(base_url.rstrip("/"), model)] = value

    def raise_to(self, base_url: str, model: str, value: T) -> None:
        """Keep the larger of the value known and `value` (under one lock)."""
        with self._lock:
            key = (base_url.rstrip("/"), model)
            old = self._values.get(key)
            self._values[key] = value if old is None else max(old, value)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def drop(self, base_url: str) -> None:
        with self._lock:
            for key in [k for k in self._values if k[0] == base_url.rstrip("/")]:
                del self._values[key]


def forget(base_url: str) -> None:
    """Forget everything learned from `base_url`, for every model (a server that stopped:
    another may start on its address)."""
    for learned in Learned._every:
        learned.drop(base_url)


_FORMATS = Learned[int]()
"""The index in FORMAT_STEPS of the strictest step the server accepts."""
_WINDOWS = Learned[int]()
"""The context window the server named in an error."""
INPUT_LIMITS = Learned[int]()
"""The embedding input limit (tokens) the server named: later embedders start from it."""


def format_step(base_url: str, model: str) -> int:
    """The strictest structured-output step (index in FORMAT_STEPS) not yet refused."""
    return _FORMATS.get(base_url, model) or 0


def refuse_format(base_url: str, model: str, step: int) -> None:
    """Remember that the server refuses `step` (and so everything stricter)."""
    _FORMATS.raise_to(base_url, model, step + 1)


def learn_window(base_url: str, model: str, window: int) -> None:
    """A window the server named in an error ("context window of 2048 tokens")."""
    _WINDOWS.put(base_url, model, window)
    log.warning("%s says the context window of %s is %d tokens; later prompts are fitted "
                "to it", server_label(base_url), model, window)


def learned_window(base_url: str, model: str) -> int | None:
    return _WINDOWS.get(base_url, model)


def response_format(step: int, schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a request carries at `step`: the strict schema, json_object (with the schema
    inside, as llama.cpp reads it), or nothing."""
    name = FORMAT_STEPS[step]
    if name == "json_schema" and schema is not None:
        return {"type": "json_schema", "json_schema": dict(schema)}
    if name in ("json_schema", "json_object"):
        inner = schema.get("schema") if schema is not None else None
        return {"type": "json_object", **({"schema": dict(inner)} if inner else {})}
    return None


def _formats_key(identity: str) -> str:
    return cache_key(f"{identity}|response_format", [], None)


def remember_format(cache: ResponseCache, identity: str, base_url: str, model: str) -> None:
    """Keep the step the server accepts in `cache`, under the model's `identity`."""
    step = format_step(base_url, model)
    cache.put(_formats_key(identity), model, CachedReply(str(step), None, None))


def recall_format(cache: ResponseCache, identity: str, base_url: str, model: str) -> None:
    """Refuse again, for this process, the steps `cache` remembers the server refused."""
    stored = cache.get(_formats_key(identity))
    if stored is not None and stored.content.isdigit():
        refused = int(stored.content)
        if 0 < refused < len(FORMAT_STEPS):
            refuse_format(base_url, model, refused - 1)
