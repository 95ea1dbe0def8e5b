"""Chroma with precomputed vectors at scale, on disk in-process and as a `chroma run`
server (prints; not a test).

    .venv/bin/python -m benchmarks.scale_chroma [--vectors 100000] [--queries 5000]
        [--dim 384] [--mode embedded|server|both] [--keep DIR] [--json]

Documents are random unit vectors; query i is normalize(doc[g_i] + 0.3 * unit noise), so
the hit@10 rate of its gold document g_i checks the HNSW index's recall (exact search
finds every one). Each mode times, through DenseRetriever: index() of every vector, top-10
search() one query at a time as the run engine calls it (median and p95), and a second
index() of the same texts from a new client (everything cached); then the peak RSS of
this process (which holds the vectors themselves) and of the server (max VmHWM over its
process tree). "embedded" is VectorStore.persistent on a temporary directory, "server" a
`chroma run` on a free loopback port reached through VectorStore.from_settings. `both`
runs each mode in its own process, so each client's peak memory is its own.
`--keep DIR` keeps Chroma's data in DIR/chroma, and the server serves that directory:
with `both`, the server serves the collection the embedded mode built (one build, not
two: at 1,000,000 vectors a build takes most of an hour on 2 cores), so the server's
"add" is the check that every vector is there, as a run over a built collection does.
Targets at 100,000 tables: top-10 query median <= 20 ms, peak memory <= 4 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.chroma_speed import Precomputed
from target_core.config import load_settings
from target_core.retrievers.dense import DenseRetriever
from target_core.vectorstore import VectorStore
from tests.chroma_support import start_chroma

MODES = ("embedded", "server")
TOP_K = 10
NOISE = 0.3
CORPUS_KEY = "scale-bench"


def normalize(rows: np.ndarray) -> None:
    """Scale rows to unit length in place (no full-size temporaries)."""
    rows /= np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]


def make_vectors(n: int, queries: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents then queries in one float32 array (text i is row i), and each query's gold.

    Built in place in float32, so the client's peak memory is not the generator's."""
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n + queries, dim), dtype=np.float32)
    gold = rng.integers(0, n, queries)
    normalize(vectors)
    noisy = vectors[n:]
    noisy *= NOISE
    noisy += vectors[gold]
    normalize(noisy)
    return vectors, gold


def peak_rss_mb(pid: int) -> float:
    """Max VmHWM (peak resident set) over a process and all its descendants."""
    status = Path(f"/proc/{pid}/status").read_text()
    kib = next(int(line.split()[1]) for line in status.splitlines()
               if line.startswith("VmHWM:"))
    children = [int(c) for task in Path(f"/proc/{pid}/task").iterdir()
                for c in (task / "children").read_text().split()]
    return max([kib / 1024, *(peak_rss_mb(c) for c in children)])


def percentile_ms(times: list[float], q: float) -> float:
    return float(np.percentile(times, q)) * 1000


def time_store(open_store: Callable[[], VectorStore], vectors: np.ndarray,
               gold: np.ndarray) -> dict[str, Any]:
    """Index, per-query search and cached re-index through DenseRetriever."""
    n = len(vectors) - len(gold)
    texts = [str(i) for i in range(n)]
    retriever = DenseRetriever(Precomputed(vectors), open_store())
    started = time.perf_counter()
    retriever.index(texts, corpus_key=CORPUS_KEY)
    add_s = time.perf_counter() - started
    times, hits = [], 0
    for q, g in enumerate(gold):
        started = time.perf_counter()
        (found,) = retriever.search([str(n + q)], top_k=TOP_K)
        times.append(time.perf_counter() - started)
        hits += any(i == g for i, _ in found)
    again = DenseRetriever(Precomputed(vectors), open_store())
    started = time.perf_counter()
    info = again.index(texts, corpus_key=CORPUS_KEY)
    cached_s = time.perf_counter() - started
    return {"add_s": add_s, "add_per_s": n / add_s,
            "query_median_ms": percentile_ms(times, 50),
            "query_p95_ms": percentile_ms(times, 95), "hit_at_10": hits / len(gold),
            "cached_index_s": cached_s, "cached": info.details["cached"],
            "embedded_again": info.details["embedded"],
            "max_batch": retriever.store.max_batch()}


