"""Command line: `python -m target_core COMMAND [--workspace DIR] [--json]`.

The CLI only parses arguments, calls into the library and prints. Library errors
(TargetError) become a one-line reason on stderr and exit code 2; a run that finished
but is marked failed (too many failed generations) exits 3 with its reason on stderr.
With --json, stdout carries nothing but the JSON document.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from target_core.cli import options
from target_core.cli.analysis import ANALYSIS_ARGUMENTS, ANALYSIS_COMMANDS
from target_core.cli.benchgen import BENCHGEN_ARGUMENTS, BENCHGEN_COMMANDS
from target_core.cli.datasets import DATASETS_ARGUMENTS, cmd_datasets
from target_core.cli.explain import EXPLAIN_ARGUMENTS, EXPLAIN_COMMANDS
from target_core.cli.format import ProgressBar, format_rows, metric_lines, run_notes, run_summary
from target_core.cli.haystack import HAYSTACK_ARGUMENTS, HAYSTACK_COMMANDS
from target_core.cli.importing import IMPORT_ARGUMENTS, IMPORT_COMMANDS
from target_core.cli.jobs import JOB_ARGUMENTS, JOB_COMMANDS, print_launch
from target_core.cli.judge import JUDGE_ARGUMENTS, JUDGE_COMMANDS
from target_core.cli.serve import SERVE_ARGUMENTS, SERVE_COMMANDS
from target_core.cli.sql_ablation import SQL_ABLATE_ARGUMENTS, SQL_ABLATE_COMMANDS
from target_core.config import load_settings
from target_core.errors import TargetError

EXIT_ERROR = 2
EXIT_RUN_FAILED = 3


def _print_registry(args: argparse.Namespace, entries: Any) -> int:
    rows = [{"name": e.name, "description": e.description} for e in entries]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(format_rows(rows, ["name", "description"]))
    return 0


def cmd_retrievers(args: argparse.Namespace) -> int:
    from target_core.retrievers import RETRIEVERS

    return _print_registry(args, RETRIEVERS)


def cmd_generators(args: argparse.Namespace) -> int:
    from target_core.generators import GENERATORS

    return _print_registry(args, GENERATORS)


def _view(args: argparse.Namespace) -> Any:
    from target_core.table_view import TableView, parse_view_context

    view = TableView.preset(args.view or "default")
    if args.view_context is not None:
        view = view.with_(context=parse_view_context(args.view_context))
    if args.no_title:
        view = view.with_(title=False, section_title=False, table_id=False)
    if args.rows is not None:
        view = view.with_(rows=args.rows)
    if args.format:
        view = view.with_(format=args.format)
    return view


def run_config(args: argparse.Namespace) -> Any:
    """The RunConfig from `run`'s flags; a --preset fills what the flags leave unset."""
    from target_core.engine.haystack import Haystack
    from target_core.engine.presets import pipeline_preset
    from target_core.errors import ConfigError
    from target_core.generators.prompts import prompt_set
    from target_core.run_config import DEFAULT_PROMPT_SET, GenerationConfig, RunConfig

    preset = pipeline_preset(args.preset) if args.preset else None
    if preset is not None:
        args.retriever = args.retriever or preset.retriever
        args.view = args.view or preset.view
        args.generator = args.generator or preset.generator
        args.context = args.context or preset.context
        args.context_k = args.context_k or preset.context_k
        args.sql_schema = args.sql_schema or preset.sql_schema
    if not args.retriever:
        raise ConfigError("--retriever is required (or a --preset that names one)")
    generation = None
    if args.generator:
        generation = GenerationConfig(generator=args.generator,
                                      context=args.context or "retrieved",
                                      context_k=args.context_k,
                                      token_budget=args.token_budget,
                                      sql_schema=args.sql_schema or "database",
                                      prompt_set=args.prompt_set or DEFAULT_PROMPT_SET)
        prompt_set(generation.prompt_set)
    elif args.context or args.context_k or args.sql_schema or args.prompt_set:
        raise ConfigError("--context, --context-k, --sql-schema and --prompt-set need "
                          "--generator")
    return RunConfig(dataset=args.dataset, retriever=args.retriever, view=_view(args),
                     top_k=args.top_k, limit=args.limit, seed=args.seed,
                     generation=generation,
                     haystack=Haystack.parse(args.haystack).spec if args.haystack else None)


