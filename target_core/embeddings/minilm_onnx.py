"""all-MiniLM-L6-v2 on onnxruntime: the model of minilm.py as a graph of standard ONNX
ops (opset 17), built in memory from the sha256-verified weights: no torch, no file
fetched, nothing written to disk.

Measured on 2 cores against the numpy forward pass in the same run (benchmarks/
embed_minilm.py): about 30% more tokens/s in bulk and 2.3x lower latency for one query;
the vectors agree to a cosine above 0.999999. Tokenization, batching and pooling
semantics are minilm.py's; only the forward pass differs. Used for `minilm` whenever
`onnx` and `onnxruntime` import (get_embedder), else the numpy pass.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from target_core.embeddings.base import normalize_rows
from target_core.embeddings.minilm import MiniLMEmbedder
from target_core.embeddings.minilm_weights import HEAD_DIM, HEADS, HIDDEN, load_tensors

LAYERS = 6
EPS = 1e-12
_lock = threading.Lock()


def available() -> bool:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


class _Graph:
    """A tiny builder: initializers and nodes with generated output names."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.count = 0

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        self.count += 1
        out = f"{op_type}_{self.count}"
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], **attrs))
        return out


def build_model(t: dict[str, np.ndarray]) -> bytes:
    """Serialized ONNX model: inputs input_ids, attention_mask [batch, seq] int64 (right
    padding); output `pooled` [batch, 384], the mask-weighted mean of the last layer."""
    from onnx import TensorProto, helper

    g = _Graph()

    def f32(name: str) -> np.ndarray:
        return np.asarray(t[name], dtype=np.float32)

    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    word = g.op("Gather", [g.init("word", f32("embeddings.word_embeddings.weight")),
                           "input_ids"])
    seq = g.op("Shape", ["input_ids"], start=1, end=2)
    pos = g.op("Slice", [g.init("pos", f32("embeddings.position_embeddings.weight")),
                         g.init("zero", np.array([0], np.int64)), seq,
                         g.init("axis0", np.array([0], np.int64))])
    segment = g.init("seg", f32("embeddings.token_type_embeddings.weight")[0])  # all type 0
    x = g.op("Add", [g.op("Add", [word, pos]), segment])
    x = g.op("LayerNormalization", [x, g.init("emb_g", f32("embeddings.LayerNorm.weight")),
                                    g.init("emb_b", f32("embeddings.LayerNorm.bias"))],
             axis=-1, epsilon=EPS)
    negative = g.op("Mul", [g.op("Sub", [g.init("one", np.array(1, np.float32)), mask]),
                            g.init("big", np.array(-1e9, np.float32))])
    bias = g.op("Unsqueeze", [negative, g.init("ax12", np.array([1, 2], np.int64))])
    g.init("bshd", np.array([0, 0, HEADS, HEAD_DIM], np.int64))
    g.init("bsh", np.array([0, 0, HIDDEN], np.int64))
    scale = np.float32(1 / np.sqrt(HEAD_DIM))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        def w(name: str, p: str = p) -> np.ndarray:
            return f32(p + name)

        def proj(name: str, factor: float | np.float32, i: int = i, x: str = x, w: Any = w) -> str:
            y = g.op("MatMul", [x, g.init(f"l{i}_{name}_w",
                                          w(f"attention.self.{name}.weight").T * factor)])
            y = g.op("Add", [y, g.init(f"l{i}_{name}_b", w(f"attention.self.{name}.bias")
                                       * factor)])
            return g.op("Reshape", [y, "bshd"])

        q = g.op("Transpose", [proj("query", scale)], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [proj("key", 1.0)], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [proj("value", 1.0)], perm=[0, 2, 1, 3])
        scores = g.op("Softmax", [g.op("Add", [g.op("MatMul", [q, k]), bias])], axis=-1)
        context = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [scores, v])],
                                        perm=[0, 2, 1, 3]), "bsh"])
        a = g.op("Add", [g.op("MatMul", [context, g.init(
            f"l{i}_wo", w("attention.output.dense.weight").T)]),
            g.init(f"l{i}_bo", w("attention.output.dense.bias"))])
        a = g.op("LayerNormalization", [g.op("Add", [a, x]), g.init(
            f"l{i}_ln1_g", w("attention.output.LayerNorm.weight")), g.init(
            f"l{i}_ln1_b", w("attention.output.LayerNorm.bias"))], axis=-1, epsilon=EPS)
        h = g.op("Add", [g.op("MatMul", [a, g.init(f"l{i}_w1",
                                                  w("intermediate.dense.weight").T)]),
                         g.init(f"l{i}_b1", w("intermediate.dense.bias"))])
        erf = g.op("Erf", [g.op("Div", [h, g.init(f"l{i}_sqrt2",
                                                  np.array(np.sqrt(2), np.float32))])])
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, "one"])]),
                         g.init(f"l{i}_half", np.array(0.5, np.float32))])  # exact GELU
        o = g.op("Add", [g.op("MatMul", [h, g.init(f"l{i}_w2", w("output.dense.weight").T)]),
                         g.init(f"l{i}_b2", w("output.dense.bias"))])
        x = g.op("LayerNormalization", [g.op("Add", [o, a]), g.init(
            f"l{i}_ln2_g", w("output.LayerNorm.weight")), g.init(
            f"l{i}_ln2_b", w("output.LayerNorm.bias"))], axis=-1, epsilon=EPS)
    rows = g.op("Unsqueeze", [mask, g.init("ax1", np.array([1], np.int64))])
    summed = g.op("Squeeze", [g.op("MatMul", [rows, x]), "ax1"])
    count = g.op("ReduceSum", [mask, "ax1"], keepdims=1)
    g.nodes.append(helper.make_node("Div", [summed, count], ["pooled"]))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in ("input_ids", "attention_mask")]
    output = helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", HIDDEN])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, [output], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="target-explorer")
    model.ir_version = 8
    return model.SerializeToString()


