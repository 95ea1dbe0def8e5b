"""Time of a what-if probe (analysis/probe.py) across every stored retriever of a
2,000-table dataset (prints; not a test).

    .venv/bin/python -m benchmarks.probe_speed [--dataset /tmp/feta/fetaqa-500]
        [--workspace DIR] [--queries 20] [--limit 50]

Runs bm25, tfidf, ottqa:bm25 (view ottqa-notitle), dense:minilm and hybrid on the
dataset (the FeTaQA folder of scripts/fetaqa_folder.py: 1,946 real tables; the first
dense run embeds them once, about a minute; a --workspace kept between calls reuses
it), then probes failed queries with their gold table's title words added: per view
change, the first probe (each retriever built in memory: lexical indexes from the texts,
dense vectors read from Chroma) and the median of the next ones (warm). Target: a warm
probe across every stored retriever under 1 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from target_core.analysis.probe import clear_cache, probe
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.run_config import RunConfig
from target_core.table_view import TableView

RETRIEVERS = (("bm25", TableView()), ("tfidf", TableView()),
              ("ottqa:bm25", TableView.preset("ottqa-notitle")),
              ("dense:minilm", TableView()), ("hybrid", TableView()))
CHANGES = ("as run", "title off", "header only")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="/tmp/feta/fetaqa-500")
    parser.add_argument("--workspace", default=None, help="kept: reruns embed nothing")
    parser.add_argument("--queries", type=int, default=20, help="probes per view change")
    parser.add_argument("--limit", type=int, default=50, help="queries per run")
    args = parser.parse_args(argv)
    workspace = Path(args.workspace or tempfile.mkdtemp(prefix="probe-speed-"))
    settings = load_settings(workspace)
    store = RunStore.in_workspace(workspace)
    started = time.perf_counter()
    runs = [run_retrieval(RunConfig(args.dataset, spec, view=view, limit=args.limit),
                          settings=settings, store=store).run for spec, view in RETRIEVERS]
    setup = time.perf_counter() - started
    dataset = load_dataset(args.dataset, settings)
    failed = [r.query_id for r in store.iter_results(runs[0].run_id) if r.failed_at(10)]
    chosen = (failed + [r.query_id for r in store.iter_results(runs[0].run_id)
                        if r.query_id not in failed])[:args.queries + 1]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}; "
          f"load average {load} (other work on the machine counts)")
    print(f"{dataset.name}: {len(dataset.tables):,} tables; {len(runs)} stored retrievers "
          f"({', '.join(r.config.retriever for r in runs)}); runs made or reused in "
          f"{setup:.1f} s; probes of {len(chosen) - 1} queries ({len(failed)} failed by "
          "bm25 at 10), each with its gold table's title added")
    clear_cache()
    for change in CHANGES:
        first, *rest = [_timed(store, dataset, settings, q, change) for q in chosen]
        print(f"  {change:<12} first {first[0]:6.3f} s ({first[1]} indexes built)   "
              f"warm median {statistics.median(t for t, _ in rest):6.3f} s, "
              f"max {max(t for t, _ in rest):6.3f} s")


def _timed(store: RunStore, dataset: object, settings: object, query_id: str, change: str
           ) -> tuple[float, int]:
    query = dataset.query(query_id)  # type: ignore[attr-defined]
    title = dataset.table(query.gold[0]).title  # type: ignore[attr-defined]
    result = probe(store, dataset, settings, query_id,  # type: ignore[arg-type]
                   f"{query.query} {title}", change)
    return result.seconds, result.built


if __name__ == "__main__":
    main()
