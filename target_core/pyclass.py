"""Loading a user's own class for a `py:` spec, shared by the retriever and generator
registries (retrievers/plugin.py, generators/plugin.py adapt what it builds).

`py:MODULE:CLASS` (a module on the Python path) or `py:PATH.py:CLASS` (a file, relative
to the working directory, else to the project's root where examples/ lives), optionally
followed by constructor arguments in the grammar of every spec's options
(registry.split_options): `py:examples/x.py:Mine:withtitle=false,num_rows=0` builds
Mine(withtitle=False, num_rows=0). Errors name the spec (PluginError).

`pyenv:PYTHON:REF` runs the class REF names (what follows `py:`) in another interpreter,
PYTHON (an executable or a venv folder; retrievers/remote.py): this module parses it and
gives the interpreter's facts for run keys.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from target_core.config import PROJECT_ROOT
from target_core.errors import closest
from target_core.registry import PLUGIN, PluginError, parse_spec, split_options

PLUGIN_ENV = "pyenv"
"""The family of a class run by another interpreter: pyenv:PYTHON:REF."""
REMOTE_RUNNER = Path(__file__).resolve().parent / "retrievers" / "remote_runner.py"
"""The standalone script the other interpreter runs (stdlib only)."""


@dataclass(frozen=True)
class ClassRef:
    """The argument of a py: spec: where the class lives, its name there, and the
    keyword arguments it is built with."""

    target: str
    """A module name (`my_pkg.retrievers`) or a file path (`examples/x.py`), as written."""
    name: str
    """The class (or any factory) in it; dots reach nested attributes."""
    kwargs: tuple[tuple[str, Any], ...] = ()
    """Constructor arguments, in the order written (`...:CLASS:withtitle=false,k=2`)."""

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py") or "/" in self.target or "\\" in self.target

    def __str__(self) -> str:
        return f"{self.target}:{self.name}"


def option_value(text: str) -> Any:
    """A spec option's value: a JSON scalar where it parses as one (true, false, null,
    numbers, "quoted text"), else the text itself ("bm25")."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if value is None or isinstance(value, bool | int | float | str) else text


def parse_class_ref(arg: str, kind: str) -> ClassRef:
    """`MODULE:CLASS` or `PATH.py:CLASS`, optionally followed by constructor arguments
    after one more ':' in the grammar of every spec's options (`NAME=VALUE,...`, see
    split_options; values by option_value): `examples/x.py:Mine:withtitle=false,num_rows=0`
    builds Mine(withtitle=False, num_rows=0). The last ':' before the options splits the
    class from its place, so a Windows drive stays in the path; anything else raises
    PluginError showing the expected form."""
    head, options = split_options(arg)
    target, _, name = head.rpartition(":")
    if not target.strip() or not name.strip():
        raise PluginError(f"{kind} 'py:{arg}': expected py:MODULE:CLASS or py:PATH.py:CLASS "
                          f"(then :NAME=VALUE,... for its constructor), e.g. "
                          f"py:examples/protocol_retriever.py:OverlapRetriever")
    kwargs: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in options.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier() or key in kwargs:
            raise PluginError(f"{kind} 'py:{arg}': constructor argument '{item}': expected "
                              f"NAME=VALUE, each NAME a Python identifier given once")
        kwargs[key] = option_value(value.strip())
    return ClassRef(target.strip(), name.strip(), tuple(kwargs.items()))


def plugin_file(ref: ClassRef, kind: str) -> Path:
    """The file of a file reference: as given when it exists (relative to the working
    directory), else relative to the project's root; missing raises PluginError naming
    both places and any file of a close name."""
    given = Path(ref.target).expanduser()
    candidates = [given] if given.is_absolute() else [given, PROJECT_ROOT / given]
    for path in candidates:
        if path.is_file():
            return path.resolve()
    where = " or ".join(str(p.resolve()) for p in dict.fromkeys(candidates))
    message = f"{kind} 'py:{ref}': no file {where}"
    folder = candidates[-1].parent
    if folder.is_dir():
        near = closest(given.name, [p.name for p in folder.glob("*.py")])
        if near:
            message += f"; did you mean '{given.with_name(near).as_posix()}'?"
    raise PluginError(message)


