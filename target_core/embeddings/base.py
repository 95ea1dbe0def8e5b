"""The Embedder protocol and the errors embedders raise.

Kept apart from the package's __init__ (the registry) so the implementations can
import it without a cycle.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from target_core.errors import TargetError
from target_core.progress import Progress, no_progress

Kind = Literal["query", "document"]
KINDS: tuple[str, ...] = ("query", "document")


class EmbeddingError(TargetError):
    """An embedding service failed (timeout, refused request, malformed answer)."""


class ModelFilesError(EmbeddingError):
    """Local model files are missing, unreadable or not the expected weights."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors. Rows of the result follow the input order."""

    spec: str
    """The name it was built from: "minilm" or "openai/text-embedding-3-small"."""

    dimension: int
    """Length of each vector (for OpenAI-compatible servers: known after the first call)."""

    max_tokens: int
    """The model's input limit; longer texts are truncated (counted in last_truncated)."""

    last_truncated: int
    """How many texts of the last `embed` call were truncated to max_tokens."""

    backend: str
    """What computes the vectors of a local model ("numpy", "onnxruntime"); "" for a
    remote service. Recorded in a dense run's index info."""

    def embed(self, texts: Sequence[str], *, kind: Kind,
              progress: Progress = no_progress) -> np.ndarray:
        """float32 array (len(texts), dimension) with L2-normalized rows.

        `kind` says whether the texts are queries or documents (tables), for models that
        embed the two differently; MiniLM and OpenAI's models do not.
        """
        ...

    def load(self) -> None:
        """Make the model ready now, so the first timed query does not pay for loading
        it (a local model's weights and session, warmed by one pass); never a network
        call, so nothing for a remote service."""
        ...

    def fingerprint(self) -> str:
        """Identifies model, weights and settings (e.g. for naming a Chroma collection):
        two embedders with equal fingerprints give the same vectors. Characters are
        limited to [A-Za-z0-9._-] and it never needs a network call."""
        ...


def check_texts(texts: Sequence[str], kind: str) -> list[str]:
    """The texts as a list, after checking `kind` and that a bare string was not passed."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single string")
    return list(texts)


def normalize_rows(v: np.ndarray) -> np.ndarray:
    """float32 rows divided by max(||row||, 1e-12), as torch.nn.functional.normalize."""
    v = np.asarray(v, dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", v, v))
    return v / np.maximum(norms, np.float32(1e-12))[:, None]


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # scanning loaded libraries costs ~ms: do it once


@contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """BLAS (numpy's OpenBLAS) limited to `n` threads inside the block, restored after.

    The limit is process-wide. Why it matters: after a multi-threaded call, an OpenBLAS
    worker busy-waits for about 100 ms before sleeping; on 2 cores it then takes the core
    that onnxruntime and Chroma need for the next query (benchmarks/dense_speed.py). A
    call made with one thread wakes no worker, so nothing spins afterwards.
    """
    limiter = _blas_controller().limit(limits=n, user_api="blas")
    try:
        yield
    finally:
        limiter.restore_original_limits()