SESSION_CONFIG = {
    # spin between the ~100 ops of one pass (waking a sleeping thread per op costs more
    # than the op), but stop the moment run() returns: a pool left spinning takes the
    # second core from Chroma's search and numpy's scoring that come right after
    "session.intra_op.allow_spinning": "1",
    "session.force_spinning_stop": "1",
    "session.inter_op.allow_spinning": "0",  # sequential execution: no inter-op work
}
"""onnxruntime thread settings (benchmarks/dense_speed.py measures their effect)."""


def session_options(threads: int) -> Any:
    """SessionOptions with `threads` intra-op threads and SESSION_CONFIG."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    for key, value in SESSION_CONFIG.items():
        options.add_session_config_entry(key, value)
    options.log_severity_level = 3  # graph optimization prints harmless shape notes
    return options


@lru_cache(maxsize=4)
def session(model_dir: Path, threads: int) -> Any:
    """An InferenceSession with `threads` intra-op threads (built once per process)."""
    import onnxruntime as ort

    return ort.InferenceSession(build_model(load_tensors(model_dir)), session_options(threads),
                                providers=["CPUExecutionProvider"])


class OnnxMiniLMEmbedder(MiniLMEmbedder):
    """MiniLMEmbedder whose forward pass runs on onnxruntime."""

    backend = "onnxruntime"

    def load(self) -> None:
        super().load()
        self._session(parallel=False)

    def _session(self, parallel: bool) -> Any:
        # batches running side by side get one thread each; a lone batch (a query) gets all
        with _lock:
            return session(self.model_dir, 1 if parallel else max(self.workers, 1))

    def blas_limit(self, parallel: bool) -> int:
        """One: the onnxruntime pass does no BLAS work, and at one thread no OpenBLAS
        worker can be woken to spin beside onnxruntime's."""
        return 1

    def forward_batch(self, ids: np.ndarray, lengths: np.ndarray, parallel: bool
                      ) -> np.ndarray:
        mask = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
        (pooled,) = self._session(parallel).run(
            ["pooled"], {"input_ids": ids, "attention_mask": mask})
        return normalize_rows(np.asarray(pooled, dtype=np.float32))
