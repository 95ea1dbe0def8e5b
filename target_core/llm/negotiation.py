"""What the LLM client learns about a server and model, remembered for the process:
which structured-output step it accepts (strict `json_schema`, then `json_object` with
the schema inside, as llama.cpp reads it, then the prompt alone; a refused step is never
tried again), the context window a server named in an error and the embedding input
limit it named (later embedders start from it). `forget` drops all of it, for a server
that stopped (llm/client.py's `forget_server`). llm/client.py learns
them from responses; llm/chat.py asks before each request. A refused step also outlives
the process: it is kept in the response cache under the model's own key
(`remember_format`, `recall_format`), so a rerun does not ask with it again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from target_core.llm.cache import CachedReply, ResponseCache, cache_key
from target_core.llm.servers import server_label

log = logging.getLogger(__name__)

FORMAT_STEPS = ("json_schema", "json_object", "prompt")
"""Structured-output steps, strictest first."""

_FORMATS: dict[tuple[str, str], int] = {}
"""(server, model) -> index in FORMAT_STEPS of the strictest step the server accepts."""
_LEARNED_WINDOWS: dict[tuple[str, str], int] = {}
_INPUT_LIMITS: dict[tuple[str, str], int] = {}
"""(server, model) -> the embedding input limit (tokens) the server named."""
_STATE_LOCK = threading.Lock()


def format_step(base_url: str, model: str) -> int:
    """The strictest structured-output step (index in FORMAT_STEPS) not yet refused."""
    with _STATE_LOCK:
        return _FORMATS.get((base_url.rstrip("/"), model), 0)


def refuse_format(base_url: str, model: str, step: int) -> None:
    """Remember that the server refuses `step` (and so everything stricter)."""
    with _STATE_LOCK:
        key = (base_url.rstrip("/"), model)
        _FORMATS[key] = max(_FORMATS.get(key, 0), step + 1)


def learn_window(base_url: str, model: str, window: int) -> None:
    """A window the server named in an error ("context window of 2048 tokens")."""
    with _STATE_LOCK:
        _LEARNED_WINDOWS[(base_url.rstrip("/"), model)] = window
    log.warning("%s says the context window of %s is %d tokens; later prompts are fitted "
                "to it", server_label(base_url), model, window)


def learned_window(base_url: str, model: str) -> int | None:
    with _STATE_LOCK:
        return _LEARNED_WINDOWS.get((base_url.rstrip("/"), model))


def learn_input_limit(base_url: str, model: str, limit: int) -> None:
    with _STATE_LOCK:
        _INPUT_LIMITS[(base_url.rstrip("/"), model)] = limit


def learned_input_limit(base_url: str, model: str) -> int | None:
    with _STATE_LOCK:
        return _INPUT_LIMITS.get((base_url.rstrip("/"), model))


def forget(base_url: str) -> None:
    """Forget everything learned from `base_url`, for every model."""
    server = base_url.rstrip("/")
    with _STATE_LOCK:
        for learned in (_FORMATS, _LEARNED_WINDOWS, _INPUT_LIMITS):
            for key in [k for k in learned if k[0] == server]:
                del learned[key]


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
