"""Chroma with precomputed vectors: add time and top-10 query time (prints; not a test).

    .venv/bin/python -m benchmarks.chroma_speed [--vectors 10000] [--dim 384] [--queries 200]

Vectors are random unit vectors (the HNSW index does not care where they came from).
Also times a dense retriever's second index() of the same texts, which must find every
vector cached (target: retrieving starts within 2 s). Target: top-10 query <= 10 ms.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from target_core.retrievers.dense import DenseRetriever
from target_core.vectorstore import VectorStore


class Precomputed:
    """An embedder that returns fixed vectors (by text index) so only Chroma is timed."""

    spec = "precomputed"
    max_tokens = 10**9
    last_truncated = 0
    backend = "precomputed"

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors
        self.dimension = vectors.shape[1]

    def fingerprint(self) -> str:
        return f"precomputed-{len(self.vectors)}-{self.dimension}"

    def load(self) -> None:
        """Nothing to load (the Embedder protocol's warm-up, called by the dense base)."""

    def embed(self, texts: Sequence[str], *, kind: str = "document", progress=None
              ) -> np.ndarray:
        return self.vectors[[int(t) for t in texts]]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((args.vectors, args.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [str(i) for i in range(args.vectors)]
    with tempfile.TemporaryDirectory() as tmp:
        store = VectorStore.persistent(Path(tmp) / "chroma")
        retriever = DenseRetriever(Precomputed(vectors), store)
        started = time.perf_counter()
        retriever.index(texts, corpus_key="bench")
        add_s = time.perf_counter() - started
        times = []
        for q in range(args.queries):
            started = time.perf_counter()
            retriever.search([str(q)], top_k=10)
            times.append((time.perf_counter() - started) * 1000)
        again = DenseRetriever(Precomputed(vectors), VectorStore.persistent(Path(tmp) / "chroma"))
        started = time.perf_counter()
        info = again.index(texts, corpus_key="bench")
        cached_s = time.perf_counter() - started
    print(f"chroma: {args.vectors:,} x {args.dim} vectors added in {add_s:.2f} s")
    print(f"chroma: top-10 query median {np.median(times):.2f} ms, "
          f"p95 {np.percentile(times, 95):.2f} ms (target <= 10 ms)")
    print(f"second index of the same texts: {cached_s:.2f} s, embedded "
          f"{info.details['embedded']}, cached {info.details['cached']} (target <= 2 s)")


if __name__ == "__main__":
    main()
