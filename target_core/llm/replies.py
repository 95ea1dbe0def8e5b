"""Reading a model's reply: the JSON object in it (`parse_json_object`, `JsonReply`, what
`ChatModel.chat_json` returns) and, for a reply the server cut (finish_reason "length"),
what cut it and the setting that would help (`cut_note`): the task's max_tokens, the
server's own cap on a reply, or the context window when prompt and reply filled it first
(then raising max_tokens does not help).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from target_core.llm.client import ChatReply
from target_core.llm.window import PromptLimit


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


def cut_note(reply: ChatReply, task: str, asked: int, limit: Callable[[], PromptLimit]) -> str:
    """What cut a truncated `task` reply asked with max_tokens `asked`, and the setting
    that would help ("" for a reply not cut); `limit` gives the task's prompt limit."""
    if not reply.truncated:
        return ""
    out = reply.tokens_out
    if out is None or out >= asked:
        return (f"; the reply was cut at {asked} tokens (raise "
                f"TARGET_MAX_TOKENS_{task.upper()})")
    window = limit()
    if reply.tokens_in is not None and reply.tokens_in + out + 8 < window.window:
        return (f"; the reply was cut at {out} tokens, below its max_tokens ({asked}): "
                "the server's own cap on a reply (llama.cpp's --n-predict) cut it")
    return (f"; the reply was cut at {out} tokens when prompt and reply filled the "
            f"{window.window}-token window ({window.source}), below its max_tokens "
            f"({asked}: raising TARGET_MAX_TOKENS_{task.upper()} does not help); raise "
            f"the window ({window.window_setting}) or give the prompt fewer tokens "
            "(the run's token budget)")
