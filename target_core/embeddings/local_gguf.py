"""Embeddings from a GGUF model on llama.cpp's server inside this process: `local/...`.

Spec `local/PATH.gguf` for an embedding model llama.cpp runs (nomic-embed, bge, Qwen3
embedding GGUF files, ...), or `local/smollm2`: the bundled SmolLM2-135M chat model,
mean-pooled. SmolLM2 is not an embedding model; its vectors exercise the embeddings
protocol end to end (tests, trying a dense pipeline offline), not retrieval quality.

The server (llm.llama_server, embeddings on, mean pooling) starts on `load` or
the first `embed`, never when the embedder is built, so naming the spec costs nothing;
then the OpenAI embeddings client (openai_embedder.OpenAIEmbedder) talks to it.
llama.cpp embeds an input in one batch, which this server makes as large as a slot's
context (TARGET_LOCAL_CONTEXT); texts are cut to that, counted by the model's own
tokenizer (the server's /tokenize), and a request holds at most one batch of tokens.
The fingerprint names the file's content, not the server's port, so a Chroma collection
is reused across processes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np

from target_core.config import Settings
from target_core.embeddings.base import Kind
from target_core.embeddings.openai_embedder import SPECIAL_TOKENS, OpenAIEmbedder
from target_core.llm.llama_server import ServerOptions, resolve_model, serve
from target_core.llm.local import LOCAL_API_KEY, LOCAL_TIMEOUT
from target_core.progress import Progress, no_progress

BATCH_SIZE = 16
"""Texts per request at most. A request also holds at most one physical batch of tokens
(the server's n_ubatch, which this server makes a slot's context): llama.cpp answers a
request whole, so a request of 16 inputs of 2,040 tokens took minutes on 2 cores and
outlived the client's timeout; one batch of tokens is one forward pass."""


class LocalEmbedder:
    """See the module docstring."""

    backend = "llama.cpp"

    def __init__(self, name: str, settings: Settings) -> None:
        self.model = resolve_model(name)  # a missing wheel or file raises here
        self.spec = f"local/{self.model.name}"
        self.options = ServerOptions.from_settings(settings, embeddings=True)
        self.max_tokens = max(1, self.options.context - SPECIAL_TOKENS)
        self.dimension = 0
        """Known after `load`: the model's embedding length."""
        self.last_truncated = 0
        self._settings = settings
        self._client: OpenAIEmbedder | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalEmbedder({self.model.name!r})"

    @property
    def label(self) -> str:
        return self.model.label + (" in embeddings mode (mean pooling)"
                                   if self.model.name == "smollm2" else "")

    def load(self) -> None:
        """Start the server (if this process has not) and learn the vector length."""
        self._ready()

    def fingerprint(self) -> str:
        alias = re.sub(r"[^A-Za-z0-9._-]+", "_", self.model.alias)
        return f"local-{alias}-{self.model.identity()}-mean-max{self.max_tokens}"

    def embed(self, texts: Sequence[str], *, kind: Kind,
              progress: Progress = no_progress) -> np.ndarray:
        client = self._ready()
        vectors = client.embed(texts, kind=kind, progress=progress)
        self.last_truncated = client.last_truncated
        self.dimension = int(vectors.shape[1]) if len(vectors) else self.dimension
        return vectors

    def _ready(self) -> OpenAIEmbedder:
        with self._lock:
            if self._client is None:
                server = serve(self.model, self.options)
                client = OpenAIEmbedder(self._settings, self.model.alias,
                                        base_url=server.base_url, api_key=LOCAL_API_KEY,
                                        max_tokens=self.max_tokens,
                                        timeout=max(LOCAL_TIMEOUT,
                                                    self._settings.openai_timeout),
                                        batch_size=BATCH_SIZE,
                                        request_tokens=self.options.context)
                client.embed(["dimension probe"], kind="document")
                self.dimension = client.dimension
                self._client = client
            return self._client
