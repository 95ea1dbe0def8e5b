"""Why a generation failed, as one word: the class of a `Generation.error`.

A generator may set `Generation.error_class` itself (it knows best); otherwise the class
is read from the message, whose wording the generators share (openai_chat: "timed out
after 60 s", "cannot connect to ...", "HTTP 500 ...", "malformed response ..."). Stored
records of older runs have no class, so `error_class_of` derives it for them too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

ERROR_CLASSES = ("timeout", "connection", "rate_limit", "auth", "window", "http",
                 "truncated", "malformed", "other")
"""timeout: no reply in time; connection: the server could not be reached; rate_limit:
HTTP 429 after the retries; auth: the key or the access was refused (HTTP 401, 403);
window: the prompt does not fit the model's context window (the server refused it as
too long, or not even one table fits beside the reply's max tokens: nothing was sent);
http: any other HTTP error status; truncated: the reply was cut (the token limit,
finish_reason "length"); malformed: a reply that is not what was asked for (no text, not
the JSON object); other: anything else (e.g. a local generator's exception)."""

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # a status code first: the server's own words after it may say anything
    ("rate_limit", re.compile(r"rate.?limit|HTTP 429", re.I)),
    ("auth", re.compile(r"HTTP 40[13]\b|API key|unauthori[sz]ed|forbidden", re.I)),
    # the server's refusal of a long prompt, or ours before sending (llm.window)
    ("window", re.compile(r"does not fit the context window|exceeds? the (?:available )?"
                          r"context|maximum context length|context.length.exceeded", re.I)),
    ("http", re.compile(r"HTTP \d{3}\b")),
    ("timeout", re.compile(r"timed? ?out|timeout|no reply .* within", re.I)),
    ("connection", re.compile(r"cannot connect|could not connect|"
                              r"connection (error|refused|reset|broke)", re.I)),
    ("truncated", re.compile(r"truncated|finish_reason\W*length|max_tokens|token limit|"
                             r"cut at \d+ tokens", re.I)),
    ("malformed", re.compile(r"malformed|not the JSON|not a JSON|no text content|"
                             r"no choices|invalid JSON|names no label", re.I)),
)


def classify_error(message: str) -> str:
    """The class (one of ERROR_CLASSES) of a generation's error message."""
    for name, pattern in _RULES:
        if pattern.search(message):
            return name
    return "other"


def error_class_of(record: Mapping[str, Any]) -> str | None:
    """The error class of a stored generation record: the one recorded, else read from
    its error; None when the generation did not fail."""
    error = record.get("error")
    if not error:
        return None
    recorded = record.get("error_class")
    return str(recorded) if recorded else classify_error(str(error))
