"""Render time of the Overview and Query pages for a large run (prints; not a test).

    .venv/bin/python -m benchmarks.page_render [--tables 10000] [--queries 1000]

Writes a synthetic corpus as a folder dataset, runs bm25 over all its queries, then
times Streamlit's AppTest on the Overview page and on the Query page of one query
(median of 5 script runs after a warm-up). Target: each under 1 s for 1,000 queries.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks import synthetic
from target_core.config import PROJECT_ROOT, Settings, load_settings
from target_core.engine.runner import run_retrieval
from target_core.run_config import RunConfig


def write_folder(path: Path, n_tables: int, n_queries: int) -> None:
    """make_corpus(n_tables, n_queries) as the folder dataset "synthetic" at `path`,
    streamed to disk (synthetic.write_folder)."""
    synthetic.write_folder(path, n_tables, n_queries)


def render_seconds(page: str, params: dict[str, str], *,
                   state: dict[str, object] | None = None, caption: str = "") -> float:
    """One script run of `page` in AppTest, with widget `state` set beforehand (e.g. a
    toggle on); an exception or error shown on it, or no caption holding `caption`
    when one is asked for, raises."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=600)
    at.switch_page(page)
    for key, value in params.items():
        at.query_params[key] = value
    for key, value in (state or {}).items():
        at.session_state[key] = value
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception or at.error:
        raise RuntimeError(f"{page}: {at.exception or at.error[0].value}")
    if caption and not any(caption in c.value for c in at.caption):
        raise RuntimeError(f"{page} showed no caption with {caption!r}: {at.warning}")
    return elapsed


def time_page(page: str, params: dict[str, str], repeats: int = 5) -> float:
    render_seconds(page, params)  # the first run warms caches and imports
    return statistics.median(render_seconds(page, params) for _ in range(repeats))


def size_arguments(doc: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """--tables and --queries (10,000 and 1,000 by default), for the benchmark in `doc`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1_000)
    return parser.parse_args(argv)


@contextmanager
def synthetic_workspace(n_tables: int, n_queries: int) -> Iterator[Settings]:
    """A temporary workspace whose datasets are one synthetic folder dataset, "synthetic"."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "synthetic"
        write_folder(folder, n_tables, n_queries)
        os.environ["TARGET_WORKSPACE"] = str(Path(tmp) / "ws")
        os.environ["TARGET_DATASETS"] = str(folder)
        yield load_settings()


def main(argv: Sequence[str] | None = None) -> None:
    args = size_arguments(__doc__, argv)
    with synthetic_workspace(args.tables, args.queries) as settings:
        started = time.perf_counter()
        run = run_retrieval(RunConfig("synthetic", "bm25"), settings=settings).run
        print(f"bm25 run over {args.queries:,} queries and {args.tables:,} tables: "
              f"{time.perf_counter() - started:.1f} s")
        overview = time_page("pages/overview.py", {})
        query = time_page("pages/query.py", {"run": run.run_id, "query": "q00500"})
    print(f"Overview page: {overview * 1000:.0f} ms (target < 1000 ms)")
    print(f"Query page:    {query * 1000:.0f} ms (target < 1000 ms)")


if __name__ == "__main__":
    main()
