"""Time of the analyses behind the Compare, Failures and Ablations pages on a large run
(prints; not a test).

    .venv/bin/python -m benchmarks.analysis_speed [--tables 10000] [--queries 1000]

Writes a synthetic folder dataset, runs bm25 with and without the title and tfidf over
all its queries, then times (median of 3 after a warm-up): compare_runs of the three
runs, analyse_failures of the run without the title (its title pair is found and read),
load_ablation of the two bm25 variants, the aggregate explanations of the failures
(failure_explanations, analyse_failures included), and the Failures page in AppTest. Target: each
under 1 s for 1,000 queries, so the pages stay interactive.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from benchmarks.page_render import size_arguments, synthetic_workspace
from target_core.analysis.compare import compare_runs
from target_core.analysis.failure_aggregates import failure_explanations
from target_core.analysis.failures import analyse_failures
from target_core.config import PROJECT_ROOT
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.read_models.ablation import ablation_variants, load_ablation
from target_core.run_config import RunConfig
from target_core.table_view import TableView


def median_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    work()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def time_failures_page(run_id: str) -> float:
    from streamlit.testing.v1 import AppTest

    def render() -> None:
        at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
        at.switch_page("pages/failures.py")
        at.query_params["run"] = run_id
        at.run()
        assert not at.exception, at.exception

    return median_seconds(render)


def main(argv: Sequence[str] | None = None) -> None:
    args = size_arguments(__doc__, argv)
    with synthetic_workspace(args.tables, args.queries) as settings:
        store = RunStore.in_workspace(settings.workspace)
        untitled = TableView(title=False, section_title=False)
        configs = [RunConfig("synthetic", "bm25"), RunConfig("synthetic", "tfidf"),
                   RunConfig("synthetic", "bm25", view=untitled)]
        runs = [run_retrieval(c, settings=settings, store=store).run.run_id for c in configs]
        dataset = load_dataset("synthetic", settings)
        variants = ablation_variants(rows=(None,), formats=("markdown",))
        figures = {
            "compare_runs (3 runs)": median_seconds(lambda: compare_runs(store, runs)),
            "analyse_failures": median_seconds(
                lambda: analyse_failures(store, dataset, runs[2])),
            "failure_explanations": median_seconds(lambda: failure_explanations(
                store, dataset, analyse_failures(store, dataset, runs[2]))),
            "load_ablation (2 variants)": median_seconds(
                lambda: load_ablation(store, settings, dataset, "bm25", variants=variants)),
            "Failures page (AppTest)": time_failures_page(runs[2]),
        }
        failed = analyse_failures(store, dataset, runs[2]).n_failed
    print(f"{args.tables:,} tables, {args.queries:,} queries ({failed:,} failed without "
          "the title)")
    for name, seconds in figures.items():
        print(f"  {name:<28} {seconds:7.3f} s")


if __name__ == "__main__":
    main()
