"""The context window and what it leaves for a prompt: how many tokens one request may
hold, where that number came from, and how prompts are counted.

The window is, first found first: one a server named in an error ("context window of
2048 tokens"), what the server reports (llama.cpp's /props, the models list), OpenAI's
published window, else the caller's setting (TARGET_CONTEXT_WINDOW). A prompt may hold

    window - reply tokens (the task's max_tokens) - PROMPT_MARGIN

counted with llama.cpp's own tokenizer where the server has one (`ServerCounter`, exact),
else with tiktoken, of which only FOREIGN_COUNT_SHARE is used for a model that is not
OpenAI's: another model's tokenizer may count more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from target_core.tokens import TokenCounter

PROMPT_MARGIN = 64
"""Tokens kept free beyond the prompt and the reply: the chat template's role markers."""
FOREIGN_COUNT_SHARE = 0.85
"""Share of the window used when counts come from tiktoken for another model."""


@dataclass(frozen=True)
class PromptLimit:
    """What a model's context window leaves for one prompt (all its messages)."""

    tokens: int
    """window - reply_tokens - margin: the most tokens the messages may hold."""
    window: int
    reply_tokens: int
    counter: TokenCounter
    """Counts as the model does where the server says how (else tiktoken's)."""
    source: str = ""
    """Where the window came from ("the server's /props", "TARGET_CONTEXT_WINDOW", ...)."""
    reply_setting: str = ""
    """The setting that sets reply_tokens (TARGET_MAX_TOKENS_SQL, ...), for advice."""


class Tokenizer(Protocol):
    """What ServerCounter needs of a client (llm.client.LLMClient)."""

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
