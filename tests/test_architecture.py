"""The layout is the data flow, checked at the grain it is drawn: every top-level module
and package of target_core has its own floor and imports only floors below it (relative
and dynamic imports included), no module imports itself back through others, the library
never imports streamlit or the pages, pages import only read models, types, errors and
their own UI glue, read models launch and run nothing, no file is too long, and the module
map (docs/development.md) names every module.

Each rule is a function from sources to offences; the tests at the end plant a violation
of each one and check it is caught, so a rule that stopped checking fails too. Where the
code does not follow a rule yet, the offences are listed (TODO_...) and may only shrink:
a new offence fails, and so does a listed one that is gone (take it off the list)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "target_core"

FLOORS: tuple[str, ...] = (
    "errors", "wording", "table_view", "types", "tasks", "run_config", "config", "progress",
    "registry", "pyclass", "tokens", "textproc", "sql", "datasets", "serialize", "metrics", "llm",
    "vectorstore", "embeddings", "generators", "pricing", "retrievers", "costs", "engine",
    "plans", "experiments", "benchgen", "analysis", "figures", "read_models", "actions", "api",
    "cli", "__main__")
"""Every top-level module and package of target_core, lowest first: each imports only
names before it (and itself). sql sits under datasets because the Spider and TARGET
loaders read gold tables from gold SQL; llm is the one door to LLM servers, below every
component that calls a model; embeddings and generators never reach into each other;
experiments (sets of runs: ablations, haystack, reproduction, suite, judge) stand on the
engine's run mechanics, which never import them (a job kind names its task by string);
plans (which runs make an experiment, and which of them are stored) sit under them, so
the read models read an experiment without importing what runs it; actions (what a
page's button launches) stand on everything they launch and on the read models."""

FLOOR_OF = {top: i for i, top in enumerate(FLOORS)}
MAX_LINES = 400
"""STYLE.md: split by responsibility before a file passes ~400 lines."""
TODO_LONG: dict[str, int] = {}
"""Files over MAX_LINES still to be split by concern (issue 30), at their size today."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
PAGES = sorted((ROOT / "pages").rglob("*.py"))
APP_FILES = {str(p.relative_to(ROOT)): p for p in [ROOT / "app.py", *PAGES]}


def imports_of(name: str, source: str, modules: Iterable[str] = MODULES) -> set[str]:
    """Every module the module `name` imports, at any depth of the file (an import inside
    a function is a dependency too): absolute and relative imports, a name imported from
    a package when it is a module, and importlib.import_module / __import__ of a string
    (an f-string counts by its constant head, e.g. "target_core.analysis.")."""
    known = set(modules)
    package = name if _is_package(name, known) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[:len(parent) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                         for a in node.names)
        elif (isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args
              and (target := _constant_head(node.args[0])) is not None):
            found.add(target.rstrip("."))
    return {f for f in found if f and f != name}


def _is_package(name: str, known: set[str]) -> bool:
    return any(m.startswith(name + ".") for m in known)


def _is_dynamic_import(func: ast.expr) -> bool:
    return ((isinstance(func, ast.Attribute) and func.attr == "import_module")
            or (isinstance(func, ast.Name) and func.id in ("import_module", "__import__")))


def _constant_head(arg: ast.expr) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value)
    return None


def _top(module: str) -> str:
    """The top-level name under target_core ("" for target_core itself or outside it)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "target_core" and len(parts) > 1 else ""


def _read(paths: Mapping[str, Path]) -> dict[str, str]:
    return {name: path.read_text(encoding="utf-8") for name, path in paths.items()}


SOURCES = _read(MODULES)
APP_SOURCES = _read(APP_FILES)
GRAPH = {name: {i for i in imports_of(name, src) if i.split(".")[0] == "target_core"}
         for name, src in SOURCES.items()}


# --- the rules: sources in, offences out ---------------------------------------------------

def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports of a higher floor (or of a top-level name with no floor)."""
    out = []
    for module, targets in graph.items():
        here = _top(module)
        for target in sorted(targets):
            there = _top(target)
            if not here or not there or there == here:
                continue
            if there not in FLOOR_OF or here not in FLOOR_OF or FLOOR_OF[there] > FLOOR_OF[here]:
                out.append(f"{module} -> {target}")
    return out


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt in graph and nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


def library_imports_of_the_app(sources: Mapping[str, str]) -> list[str]:
    """Library modules importing streamlit or the dashboard's pages."""
    return sorted(f"{name} -> {target}" for name, src in sources.items()
                  for target in imports_of(name, src)
                  if target.split(".")[0] in ("streamlit", "pages", "app"))


PAGE_MAY_IMPORT = ("target_core.read_models", "target_core.actions", "target_core.types",
                   "target_core.table_view", "target_core.wording",
                   "target_core.run_config", "target_core.tasks", "target_core.errors",
                   "target_core.figures", "pages._ui")
"""What a page (and its UI glue) may import of this project: read models, the types they
hand over, the task registry (data: what a task replies, the failure rule in words),
errors, how counts are written (wording), the figures (to hand to st.plotly_chart), and
the glue itself; and the command side, actions/: pages launch work (runs, jobs,
experiments, drafts, datasets) through it, never straight into engine/, experiments/,
analysis/ or benchgen/."""

TODO_PAGE_IMPORTS: dict[str, set[str]] = {}
"""Pages reaching past the read models today (issue 30): the list may only shrink."""


def page_imports(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """Per page file, the project modules it imports beyond PAGE_MAY_IMPORT."""
    out: dict[str, set[str]] = {}
    for name, src in sources.items():
        module = name.removesuffix(".py").replace("/", ".")
        bad = {t for t in imports_of(module, src, MODULES)
               if t.split(".")[0] == "target_core"
               and not any(t == a or t.startswith(a + ".") for a in PAGE_MAY_IMPORT)}
        if bad:
            out[name] = bad
    return out


RUNS_WORK = ("target_core.engine.runner", "target_core.engine.workers",
             "target_core.engine.reopen", "target_core.experiments", "target_core.retrievers.",
             "target_core.actions")
"""Modules whose import means launching or running work (runs, jobs, retrievers, every
experiment, the pages' command side). engine.haystack is not one: it parses a haystack
spec and draws its distractor tables; the sweep that runs its points is
experiments.haystack. Nor is the retrievers package itself (hence the trailing dot): it
is the registry, read to list and describe the families (a picker's specs, whether a
family scores rows); its modules are the retrievers."""

TODO_VIEWS_RUNNING: dict[str, set[str]] = {}
"""Read models that still launch or run work (issue 30): the list may only shrink."""


def _runs_work(module: str) -> bool:
    return any(module.startswith(r) if r.endswith(".") else
               (module == r or module.startswith(r + ".")) for r in RUNS_WORK)


def running_read_models(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    return {m: bad for m, targets in graph.items() if _top(m) == "read_models"
            if (bad := {t for t in targets if _runs_work(t)})}


def long_files(sources: Mapping[str, str]) -> dict[str, int]:
    return {name: n for name, src in sources.items()
            if (n := len(src.splitlines())) > MAX_LINES}


# --- the rules applied to the code ---------------------------------------------------------

def test_every_top_level_name_has_a_floor() -> None:
    tops = {_top(m) for m in MODULES} - {""}
    assert tops <= set(FLOOR_OF), sorted(tops - set(FLOOR_OF))
    assert set(FLOOR_OF) <= tops, sorted(set(FLOOR_OF) - tops)  # no stale floor


def test_imports_go_down_the_floors() -> None:
    assert not upward_imports(GRAPH)


def test_no_import_cycles() -> None:
    assert not cycles(GRAPH), "\n".join(" -> ".join(c) for c in cycles(GRAPH))


def test_the_library_never_imports_streamlit_or_the_pages() -> None:
    assert not library_imports_of_the_app(SOURCES)


def _ratchet(found: Mapping[str, set[str]], todo: Mapping[str, set[str]]) -> None:
    new = {k: sorted(v - todo.get(k, set())) for k, v in found.items() if v - todo.get(k, set())}
    gone = {k: sorted(v - found.get(k, set())) for k, v in todo.items() if v - found.get(k, set())}
    assert not new, f"new offences: {new}"
    assert not gone, f"fixed, so take them off the list: {gone}"


LAUNCHER = "pages/_ui/launch.py"
"""The server's entry point, not a page: it starts Streamlit and warms the library's
modules the pages import (and the token counter) before any session."""


def test_pages_import_only_read_models_types_errors_and_their_glue() -> None:
    _ratchet(page_imports({n: s for n, s in APP_SOURCES.items() if n != LAUNCHER}),
             TODO_PAGE_IMPORTS)


def test_read_models_launch_and_run_nothing() -> None:
    _ratchet(running_read_models(GRAPH), TODO_VIEWS_RUNNING)


def test_no_file_is_too_long() -> None:
    sizes = long_files({str(p.relative_to(ROOT)): s for p, s in
                        [*((MODULES[n], s) for n, s in SOURCES.items()),
                         *((APP_FILES[n], s) for n, s in APP_SOURCES.items())]})
    over = {name: n for name, n in sizes.items() if n > TODO_LONG.get(name, MAX_LINES)}
    assert not over, f"over {MAX_LINES} lines (split by concern): {over}"
    assert set(TODO_LONG) <= set(sizes), f"split: take off TODO_LONG {set(TODO_LONG) - set(sizes)}"


# --- each rule catches a planted violation ------------------------------------------------

def test_probe_upward_relative_import() -> None:
    graph = {"target_core.sql.gold": imports_of("target_core.sql.gold",
                                                "from ..engine import runner\n",
                                                [*MODULES])}
    assert upward_imports(graph) == ["target_core.sql.gold -> target_core.engine.runner"]


def test_probe_dynamic_imports() -> None:
    source = ("import importlib\n"
              "def f():\n"
              "    importlib.import_module('target_core.read_models.home')\n"
              "    return importlib.import_module(f'target_core.analysis.{x}')\n")
    found = imports_of("target_core.sql.gold", source)
    assert {"target_core.read_models.home", "target_core.analysis"} <= found
    assert len(upward_imports({"target_core.sql.gold": found})) == 2


def test_probe_library_importing_the_pages_or_streamlit() -> None:
    assert library_imports_of_the_app({"target_core.types": "from pages._ui import url\n"})
    assert library_imports_of_the_app({"target_core.types": "def f():\n import streamlit\n"})


def test_probe_page_importing_the_engine() -> None:
    found = page_imports({"pages/x.py": "from target_core.engine.runner import run_retrieval\n"
                                        "from target_core.read_models.query import x\n"
                                        "from pages._ui import url\n"})
    assert found == {"pages/x.py": {"target_core.engine.runner"}}


def test_probe_read_model_running_work() -> None:
    graph = {"target_core.read_models.x": {"target_core.engine.runner",
                                           "target_core.engine.store"}}
    assert running_read_models(graph) == {"target_core.read_models.x":
                                          {"target_core.engine.runner"}}


def test_probe_read_model_launching_through_actions_or_an_experiment() -> None:
    source = ("from target_core.actions.runs import launch_notes\n"
              "from ..experiments import ablation\n"
              "from target_core.retrievers.rows import row_texts\n"
              "from target_core.retrievers import split_spec\n"
              "from target_core.plans.ablation import ablation_variants\n")
    graph = {"target_core.read_models.x": imports_of("target_core.read_models.x", source)}
    assert running_read_models(graph) == {"target_core.read_models.x": {
        "target_core.actions.runs", "target_core.experiments.ablation",
        "target_core.retrievers.rows"}}


def test_probe_long_page_and_cycle() -> None:
    assert long_files({"pages/x.py": "x = 1\n" * 600}) == {"pages/x.py": 600}
    assert cycles({"a": {"b"}, "b": {"a"}})


def test_probe_unknown_top_level_name() -> None:
    assert upward_imports({"target_core.newthing.x": {"target_core.types"}})


# --- other boundaries ------------------------------------------------------------------------

def _third_party_imports(source: str) -> set[str]:
    """Top-level names of every module `source` imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


FIGURES = "target_core.figures"
"""The one package that imports plotly: read models name its Figure type, pages only
hand what it returns to st.plotly_chart."""


def plotly_outside_figures(sources: Mapping[str, str]) -> list[str]:
    """Modules (or page files) outside FIGURES that import plotly."""
    return sorted(name for name, src in sources.items()
                  if name != FIGURES and not name.startswith(FIGURES + ".")
                  and "plotly" in _third_party_imports(src))


def test_only_the_figures_import_plotly() -> None:
    assert not plotly_outside_figures({**SOURCES, **APP_SOURCES})


def test_probe_plotly_outside_the_figures() -> None:
    planted = {"target_core.read_models.x": "def f():\n    from plotly import graph_objects\n",
               "pages/x.py": "import plotly.express as px\n",
               "target_core.figures.x": "import plotly.graph_objects as go\n"}
    assert plotly_outside_figures(planted) == ["pages/x.py", "target_core.read_models.x"]


SERVER_DOOR = "target_core.llm.client"
"""The one module that sends requests to LLM servers (the openai SDK lives there)."""


def test_only_the_llm_client_talks_to_servers() -> None:
    """Every chat and embeddings request goes through llm.client; pages and the CLI too."""
    offenders = sorted(name for name, src in {**SOURCES, **APP_SOURCES}.items()
                       if name != SERVER_DOOR and "openai" in _third_party_imports(src))
    assert not offenders, f"import the openai SDK outside {SERVER_DOOR}: {offenders}"


def test_embeddings_do_not_reach_into_generators() -> None:
    """Embedders and generators both stand on llm/; neither reaches into the other."""
    offenders = sorted(f"{name} -> {i}" for name in MODULES
                       if _top(name) in ("embeddings", "generators")
                       for i in GRAPH[name]
                       if {_top(name), _top(i)} == {"embeddings", "generators"})
    assert not offenders, offenders


# --- the module map (docs/development.md) ----------------------------------------------------

def _module_map() -> dict[str, str]:
    """The module map in docs/development.md: entry ('types.py', 'sql/') -> its text
    (continuation lines included)."""
    page = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    block = re.search(r"^## Module map\n.*?```\n(.*?)```", page, re.DOTALL | re.MULTILINE)
    assert block, "docs/development.md has no '## Module map' section with a code block"
    entries: dict[str, str] = {}
    current = None
    for line in block.group(1).splitlines():
        if match := re.match(r"^  (\S+)\s{2,}(.*)$", line):
            current = match.group(1)
            entries[current] = match.group(2)
        elif current and line.startswith(" " * 10) and line.strip():
            entries[current] += " " + line.strip()
    return entries


def test_module_map_names_every_module() -> None:
    entries = _module_map()
    missing = []
    for name in MODULES:
        parts = name.split(".")[1:]
        if not parts or parts == ["__main__"]:
            continue
        if len(parts) == 1:
            key = f"{parts[0]}/" if (PACKAGE / parts[0]).is_dir() else f"{parts[0]}.py"
            if key not in entries:
                missing.append(key)
            continue
        text = entries.get(f"{parts[0]}/", "")
        if not re.search(rf"(?<![\w.]){re.escape('.'.join(parts[1:]))}(?![\w])", text):
            missing.append("/".join(parts) + ".py")
    assert not missing, f"not in docs/development.md's module map: {missing}"


def test_module_map_names_no_missing_module() -> None:
    for entry in _module_map():
        assert (PACKAGE / entry).exists(), f"the module map names {entry}, not found"


# --- the pages ------------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_hold_no_data_logic(page: Path) -> None:
    """Pages read widgets, call target_core and render: no pandas, no SQL, no database
    connections, and the URL only through pages/_ui/url.py."""
    source = page.read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"pandas", "sqlite3", "sqlite_utils", "numpy"}, imported
    assert not re.search(r"\b(SELECT|INSERT|UPDATE|DELETE)\s", source)
    for call in (".groupby(", ".merge(", ".pivot", "DataFrame("):
        assert call not in source, call
    if page.name != "url.py":
        assert "st.query_params" not in source
