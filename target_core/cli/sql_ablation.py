"""The `sql-ablate` command: seed 002's ablation of its text-to-SQL prompt (few-shot
examples, schema annotation, chain of thought), each variant an ordinary run, printed
as its Table 2 (read_models/sql_ablation.py).

Like the rest of the CLI it only parses, calls target_core and prints.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable

from target_core.cli import options
from target_core.cli.format import ProgressBar, format_rows
from target_core.config import load_settings


def _cell(value: object, kind: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if kind == "%":
        return f"{100 * float(value):.2f}%"  # type: ignore[arg-type]
    if kind == "s":
        seconds = float(value)  # type: ignore[arg-type]
        return f"{seconds:.2f}s" if seconds >= 0.1 else f"{seconds * 1000:.1f}ms"
    if kind == "p":
        from target_core.analysis.significance import format_p

        return format_p(float(value))  # type: ignore[arg-type]
    return f"{float(value):.1f}"  # type: ignore[arg-type]


def cmd_sql_ablate(args: argparse.Namespace) -> int:
    from target_core.datasets import load_dataset, registered_name
    from target_core.engine.store import RunStore
    from target_core.experiments.sql_ablation import run_sql_variants
    from target_core.read_models.sql_ablation import load_sql_ablation

    settings = load_settings(args.workspace)
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(args.dataset, settings)
    name = registered_name(args.dataset, settings)
    options = {"few_shot": args.few_shot, "answer": args.answer, "top_k": args.top_k,
               "limit": args.limit, "seed": args.seed, "name": name}
    report = load_sql_ablation(store, dataset, args.retriever, args.generator, **options)
    configs = [v.config for v in report.variants]
    if args.detach:
        from target_core.cli.jobs import print_launches
        from target_core.engine.workers import launch_run

        missing = [c for c, v in zip(configs, report.variants, strict=True) if v.run is None]
        if not missing:
            print(f"every variant is stored ({len(configs)} runs)", file=sys.stderr)
        return print_launches(args, [launch_run(c, settings=settings, dataset=dataset)
                                     for c in missing])
    bar = ProgressBar(args.progress or sys.stderr.isatty())
    run_sql_variants(store, settings, dataset, configs, progress=bar, on_variant=None
                     if args.json else (lambda i, n: print(
                         f"variant {i + 1}/{n}: {report.variants[i].variant.name}",
                         file=sys.stderr, flush=True)))
    report = load_sql_ablation(store, dataset, args.retriever, args.generator, **options)
    frame = report.table().drop(columns=["open"])
    if args.json:
        rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        print(json.dumps({"dataset": report.dataset, "retriever": report.retriever,
                          "generator": report.generator, "notes": list(report.notes),
                          "variants": rows}, indent=2, ensure_ascii=False))
        return 0
    print(f"Seed 002's Table 2 on {report.dataset}: {args.retriever} → {args.generator}, "
          f"seed002 prompts, {len(report.shared_queries())} queries")
    kinds = {"Overall Acc": "%", "EA": "%", "Alt": "%", "Error": "%", "P50 s": "s",
             "P90 s": "s", "tokens in": "n", "tokens out": "n", "p vs base": "p",
             "BLEU": "n", "ROUGE-L": "n"}
    shown = [c for c in frame.columns if c in kinds]
    print(format_rows([{"variant": row["variant"],
                        **{c: _cell(row[c], kinds[c]) for c in shown},
                        "run": row["run_id"]} for row in frame.to_dict("records")],
                      ["variant", *shown, "run"]))
    for note in report.notes:
        print(f"note: {note}")
    return 0


SQL_ABLATE_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "sql-ablate": ("seed 002's Table 2: its text-to-SQL prompt with and without few-shot "
                   "examples, schema annotation and chain of thought, one run per variant",
                   cmd_sql_ablate),
}


SQL_ABLATE_ARGUMENTS: options.CommandArguments = {
    "sql-ablate": ("dataset:sql", "retriever:sql", "generator:sql", "few-shot", "answer",
                   "top-k", *options.SAMPLE, *options.launch("variants")),
}
