"""Every CLI argument is declared once, in target_core/cli/options.py, and the commands
attach them by name (issue 30: no option declared twice)."""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

import pytest

from target_core.cli import options
from target_core.cli.main import ARGUMENTS, COMMANDS, build_parser

CLI = Path(__file__).resolve().parent.parent / "target_core" / "cli"


def add_argument_calls(source: str) -> list[list[str]]:
    """The string arguments of each `.add_argument(...)` call in `source`."""
    return [[a.value for a in node.args if isinstance(a, ast.Constant)
             and isinstance(a.value, str)]
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"]


def declared_flags(source: str) -> list[str]:
    """The flag or positional name of each `Arg(...)` declaration in `source`."""
    return [node.args[0].value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "Arg" and node.args and isinstance(node.args[0], ast.Constant)]


def _outside_options() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CLI.glob("*.py"))
            if p.name != "options.py"}


def test_the_checks_find_a_planted_declaration() -> None:
    planted = "def f(c):\n    c.add_argument('run_id')\n    c.add_argument('--limit', type=int)\n"
    assert add_argument_calls(planted) == [["run_id"], ["--limit"]]
    assert declared_flags("Arg('--seed', {})\nArg('--seed', None)\n") == ["--seed", "--seed"]


def test_no_cli_module_but_options_declares_an_argument() -> None:
    sources = _outside_options()
    assert len(sources) >= 10 and "main.py" in sources
    flags = {name: [call for call in add_argument_calls(text)
                    if any(s.startswith("-") for s in call)] for name, text in sources.items()}
    assert not {name: calls for name, calls in flags.items() if calls}, (
        "declare flags in cli/options.py and attach them with options.add")
    positional = {name: calls for name, text in sources.items()
                  if (calls := add_argument_calls(text))}
    assert not positional, "positional arguments are declared in cli/options.py too"


def test_each_flag_is_declared_once_in_options() -> None:
    source = (CLI / "options.py").read_text(encoding="utf-8")
    flags = declared_flags(source)
    assert sum(f.startswith("--") for f in flags) >= 60  # every flag of the CLI is here
    assert [f for f, n in Counter(flags).items() if n > 1] == []
    assert len(options.BY_NAME) == len(options.ARGUMENTS) == len(flags)
    # options.py itself calls add_argument once, with the declaration's flag
    assert add_argument_calls(source) == [[]]


def test_every_declaration_and_variant_is_used_and_every_command_listed() -> None:
    assert set(ARGUMENTS) == set(COMMANDS)
    used = [n for names in ARGUMENTS.values() for n in (*options.COMMON, *names)]
    unused_arguments = set(options.BY_NAME) - {n.partition(":")[0] for n in used}
    unused_variants = {f"{a.name}:{v}" for a in options.ARGUMENTS for v in a.variants} - set(used)
    assert unused_arguments == set() and unused_variants == set()


def test_a_flag_of_several_meanings_needs_its_variant() -> None:
    parser = argparse.ArgumentParser()
    with pytest.raises(KeyError, match="means different things"):
        options.add(parser, "format")
    with pytest.raises(KeyError, match="has no variant 'nope'"):
        options.add(parser, "limit:nope")


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--dataset", "X", "--limit", "5", "--seed", "3", "--progress"],
     {"dataset": "X", "limit": 5, "seed": 3, "progress": True, "detach": False, "top_k": 10,
      "token_budget": 8000, "format": None, "rows": None, "prompt_set": None}),
    (["ablate", "--dataset", "X", "--retriever", "bm25", "--rows", "all,0", "--detach"],
     {"dataset": "X", "retriever": "bm25", "rows": "all,0", "detach": True, "seed": 0,
      "limit": None, "top_k": 10}),
    (["haystack", "X", "--source", "demo-fact", "--retriever", "bm25", "--retriever", "tfidf",
      "--seed", "4"],
     {"dataset": "X", "retriever": ["bm25", "tfidf"], "seed": 4, "sizes": None,
      "progress": False}),
    (["sql-ablate", "--dataset", "X", "--limit", "2"],
     {"dataset": "X", "retriever": "bm25", "generator": "heuristic", "few_shot": 3,
      "limit": 2, "seed": 0}),
    (["benchgen", "sample", "--n", "2", "--seed", "1", "--progress"],
     {"action": "sample", "target": None, "dataset": "demo-sql", "n": 2, "seed": 1,
      "progress": True, "judge": "round-trip", "writer": "template"}),
    (["import", "results", "--dataset", "NAME=D", "--dataset", "E"],
     {"path": "results", "dataset": ["NAME=D", "E"], "format": "target", "top_k": None}),
    (["reproduce", "--dataset", "X", "--paper", "OTTQA"],
     {"prompt_set": "appendix-d", "embedder": "minilm", "limit": None, "seed": 0}),
    (["judge", "R", "--judge", "heuristic", "--limit", "2"],
     {"run_id": "R", "judge": "heuristic", "limit": 2}),
    (["cancel", "J", "--wait", "2.5"], {"job_id": "J", "wait": 2.5}),
    (["demo-suite", "--wait"], {"wait": True}),
    (["export", "R", "--format", "csv", "--out", "r.csv", "--json"],
     {"run_id": "R", "format": "csv", "out": "r.csv", "json": True}),
    (["runs"], {"dataset": None, "workspace": None}),
])
def test_commands_accept_their_options(argv: list[str], expected: dict[str, object]) -> None:
    args = vars(build_parser().parse_args(argv))
    assert {key: args[key] for key in expected} == expected


@pytest.mark.parametrize("argv", [
    ["ablate", "--dataset", "X"],  # --retriever:ablate is required
    ["run", "--limit", "5"],  # --dataset is required
    ["export", "R", "--format", "trec"],  # --out:export is required
    ["import", "results", "--format", "csv"],  # format:import's choices
])
def test_commands_refuse_what_their_variants_refuse(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
