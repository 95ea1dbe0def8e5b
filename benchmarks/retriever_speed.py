"""Index and query time of every built-in retriever on the demo data, each from a fresh
workspace (nothing cached), with its Table 2 recall beside (prints a table; not a test).

    .venv/bin/python -m benchmarks.retriever_speed [--dataset demo-qa] [--limit N]
        [--retriever SPEC ...]

Index: the run's indexing time as it records it (texts prepared, embedded and stored;
for summary and HySE the writer's time is inside). Query: p50 and p90 of the per-query
retrieval time the run stores (for HySE the hypothetical tables are written then).
Recall: the dataset's Table 2 figure (R@10; database-level R@1 for text-to-SQL). One
run at a time: two at once share the 2 cores.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.run_config import RunConfig
from target_core.tasks import task_rules

SPECS = ("bm25", "tfidf", "dense:minilm", "hybrid", "summary:minilm", "hyse", "rows")


def measure(dataset: str, spec: str, limit: int | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as scratch:
        settings = load_settings(Path(scratch) / "ws")
        started = time.perf_counter()
        run = run_retrieval(RunConfig(dataset, spec, limit=limit), settings=settings,
                            fresh=True).run
        wall = time.perf_counter() - started
        store = RunStore.in_workspace(settings.workspace)
        ms = np.array([r.ms for r in store.iter_results(run.run_id)])
        rules = task_rules(run.task)
        recall = "db_hit@1" if rules.database_level else f"recall_micro@{rules.table2_cutoff}"
        return {"retriever": spec, "index s": run.index_info.get("seconds", float("nan")),
                "query p50 ms": float(np.percentile(ms, 50)),
                "query p90 ms": float(np.percentile(ms, 90)), "wall s": wall,
                recall: run.metrics.get(recall, float("nan")), "queries": len(ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="demo-qa")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--retriever", action="append", dest="specs")
    args = parser.parse_args()
    rows = [measure(args.dataset, spec, args.limit) for spec in args.specs or SPECS]
    header = list(rows[0])
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(f"{v:.3f}" if isinstance(v, float) else str(v)
                         for v in row.values()))


if __name__ == "__main__":
    main()
