"""README documents every setting and command, and CI runs the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from target_core.analysis.failures import CATEGORIES
from target_core.benchgen.error_sources import DEFINITIONS as ERROR_SOURCES
from target_core.cli import COMMANDS
from target_core.config import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.env)
def test_setting_is_documented(setting) -> None:
    assert f"`{setting.env}`" in README


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_is_documented(command: str) -> None:
    assert re.search(rf"^\| `{command}\b", README, re.MULTILINE)


@pytest.mark.parametrize("category", CATEGORIES)
def test_failure_category_is_documented(category: str) -> None:
    assert f"| `{category}` | {CATEGORIES[category]} |" in README


def test_ci_runs_the_readme_test_command() -> None:
    block = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert block, "README has no quick-start block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert "make test" in commands and "make run" in commands
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")]
    assert ci[-1] == "make test"


def test_requirements_are_pinned_exactly() -> None:
    for name in ("requirements.txt", "requirements-test.txt", "requirements-nodeps.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "-r")):
                assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][A-Za-z0-9.]*", line), line


@pytest.mark.parametrize("source", ERROR_SOURCES)
def test_error_source_is_documented(source: str) -> None:
    assert f"| `{source}` | {ERROR_SOURCES[source]} |" in README


BENCHMARKS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py")
                    if p.stem not in ("__init__", "synthetic"))


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_is_documented(name: str) -> None:
    """Every benchmark script is named in README, where its figures are."""
    assert f"`{name}`" in README or f"benchmarks.{name}" in README