def _print_estimate(config: Any, settings: Any) -> None:
    """Before a paid run: the estimated tokens and price of each paid part, on stderr."""
    from target_core.costs import estimate_run_cost, paid_parts
    from target_core.datasets import load_dataset
    from target_core.registry import Part

    paid = paid_parts(Part("retriever", config.retriever))
    if config.generation:
        paid += paid_parts(Part("generator", config.generation.generator))
    if not paid:
        return
    dataset = load_dataset(config.dataset, settings)
    n = min(config.limit or len(dataset.queries), len(dataset.queries))
    estimate = estimate_run_cost(dataset, config.retriever, config.generation,
                                 top_k=config.top_k, n_queries=n, view=config.view)
    for line in estimate.lines:
        print(f"estimate for {line.describe()}", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    from target_core.engine.runner import run_retrieval

    settings = load_settings(args.workspace)
    config = run_config(args)
    _print_estimate(config, settings)
    if args.detach:
        from target_core.engine.workers import launch_run

        launch = launch_run(config, settings=settings, fresh=args.fresh)
        if launch.job is not None:
            print_launch(args, launch, launch.job)
            return 0
    result = run_retrieval(config, settings=settings,
                           progress=ProgressBar(sys.stderr.isatty() or args.progress),
                           fresh=args.fresh)
    if result.reused:
        print(f"run {result.run.run_id} already holds this configuration (complete): "
              "showing it; --fresh runs it again", file=sys.stderr)
    summary = run_summary(result.run)
    code = EXIT_RUN_FAILED if result.failed else 0
    if result.failed:  # the JSON says so too: consumers that only read stdout
        summary |= {"status": result.run.status, "error": result.run.error}
        print(f"error: run {result.run.run_id} failed: {result.run.error}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=2))
        return code
    note = " (resumed)" if result.resumed else " (reused)" if result.reused else ""
    print(f"run {result.run.run_id}{note}: {config.label} on {config.dataset}, "
          f"{result.run.n_queries} queries, view {config.view.label}")
    if "generator" in result.run.index_info:
        print(f"generator: {result.run.index_info['generator']}")
    for line in metric_lines(result.run.metrics, result.run.task):
        print(line)
    if result.failed:
        print("status: FAILED (not ranked; run it again to ask the failed queries again)")
    return code


CLI_COLUMNS = ("run_id", "dataset", "pipeline", "view", "k", "status", "repeat", "queries",
               "R@k", "mrr", "answers")
"""The columns `runs` prints (the Run page adds retrieval p50)."""


def cmd_runs(args: argparse.Namespace) -> int:
    import pandas as pd

    from target_core.engine.store import RunStore
    from target_core.read_models.runs import dataset_runs, runs_frame

    settings = load_settings(args.workspace)
    runs = dataset_runs(RunStore.in_workspace(settings.workspace), args.dataset, settings)
    if args.json:
        print(json.dumps([run_summary(r) | {"status": r.status, "n_done": r.n_done,
                                            "error": r.error} for r in runs], indent=2))
        return 0
    frame = runs_frame(runs)
    rows = [{name: ("" if pd.isna(row[name]) else f"{row[name]:.3f}")
             if name in ("R@k", "mrr", "answers") else row[name] for name in CLI_COLUMNS}
            for row in frame.to_dict("records")]
    print(format_rows(rows, list(rows[0]) if rows else ["run_id"]) if rows else "no runs yet")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from target_core.engine.store import RunStore
    from target_core.errors import ConfigError
    from target_core.read_models.runs import query_rows
    from target_core.tasks.failure import FAILURE_RULE

    store = RunStore.in_workspace(load_settings(args.workspace).workspace)
    record = store.get_run(args.run_id)
    data = record.to_dict()
    if record.config.generation is not None:  # which model answered, by the replies
        data["served_models"] = store.served_models(record.run_id)
    k = record.config.top_k if args.k is None else args.k
    if not 1 <= k <= record.config.top_k:
        raise ConfigError(f"--k {k} must be between 1 and the run's top_k "
                          f"({record.config.top_k})")
    if args.queries:
        data["k"] = k
        data["queries"] = query_rows(store, record, k)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    for key in ("run_id", "dataset", "task", "retriever", "status", "n_queries", "n_done"):
        print(f"{key:<12} {data[key]}")
    for label, note in run_notes(record):
        print(f"{label:<12} {note}")
    print(f"{'view':<12} {record.config.view.label} (top_k {record.config.top_k})")
    if (generation := record.config.generation) is not None:
        print(f"{'generation':<12} {record.config.label}, {generation.prompt_set} prompts")
    if served := data.get("served_models"):
        print(f"{'answered by':<12} " + ", ".join(f"{m} ({n})" for m, n in served.items()))
    for line in metric_lines(record.metrics, record.task):
        print(line)
    if args.queries:
        failed = [q for q in data["queries"] if q["failed"]]
        print(f"{len(failed)} of {len(data['queries'])} queries failed at k = {k} "
              f"({FAILURE_RULE})")
        print(format_rows([{"query_id": q["query_id"], "failed": "yes" if q["failed"] else "",
                            "last gold rank": "not ranked" if q["last_gold_rank"] is None
                            else q["last_gold_rank"]}
                           for q in data["queries"]],
                          ["query_id", "failed", "last gold rank"]))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from target_core.engine.export import export_run
    from target_core.engine.store import RunStore

    store = RunStore.in_workspace(load_settings(args.workspace).workspace)
    written = export_run(store, args.run_id, args.format, args.out)
    if args.json:
        print(json.dumps({"run_id": args.run_id, "format": args.format,
                          "files": [str(p) for p in written]}))
    else:
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "datasets": ("list datasets (name, task, counts, source); `datasets add PATH|ARCHIVE "
                 "[--name NAME]`, `datasets remove NAME`", cmd_datasets),
    "retrievers": ("list retriever names with a one-line description", cmd_retrievers),
    "generators": ("list generator names with a one-line description", cmd_generators),
    "run": ("run a retriever on a dataset and store the results", cmd_run),
    "runs": ("list runs with their headline metrics", cmd_runs),
    "show": ("show one run: configuration and metrics (--queries: per query)", cmd_show),
    "export": ("write a run as TARGET JSONL, a TREC run + qrels, or CSV", cmd_export),
    **IMPORT_COMMANDS,
    **JOB_COMMANDS,
    **ANALYSIS_COMMANDS,
    **HAYSTACK_COMMANDS,
    **SQL_ABLATE_COMMANDS,
    **EXPLAIN_COMMANDS,
    **BENCHGEN_COMMANDS,
    **JUDGE_COMMANDS,
    **SERVE_COMMANDS,
}
MAIN_ARGUMENTS: options.CommandArguments = {
    "retrievers": (), "generators": (),
    "run": ("dataset", "retriever", "top-k", *options.VIEW, *options.SAMPLE, "fresh",
            "haystack", *options.GENERATION, "preset", *options.launch()),
    "runs": ("dataset:filter",),
    "show": ("RUN_ID", "queries", "k:show"),
    "export": ("RUN_ID", "format:export", "out:export"),
}
ARGUMENTS: options.CommandArguments = {  # each command's arguments (cli/options.py), by name
    **MAIN_ARGUMENTS, **DATASETS_ARGUMENTS, **IMPORT_ARGUMENTS, **JOB_ARGUMENTS,
    **ANALYSIS_ARGUMENTS, **HAYSTACK_ARGUMENTS, **SQL_ABLATE_ARGUMENTS, **EXPLAIN_ARGUMENTS,
    **BENCHGEN_ARGUMENTS, **JUDGE_ARGUMENTS, **SERVE_ARGUMENTS}


def build_parser(prog: str = "python -m target_core") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog,
                                     description="TARGET Explorer: table retrieval runs "
                                                 "and failure analysis.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, _) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        options.add(command, *options.COMMON, *ARGUMENTS[name])
    return parser


def console() -> int:
    """`target-explorer` (pyproject.toml's console script): main, named so in --help."""
    return main(prog="target-explorer")


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m target_core") -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    args = build_parser(prog).parse_args(argv)
    try:
        return COMMANDS[args.command][1](args)
    except TargetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `... | head`: the reader left, nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the exit quiet
        return 0
