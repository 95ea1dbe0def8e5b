"""Time of the retrieval metrics' two paths from their one definition (prints; not a test).

    .venv/bin/python -m benchmarks.metric_paths [--queries 2000]

Synthetic outcomes (top 10 of 2,000 tables, 1-3 gold tables each, most found): a query
scored alone (per_query_metrics), in the runner's batches of 32 and all at once (the
importer) with per_query_rows, and a whole run's numbers (aggregate_retrieval). Median
of 5 rounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    default_ks,
    per_query_metrics,
    per_query_rows,
)


def outcomes(n: int, seed: int = 1) -> list[QueryOutcome]:
    rng = random.Random(seed)
    corpus = [(f"db{i % 4}", f"t{i}") for i in range(2000)]
    out = []
    for q in range(n):
        gold = tuple(rng.sample(corpus, rng.choice([1, 1, 1, 2, 3])))
        ranked = rng.sample([t for t in corpus[:200] if t not in gold], 10)
        for key in gold:
            if rng.random() < 0.7:
                ranked.insert(rng.randint(0, 9), key)
        out.append(QueryOutcome(f"q{q}", ranked[:10], gold, gold[0][0], ms=1.0))
    return out


def median_s(call: Callable[[], object]) -> float:
    times = []
    for _ in range(5):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    n = parser.parse_args().queries
    run, ks = outcomes(n), default_ks(10)
    alone = median_s(lambda: [per_query_metrics(o, ks) for o in run])
    by_32 = median_s(lambda: [per_query_rows(run[i:i + 32], ks) for i in range(0, n, 32)])
    whole = median_s(lambda: per_query_rows(run, ks))
    aggregate = median_s(lambda: aggregate_retrieval(run, ks, task="qa"))
    print(f"{n} queries, ks {ks}")
    print(f"a query's row, alone:          {alone / n * 1e6:7.1f} µs per query")
    print(f"rows in batches of 32 (runner): {by_32 / n * 1e6:7.1f} µs per query")
    print(f"rows all at once (importer):    {whole / n * 1e6:7.1f} µs per query")
    print(f"the run's numbers:              {aggregate * 1e3:7.1f} ms per run")


if __name__ == "__main__":
    main()
