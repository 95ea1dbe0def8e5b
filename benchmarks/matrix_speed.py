"""Time of the All runs page's read model and of the page itself: 4 runs × 5,000 queries
(prints; not a test).

    .venv/bin/python -m benchmarks.matrix_speed [--queries 5000] [--runs 4]

Writes a folder dataset of 5,000 queries carrying difficulty, failure_mode and topic
over 500 tables, and stores 4 complete runs of it as a retriever would (ten ranked
tables per query, gold ranks 1-10, beyond 10 or never ranked, the retrieval metrics per
query), then times (median of 3 after a warm-up) run_matrix unfiltered and filtered
(failure_mode and outcome), and the page in AppTest. Target: under 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.analysis_speed import median_seconds
from target_core.config import PROJECT_ROOT, load_settings
from target_core.datasets import open_lookup
from target_core.engine.store import QueryResult, RunStore
from target_core.read_models.matrix import matrix_choices, run_matrix
from target_core.run_config import RunConfig

N_TABLES = 500
LEVELS = ("easy", "medium", "hard", "extra")
MODES = ("sibling", "lexical-gap", "numeric", "title-only", None)


def write_dataset(folder: Path, n_queries: int) -> None:
    folder.mkdir(parents=True)
    (folder / "dataset.json").write_text(json.dumps({"name": "synthetic", "task": "qa"}))
    with (folder / "corpus.jsonl").open("w") as handle:
        for t in range(N_TABLES):
            handle.write(json.dumps({"database_id": "wiki", "table_id": f"t{t}",
                                     "table": [["name", "value"], [f"row {t}", t]],
                                     "context": {"title": f"Table {t}"}}) + "\n")
    with (folder / "queries.jsonl").open("w") as handle:
        for q in range(n_queries):
            handle.write(json.dumps({
                "query_id": f"q{q:05d}", "query": f"what is the value of row {q}",
                "answer": str(q), "table_id": f"t{q % N_TABLES}", "database_id": "wiki",
                "difficulty": LEVELS[q % 4], "failure_mode": MODES[q % 5],
                "topic": f"topic {q % 37}"}) + "\n")


def store_run(store: RunStore, retriever: str, n_queries: int, rng: np.random.Generator
              ) -> str:
    """A complete run whose gold table lands at rank 1-10 (70%), 11-100 (20%) or is never
    ranked (10%), with the per-query retrieval metrics a real run stores."""
    run, _ = store.start_run(RunConfig("synthetic", retriever), dataset_fingerprint="x",
                             task="qa", n_queries=n_queries, versions={})
    draw = rng.random(n_queries)
    ranks = np.where(draw < 0.7, rng.integers(1, 11, n_queries),
                     np.where(draw < 0.9, rng.integers(11, 101, n_queries), 0))
    results = []
    for q in range(n_queries):
        gold = ("wiki", f"t{q % N_TABLES}")
        rank = int(ranks[q]) or None
        ranked = [(("wiki", f"t{(q + i) % N_TABLES}"), 10.0 - i) for i in range(10)]
        metrics = {f"{m}@{k}": float(rank is not None and rank <= k)
                   for m in ("recall", "recall_micro", "hit") for k in (1, 3, 5, 10)}
        metrics["mrr"] = 1 / rank if rank and rank <= 10 else 0.0
        results.append(QueryResult(f"q{q:05d}", q, ranked, [gold], {gold: rank}, metrics,
                                   ms=1.0))
    store.save_results(run.run_id, results)
    store.finish_run(run.run_id, {"recall@10": float(np.mean(ranks[ranks > 0] <= 10))})
    return run.run_id


def time_page(params: dict[str, str]) -> float:
    from streamlit.testing.v1 import AppTest

    def render() -> None:
        at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
        at.switch_page("pages/matrix.py")
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        if at.exception or at.error:
            raise RuntimeError(f"matrix page: {at.exception or at.error[0].value}")

    return median_seconds(render)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "synthetic"
        write_dataset(folder, args.queries)
        os.environ["TARGET_WORKSPACE"] = str(Path(tmp) / "ws")
        os.environ["TARGET_DATASETS"] = str(folder)
        settings = load_settings()
        store = RunStore.in_workspace(settings.workspace)
        rng = np.random.default_rng(0)
        for retriever in ("bm25", "tfidf", "dense:minilm", "hybrid")[:args.runs]:
            store_run(store, retriever, args.queries, rng)
        queries = open_lookup("synthetic", settings).queries

        def build(**filters: str) -> object:
            return run_matrix(store, matrix_choices(store, "synthetic", queries), k=10,
                              **filters)

        figures = {
            "run_matrix, no filter": median_seconds(build),
            "run_matrix, failure_mode + split": median_seconds(
                lambda: build(field="failure_mode", value="sibling", outcome="split")),
            "styled grid (1,000 rows)": median_seconds(
                lambda: build().display_styler(1000).to_html()),  # type: ignore[attr-defined]
            "All runs page (AppTest)": time_page({"dataset": "synthetic"}),
            "All runs page, filtered": time_page({"dataset": "synthetic",
                                                  "field": "difficulty", "value": "hard",
                                                  "outcome": "some-missed"}),
        }
    print(f"{args.runs} runs × {args.queries:,} queries")
    for name, seconds in figures.items():
        print(f"  {name:<36} {seconds:7.3f} s")


if __name__ == "__main__":
    main()
