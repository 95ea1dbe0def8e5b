"""One retrieval run over a folder dataset two ways: with the dataset loaded in full, and
through its corpus index with the tables read one at a time (prints; not a test).

    .venv/bin/python -m benchmarks.stream_vs_load FOLDER OUT [--retriever bm25]
        [--limit 1000]

Each way runs in its own process, in its own new workspace under OUT (OUT/loaded,
OUT/streamed): "loaded" loads the dataset first, so the run uses the Dataset in memory;
"streamed" opens it as a run does in a new process (engine/run_inputs.py), writing its
corpus index a table at a time (datasets/corpus_stream.py) when the corpus file is large.
Printed: each way's time (opening included) and peak RSS, then whether the two stored
runs are identical but for times, ids and the workspace's path: run key, fingerprints,
stored example, index details, metrics and every query's ranking, gold ranks and metrics.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TIMING = ("retrieval_ms", "seconds", "index_s", "store")


def stored(workspace: Path, run_id: str) -> dict[str, Any]:
    """What a run stored, but for times, its id and where its workspace is."""
    from target_core.engine.store import RunStore

    store = RunStore.in_workspace(workspace)
    run = store.get_run(run_id)
    return {"key": [run.config_key, run.dataset_fingerprint, run.text_fingerprint,
                    run.text_example],
            "index": {k: v for k, v in run.index_info.items() if k not in TIMING},
            "metrics": {k: v for k, v in run.metrics.items() if not k.startswith(TIMING)},
            "results": [[r.query_id, r.position, r.ranked, r.gold, sorted(r.gold_ranks.items()),
                         {k: v for k, v in r.metrics.items() if k != "ms"}]
                        for r in store.iter_results(run_id)]}


def one_way(way: str, folder: str, workspace: Path, retriever: str, limit: int) -> None:
    """Run once in this process and write what it stored to workspace/stored.json."""
    from target_core.config import load_settings
    from target_core.datasets import load_dataset
    from target_core.engine.run_inputs import open_run_dataset
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import RunConfig

    settings = load_settings(environ={"TARGET_WORKSPACE": str(workspace)})
    config = RunConfig(folder, retriever, limit=limit)
    started = time.perf_counter()
    if way == "loaded":
        load_dataset(folder, settings)
    opened = type(open_run_dataset(config, settings)).__name__
    run = run_retrieval(config, settings=settings, fresh=True).run
    seconds = time.perf_counter() - started
    (workspace / "stored.json").write_text(json.dumps(stored(workspace, run.run_id)))
    print(json.dumps({"way": way, "opened": opened, "seconds": round(seconds, 1),
                      "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                       / 1024),
                      "queries": run.n_queries, "recall@10": run.metrics.get("recall@10")}))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("out", type=Path)
    parser.add_argument("--retriever", default="bm25")
    parser.add_argument("--limit", type=int, default=1_000)
    parser.add_argument("--way", choices=("loaded", "streamed"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.way:
        one_way(args.way, args.folder, args.out / args.way, args.retriever, args.limit)
        return
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}")
    for way in ("loaded", "streamed"):
        subprocess.run([sys.executable, "-m", "benchmarks.stream_vs_load", args.folder,
                        str(args.out), "--retriever", args.retriever, "--limit",
                        str(args.limit), "--way", way], check=True,
                       cwd=Path(__file__).resolve().parent.parent)
    loaded, streamed = (json.loads((args.out / way / "stored.json").read_text())
                        for way in ("loaded", "streamed"))
    same = {part: loaded[part] == streamed[part] for part in loaded}
    print(f"identical: {all(same.values())} {same}, {len(loaded['results'])} queries")
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