def measure(mode: str, n: int, queries: int, dim: int, keep: Path | None = None
            ) -> dict[str, Any]:
    """One mode's figures, run in this process (Chroma's data in keep/chroma, kept, when
    `keep` is given)."""
    vectors, gold = make_vectors(n, queries, dim)
    before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as tmp:
        data = keep / "chroma" if keep else Path(tmp) / "chroma"
        if mode == "embedded":
            figures = time_store(lambda: VectorStore.persistent(data), vectors, gold)
            server_mb = None
        else:
            with start_chroma(data) as server:
                settings = load_settings(environ={"TARGET_WORKSPACE": str(Path(tmp) / "ws"),
                                                  "TARGET_CHROMA_HOST": "127.0.0.1",
                                                  "TARGET_CHROMA_PORT": str(server.port)})
                figures = time_store(lambda: VectorStore.from_settings(settings),
                                     vectors, gold)
                server_mb = peak_rss_mb(server.process.pid)
    return {"mode": mode, "vectors": n, "dim": dim, "queries": queries, **figures,
            "client_before_chroma_mb": before_mb,
            "client_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "server_peak_mb": server_mb}


def measure_in_subprocess(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.scale_chroma", "--mode", mode, "--json",
               "--vectors", str(args.vectors), "--queries", str(args.queries),
               "--dim", str(args.dim), *(["--keep", str(args.keep)] if args.keep else [])]
    out = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(next(line for line in out.splitlines() if line.startswith("{")))


ROWS = (("add N vectors (s)", "add_s", "{:.1f}"),
        ("add rate (vectors/s)", "add_per_s", "{:,.0f}"),
        ("add batch size (max_batch)", "max_batch", "{:,}"),
        ("top-10 query median (ms, target <= 20)", "query_median_ms", "{:.2f}"),
        ("top-10 query p95 (ms)", "query_p95_ms", "{:.2f}"),
        ("hit@10 of the gold vector", "hit_at_10", "{:.4f}"),
        ("cached re-index, new client (s)", "cached_index_s", "{:.2f}"),
        ("  texts found cached", "cached", "{:,}"),
        ("  texts embedded again", "embedded_again", "{:,}"),
        ("client peak RSS (MB)", "client_peak_mb", "{:,.0f}"),
        ("  client RSS before Chroma (MB)", "client_before_chroma_mb", "{:,.0f}"),
        ("server peak RSS (MB)", "server_peak_mb", "{:,.0f}"))


def cell(result: dict[str, Any], key: str, fmt: str) -> str:
    return "-" if result[key] is None else fmt.format(result[key])


def print_table(results: Sequence[dict[str, Any]]) -> None:
    first = results[0]
    print(f"Chroma: {first['vectors']:,} x {first['dim']} vectors, {first['queries']:,} "
          f"queries (peak memory target <= 4,096 MB)")
    print(f"{'':42}" + "".join(f"{r['mode']:>16}" for r in results))
    for label, key, fmt in ROWS:
        print(f"{label:42}" + "".join(f"{cell(r, key, fmt):>16}" for r in results))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    parser.add_argument("--keep", type=Path, help="keep Chroma's data in DIR/chroma; the "
                        "server serves it (with both: what the embedded mode built)")
    parser.add_argument("--json", action="store_true", help="one JSON object per mode")
    args = parser.parse_args(argv)
    if args.mode == "both":
        results = [measure_in_subprocess(mode, args) for mode in MODES]
    else:
        results = [measure(args.mode, args.vectors, args.queries, args.dim, args.keep)]
    if args.json:
        for result in results:
            print(json.dumps(result), flush=True)
    else:
        print_table(results)


if __name__ == "__main__":
    main()
