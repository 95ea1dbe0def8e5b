"""`import`: store results written by the TARGET library (engine/importer.py) or a TREC run
file (`--format trec`, engine/import_trec.py) as runs.

A file prints one run (`--json`: one object, as `run --json`); TARGET's results folder
prints one line per file (`--json`: a list of those objects). Each warning of the
library (a file holding only part of the dataset's queries, a top_k taken from the
longest list, tables listed twice or not in the corpus, files imported before) goes to
stderr as `warning: ...`, whatever the output format.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from target_core.cli import options
from target_core.cli.format import run_summary
from target_core.config import load_settings
from target_core.errors import ConfigError

if TYPE_CHECKING:
    from target_core.engine.importer import ImportedRun


def cmd_import(args: argparse.Namespace) -> int:
    from target_core.engine.importer import import_target
    from target_core.metrics.labels import label
    from target_core.metrics.retrieval import default_ks

    dataset, datasets = dataset_flags(args.dataset or [])
    if args.format == "trec":
        imported = [_import_trec(args, dataset, datasets)]
    elif args.qrels is not None:
        raise ConfigError("--qrels is for --format trec")
    else:
        imported = import_target(args.path, settings=load_settings(args.workspace),
                                 dataset=dataset, datasets=datasets, label=args.label,
                                 downstream=args.downstream, top_k=args.top_k,
                                 partial=args.partial)
    for item in imported:
        for warning in item.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        summaries = [run_summary(item.run) for item in imported]
        print(json.dumps(summaries if Path(args.path).is_dir() else summaries[0], indent=2))
        return 0
    for item in imported:
        record = item.run
        k = default_ks(record.config.top_k)[-1]
        scores = [f"{label(name, record.task)} {record.metrics[name]:.4f}"
                  for name in (f"recall_micro@{k}", f"capped_recall@{k}", f"recall@{k}")
                  if name in record.metrics]
        done = "already imported as run" if item.existing else "imported run"
        print(f"{done} {record.run_id}: {record.config.label} at k = "
              f"{record.config.top_k} on {record.config.dataset}, {record.n_queries} "
              f"queries" + (f"; {', '.join(scores)}" if scores else ""))
    return 0


def _import_trec(args: argparse.Namespace, dataset: str | None,
                 datasets: dict[str, str]) -> ImportedRun:
    from target_core.engine.import_trec import import_trec

    if dataset is None or datasets:
        raise ConfigError("--format trec needs --dataset NAME_OR_FOLDER: the dataset the "
                          "run is on (a TREC run names none)")
    for flag, given in (("--downstream", args.downstream), ("--partial", args.partial)):
        if given:
            raise ConfigError(f"{flag} is for TARGET's results, not --format trec")
    return import_trec(args.path, settings=load_settings(args.workspace), dataset=dataset,
                       qrels=args.qrels, label=args.label, top_k=args.top_k)


def dataset_flags(values: list[str]) -> tuple[str | None, dict[str, str]]:
    """(the dataset of every file, {`<dataset_name>/` folder: dataset}) from the
    `--dataset` flags: `NAME=PATH` maps one folder of TARGET's results folder, a plain
    name or path (at most one) is the dataset of the rest. A path holding `=` that exists
    is a plain path."""
    plain: list[str] = []
    mapped: dict[str, str] = {}
    for value in values:
        folder, sep, spec = value.partition("=")
        if not sep or Path(value).exists():
            plain.append(value)
        elif not folder or not spec:
            raise ConfigError(f"--dataset {value}: expected NAME or FOLDER_NAME=DATASET")
        elif mapped.setdefault(folder, spec) != spec:
            raise ConfigError(f"--dataset {value}: {folder} is mapped twice "
                              f"({mapped[folder]} and {spec})")
    if len(plain) > 1:
        raise ConfigError(f"--dataset {plain[1]}: one plain --dataset at most (it is "
                          f"{plain[0]}); map each folder with NAME=DATASET")
    return (plain[0] if plain else None), mapped


IMPORT_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "import": ("store TARGET's retrieval and/or downstream results (a JSONL file, or "
               "TARGET's results folder <dir>/<dataset_name>/<k>.jsonl) or a TREC run "
               "file (--format trec) as runs", cmd_import),
}


IMPORT_ARGUMENTS: options.CommandArguments = {
    "import": ("PATH", "format:import", "qrels", "downstream", "dataset:import", "label",
               "top-k:import", "partial"),
}
