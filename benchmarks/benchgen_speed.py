"""Time of the benchmark builder's steps on the demo databases (prints; not a test).

    .venv/bin/python -m benchmarks.benchgen_speed [--n 5 20]

For each n (queries per template, 18 example templates): sample + write questions +
round-trip check + save the draft; accept by the automatic check; export the accepted
pairs as a dataset; a bm25 + heuristic run on it; the evaluation by error source. All
offline (template writer). Target: every step under 2 s at n = 20, so the page's
buttons answer at once; the run is the product's ordinary run and is shown for scale.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from target_core.benchgen.build import build_draft
from target_core.benchgen.error_sources import error_sources
from target_core.benchgen.export import export_draft
from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, load_templates
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.run_config import GenerationConfig, RunConfig


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def measure(n: int, workspace: Path) -> dict[str, Any]:
    settings = load_settings(workspace)
    demo = load_dataset("demo-sql", settings)
    templates = load_templates(EXAMPLE_TEMPLATES_DIR)
    (draft, report), sample_s = timed(lambda: build_draft(
        demo, templates, workspace=workspace, name=f"n{n}", n=n, seed=0))
    _, review_s = timed(draft.accept_automatic)
    name = f"bench-n{n}"
    _, export_s = timed(lambda: export_draft(draft, settings, name))
    summary = draft.summary()
    draft.close()
    config = RunConfig(dataset=name, retriever="bm25", top_k=5,
                       generation=GenerationConfig("heuristic"))
    result, run_s = timed(lambda: run_retrieval(config, settings=settings))
    store = RunStore.in_workspace(workspace)
    dataset = load_dataset(name, settings)
    evaluation, evaluate_s = timed(lambda: error_sources(store, dataset, result.run.run_id))
    return {"n": n, "sql": len(report.queries), "pairs": summary.total,
            "sample+write+check+save s": sample_s, "accept s": review_s,
            "export s": export_s, "run s": run_s, "evaluate s": evaluate_s,
            "EA %": evaluation.table()["EA"].iloc[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[5, 20])
    args = parser.parse_args()
    for n in args.n:
        with tempfile.TemporaryDirectory() as tmp:
            row = measure(n, Path(tmp) / "ws")
        print("  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in row.items()))


if __name__ == "__main__":
    main()
