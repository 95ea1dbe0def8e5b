"""Embeddings from OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Spec `openai` or `openai/MODEL` (default text-embedding-3-small). The key comes from
OPENAI_API_KEY and the server from OPENAI_BASE_URL, or from the `base_url=` and
`api_key=` arguments (a caller with its own server passes them). The key is never
logged, stored, put in a message or in the fingerprint. Requests go through
`target_core.llm.client.LLMClient`, as the chat generator's: TARGET_OPENAI_TIMEOUT and
TARGET_OPENAI_RETRIES apply, only transient failures are sent again, a timed-out request
never is, and the server's message is kept whole.

Each input is cut to the server's real limit: TARGET_EMBEDDING_MAX_TOKENS when set,
else llama.cpp's physical batch (its /props n_ubatch where reported; otherwise one
request of more tokens than a slot holds, which llama.cpp refuses before computing
anything with "input (N tokens) is too large to process ... (current batch size: B)",
names B), less room for the tokens it adds (BOS, EOS), else 8191 for OpenAI's models,
else 512 (what most open embedding models take). Should the server still refuse an
input as too large, the limit it names is learned (for the process) and the texts are
cut again and sent once more. Counts are exact with the server's own tokenizer (llama.cpp's
/tokenize) or tiktoken's cl100k_base for OpenAI's models; otherwise a text's cost is
taken as max(count, characters / 2), which overstates English and tables about twice,
so truncation and request sizes stay on the safe side. Inputs go in requests of at most
`batch_size` texts and `request_tokens` tokens (OpenAI: 2,048 inputs, 300,000 tokens).
A server that answers one vector per token (a list of lists per input: llama.cpp
without pooling) is reported with the fix. A query text embedded once is not sent again
(the last `QUERY_MEMORY` query vectors are kept).
"""
from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from target_core.config import Settings
from target_core.embeddings.base import EmbeddingError, Kind, check_texts, normalize_rows
from target_core.errors import ConfigError
from target_core.llm.client import CallFailed, LLMClient
from target_core.llm.negotiation import INPUT_LIMITS
from target_core.llm.servers import is_openai
from target_core.llm.window import ServerCounter
from target_core.progress import Progress, no_progress
from target_core.tokens import TokenCounter, get_counter

log = logging.getLogger(__name__)

DEFAULT_MODEL = "text-embedding-3-small"
ENCODING = "cl100k_base"
DEFAULT_MAX_TOKENS = 512
"""The input limit of a model nobody reports (most open embedding models take 512)."""
LLAMA_CPP_BATCH = 512
"""llama.cpp's default physical batch (-ub): an embedding input may not exceed it."""
SPECIAL_TOKENS = 8
"""Room for the tokens a server adds to an input (BOS, EOS): counts leave them out."""
TOO_LARGE = re.compile(r"too large to process.*?current batch size: (\d+)", re.DOTALL)
"""llama.cpp's refusal of an embedding input longer than its physical batch."""
MODEL_MAX_TOKENS = {"text-embedding-3-small": 8191, "text-embedding-3-large": 8191,
                    "text-embedding-ada-002": 8191}
MODEL_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072,
                    "text-embedding-ada-002": 1536}
QUERY_MEMORY = 256
"""Query vectors kept, so a query is embedded once however often it is searched."""


class InputTooLarge(EmbeddingError):
    """The server refused an input as longer than its batch, and named the batch."""

    def __init__(self, message: str, batch: int) -> None:
        super().__init__(message)
        self.batch = batch


def named_batch(message: str) -> int | None:
    """The physical batch llama.cpp names when it refuses an input, else None."""
    found = TOO_LARGE.search(message)
    return int(found.group(1)) if found else None


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


