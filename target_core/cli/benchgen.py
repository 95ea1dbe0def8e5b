"""`benchgen`: the benchmark builder on the command line (seed 002).

    benchgen sample [--dataset demo-sql] [--database DB] [--templates FILE|DIR] [--n N]
                    [--seed S] [--reference-date YYYY-MM-DD] [--writer template|openai[:M]]
                    [--judge round-trip|openai[:M]] [--draft NAME [--replace]] [--out F]
    benchgen drafts
    benchgen review DRAFT [--accept-automatic] [--accept ID ...] [--reject ID ...]
    benchgen export DRAFT --name DATASET [--overwrite]
    benchgen evaluate RUN

`sample` draws SQL from templates over the dataset's databases (read-only), writes
questions for each query and checks them; `--draft` saves everything for review in the
workspace, `--out` writes it as JSON Lines. `review` records decisions (the page is the
usual place); `export` writes the accepted pairs as a folder-format sql dataset;
`evaluate` splits a text-to-SQL run on such a dataset by error source (paper Table 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

from target_core.cli import options
from target_core.cli.format import ProgressBar, format_rows
from target_core.config import load_settings
from target_core.errors import ConfigError


def _reference(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--reference-date must be YYYY-MM-DD, got '{text}'") from None


def _needs(args: argparse.Namespace, what: str) -> str:
    if not args.target:
        raise ConfigError(f"benchgen {args.action} needs {what}")
    return args.target


def draft_record(pair_group: list[Any]) -> dict[str, Any]:
    """One sampled query with its questions and checks, as `--out` and `--json` write it."""
    item = pair_group[0].item
    return item.to_dict() | {"questions": [
        {"pair_id": p.pair_id, "text": p.question, "style": p.style, "writer": p.writer,
         "round_trip": p.check.passed, "missing": p.check.missing,
         "judge": p.judge.to_dict() if p.judge else None, "status": p.status}
        for p in pair_group]}


def _records(draft: Any) -> list[dict[str, Any]]:
    groups: dict[int, list[Any]] = {}
    for pair in draft.pairs():
        groups.setdefault(pair.item_id, []).append(pair)
    return [draft_record(g) for g in groups.values()]


def cmd_sample(args: argparse.Namespace) -> int:
    import tempfile

    from target_core.benchgen.build import sample_draft
    from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, load_templates
    from target_core.datasets import load_dataset

    settings = load_settings(args.workspace)
    dataset = load_dataset(args.dataset, settings)
    source = args.templates or EXAMPLE_TEMPLATES_DIR
    with tempfile.TemporaryDirectory() as scratch:
        # Without --draft the draft lives in a scratch workspace for this command only.
        draft, report, writer, judge = sample_draft(
            settings, dataset, load_templates(source), database=args.database,
            name=args.draft or "scratch", n=args.n, seed=args.seed,
            reference_date=_reference(args.reference_date), writer_spec=args.writer,
            judge_spec=args.judge, templates_label=str(source),
            workspace=settings.workspace if args.draft else scratch, replace=args.replace,
            progress=ProgressBar(args.progress or sys.stderr.isatty()))
        with draft:
            records, summary = _records(draft), draft.summary()
            errors = draft.writer_errors()
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        print(f"wrote {len(records)} sampled queries to {out}", file=sys.stderr)
    if args.json:
        print(json.dumps({"report": report.to_dict(), "items": records,
                          "draft": args.draft, "summary": summary.to_dict(),
                          "writer_errors": [{"sql": i.sql, "error": e} for i, e in errors]},
                         indent=2, ensure_ascii=False))
        return 0
    rows = [{"template": t, **{k: getattr(c, k) for k in ("draws", "kept", "error", "empty",
                                                          "duplicate")}}
            for t, c in report.counts.items()]
    print(format_rows(rows, ["template", "draws", "kept", "error", "empty", "duplicate"]))
    print(f"\n{len(records)} queries, {summary.total} questions by {writer.label}; "
          f"automatic validation ({judge.label}) passed {summary.automatic_passed}")
    for item, error in errors[:5]:
        print(f"  no questions for {item.template_id}: {error}")
    undecided = [q for r in records for q in r["questions"]
                 if q["judge"] is not None and q["judge"]["passed"] is None]
    if undecided:
        print(f"  {len(undecided)} judgements failed (no verdict, left for review); the "
              f"first, question {undecided[0]['text']!r}: {undecided[0]['judge']['reason']}")
    for record in records[:3]:
        print(f"\n  {record['sql']}")
        for q in record["questions"]:
            print(f"    - {q['text']}")
    if args.draft:
        print(f"\nsaved draft '{args.draft}': review it on the Benchmark builder page or "
              f"with `benchgen review {args.draft}`")
    return 0


def cmd_drafts(args: argparse.Namespace) -> int:
    from target_core.benchgen.draft import Draft, list_drafts

    settings = load_settings(args.workspace)
    rows = []
    for name in list_drafts(settings.workspace):
        with Draft.open(settings.workspace, name) as draft:
            meta = draft.meta()
            rows.append({"draft": name, "dataset": meta.get("dataset"),
                         "writer": meta.get("writer_spec"), **draft.summary().to_dict()})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no drafts yet: make one with `benchgen sample --draft NAME`")
        return 0
    for row in rows:
        rate = row["acceptance_rate"]
        row["acceptance"] = "-" if rate is None else f"{rate:.1%}"
    print(format_rows(rows, ["draft", "dataset", "writer", "total", "pending", "accepted",
                             "rejected", "edited", "acceptance"]))
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from target_core.benchgen.draft import Draft

    settings = load_settings(args.workspace)
    with Draft.open(settings.workspace, _needs(args, "a draft name")) as draft:
        changed = 0
        if args.accept_automatic:
            changed += draft.accept_automatic()
        if args.accept:
            changed += draft.review(args.accept, "accepted")
        if args.reject:
            changed += draft.review(args.reject, "rejected")
        summary = draft.summary()
    if args.json:
        print(json.dumps({"changed": changed, **summary.to_dict()}, indent=2))
        return 0
    rate = summary.acceptance_rate
    print(f"{changed} pairs changed; {summary.accepted} accepted, {summary.rejected} "
          f"rejected, {summary.pending} pending of {summary.total}; acceptance rate "
          + ("-" if rate is None else f"{rate:.1%}") + " (seed 002 reports 95.11%)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from target_core.benchgen.draft import Draft
    from target_core.benchgen.export import export_draft

    settings = load_settings(args.workspace)
    if not args.name:
        raise ConfigError("benchgen export needs --name, the new dataset's name")
    with Draft.open(settings.workspace, _needs(args, "a draft name")) as draft:
        result = export_draft(draft, settings, args.name, overwrite=args.overwrite)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    print(f"wrote dataset '{result.name}' to {result.path}: {result.queries} queries, "
          f"{result.tables} tables in {len(result.databases)} databases "
          f"({', '.join(result.databases)}); run it with "
          f"`run --dataset {result.name} --retriever bm25 --generator heuristic`")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from target_core.benchgen.error_sources import error_sources
    from target_core.datasets import load_dataset
    from target_core.engine.store import RunStore

    settings = load_settings(args.workspace)
    store = RunStore.in_workspace(settings.workspace)
    run = store.get_run(_needs(args, "a run id"))
    report = error_sources(store, load_dataset(run.config.dataset, settings), run.run_id)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0
    table = report.table()
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}%"))
    by_difficulty = report.by_difficulty()
    if len(by_difficulty):
        print()
        print(by_difficulty.to_string(float_format=lambda v: f"{v:.2f}%"))
    return 0


ACTIONS = {"sample": cmd_sample, "drafts": cmd_drafts, "review": cmd_review,
           "export": cmd_export, "evaluate": cmd_evaluate}
"""`benchgen`'s actions: the choices of ACTION:benchgen in cli/options.py."""


def cmd_benchgen(args: argparse.Namespace) -> int:
    return ACTIONS[args.action](args)


BENCHGEN_COMMANDS = {
    "benchgen": ("benchmark builder (seed 002): sample SQL from templates, write and check "
                 "questions, review, export a dataset, evaluate runs by error source",
                 cmd_benchgen),
}


BENCHGEN_ARGUMENTS: options.CommandArguments = {
    "benchgen": ("ACTION:benchgen", "TARGET:benchgen", "dataset:benchgen", "database",
                 "templates", "n", "seed:benchgen", "reference-date", "writer",
                 "judge:benchgen", "draft", "replace", "out:benchgen", "progress:benchgen",
                 "accept-automatic", "accept", "reject", "name:benchgen", "overwrite"),
}
