"""What the OpenAI embedder, chat generator and client share: the default server, how a
server is named in messages (host[:port] only: no path, no credentials),
scrubbing the key from a server's error text (OpenAI's 401 echoes it), and a
token counter that asks the server's own tokenizer."""

from __future__ import annotations

from typing import Protocol
from urllib.parse import urlsplit

from target_core.tokens import TokenCounter

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def server_label(base_url: str) -> str:
    parts = urlsplit(base_url)
    if not parts.hostname:
        return "the configured server"
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def scrub(message: object, key: str | None) -> str:
    """A server's error message, whole, with the key removed."""
    text = str(message)
    return text.replace(key, "***") if key else text


class Tokenizer(Protocol):
    """What ServerCounter needs of a client (llm_client.LLMClient)."""

    @property
    def server(self) -> str: ...

    def tokenize(self, text: str) -> int | None: ...


class ServerCounter(TokenCounter):
    """Counts with llama.cpp's own tokenizer (POST /tokenize), exact for its model."""

    def __init__(self, client: Tokenizer, fallback: TokenCounter) -> None:
        super().__init__(f"{client.server} /tokenize", True)
        object.__setattr__(self, "_client", client)
        object.__setattr__(self, "_fallback", fallback)

    @property
    def label(self) -> str:
        return f"the server's tokenizer ({self.encoding_name})"

    def count(self, text: str) -> int:
        counted = self._client.tokenize(text)  # type: ignore[attr-defined]
        return counted if counted is not None else self._fallback.count(text)  # type: ignore[attr-defined]

    def count_many(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]

