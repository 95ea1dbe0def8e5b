"""Whole runs with generation on the demo datasets: bm25 + the heuristic generator,
every answer scored (SQL executed read-only). Prints wall time per run, per-query
generation latency and the time spent executing SQL (prints; not a test).

    .venv/bin/python -m benchmarks.generation_speed [--retriever bm25] [--context retrieved]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.run_config import GenerationConfig, RunConfig


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retriever", default="bm25")
    parser.add_argument("--generator", default="heuristic")
    parser.add_argument("--context", default="retrieved")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workspace:
        settings = load_settings(workspace)
        for name in ("demo-qa", "demo-fact", "demo-sql"):
            config = RunConfig(name, args.retriever, generation=GenerationConfig(
                args.generator, context=args.context))
            started = time.perf_counter()
            run = run_retrieval(config, settings=settings).run
            seconds = time.perf_counter() - started
            results = list(RunStore.in_workspace(workspace).iter_results(run.run_id))
            sql_ms = [side["ms"] for r in results for side in (
                (r.generation or {}).get("sql") or {}).values()
                if isinstance(side, dict) and "ms" in side]
            line = (f"{name:<10} {run.n_queries:>4} queries  {seconds:6.2f} s  "
                    f"generation p50 {run.metrics['generation_ms_p50']:6.2f} ms  "
                    f"p90 {run.metrics['generation_ms_p90']:6.2f} ms")
            if sql_ms:
                line += f"  SQL execution median {statistics.median(sql_ms):.2f} ms"
            print(line)


if __name__ == "__main__":
    main()
