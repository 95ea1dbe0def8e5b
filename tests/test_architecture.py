"""The layout is the data flow: target_core's layers import only downward, no module
imports itself back through others, the library never imports streamlit, and the module
map (docs/development.md) names every module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "target_core"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("ground", ("types", "table_view", "errors", "config", "progress")),
    ("registry", ("registry", "pyclass")),
    ("sql", ("sql",)),
    ("data", ("datasets", "serialize", "tokens", "textproc")),
    ("metrics", ("metrics",)),
    ("llm", ("llm",)),
    ("components", ("embeddings", "retrievers", "generators", "vectorstore", "costs")),
    ("engine", ("engine",)),
    ("benchgen", ("benchgen",)),
    ("analysis", ("analysis",)),
    ("views", ("views",)),
    ("api", ("api",)),
    ("cli", ("cli", "__main__")),
]
"""Lowest first. A module may import modules of its own layer or of layers below. sql sits
under data because the Spider and TARGET loaders read gold tables from gold SQL. llm is
the one door to LLM servers, below every component that calls a model."""

LAYER_OF = {top: i for i, (_, tops) in enumerate(LAYERS) for top in tops}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """Every target_core module `path` imports, at any depth of the file (an import inside
    a function is a dependency too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES
                     else node.module for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "target_core")
    return found


GRAPH = {name: {i for i in _imports(path) if i != name} for name, path in MODULES.items()}


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_module_has_a_layer() -> None:
    tops = {_top(m) for m in MODULES} - {""}
    assert tops <= set(LAYER_OF), sorted(tops - set(LAYER_OF))
    assert set(LAYER_OF) <= tops, sorted(set(LAYER_OF) - tops)  # no stale layer entry


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _top(m)))
def test_imports_go_down_the_layers(module: str) -> None:
    here = LAYER_OF[_top(module)]
    upward = sorted(i for i in GRAPH[module]
                    if _top(i) in LAYER_OF and LAYER_OF[_top(i)] > here)
    assert not upward, f"{module} ({LAYERS[here][0]}) imports a higher layer: {upward}"


def test_no_import_cycles() -> None:
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt in GRAPH and nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_library_never_imports_streamlit() -> None:
    offenders = [name for name, path in MODULES.items()
                 if re.search(r"^\s*(import|from)\s+streamlit\b", path.read_text(),
                              re.MULTILINE)]
    assert not offenders


def _third_party_imports(path: Path) -> set[str]:
    """Top-level names of every module `path` imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


SERVER_DOOR = "target_core.llm.client"
"""The one module that sends requests to LLM servers (the openai SDK lives there)."""


def test_only_the_llm_client_talks_to_servers() -> None:
    """Every chat and embeddings request goes through llm.client; pages and the CLI too."""
    sources = {name: path for name, path in MODULES.items()}
    sources |= {str(p.relative_to(ROOT)): p for p in [ROOT / "app.py", *PAGES]}
    offenders = sorted(name for name, path in sources.items()
                       if name != SERVER_DOOR and "openai" in _third_party_imports(path))
    assert not offenders, f"import the openai SDK outside {SERVER_DOOR}: {offenders}"


def test_embeddings_do_not_reach_into_generators() -> None:
    """Embedders and generators both stand on llm/; neither reaches into the other."""
    offenders = sorted(f"{name} -> {i}" for name in MODULES
                       if _top(name) in ("embeddings", "generators")
                       for i in GRAPH[name]
                       if {_top(name), _top(i)} == {"embeddings", "generators"})
    assert not offenders, offenders


def test_no_module_is_too_long() -> None:
    """STYLE.md: split by responsibility before a file passes ~400 lines."""
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > 420}
    assert not long, long


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

PAGES = sorted((ROOT / "pages").rglob("*.py"))


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