def code_fingerprint(ref: ClassRef, kind: str = "plugin") -> str | None:
    """sha256 (16 hex chars) of the source the class comes from: the file, or the
    module's file; None when it has no source file (a built-in or namespace module).
    Only that one file counts: edits to modules it imports are not seen."""
    if ref.is_file:
        path: Path | None = plugin_file(ref, kind)
    else:
        try:
            found = importlib.util.find_spec(ref.target)
        except (ImportError, ValueError):
            found = None
        origin = found.origin if found is not None else None
        path = Path(origin) if origin and Path(origin).is_file() else None
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path else None


def spec_fingerprints(specs: Iterable[str]) -> dict[str, str]:
    """{class reference: code fingerprint} of every py: class `specs` use, at their top
    or nested after '@' (summary:EMBEDDER@py:...); empty when they use none. The run
    store puts it in a run's key, so an edited plugin makes a new run instead of
    resuming or reusing one made by the old code."""
    found: dict[str, str] = {}
    for spec in specs:
        for part in spec.split("@"):
            parsed = parse_spec(part)
            if parsed.name not in (PLUGIN, PLUGIN_ENV) or not parsed.arg:
                continue
            try:
                if parsed.name == PLUGIN_ENV:
                    found.update(remote_fingerprints(parsed.arg))
                    continue
                ref = parse_class_ref(parsed.arg, "plugin")
                code = code_fingerprint(ref)
            except PluginError:
                continue  # building the component reports it
            if code:
                found[str(ref)] = code
    return found


def parse_pyenv(arg: str, kind: str) -> tuple[str, ClassRef]:
    """`PYTHON:REF` (what follows "pyenv:") -> (PYTHON as written, REF parsed as py:'s).
    PYTHON ends at its first ':' (after a Windows drive), so the class reference and its
    constructor arguments keep py:'s grammar unchanged."""
    drive = re.match(r"[A-Za-z]:[\\/]", arg)
    start = drive.end() if drive else 0
    python, sep, rest = arg[start:].partition(":")
    python = arg[:start] + python
    if not python.strip() or not sep or not rest.strip():
        raise PluginError(f"{kind} 'pyenv:{arg}': expected pyenv:PYTHON:PATH.py:CLASS or "
                          f"pyenv:PYTHON:MODULE:CLASS (PYTHON an interpreter or a venv "
                          f"folder), e.g. pyenv:.venv-plugin:tests/plugins/numpy1_retriever.py"
                          f":Numpy1Retriever")
    return python.strip(), parse_class_ref(rest.strip(), kind)


def resolve_python(python: str, where: str) -> Path:
    """The interpreter `python` names: an executable, or a venv folder (its bin/python),
    relative to the working directory, else to the project's root, or a command on PATH.
    Symlinks are kept (a venv's python is a link whose target is another environment).
    Missing raises PluginError naming `where` (the spec) and the places looked at."""
    given = Path(python).expanduser()
    candidates = [given] if given.is_absolute() else [given, PROJECT_ROOT / given]
    if os.sep not in python and "/" not in python and (found := shutil.which(python)):
        candidates.append(Path(found))
    for path in candidates:
        for exe in ((path / "bin" / "python", path / "Scripts" / "python.exe")
                    if path.is_dir() else (path,)):
            if exe.is_file() and os.access(exe, os.X_OK):
                return exe.absolute()
    tried = " or ".join(str(p.absolute()) for p in dict.fromkeys(candidates))
    raise PluginError(f"{where}: no Python interpreter at {tried} (give an executable or "
                      f"a venv folder)")


_FACTS: dict[tuple[str, str, float], dict[str, Any]] = {}


