"""Runs a user's retriever class in ANOTHER Python interpreter for a `pyenv:` spec
(retrievers/remote.py starts it as `PYTHON remote_runner.py` and talks to it).

This file is standalone on purpose: it runs under any Python >= 3.9 with only the
standard library and the user's own packages, so it never imports target_core (which
needs numpy 2) nor anything outside the standard library at module level.

The protocol is JSON lines: one object per line on stdin (requests) and on the
original stdout (replies); the class's own prints and logs go to stderr, which our side
passes through to its log.

    -> {"op": "construct", "file": PATH|null, "module": NAME|null, "name": CLASS,
        "kwargs": {...}}
    <- {"ok": {"class", "methods", "attributes", "python", "executable"}}
    -> {"op": "call", "method": M, "args": [...], "kwargs": {...},
        "streams": {"POSITION": "lazy"|"list"}, "progress": bool}
    <- {"next": POSITION}              (while M runs: the next item of a streamed argument)
    -> {"op": "item", "value": V} | {"op": "end"}
    <- {"progress": [done, total, what]}
    <- {"ok": VALUE} | {"error": {"type", "message", "traceback"}}
    -> {"op": "shutdown"}              (or end of input): the runner exits 0

A "lazy" stream is handed to the method as an iterator of the items (TARGET's corpus
batches); a "list" stream's items are chunks joined into one list before the call.
`python remote_runner.py --describe [MODULE]` prints the interpreter's version and the
file MODULE would be imported from, for run keys, and exits.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback
import types
from typing import Any

METHODS = ("index", "search", "score_all", "prepare_texts", "prepare_queries",
           "embed_corpus", "retrieve", "embed_query", "get_expected_corpus_format")
"""The methods a retriever adapter may call; the others are not offered."""
ATTRIBUTES = ("expected_corpus_format",)


def encode(value: Any) -> Any:
    """json.dumps's fallback: numpy arrays and scalars as lists and numbers, sets as
    lists, objects with fields as their dict, anything else as its repr."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)


def decode(obj: dict) -> Any:
    """json.loads's object hook: a table sent as a DataFrame becomes one (pandas), a
    dataclass of ours (Table, TableView) an object with the same fields."""
    if "__dataframe__" in obj:
        import pandas as pd

        frame = obj["__dataframe__"]
        return pd.DataFrame(frame["data"], columns=frame["columns"])
    if "__object__" in obj:
        return types.SimpleNamespace(**obj["fields"])
    return obj


class Channel:
    """The protocol's two ends: requests in, replies out on the original stdout."""

    def __init__(self) -> None:
        self.out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)  # prints, C libraries included, go to stderr from now on
        sys.stdout = sys.stderr
        self.inp = sys.stdin

    def send(self, message: dict) -> None:
        self.out.write(json.dumps(message, default=encode) + "\n")
        self.out.flush()

    def receive(self) -> dict | None:
        line = self.inp.readline()
        if not line:
            return None
        return json.loads(line, object_hook=decode)


class EndOfInput(Exception):
    """Our side closed the pipe: stop at once."""


def import_class(file: str | None, module: str | None, name: str) -> Any:
    if file:
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(file))[0])
        spec = importlib.util.spec_from_file_location(f"target_plugin_{stem}", file)
        if spec is None or spec.loader is None:
            raise ImportError(f"{file} cannot be imported as Python")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded
        spec.loader.exec_module(loaded)
    else:
        loaded = importlib.import_module(module or "")
    value: Any = loaded
    for attr in name.split("."):
        if not hasattr(value, attr):
            classes = sorted(n for n, v in vars(loaded).items()
                             if isinstance(v, type) and not n.startswith("_"))
            raise AttributeError(f"{file or module} has no '{name}'"
                                 + (f"; classes there: {', '.join(classes)}" if classes else ""))
        value = getattr(value, attr)
    return value


def construct(request: dict) -> tuple[Any, dict]:
    factory = import_class(request.get("file"), request.get("module"), request["name"])
    kwargs = request.get("kwargs") or {}
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind(**kwargs)
        except TypeError:
            takes = [n for n, p in signature.parameters.items()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            unknown = [k for k in kwargs if k not in signature.parameters]
            raise TypeError(f"{request['name']} has no argument "
                            f"{', '.join(repr(k) for k in unknown) or 'of these'} (it takes "
                            f"{', '.join(takes) or 'no arguments'})") from None
    obj = factory(**kwargs)
    facts = {"class": type(obj).__name__,
             "methods": [m for m in METHODS if callable(getattr(obj, m, None))],
             "attributes": {a: getattr(obj, a) for a in ATTRIBUTES if hasattr(obj, a)},
             "python": sys.version, "executable": sys.executable}
    return obj, facts


def takes(fn: Any, option: str) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == option or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def stream(channel: Channel, position: str) -> Any:
    """The items of a streamed argument, each asked for when the method wants it."""
    while True:
        channel.send({"next": position})
        reply = channel.receive()
        if reply is None:
            raise EndOfInput()
        if reply.get("op") != "item":
            return
        yield reply["value"]


def call(channel: Channel, obj: Any, request: dict) -> Any:
    fn = getattr(obj, request["method"])
    args = list(request.get("args") or [])
    for position, kind in (request.get("streams") or {}).items():
        items = stream(channel, position)
        args[int(position)] = ([x for chunk in items for x in chunk] if kind == "list"
                               else items)
    kwargs = {k: v for k, v in (request.get("kwargs") or {}).items() if takes(fn, k)}
    if request.get("progress") and takes(fn, "progress"):
        kwargs["progress"] = lambda done, total, what="": channel.send(
            {"progress": [done, total, what]})
    return fn(*args, **kwargs)


def error_reply(exc: BaseException) -> dict:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return {"error": {"type": type(exc).__name__, "message": str(exc),
                      "traceback": "".join(lines)}}


def serve() -> int:
    channel = Channel()
    obj = None
    while True:
        request = channel.receive()
        if request is None or request.get("op") == "shutdown":
            return 0
        try:
            if request.get("op") == "construct":
                obj, facts = construct(request)
                channel.send({"ok": facts})
            elif request.get("op") == "call" and obj is not None:
                channel.send({"ok": call(channel, obj, request)})
            else:
                raise ValueError(f"unexpected request {request.get('op')!r}")
        except EndOfInput:
            return 0
        except Exception as exc:
            channel.send(error_reply(exc))


def describe(module: str | None) -> int:
    origin = None
    if module:
        try:
            found = importlib.util.find_spec(module)
            origin = found.origin if found is not None else None
        except (ImportError, ValueError):
            origin = None
    print(json.dumps({"python": sys.version, "executable": sys.executable,
                      "origin": origin}))
    return 0


if __name__ == "__main__":
    # Run by path, this folder would be first on sys.path: our modules must not shadow
    # the user's (a 'base' or 'plugin' module of theirs).
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if len(sys.argv) > 1 and sys.argv[1] == "--describe":
        sys.exit(describe(sys.argv[2] if len(sys.argv) > 2 else None))
    sys.exit(serve())
