"""Write docs/reference/cli.md from the command line's own argparse parsers.

    .venv/bin/python scripts/cli_reference.py           # rewrite the page
    .venv/bin/python scripts/cli_reference.py --check   # exit 1 when the page is stale

The page is each command's `--help`, as `python -m target_core COMMAND --help` prints it,
so it cannot drift from the code: tests/test_docs.py fails when the committed page differs
from what this script writes. The help is formatted at a fixed width, not the terminal's.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "cli.md"
WIDTH = 100  # argparse reads COLUMNS; a fixed width makes the page the same everywhere

HEADER = """\
# CLI reference

Every command's `--help`, generated from the parsers by `scripts/cli_reference.py`
(do not edit this page by hand: run the script; the test suite fails when it is stale).
`target-explorer COMMAND` (the installed command, see [Install](../install.md)) takes the
same arguments as `python -m target_core COMMAND`. What the commands are for, with
examples, is in [Command line](../command-line.md).
"""


def _subcommands(parser: argparse.ArgumentParser,
                 path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                          argparse.ArgumentParser]]:
    """Every parser under `parser`, depth first in declaration order, with its path of
    command names (() for the top level)."""
    yield path, parser
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _subcommands(child, (*path, name))


def render() -> str:
    """The page's Markdown: the top-level help, then one section per command."""
    sys.path.insert(0, str(ROOT))
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)
    try:
        from target_core.cli.main import build_parser

        parts = [HEADER]
        for path, parser in _subcommands(build_parser()):
            title = " ".join(path) if path else "Commands"
            parts.append(f"## {title}\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    finally:
        sys.path.remove(str(ROOT))
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true",
                      help="exit 1 when the page differs from the parsers, write nothing")
    check = args.parse_args(argv).check
    text = render()
    current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    if check:
        if current != text:
            sys.stderr.write(f"{PAGE.relative_to(ROOT)} is stale: "
                             "run .venv/bin/python scripts/cli_reference.py\n")
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
