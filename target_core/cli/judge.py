"""The `judge` command: GTR's truthfulness rating of a stored run's answers
(experiments.judge), stored per query with the judge's label.

Like the rest of the CLI it only parses, calls target_core and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from target_core.cli import options
from target_core.config import load_settings


def cmd_judge(args: argparse.Namespace) -> int:
    from target_core.datasets import load_dataset
    from target_core.engine.store import RunStore
    from target_core.experiments.judge import judge_run, make_truth_judge

    settings = load_settings(args.workspace)
    store = RunStore.in_workspace(settings.workspace)
    run = store.get_run(args.run_id)
    dataset = load_dataset(run.config.dataset, settings)
    judge = make_truth_judge(args.judge, settings)
    progress = None if args.json else (
        lambda i, n: print(f"\rjudged {i}/{n}", end="" if i < n else "\n", file=sys.stderr,
                           flush=True))
    summary = judge_run(store, dataset, run.run_id, judge, limit=args.limit,
                        on_query=progress, max_failed=settings.max_failed_generations)
    if args.json:
        print(json.dumps({"run_id": summary.run_id, "judge": summary.judge,
                          "label": summary.label, "rated": summary.rated,
                          "failed": summary.failed, "truthful": summary.truthful,
                          "failed_classes": summary.failed_classes,
                          "first_error": summary.first_error,
                          "metrics": summary.metrics}, indent=2, ensure_ascii=False))
        return 0
    print(f"run {summary.run_id}, judge {summary.label}")
    print(f"{summary.truthful} of {summary.rated} rated answers truthful (1), "
          f"{summary.failed} failed judgements (no rating, not counted)")
    if summary.first_error:
        kinds = ", ".join(f"{k} {n}" for k, n in summary.failed_classes.items())
        print(f"failed judgements ({kinds}); the first, query {summary.first_error}")
    if "truthfulness" in summary.metrics:
        print(f"truthfulness {summary.metrics['truthfulness']:.4f} over "
              f"{summary.metrics['truthfulness_n']:.0f} rated queries of the run")
    return 0


JUDGE_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "judge": ("rate a stored run's answers with GTR's truthfulness rubric (1 relevant, "
              "0 irrelevant) by an LLM or the offline heuristic stand-in", cmd_judge),
}


JUDGE_ARGUMENTS: options.CommandArguments = {"judge": ("RUN_ID", "judge:judge", "limit:judge")}
