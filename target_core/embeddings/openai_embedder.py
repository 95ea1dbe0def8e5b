"""Embeddings from OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Spec `openai` or `openai/MODEL` (default text-embedding-3-small). The key comes from
OPENAI_API_KEY and the server from OPENAI_BASE_URL (settings only; the SDK is given both
explicitly so it reads no environment variable itself). The key is never logged,
stored, put in a message or in the fingerprint.

Each input is truncated to the model's limit (8191 tokens for text-embedding-3-* and
ada-002) as counted with tiktoken's cl100k_base when it is available. Offline, tiktoken
cannot load, and the count is an estimate; then a text's cost is taken as
max(estimate, characters / 2), which overstates English and tables about twice, so
truncation and request sizes stay on the safe side (scripts without spaces, such as
CJK, can still be undercounted; the server's refusal then names the problem).
Inputs go in requests of at most `batch_size` texts and `request_tokens` tokens
(OpenAI: 2,048 inputs, 300,000 tokens). The SDK retries 429, 5xx, timeouts and
connection errors `max_retries` times with exponential backoff (0.5 s doubling, up to
8 s, or the server's retry-after); what still fails becomes an EmbeddingError.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.embeddings.base import EmbeddingError, Kind, check_texts, normalize_rows
from target_core.errors import ConfigError
from target_core.openai_common import DEFAULT_BASE_URL, retries_text, scrub, server_label
from target_core.progress import Progress, no_progress
from target_core.tokens import TokenCounter, get_counter

log = logging.getLogger(__name__)

DEFAULT_MODEL = "text-embedding-3-small"
ENCODING = "cl100k_base"
DEFAULT_MAX_TOKENS = 8191
MODEL_MAX_TOKENS = {"text-embedding-3-small": 8191, "text-embedding-3-large": 8191,
                    "text-embedding-ada-002": 8191}
MODEL_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072,
                    "text-embedding-ada-002": 1536}


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


class OpenAIEmbedder:
    """An OpenAI-compatible /v1/embeddings endpoint (see the module docstring)."""

    backend = ""  # a remote service: nothing local computes the vectors

    def __init__(self, settings: Settings, model: str = DEFAULT_MODEL, *,
                 max_tokens: int | None = None, batch_size: int = 256,
                 request_tokens: int = 280_000, timeout: float = 60.0, max_retries: int = 5,
                 counter: TokenCounter | None = None) -> None:
        if not settings.openai_api_key:
            raise ConfigError(
                "OpenAI embeddings need an API key: set OPENAI_API_KEY (for a local "
                "OpenAI-compatible server that ignores keys, any non-empty value), and "
                "OPENAI_BASE_URL to use a compatible server such as vLLM, Ollama or "
                "llama.cpp (e.g. http://localhost:11434/v1)")
        if batch_size < 1 or request_tokens < 1 or timeout <= 0 or max_retries < 0:
            raise ValueError("batch_size, request_tokens and timeout must be positive, "
                             "max_retries non-negative")
        from openai import OpenAI

        self.model = model
        self.spec = f"openai/{model}"
        self.max_tokens = max_tokens or MODEL_MAX_TOKENS.get(model, DEFAULT_MAX_TOKENS)
        self.dimension = MODEL_DIMENSIONS.get(model, 0)
        """Known for OpenAI's models; for others set from the first response."""
        self.batch_size = batch_size
        self.request_tokens = request_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.base_url = settings.openai_base_url or DEFAULT_BASE_URL
        self._counter = counter
        self._token_timeout = settings.token_timeout
        self._client = OpenAI(api_key=settings.openai_api_key, base_url=self.base_url,
                              max_retries=max_retries, timeout=timeout)
        self._seen_dimension: int | None = None
        self.last_truncated = 0
        self.last_usage_tokens = 0
        """Tokens the server reported (usage.total_tokens) for the last call."""

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, server={self.server!r})"

    @property
    def server(self) -> str:
        return server_label(self.base_url)

    def load(self) -> None:
        """Nothing to load: the model is the server's."""

    def fingerprint(self) -> str:
        server = hashlib.sha256(self.base_url.rstrip("/").encode()).hexdigest()[:10]
        return f"openai-{_safe(self.model)}-{server}-max{self.max_tokens}"

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = get_counter(ENCODING, self._token_timeout)
        return self._counter

    def cost(self, text: str) -> int:
        """Tokens of `text`: exact with tiktoken, else a deliberately high estimate."""
        if self.counter.exact:
            return self.counter.count(text)
        return max(self.counter.count(text), math.ceil(len(text) / 2))

    def fit(self, text: str) -> tuple[str, int, bool]:
        """(text cut to max_tokens, its cost, whether it was cut). OpenAI refuses empty
        strings, so an empty text is sent as one space."""
        if not text:
            return " ", 1, False
        cost = self.cost(text)
        if cost <= self.max_tokens:
            return text, cost, False
        cut = len(text)
        for _ in range(8):  # cost is near-proportional to length: a few shrinks suffice
            cut = max(1, min(cut - 1, int(cut * self.max_tokens / cost * 0.98)))
            cost = self.cost(text[:cut])
            if cost <= self.max_tokens:
                return text[:cut], cost, True
        # never reached in practice; a character is at most 4 UTF-8 bytes, so 4 tokens
        cut = max(1, self.max_tokens // 4)
        return text[:cut], self.cost(text[:cut]), True

    def _batches(self, fitted: list[tuple[str, int, bool]]) -> list[tuple[int, int]]:
        """[start, end) ranges of consecutive texts within batch_size and request_tokens."""
        ranges, start, tokens = [], 0, 0
        for i, (_, cost, _) in enumerate(fitted):
            if i > start and (i - start >= self.batch_size or tokens + cost > self.request_tokens):
                ranges.append((start, i))
                start, tokens = i, 0
            tokens += cost
        if start < len(fitted):
            ranges.append((start, len(fitted)))
        return ranges

    def embed(self, texts: Sequence[str], *, kind: Kind,
              progress: Progress = no_progress) -> np.ndarray:
        items = check_texts(texts, kind)
        fitted = [self.fit(text) for text in items]
        self.last_truncated = sum(1 for _, _, cut in fitted if cut)
        self.last_usage_tokens = 0
        if self.last_truncated:
            log.info("truncated %d of %d texts to %d tokens (%s)", self.last_truncated,
                     len(items), self.max_tokens, self.counter.label)
        parts = []
        for start, end in self._batches(fitted):
            parts.append(self._request([text for text, _, _ in fitted[start:end]]))
            progress(end, len(items), "embedding")
        if not parts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.concatenate(parts)

    def _request(self, batch: list[str]) -> np.ndarray:
        response = self._call(batch)
        try:
            data = sorted(response.data, key=lambda item: item.index)
            vectors = np.array([item.embedding for item in data], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self.server} sent a malformed embeddings response "
                                 f"({type(exc).__name__})") from None
        if vectors.ndim != 2 or len(vectors) != len(batch) or vectors.shape[1] == 0:
            raise EmbeddingError(f"{self.server} returned {len(vectors)} embeddings of shape "
                                 f"{vectors.shape[1:]} for {len(batch)} inputs")
        if self._seen_dimension not in (None, vectors.shape[1]):
            raise EmbeddingError(f"{self.server} returned {vectors.shape[1]}-dimensional "
                                 f"embeddings after {self._seen_dimension}-dimensional ones")
        self._seen_dimension = self.dimension = int(vectors.shape[1])
        usage = getattr(response, "usage", None)
        self.last_usage_tokens += int(getattr(usage, "total_tokens", 0) or 0)
        return normalize_rows(vectors)

    def _call(self, batch: list[str]) -> Any:
        import openai

        where = f"{self.server} (model {self.model})"
        try:
            return self._client.embeddings.create(model=self.model, input=batch,
                                                  encoding_format="float")
        except openai.AuthenticationError:
            raise ConfigError(f"{where} rejected the API key (HTTP 401); check "
                              "OPENAI_API_KEY") from None
        except openai.APITimeoutError:
            raise EmbeddingError(
                f"embedding request to {where} timed out after {self.timeout:g} s "
                f"({self._retries}); check that the server at OPENAI_BASE_URL is up, or try "
                "again later") from None
        except openai.APIConnectionError:
            raise EmbeddingError(f"cannot connect to {where} ({self._retries}); check "
                                 "OPENAI_BASE_URL and the network") from None
        except openai.RateLimitError:
            raise EmbeddingError(f"{where} is still rate limiting (HTTP 429) after "
                                 f"{self._retries}; wait and try again") from None
        except openai.APIStatusError as exc:
            if exc.status_code >= 500:
                raise EmbeddingError(f"{where} failed with HTTP {exc.status_code} after "
                                     f"{self._retries}: {self._scrub(exc.message)}") from None
            raise EmbeddingError(f"{where} refused the embedding request: HTTP "
                                 f"{exc.status_code}: {self._scrub(exc.message)}") from None
        except (openai.APIError, ValueError) as exc:  # malformed JSON, unexpected shapes
            raise EmbeddingError(f"{where} sent a malformed embeddings response "
                                 f"({type(exc).__name__})") from None

    @property
    def _retries(self) -> str:
        return retries_text(self.max_retries)

    def _scrub(self, message: str) -> str:
        return scrub(message, self._client.api_key)
