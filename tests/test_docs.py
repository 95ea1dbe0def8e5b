"""The docs (docs/, a MkDocs site) document every setting, command, failure category,
error source, benchmark and reported metric; the site builds in strict mode; the CLI
reference is the parsers' own `--help`; the README stays short and CI runs its test
command."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_support import DOCS, all_pages, anchors, page

from target_core.analysis.failures import CATEGORIES
from target_core.benchgen.error_source_report import DEFINITIONS as ERROR_SOURCES
from target_core.cli import COMMANDS
from target_core.config import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.env)
def test_setting_is_documented(setting) -> None:
    assert f"`{setting.env}`" in page("settings.md")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_is_documented(command: str) -> None:
    assert re.search(rf"^\| `{command}\b", page("command-line.md"), re.MULTILINE)


@pytest.mark.parametrize("category", CATEGORIES)
def test_failure_category_is_documented(category: str) -> None:
    assert f"| `{category}` | {CATEGORIES[category]} |" in page("failures.md")


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
    assert f"| `{source}` | {ERROR_SOURCES[source]} |" in page("text-to-sql.md")


BENCHMARKS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py")
                    if p.stem not in ("__init__", "synthetic"))


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_is_documented(name: str) -> None:
    """Every benchmark script is named in the docs, where its figures are."""
    docs = all_pages()
    assert f"`{name}`" in docs or f"benchmarks.{name}" in docs


# --- "How each number is computed" ------------------------------------------------------

def _numbers_section() -> str:
    text = page("numbers.md")
    assert text.startswith("# How each number is computed\n"), "docs/numbers.md's title moved"
    return text


def _reported_metric_keys() -> set[str]:
    """Every key a run's `metrics` or a query's `metrics` can hold, from the code: the
    retrieval names of every task at several top-k, the answer metrics of every task,
    what aggregate_downstream adds (latency, cache and error counts, per difficulty),
    and the per-query rows of both steps."""
    from target_core.metrics.downstream import (
        SQL_FLAGS,
        DownstreamOutcome,
        aggregate_downstream,
        per_query_downstream,
        task_metrics,
    )
    from target_core.metrics.retrieval import (
        QueryOutcome,
        default_ks,
        metric_names,
        per_query_metrics,
    )
    from target_core.tasks import ANSWER_TASKS, TASKS

    keys: set[str] = set()
    for task in TASKS:
        for top_k in (1, 3, 5, 7, 10, 20):
            keys.update(metric_names(default_ks(top_k), task=task))
    for task in ANSWER_TASKS:
        keys.update(task_metrics(task))
    # SQL outcomes need no scoring library: a real call, a cached reply, a failure, a level.
    outcomes = [
        DownstreamOutcome("a", "sql", "easy", "SELECT 1", "SELECT 1",
                          sql_flags=dict.fromkeys(SQL_FLAGS, True), ms=5.0),
        DownstreamOutcome("b", "sql", None, "SELECT 1", "SELECT 1", ms=0.5, cached=True),
        DownstreamOutcome("c", "sql", None, "", "SELECT 1", failed=True, ms=1.0),
    ]
    keys.update(aggregate_downstream(outcomes, "sql"))
    # A failed outcome gives each task's per-query keys without scoring anything.
    for task in ANSWER_TASKS:
        keys.update(per_query_downstream(
            DownstreamOutcome("q", task, None, "", None if task == "fact" else "x",
                              failed=True)))
    key = ("d", "t")
    keys.update(per_query_metrics(QueryOutcome("q", [key], (key,), "d"), default_ks(10)))
    return keys


def _documented_name(key: str) -> str:
    """The name the section uses: `recall@5` -> `recall@k`, `fact_f1/hard` -> `METRIC/LEVEL`
    (names whose cutoff is fixed, `ndcg@10` and `db_hit@1`, stay as they are)."""
    from target_core.metrics.retrieval import metric_names

    if "/" in key:
        return "METRIC/LEVEL"
    fixed = set(metric_names((1,), task="sql")) & set(metric_names((2,), task="sql"))
    return key if key in fixed else re.sub(r"@\d+$", "@k", key)


def test_every_reported_metric_is_in_how_each_number_is_computed() -> None:
    section = _numbers_section()
    keys = _reported_metric_keys()
    assert {"recall@5", "ndcg@10", "generation_cached_ms_p50", "execution_accuracy/easy",
            "fact_recall_excl_nei", "overlap@10", "fact_pred"} <= keys  # the list is real
    missing = sorted({name for key in keys
                      if f"`{(name := _documented_name(key))}`" not in section})
    assert not missing, f"not in docs/numbers.md: {missing}"
    for key in keys:
        if "/" in key:  # a per-difficulty key: its metric is named too
            assert f"`{key.split('/', 1)[0]}`" in section, key


def _defined_tests(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")}


def test_every_test_cited_in_how_each_number_is_computed_exists() -> None:
    cited = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", _numbers_section())
    assert len(cited) >= 40, "the section should cite a test for every number"
    missing = []
    for file, name in sorted(set(cited)):
        path = ROOT / file
        if not path.is_file() or name not in _defined_tests(path):
            missing.append(f"{file}::{name}")
    assert not missing, f"cited in docs/numbers.md but not defined: {missing}"


def test_links_in_how_each_number_is_computed_reach_a_heading() -> None:
    links = re.findall(r"\]\(([\w/.-]*\.md)?(?:#([^)]+))?\)", _numbers_section())
    assert any(anchor for _, anchor in links)
    broken = []
    for target, anchor in links:
        path = (DOCS / target) if target else DOCS / "numbers.md"
        if not path.is_file() or (anchor and anchor not in anchors(path.read_text())):
            broken.append(f"{target}#{anchor}")
    assert not broken, f"links to no page or heading: {sorted(set(broken))}"


# --- the site, the CLI reference, the README -----------------------------------------------

def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    # never --quiet: it drops the warnings that --strict counts, and the build passes
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict",
         "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_docs_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """`make test` builds the site: a broken link or anchor, a missing image or a page
    left out of nav fails here (mkdocs.yml's validation turns each into a warning, and
    --strict turns warnings into a failed build)."""
    built = _mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    for name in ("index.html", "numbers/index.html", "reference/cli/index.html",
                 "development/index.html", "img/overview.png"):
        assert (tmp_path / "site" / name).is_file(), name


def test_docs_site_build_fails_on_a_broken_anchor(tmp_path: Path) -> None:
    """The strict build really checks anchors: the same site with one broken link fails."""
    import shutil

    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text() + "\n[gone](numbers.md#no-such-heading)\n")
    built = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0
    assert "no-such-heading" in built.stderr


def _cli_reference() -> object:
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "scripts" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_the_parsers_help() -> None:
    """docs/reference/cli.md is what scripts/cli_reference.py writes from the parsers."""
    rendered = _cli_reference().render()  # type: ignore[attr-defined]
    assert page("reference/cli.md") == rendered, (
        "docs/reference/cli.md is stale: run .venv/bin/python scripts/cli_reference.py")
    for command in COMMANDS:  # every command has its section, with its own usage line
        assert re.search(rf"^## {re.escape(command)}\n\n```text\nusage: [^\n]* {command}\b",
                         rendered, re.MULTILINE), command
    assert "--workspace DIR" in rendered


def test_readme_is_short_and_links_into_the_docs() -> None:
    assert len(README.splitlines()) < 150
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#([^)]+))?\)", README)
    assert len(links) >= 10
    broken = []
    for target, anchor in links:
        path = ROOT / target
        if not path.exists() or (anchor and anchor not in anchors(path.read_text())):
            broken.append(f"{target}#{anchor}" if anchor else target)
    assert not broken, f"README links to nothing: {broken}"


def test_timing_claims_say_machine_and_load() -> None:
    """Issue 28: a time in the docs without the machine and its load reads as a fault
    when a user's busy machine is slower. Every section of the speed page names the load
    it was measured at, and the getting-started page's demo-suite time does too."""
    speed = (ROOT / "docs" / "speed.md").read_text(encoding="utf-8")
    for section in re.split(r"(?m)^## ", speed):
        assert "load" in section, f"speed.md section {section.splitlines()[0]!r} names no load"
    assert "2 cores" in speed.split("\n\n")[1]
    start = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    suite = next(p for p in start.split("\n\n") if "demo suite" in p.lower() and " s " in p)
    assert "load average" in suite and "2-core" in suite, suite
