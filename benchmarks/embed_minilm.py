"""Speed of the torch-free all-MiniLM-L6-v2 (prints figures; not a test).

    .venv/bin/python -m benchmarks.embed_minilm [--tables 2000] [--batch-tokens 1024]

Texts come from benchmarks/synthetic.py: (a) tables as markdown with title, section
and up to 10 rows (most fill the 256-token window), (b) the same tables header only.
Each is embedded with three thread settings:

    workers=1 blas=1   one batch at a time, OpenBLAS on one thread
    workers=1 blas=2   one batch at a time, OpenBLAS on two threads
    workers=2 blas=1   two batches at once on two Python threads, OpenBLAS on one each

and reported as tokens/s (real tokens, [CLS]/[SEP] included, padding excluded) and
tables/s. Last, the latency of one short query (median of 50, after a warm-up).
DESIGN.md's targets: >= 5,000 tokens/s on 2 cores; the issue asks >= 80 tables/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from benchmarks.synthetic import make_corpus
from target_core.embeddings import minilm_onnx
from target_core.embeddings.minilm import DEFAULT_BATCH_TOKENS, MiniLMEmbedder
from target_core.serialize import table_text
from target_core.table_view import TableView

SETTINGS = ((1, 1), (1, 2), (2, 1))  # (workers, blas threads)
QUERY = "what is the population of the largest city in brazil"


def throughput(embedder: MiniLMEmbedder, texts: list[str]) -> tuple[float, float, float]:
    """(tokens/s, texts/s, seconds) of one embed() call over all texts."""
    started = time.perf_counter()
    embedder.embed(texts, kind="document")
    seconds = time.perf_counter() - started
    return embedder.last_tokens / seconds, len(texts) / seconds, seconds


def query_latency(embedder: MiniLMEmbedder, repeats: int = 50) -> float:
    """Median milliseconds to embed one short query."""
    embedder.embed([QUERY], kind="query")
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        embedder.embed([QUERY], kind="query")
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--batch-tokens", type=int, default=DEFAULT_BATCH_TOKENS)
    args = parser.parse_args()

    tables, _ = make_corpus(args.tables, 0, seed=0)
    corpora = {
        "rows<=10": [table_text(t, TableView(rows=10)) for t in tables],
        "header-only": [table_text(t, TableView(rows=0)) for t in tables],
    }
    MiniLMEmbedder().load()  # verification and loading are not part of the figures
    print(f"{len(tables)} synthetic tables, batch_tokens={args.batch_tokens}, "
          f"{os.cpu_count()} CPUs")
    for name, texts in corpora.items():
        probe = MiniLMEmbedder()
        _, lengths, truncated = probe.tokenize(texts)
        print(f"\n{name}: mean {lengths.mean():.0f} tokens/text, {truncated} of {len(texts)} "
              f"truncated at 256")
        for workers, blas in SETTINGS:
            embedder = MiniLMEmbedder(workers=workers, blas_threads=blas,
                                      batch_tokens=args.batch_tokens)
            embedder.embed(texts[:64], kind="document")  # warm-up
            tokens_s, texts_s, seconds = throughput(embedder, texts)
            print(f"  workers={workers} blas={blas}: {tokens_s:7.0f} tokens/s  "
                  f"{texts_s:6.1f} tables/s  ({seconds:.1f} s)")
        if minilm_onnx.available():
            embedder = minilm_onnx.OnnxMiniLMEmbedder(batch_tokens=args.batch_tokens)
            embedder.embed(texts[:64], kind="document")  # warm-up, builds the sessions
            tokens_s, texts_s, seconds = throughput(embedder, texts)
            print(f"  onnxruntime, 2 workers: {tokens_s:7.0f} tokens/s  "
                  f"{texts_s:6.1f} tables/s  ({seconds:.1f} s)")
    print()
    for workers, blas in SETTINGS:
        embedder = MiniLMEmbedder(workers=workers, blas_threads=blas)
        print(f"one query, workers={workers} blas={blas}: median "
              f"{query_latency(embedder):.2f} ms of 50")
    if minilm_onnx.available():
        print(f"one query, onnxruntime: median "
              f"{query_latency(minilm_onnx.OnnxMiniLMEmbedder()):.2f} ms of 50")


if __name__ == "__main__":
    main()