def interpreter_facts(python: Path, module: str | None, where: str) -> dict[str, Any]:
    """{"python": sys.version, "executable", "origin": MODULE's file or None} as the
    interpreter itself reports them (the runner's --describe), cached per interpreter
    file and module; an interpreter that cannot run it raises PluginError."""
    key = (str(python), module or "", python.stat().st_mtime)
    if key not in _FACTS:
        try:
            done = subprocess.run([str(python), str(REMOTE_RUNNER), "--describe",
                                   *([module] if module else [])],
                                  capture_output=True, text=True, timeout=60, check=True)
            _FACTS[key] = json.loads(done.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            lines = str(detail).strip().splitlines() or ["no output"]
            raise PluginError(f"{where}: {python} cannot run the plug-in runner "
                              f"(Python >= 3.9 needed): {lines[-1]}") from None
    return _FACTS[key]


def remote_code(python: Path, ref: ClassRef, kind: str, where: str) -> str | None:
    """The code fingerprint of a class run by `python`: its file's, or the file the
    other interpreter imports its module from."""
    if ref.is_file:
        return code_fingerprint(ref, kind)
    origin = interpreter_facts(python, ref.target, where).get("origin")
    path = Path(origin) if origin else None
    return (hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            if path is not None and path.is_file() else None)


def remote_fingerprints(arg: str) -> dict[str, str]:
    """What a pyenv: spec adds to a run's key: the class's code fingerprint and the
    interpreter's version (the interpreter's path is in the spec itself)."""
    python_text, ref = parse_pyenv(arg, "plugin")
    python = resolve_python(python_text, f"plugin 'pyenv:{arg}'")
    where = f"plugin 'pyenv:{arg}'"
    found = {f"python {python}": str(interpreter_facts(python, None, where)["python"])}
    if code := remote_code(python, ref, "plugin", where):
        found[str(ref)] = code
    return found


def _import_file(path: Path, kind: str, ref: ClassRef) -> ModuleType:
    """Import `path` as a module named after its file and content, so an edited file is
    imported again and two files of one name do not collide."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"target_plugin_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{kind} 'py:{ref}': {path} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise PluginError(f"{kind} 'py:{ref}': importing {path} failed: "
                          f"{type(exc).__name__}: {exc}") from exc
    return module


def _import_module(ref: ClassRef, kind: str) -> ModuleType:
    try:
        return importlib.import_module(ref.target)
    except ModuleNotFoundError as exc:
        if exc.name and ref.target.startswith(exc.name):
            raise PluginError(f"{kind} 'py:{ref}': no module '{ref.target}' on the Python "
                              "path (for a file, give its path ending in .py)") from exc
        raise PluginError(f"{kind} 'py:{ref}': importing module '{ref.target}' failed: "
                          f"{exc}") from exc
    except Exception as exc:
        raise PluginError(f"{kind} 'py:{ref}': importing module '{ref.target}' failed: "
                          f"{type(exc).__name__}: {exc}") from exc


def load_class(ref: ClassRef, kind: str) -> Any:
    """The object `ref` names (not called). A missing file, module or attribute raises
    PluginError naming it, with the closest class of the module when one is close."""
    module = (_import_file(plugin_file(ref, kind), kind, ref) if ref.is_file
              else _import_module(ref, kind))
    value: Any = module
    for attr in ref.name.split("."):
        if not hasattr(value, attr):
            classes = [n for n, v in vars(module).items() if isinstance(v, type)
                       and v.__module__ == module.__name__ and not n.startswith("_")]
            message = f"{kind} 'py:{ref}': {ref.target} has no '{ref.name}'"
            if near := closest(ref.name, classes):
                message += f"; did you mean '{near}'?"
            raise PluginError(message + (f" Classes there: {', '.join(sorted(classes))}"
                                         if classes else ""))
        value = getattr(value, attr)
    return value


def instantiate(ref: ClassRef, kind: str) -> Any:
    """An instance of the class `ref` names, built with its keyword arguments (none when
    the spec gives none). An argument its constructor does not take raises PluginError
    naming it and the ones it takes, before the class runs."""
    factory = load_class(ref, kind)
    if not callable(factory):
        raise PluginError(f"{kind} 'py:{ref}': '{ref.name}' is a "
                          f"{type(factory).__name__}, not a class")
    kwargs = dict(ref.kwargs)
    try:
        signature: inspect.Signature | None = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call tell
        signature = None
    if signature is not None:
        try:
            signature.bind(**kwargs)
        except TypeError as exc:
            takes = [n for n, p in signature.parameters.items()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            unknown = [k for k in kwargs if k not in signature.parameters]
            what = (f"has no argument {', '.join(repr(k) for k in unknown)}" if unknown
                    else f"cannot be built with {_call_text(ref)}: {exc}")
            raise PluginError(f"{kind} 'py:{ref}': {ref.name} {what} (it takes "
                              f"{', '.join(takes) or 'no arguments'})") from None
    try:
        return factory(**kwargs)
    except Exception as exc:
        raise PluginError(f"{kind} 'py:{ref}': {_call_text(ref)} failed: "
                          f"{type(exc).__name__}: {exc}") from exc


def _call_text(ref: ClassRef) -> str:
    """How the class is called, e.g. "Mine(withtitle=False)" or "Mine()"."""
    return f"{ref.name}({', '.join(f'{k}={v!r}' for k, v in ref.kwargs)})"
