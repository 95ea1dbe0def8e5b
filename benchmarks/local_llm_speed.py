"""`local:smollm2` end to end: how long llama.cpp's in-process server takes to start (in
fresh processes: import, model load, /health ok), then bm25 runs answered by SmolLM2 on
demo-qa and demo-sql (GTR-T's SQL settings: 3 tables' schema), with the settings a user
gets (TARGET_LOCAL_* from the environment). Prints the start times, and per dataset the
wall time per query and the generation latency p50 / p90 (prints; not a test).

    .venv/bin/python -m benchmarks.local_llm_speed [--limit 20] [--context-k K] [--starts 3]

Each query's latency includes waiting for a slot: with TARGET_LOCAL_SLOTS=2 two queries
are answered at once, so the wall time per query is the throughput figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.llm.llama_server import ServerOptions
from target_core.run_config import GenerationConfig, RunConfig

_START = """
import time
started = time.perf_counter()
from target_core.config import load_settings
from target_core.llm.llama_server import ServerOptions, resolve_model, serve
server = serve(resolve_model("smollm2"), ServerOptions.from_settings(load_settings()))
print(f"{server.started_in:.3f} {time.perf_counter() - started:.3f}")
"""


def start_times(n: int) -> list[tuple[float, float]]:
    """(server ready, whole process step incl. imports) in seconds, each in a new process."""
    times = []
    for _ in range(n):
        out = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
        ready, total = out.stdout.split()
        times.append((float(ready), float(total)))
    return times


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--context-k", type=int, default=None,
                        help="tables in the prompt (default: the task's: top-k for QA, 3 "
                             "for SQL as GTR-T)")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=["demo-qa", "demo-sql"])
    args = parser.parse_args(argv)
    for ready, total in start_times(args.starts):
        print(f"server start: ready in {ready:.2f} s ({total:.2f} s with imports)")
    with tempfile.TemporaryDirectory() as workspace:
        settings = load_settings(workspace)
        options = ServerOptions.from_settings(settings)
        print(f"slots {options.slots} x {options.context} tokens, {options.threads} threads")
        for name in args.datasets:
            sql = name == "demo-sql"
            generation = GenerationConfig(
                "local:smollm2", context_k=args.context_k or (3 if sql else None),
                sql_schema="tables" if sql else "database")
            config = RunConfig(name, "bm25", limit=args.limit, generation=generation)
            started = time.perf_counter()
            run = run_retrieval(config, settings=settings).run
            seconds = time.perf_counter() - started
            metrics = run.metrics
            classes = Counter(c or "?" for _, _, c in RunStore.in_workspace(
                workspace).generation_errors(run.run_id))
            print(f"{name:<9} {run.n_queries:>3} queries  {seconds / run.n_queries:5.2f} s per "
                  f"query (wall)  generation p50 {metrics['generation_ms_p50'] / 1000:5.2f} s"
                  f"  p90 {metrics['generation_ms_p90'] / 1000:5.2f} s  failed "
                  f"{sum(classes.values())} {dict(classes)} ({run.status})")


if __name__ == "__main__":
    main()