class OpenAIEmbedder:
    """An OpenAI-compatible /v1/embeddings endpoint (see the module docstring)."""

    backend = ""  # a remote service: nothing local computes the vectors

    def __init__(self, settings: Settings, model: str = DEFAULT_MODEL, *,
                 max_tokens: int | None = None, batch_size: int = 256,
                 request_tokens: int = 280_000, timeout: float | None = None,
                 max_retries: int | None = None, counter: TokenCounter | None = None,
                 base_url: str | None = None, api_key: str | None = None) -> None:
        key = api_key or settings.openai_api_key
        if not key:
            raise ConfigError(
                "OpenAI embeddings need an API key: set OPENAI_API_KEY (for a local "
                "OpenAI-compatible server that ignores keys, any non-empty value), and "
                "OPENAI_BASE_URL to use a compatible server such as vLLM, Ollama or "
                "llama.cpp (e.g. http://localhost:11434/v1)")
        timeout = settings.openai_timeout if timeout is None else timeout
        max_retries = settings.openai_retries if max_retries is None else max_retries
        if batch_size < 1 or request_tokens < 1 or timeout <= 0 or max_retries < 0:
            raise ValueError("batch_size, request_tokens and timeout must be positive, "
                             "max_retries non-negative")
        self.model = model
        self.spec = f"openai/{model}"
        self.client = LLMClient(base_url or settings.openai_base_url, key, timeout=timeout,
                                retries=max_retries)
        self.base_url = self.client.base_url
        self._asked_max = max_tokens or settings.embedding_max_tokens
        self._max_tokens: int | None = self._asked_max or MODEL_MAX_TOKENS.get(model)
        self.dimension = MODEL_DIMENSIONS.get(model, 0)
        """Known for OpenAI's models; for others set from the first response."""
        self.batch_size = batch_size
        self.request_tokens = request_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self._counter = counter
        self._trusted = counter is not None and counter.exact
        """A counter given by the caller counts as the model does."""
        self._token_timeout = settings.token_timeout
        self._seen_dimension: int | None = None
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.last_truncated = 0
        self.last_usage_tokens = 0
        """Tokens the server reported (usage.total_tokens) for the last call."""

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, server={self.server!r})"

    @property
    def server(self) -> str:
        return self.client.server

    def load(self) -> None:
        """Nothing to load: the model is the server's (its limits are asked here)."""
        _ = self.max_tokens

    @property
    def max_tokens(self) -> int:
        """Tokens an input is cut to (asks the server the first time; module docstring)."""
        if self._max_tokens is None:
            learned = INPUT_LIMITS.get(self.base_url, self.model)
            info = self.client.probe(self.model)
            if learned:
                self._max_tokens = learned
            elif info.llama_cpp:
                window = info.context_window
                limit = min(info.batch or self._ask_batch(window), window or LLAMA_CPP_BATCH)
                self._max_tokens = max(1, limit - SPECIAL_TOKENS)
            else:
                self._max_tokens = DEFAULT_MAX_TOKENS
        return self._max_tokens

    @max_tokens.setter
    def max_tokens(self, value: int) -> None:
        self._max_tokens = value

    def _ask_batch(self, window: int | None) -> int:
        """llama.cpp's physical batch, which /props does not report: an input of more
        tokens than a slot holds (a word is at least one token) is refused before any
        computing, in words naming the batch. A server that takes it takes a slot."""
        words = (window or LLAMA_CPP_BATCH) + 2 * SPECIAL_TOKENS
        try:
            self.client.embeddings([" ".join(["word"] * words)], model=self.model)
        except CallFailed as exc:
            batch = named_batch(str(exc))
            log.info("embedding input limit of %s: %s", self.server,
                     f"batch {batch}" if batch else f"unknown ({exc})")
            return batch or LLAMA_CPP_BATCH
        return window or LLAMA_CPP_BATCH

    def fingerprint(self) -> str:
        server = hashlib.sha256(self.base_url.rstrip("/").encode()).hexdigest()[:10]
        return f"openai-{_safe(self.model)}-{server}-max{self.max_tokens}"

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            if not is_openai(self.base_url) and self.client.probe(self.model).tokenize:
                self._counter = ServerCounter(self.client,
                                              get_counter(ENCODING, self._token_timeout))
            else:
                self._counter = get_counter(ENCODING, self._token_timeout)
        return self._counter

    def cost(self, text: str) -> int:
        """Tokens of `text`: exact with the model's own tokenizer (the server's, or
        tiktoken for OpenAI's models), else a deliberately high estimate."""
        if self.counter.exact and (self._trusted or is_openai(self.base_url)
                                   or isinstance(self.counter, ServerCounter)):
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
        if kind == "query" and items and all(t in self._queries for t in items):
            with self._lock:
                return np.stack([self._queries[t] for t in items])
        try:
            vectors = self._embed(items, progress)
        except InputTooLarge as exc:
            limit = exc.batch - SPECIAL_TOKENS
            if not 0 < limit < self.max_tokens:
                raise
            log.warning("%s takes at most %d tokens per input, not %d: cutting again",
                        self.server, exc.batch, self.max_tokens)
            self.max_tokens = limit
            INPUT_LIMITS.put(self.base_url, self.model, limit)
            vectors = self._embed(items, progress)
        if kind == "query":
            with self._lock:
                for text, vector in zip(items, vectors, strict=True):
                    self._queries[text] = vector
                    self._queries.move_to_end(text)
                while len(self._queries) > QUERY_MEMORY:
                    self._queries.popitem(last=False)
        return vectors

    def _embed(self, items: list[str], progress: Progress) -> np.ndarray:
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
        try:
            response = self.client.embeddings(batch, model=self.model)
        except CallFailed as exc:
            named = named_batch(str(exc))
            if named:
                raise InputTooLarge(
                    f"embedding request failed: {exc} (inputs were cut to "
                    f"{self.max_tokens} tokens; TARGET_EMBEDDING_MAX_TOKENS sets the "
                    "limit)", named) from None
            raise EmbeddingError(f"embedding request failed: {exc}") from None
        where = f"{self.server} (model {self.model})"
        try:
            data = sorted(response.data, key=lambda item: item.index)
            raw = [item.embedding for item in data]
        except (AttributeError, TypeError) as exc:
            raise EmbeddingError(f"{where} sent a malformed embeddings response "
                                 f"({type(exc).__name__})") from None
        if raw and isinstance(raw[0], list) and raw[0] and isinstance(raw[0][0], list):
            raise EmbeddingError(
                f"{where} returned one vector per token ({len(raw[0])} vectors for the "
                "first input) instead of one per input: the server does not pool. Start "
                "llama.cpp's server with --pooling mean (or cls / last, as the model "
                "expects; llama-cpp-python: pooling_type), or use a model made for "
                "embeddings")
        try:
            vectors = np.array(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{where} sent a malformed embeddings response "
                                 f"({type(exc).__name__})") from None
        if vectors.ndim != 2 or len(vectors) != len(batch) or vectors.shape[1] == 0:
            raise EmbeddingError(f"{where} returned {len(vectors)} embeddings of shape "
                                 f"{vectors.shape[1:]} for {len(batch)} inputs")
        if self._seen_dimension not in (None, vectors.shape[1]):
            raise EmbeddingError(f"{where} returned {vectors.shape[1]}-dimensional "
                                 f"embeddings after {self._seen_dimension}-dimensional ones")
        self._seen_dimension = self.dimension = int(vectors.shape[1])
        usage = getattr(response, "usage", None)
        self.last_usage_tokens += int(getattr(usage, "total_tokens", 0) or 0)
        return normalize_rows(vectors)
