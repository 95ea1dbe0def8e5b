"""`benchgen`: the benchmark builder on the command line (seed 002).

    benchgen sample [--dataset demo-sql] [--database DB] [--templates FILE|DIR] [--n N]
                    [--seed S] [--reference-date YYYY-MM-DD] [--out DRAFT.jsonl]

samples SQL from templates against the dataset's databases (read-only), writes the
template writer's questions for each query and checks them (round trip), and writes the
draft as JSON Lines: one sampled query per line with its questions and checks.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

from target_core.cli_format import format_rows
from target_core.config import load_settings
from target_core.errors import ConfigError, UnknownNameError

ACTIONS = ("sample",)


def _reference(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--reference-date must be YYYY-MM-DD, got '{text}'") from None


def draft_records(args: argparse.Namespace) -> tuple[list[dict[str, Any]], Any]:
    """Sample, write and check questions; (one record per kept query, the report)."""
    from target_core.benchgen.instantiate import sample_queries
    from target_core.benchgen.questions import as_dicts, round_trip, write_questions
    from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, load_templates
    from target_core.datasets import load_dataset

    dataset = load_dataset(args.dataset, load_settings(args.workspace))
    if not dataset.databases:
        raise ConfigError(f"dataset '{dataset.name}' has no SQLite databases to sample from")
    templates = load_templates(args.templates or EXAMPLE_TEMPLATES_DIR)
    if args.database:
        if args.database not in dataset.databases:
            raise UnknownNameError("database", args.database, dataset.databases)
        templates = [t for t in templates if t.database == args.database]
        if not templates:
            raise ConfigError(f"no template is for database '{args.database}'")
    report = sample_queries(templates, dataset.databases, n=args.n, seed=args.seed,
                            reference_date=_reference(args.reference_date))
    by_id = {t.id: t for t in templates}
    records = []
    for item in report.queries:
        template = by_id[item.template_id]
        questions = write_questions(item, template)
        checks = [round_trip(q.text, item, template) for q in questions]
        records.append(item.to_dict() | {
            "questions": [q | {"round_trip": c.passed, "missing": c.missing}
                          for q, c in zip(as_dicts(questions), checks, strict=True)]})
    return records, report


def cmd_benchgen(args: argparse.Namespace) -> int:
    records, report = draft_records(args)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        print(f"wrote {len(records)} sampled queries to {out}", file=sys.stderr)
    if args.json:
        print(json.dumps({"report": report.to_dict(), "items": records}, indent=2,
                         ensure_ascii=False))
        return 0
    rows = [{"template": t, **{k: getattr(c, k) for k in ("draws", "kept", "error", "empty",
                                                          "duplicate")}}
            for t, c in report.counts.items()]
    print(format_rows(rows, ["template", "draws", "kept", "error", "empty", "duplicate"]))
    n_questions = sum(len(r["questions"]) for r in records)
    passed = sum(q["round_trip"] for r in records for q in r["questions"])
    print(f"\n{len(records)} queries, {n_questions} questions by the template writer "
          f"(offline baseline); round-trip check passed for {passed}")
    for record in records[:3]:
        print(f"\n  {record['sql']}")
        for q in record["questions"]:
            print(f"    - {q['text']}")
    return 0


BENCHGEN_COMMANDS = {
    "benchgen": ("benchmark builder: sample SQL from templates over a dataset's databases, "
                 "write and check questions (seed 002)", cmd_benchgen),
}


def benchgen_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("action", choices=ACTIONS, help="sample: templates -> SQL -> "
                         "questions, written as a draft")
    command.add_argument("--dataset", default="demo-sql",
                         help="dataset whose SQLite databases are sampled (default demo-sql)")
    command.add_argument("--database", help="only the templates of this database")
    command.add_argument("--templates", help="template file or folder (default: the "
                         "examples in data/benchgen/templates)")
    command.add_argument("--n", type=int, default=5, help="queries kept per template")
    command.add_argument("--seed", type=int, default=0)
    command.add_argument("--reference-date", help="resolve relative time references "
                         "against this date (default: per template, from the data)")
    command.add_argument("--out", help="write the draft (JSON Lines) here")
