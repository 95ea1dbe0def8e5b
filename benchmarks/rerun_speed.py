"""A dense run, then the same configuration again: the second embeds nothing and must
start retrieving within 2 s (prints; not a test).

    .venv/bin/python -m benchmarks.rerun_speed [--dataset demo-qa] [--view header-only]

Each run is a fresh process (as a user starting the same run again); times go from
run_retrieval() to its first "retrieving" progress call, so they include loading the
dataset and the model (and its sha256 check) and opening Chroma.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.run_config import RunConfig
from target_core.table_view import TableView


def timed_run(config: RunConfig, workspace: str) -> tuple[float, float, dict]:
    marks: dict[str, float] = {}
    started = time.perf_counter()

    def progress(done: int, total: int, what: str) -> None:
        if what == "retrieving":
            marks.setdefault("first", time.perf_counter() - started)

    run = run_retrieval(config, settings=load_settings(workspace), progress=progress,
                        fresh=True).run
    return marks["first"], time.perf_counter() - started, run.index_info


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="demo-qa")
    parser.add_argument("--retriever", default="dense:minilm")
    parser.add_argument("--view", default="header-only")
    parser.add_argument("--workspace", help="(internal) run once in this workspace")
    args = parser.parse_args(argv)
    if args.workspace:
        config = RunConfig(args.dataset, args.retriever, TableView.preset(args.view))
        start, total, info = timed_run(config, args.workspace)
        print(f"retrieving after {start:.2f} s, done after {total:.2f} s; "
              f"embedded {info['embedded']}, cached {info['cached']}")
        return
    with tempfile.TemporaryDirectory() as workspace:
        for label in ("first run ", "second run"):
            command = [sys.executable, "-m", "benchmarks.rerun_speed", "--dataset",
                       args.dataset, "--retriever", args.retriever, "--view", args.view,
                       "--workspace", workspace]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            print(f"{label}: {result.stdout.strip()}")


if __name__ == "__main__":
    main()
