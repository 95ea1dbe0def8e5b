"""Command line: `python -m target_core COMMAND [--workspace DIR] [--json]`.

The CLI only parses arguments, calls into the library and prints. Library errors
(TargetError) become a one-line reason on stderr and exit code 2; with --json,
stdout carries nothing but the JSON document.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any

from target_core.config import load_settings
from target_core.errors import TargetError

EXIT_ERROR = 2


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", metavar="DIR",
                        help="workspace directory (default: data/workspace or TARGET_WORKSPACE)")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def _format_rows(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    cells = [[("" if r.get(c) is None else str(r.get(c))) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def cmd_datasets(args: argparse.Namespace) -> int:
    from target_core.datasets import list_datasets

    infos = [i.to_dict() for i in list_datasets(load_settings(args.workspace),
                                                 remote=args.remote)]
    if args.json:
        print(json.dumps(infos, ensure_ascii=False, indent=2))
        return 0
    if not infos:
        print("no datasets found")
        return 0
    print(_format_rows(infos, ["name", "task", "tables", "queries", "databases", "kind"]))
    for info in infos:
        if info["error"]:
            print(f"\n{info['name']}: cannot be loaded: {info['error']}", file=sys.stderr)
    return 0


COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "datasets": ("list datasets: name, task, tables, queries, databases", cmd_datasets),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m target_core",
                                     description="TARGET Explorer: table retrieval runs "
                                                 "and failure analysis.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, _) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        _common(command)
        if name == "datasets":
            command.add_argument("--remote", action="store_true",
                                 help="also list TARGET's hub datasets (not downloaded)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command][1](args)
    except TargetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
