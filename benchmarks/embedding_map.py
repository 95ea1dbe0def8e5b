"""Time of the embedding map (analysis/embedding_map.py) the first time and from its
cache, on demo-qa and on a synthetic 10,000-table corpus (prints; not a test).

    .venv/bin/python -m benchmarks.embedding_map [--tables 10000] [--queries 300]
                                                 [--skip-demo] [--skip-synthetic]

In a temporary workspace: a dense:minilm run (demo-qa: its 440 tables and 260
questions; synthetic: header-only tables, to keep embedding short), then per method
(t-SNE, PCA): the first query map (vectors read from Chroma, questions embedded, the
projection, the figure), the same for another question once cached (median of 3), a
failure category's map from the cache, and the Query and Failures pages in AppTest with
the cached map: the first render of a question the page has not drawn yet (the map read
from disk, the figure built), and the median of 3 renders after it. Target: every
cached figure under 2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.page_render import render_seconds, synthetic_workspace
from target_core.analysis.embedding_map import METHODS
from target_core.analysis.failures import analyse_failures
from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.read_models.embedding_map import category_map_view, query_map_view
from target_core.run_config import RunConfig
from target_core.table_view import TableView


def seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def render_map(page: str, params: dict[str, str]) -> float:
    """One script run of `page` with its map section on (the toggle), which must draw
    the map (a caption of it)."""
    key = "map-on-query" if page.endswith("query.py") else "map-on-failures"
    return render_seconds(page, params, state={key: True},
                          caption="map of the run's vectors")


def median_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    return statistics.median(seconds(work) for _ in range(repeats))


def measure(name: str, settings: Settings, config: RunConfig) -> None:
    started = time.perf_counter()
    run = run_retrieval(config, settings=settings).run
    print(f"{name}: dense:minilm run over {run.n_queries:,} questions and "
          f"{run.index_info['n_texts']:,} tables, {time.perf_counter() - started:.1f} s")
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(config.dataset, settings)
    ids = [s.query_id for s in store.query_scores(run.run_id)]
    report = analyse_failures(store, dataset, run.run_id, k=run.config.top_k)
    category = max(report.counts, key=lambda c: report.counts[c])
    for method in METHODS:
        first = seconds(lambda m=method: query_map_view(store, dataset, dataset, settings,
                                                        run.run_id, ids[0], method=m))
        cached = median_seconds(lambda m=method: query_map_view(
            store, dataset, dataset, settings, run.run_id, ids[1], method=m))
        view = query_map_view(store, dataset, dataset, settings, run.run_id, ids[1],
                              method=method)
        by_category = median_seconds(lambda m=method: category_map_view(
            store, dataset, dataset, settings, report, category, method=m))
        print(f"  {method}: first map {first:.2f} s (projection {view.seconds:.2f} s); "
              f"cached: a question {cached:.3f} s, "
              f"category {category} ({report.counts[category]} questions) "
              f"{by_category:.3f} s; {view.n_shown:,} of {view.n_tables:,} tables drawn")
    # the pages draw the default method's map when it is cached
    query = {"run": run.run_id, "query": ids[2]}
    render_seconds("pages/query.py", {"run": run.run_id, "query": ids[3]})  # imports
    new = render_map("pages/query.py", query)
    again = statistics.median(render_map("pages/query.py", query) for _ in range(3))
    failures = {"run": run.run_id, "k": str(run.config.top_k), "category": category}
    failures_first = render_map("pages/failures.py", failures)
    failures_again = statistics.median(render_map("pages/failures.py", failures)
                                       for _ in range(3))
    print(f"  Query page with the cached map: a new question {new:.2f} s, again "
          f"{again:.2f} s; Failures page ({category}): {failures_first:.2f} s, again "
          f"{failures_again:.2f} s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_demo:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["TARGET_WORKSPACE"] = str(Path(tmp) / "ws")
            measure("demo-qa", load_settings(), RunConfig("demo-qa", "dense:minilm"))
    if not args.skip_synthetic:
        with synthetic_workspace(args.tables, args.queries) as settings:
            measure(f"synthetic {args.tables:,}", settings,
                    RunConfig("synthetic", "dense:minilm", view=TableView(rows=0)))


if __name__ == "__main__":
    main()
