"""What is known of a server from its URL and its model's name: the default server, whether
it is OpenAI's or on this machine, OpenAI's published windows, how a server is named in
messages (host[:port] only: no path, no credentials), and scrubbing the key from a
server's error text (OpenAI's 401 echoes it)."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KNOWN_WINDOWS = {"gpt-4o": 128_000, "gpt-4o-mini": 128_000, "gpt-4.1": 1_047_576,
                 "gpt-4.1-mini": 1_047_576, "gpt-4.1-nano": 1_047_576, "gpt-4-turbo": 128_000,
                 "gpt-3.5-turbo": 16_385, "o3-mini": 200_000, "o4-mini": 200_000}
"""Context windows of OpenAI's chat models (a dated snapshot takes its family's)."""


def is_local(base_url: str) -> bool:
    """The server runs on this machine (loopback)."""
    host = urlsplit(base_url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def is_openai(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "") == "api.openai.com"


def billed_by_openai(base_url: str | None) -> bool:
    """Requests to `base_url` (None: the default) go to OpenAI, whose prices costs.py
    knows; any other server's model has no known price, whatever it is called."""
    return base_url is None or is_openai(base_url)


def known_window(model: str) -> int | None:
    """OpenAI's window for `model` or its dated snapshot (gpt-4o-mini-2024-07-18)."""
    for name in sorted(KNOWN_WINDOWS, key=len, reverse=True):
        if model == name or model.startswith(name + "-"):
            return KNOWN_WINDOWS[name]
    return None


def same_model(asked: str, served: str | None) -> bool:
    """The served id names the model asked for (OpenAI answers with a dated snapshot;
    llama.cpp may answer with the file's path)."""
    if not served:
        return True
    return served == asked or served.startswith(asked + "-") or served.endswith("/" + asked)


def server_label(base_url: str) -> str:
    parts = urlsplit(base_url)
    if not parts.hostname:
        return "the configured server"
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def scrub(message: object, key: str | None) -> str:
    """A server's error message, whole, with the key removed."""
    text = str(message)
    return text.replace(key, "***") if key else text
