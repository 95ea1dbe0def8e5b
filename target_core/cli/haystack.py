"""The `haystack` command: recall against the number of distractor tables (TARGET's
needle-in-a-haystack setting), each point an ordinary run (read_models/haystack.py).

Like the rest of the CLI it only parses, calls target_core and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from target_core.cli import options
from target_core.cli.format import ProgressBar, format_rows
from target_core.config import load_settings


def cmd_haystack(args: argparse.Namespace) -> int:
    from target_core.datasets import load_dataset, registered_name
    from target_core.engine.store import RunStore
    from target_core.experiments.haystack import run_missing
    from target_core.metrics.labels import label
    from target_core.read_models.haystack import haystack_curve, parse_sizes

    settings = load_settings(args.workspace)
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(args.dataset, settings)
    retrievers = args.retriever or ["bm25"]
    sources = [s.strip() for s in args.source.split(",") if s.strip()]
    options = {"sizes": parse_sizes(args.sizes) if args.sizes else None, "seed": args.seed,
               "top_k": args.top_k, "limit": args.limit,
               "name": registered_name(args.dataset, settings)}
    curve = haystack_curve(store, settings, dataset, retrievers, sources, **options)
    if args.detach:
        from target_core.cli.jobs import print_launches
        from target_core.engine.workers import launch_run

        if not curve.missing():
            print(f"every point of the curve is stored ({len(curve.points)} runs)",
                  file=sys.stderr)
        return print_launches(args, [launch_run(c, settings=settings, dataset=dataset)
                                     for c in curve.missing()])
    bar = ProgressBar(args.progress or sys.stderr.isatty())
    run_missing(curve.missing(), settings, store, progress=bar, on_point=None if args.json else (
        lambda i, n, label: print(f"point {i + 1}/{n}: {label}", file=sys.stderr,
                                  flush=True)))
    curve = haystack_curve(store, settings, dataset, retrievers, sources, **options)
    frame = curve.frame().drop(columns=["open"])
    if args.json:
        rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        print(json.dumps({"dataset": curve.dataset, "tables": curve.n_tables,
                          "sources": list(curve.sources), "pool": curve.pool,
                          "seed": args.seed, "points": rows}, indent=2, ensure_ascii=False))
        return 0
    print(f"{curve.dataset} ({curve.n_tables} tables) + N distractors from "
          f"{', '.join(curve.sources)} (pool {curve.pool}, seed {args.seed}), "
          f"{int(frame['n_queries'].max())} queries")
    metrics = [c for c in frame.columns if c.startswith("recall@")]
    print(format_rows([{"retriever": row["retriever"], "N": row["N"],
                        "corpus": row["corpus"],
                        **{label(m): f"{row[m]:.4f}" for m in metrics}, "run": row["run_id"]}
                       for row in frame.to_dict("records")],
                      ["retriever", "N", "corpus", *map(label, metrics), "run"]))
    return 0


HAYSTACK_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "haystack": ("recall against the number of distractor tables added to the corpus "
                 "(TARGET's needle in a haystack), one run per retriever and size",
                 cmd_haystack),
}


HAYSTACK_ARGUMENTS: options.CommandArguments = {
    "haystack": ("DATASET", "retriever:haystack", "source", "sizes", "seed:haystack", "top-k",
                 "limit", *options.launch("points")),
}
