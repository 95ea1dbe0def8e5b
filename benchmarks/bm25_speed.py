"""Speed of the lexical retrievers on a synthetic corpus (prints figures; not a test).

    .venv/bin/python -m benchmarks.bm25_speed [--tables 10000] [--queries 1000]

Texts are TableView()'s default (title, section, markdown, all rows). Queries are
searched one at a time at top-10, as the run engine calls a retriever. rank-bm25 is
timed on a subset of the queries (it takes ~10 ms each at 10,000 tables) and its
scores are compared with ours on that subset. Targets: BM25 build <= 5 s, median
query <= 2 ms at 10,000 tables.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from benchmarks.synthetic import make_corpus
from target_core.retrievers.base import Hits, top_k_hits
from target_core.retrievers.bm25 import BM25Retriever
from target_core.retrievers.tfidf import TfidfRetriever
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.textproc import tokenize

TOP_K = 10


def time_queries(search: Callable[[str], Hits], queries: Sequence[str]) -> tuple[np.ndarray,
                                                                                 list[Hits]]:
    """Milliseconds per query, and the hits."""
    times, results = [], []
    for query in queries:
        started = time.perf_counter()
        results.append(search(query))
        times.append((time.perf_counter() - started) * 1000)
    return np.array(times), results


def hit_rate(results: Sequence[Hits], gold: Sequence[int]) -> float:
    return float(np.mean([any(i == g for i, _ in hits) for hits, g in zip(results, gold,
                                                                           strict=True)]))


def line(name: str, build: float | None, times: np.ndarray, extra: str = "") -> str:
    built = f"build {build:6.2f} s" if build is not None else " " * 14
    return (f"{name:<18} {built}   query median {np.median(times):6.2f} ms   "
            f"p95 {np.percentile(times, 95):6.2f} ms   ({times.size} queries){extra}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--rank-bm25-queries", type=int, default=100,
                        help="queries timed with rank-bm25 (slow)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    tables, queries = make_corpus(args.tables, args.queries, args.seed)
    texts = [table_text(t, TableView()) for t in tables]
    position = {t.key: i for i, t in enumerate(tables)}
    gold = [position[q.gold[0]] for q in queries]
    query_texts = [q.query for q in queries]
    tokens = sum(len(tokenize(t)) for t in texts[:1000]) / min(1000, len(texts))
    print(f"corpus: {len(texts)} tables, {len(queries)} queries, "
          f"~{np.mean([len(t) for t in texts]):.0f} chars and ~{tokens:.0f} tokens a table "
          f"(made in {time.perf_counter() - started:.1f} s)")

    bm25 = BM25Retriever()
    info = bm25.index(texts, corpus_key="benchmark")
    times, results = time_queries(lambda q: bm25.search([q], top_k=TOP_K)[0], query_texts)
    print(line("bm25 (sparse)", info.seconds, times,
               f"   vocabulary {info.details['vocabulary_size']:,}, "
               f"hit@{TOP_K} {hit_rate(results, gold):.3f}"))

    subset = query_texts[: args.rank_bm25_queries]
    started = time.perf_counter()
    reference = BM25Okapi([tokenize(t) for t in texts])
    reference_build = time.perf_counter() - started
    ref_times, _ = time_queries(
        lambda q: top_k_hits(reference.get_scores(tokenize(q)), TOP_K), subset)
    worst = max(float(np.abs(bm25.score_all(q) - reference.get_scores(tokenize(q))).max())
                for q in subset)
    print(line("rank-bm25", reference_build, ref_times,
               f"   max |score difference| {worst:.1e}"))
    print(f"{'':<18} speed-up at the median: {np.median(ref_times) / np.median(times):.0f}x")

    tfidf = TfidfRetriever()
    info = tfidf.index(texts, corpus_key="benchmark")
    times, results = time_queries(lambda q: tfidf.search([q], top_k=TOP_K)[0], query_texts)
    print(line("tfidf (1-2 grams)", info.seconds, times,
               f"   vocabulary {info.details['vocabulary_size']:,}, "
               f"hit@{TOP_K} {hit_rate(results, gold):.3f}"))


if __name__ == "__main__":
    main()
