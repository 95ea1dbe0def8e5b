"""The onnxruntime forward pass of all-MiniLM-L6-v2: same vectors as sentence-transformers'
reference and as the numpy pass, chosen by get_embedder when onnx is installed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from target_core.config import load_settings
from target_core.embeddings import get_embedder
from target_core.embeddings.minilm import MiniLMEmbedder
from target_core.embeddings.minilm_onnx import OnnxMiniLMEmbedder, available

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json")
                       .read_text(encoding="utf-8"))["items"]
TEXTS = [item["text"] for item in REFERENCE]
VECTORS = np.array([item["vector"] for item in REFERENCE], dtype=np.float32)

pytestmark = pytest.mark.skipif(not available(), reason="onnx/onnxruntime not installed")


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_matches_reference_batched_and_one_at_a_time() -> None:
    embedder = OnnxMiniLMEmbedder()
    batched = embedder.embed(TEXTS, kind="document")
    assert _cosines(batched, VECTORS).min() >= 0.9999
    single = np.stack([embedder.embed([t], kind="query")[0] for t in TEXTS])
    assert _cosines(single, VECTORS).min() >= 0.9999
    assert embedder.last_truncated == 0


def test_agrees_with_the_numpy_pass_in_any_order() -> None:
    order = np.random.default_rng(3).permutation(len(TEXTS))
    texts = [TEXTS[i] for i in order]
    onnx_vectors = OnnxMiniLMEmbedder(workers=2, batch_tokens=64).embed(texts, kind="document")
    numpy_vectors = MiniLMEmbedder().embed(texts, kind="document")
    assert _cosines(onnx_vectors, numpy_vectors).min() >= 0.99999
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1, atol=1e-5)


def test_get_embedder_prefers_onnxruntime_and_keeps_the_cache_key(tmp_path: Path) -> None:
    embedder = get_embedder("minilm", load_settings(environ={"TARGET_WORKSPACE": str(tmp_path)}))
    assert isinstance(embedder, OnnxMiniLMEmbedder) and embedder.backend == "onnxruntime"
    # same vectors, so Chroma collections made by either backend are shared
    assert embedder.fingerprint() == MiniLMEmbedder().fingerprint()


def test_sessions_spin_only_while_running() -> None:
    """The thread pools used for a query (all threads) and for batches side by side (one
    each) spin between the ops of a pass and stop when it returns: a pool left spinning
    took the second core from Chroma's search right after."""
    embedder = OnnxMiniLMEmbedder(workers=2)
    for parallel, threads in ((False, 2), (True, 1)):
        options = embedder._session(parallel).get_session_options()
        assert options.intra_op_num_threads == threads
        assert options.get_session_config_entry("session.force_spinning_stop") == "1"
        assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"


def test_embedding_keeps_blas_on_one_thread() -> None:
    """The onnxruntime pass does no BLAS work: no OpenBLAS thread may be woken to spin."""
    from threadpoolctl import threadpool_info

    seen: list[list[int]] = []

    def progress(done: int, total: int, what: str) -> None:
        seen.append([lib["num_threads"] for lib in threadpool_info()
                     if lib["user_api"] == "blas"])

    OnnxMiniLMEmbedder(workers=2).embed(["one query"], kind="query", progress=progress)
    assert seen and all(threads == [1] * len(threads) for threads in seen)


def test_progress_moves_at_least_every_64_texts() -> None:
    """Short texts would fill batches of 256 (1,024 tokens): progress is per batch, so
    batches hold at most 64 texts."""
    calls: list[int] = []
    OnnxMiniLMEmbedder(workers=2).embed([f"lake {i}" for i in range(300)], kind="document",
                                        progress=lambda done, total, what: calls.append(done))
    assert calls[-1] == 300 and max(np.diff([0, *calls])) <= 64
