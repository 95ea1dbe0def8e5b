"""A `py:` class run by another Python interpreter: `pyenv:PYTHON:REF[:NAME=VALUE,...]`.

PYTHON is an interpreter or a venv folder (its bin/python), REF what `py:` takes
(`PATH.py:CLASS` or `MODULE:CLASS`, then constructor arguments). The other interpreter
runs remote_runner.py (standard library only, Python >= 3.9), which imports the class
there and answers JSON lines over pipes (its docstring is the protocol). Here the class
is a proxy object of the same name with the same methods, so the adapters of in-process
plug-ins (plugin.py, target_plugin.py) wrap it unchanged: the same shapes, the same
checks of every result, the same errors. What crosses the pipe is JSON: texts, TARGET's
corpus batches (streamed as the class asks for them; DataFrames rebuilt there), hits,
vectors as lists of floats. The interpreter's path is in the spec and its version in
the run key (pyclass.remote_fingerprints), with the class's code fingerprint.

An exception in the class raises PluginError naming the class, the method and the
remote traceback's last line (the whole traceback goes to the log); the process's
stderr is logged line by line; a process that dies raises PluginError with its exit
code and last stderr line.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import subprocess
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.pyclass import (
    REMOTE_RUNNER,
    ClassRef,
    parse_pyenv,
    plugin_file,
    remote_code,
    resolve_python,
)
from target_core.registry import PluginError
from target_core.retrievers.base import IndexInfo, Retriever

log = logging.getLogger(__name__)

REMOTE_CHUNK = 512
"""Items per message when a long list (the texts to index) is sent to the class."""
STDERR_TAIL = 20
"""Lines of the process's stderr kept for the error message of a process that died."""


def build_remote_retriever(arg: str, settings: Settings) -> Retriever:
    """The `pyenv` registry entry: start PYTHON, build the class there, adapt its proxy
    as an in-process class is adapted."""
    from target_core.retrievers.plugin import adapt_retriever

    spec = f"pyenv:{arg}"
    python_text, ref = parse_pyenv(arg, "retriever")
    where = f"retriever '{spec}'"
    python = resolve_python(python_text, where)
    code = remote_code(python, ref, "retriever", where)
    return adapt_retriever(start_remote(python, ref, kind="retriever", where=where),
                           spec=spec, code=code, settings=settings)


def _encode(value: Any) -> Any:
    """json.dumps's fallback for what adapters hand a class: a DataFrame as columns and
    rows, a dataclass (Table, TableView) as its fields, numpy values as lists and
    numbers."""
    if hasattr(value, "columns") and hasattr(value, "values"):
        return {"__dataframe__": {"columns": [str(c) for c in value.columns],
                                  "data": value.values.tolist()}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__object__": type(value).__name__, "fields": {
            f.name: getattr(value, f.name) for f in dataclasses.fields(value)}}
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} cannot be sent to another interpreter")


class RemoteProcess:
    """One interpreter running remote_runner.py: requests out, replies in, stderr logged."""

    def __init__(self, python: Path, where: str) -> None:
        self.python = python
        self.where = where
        self.tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.lock = threading.Lock()
        self.broken: str | None = None
        try:
            self.proc = subprocess.Popen(
                [str(python), str(REMOTE_RUNNER)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                bufsize=1)
        except OSError as exc:
            raise PluginError(f"{where}: cannot start {python}: {exc}") from exc
        self.stderr_reader = threading.Thread(target=self._log_stderr, daemon=True)
        self.stderr_reader.start()

    def _log_stderr(self) -> None:
        assert self.proc.stderr is not None
        with self.proc.stderr:
            for line in self.proc.stderr:
                self.tail.append(line.rstrip())
                log.info("%s [%s]: %s", self.where, self.python, line.rstrip())

    def _send(self, message: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message, default=_encode)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def died(self, doing: str) -> PluginError:
        """The error of a process that ended while `doing`."""
        try:
            code: int | None = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.stderr_reader.join(timeout=5)
        last = next((line for line in reversed(self.tail) if line.strip()), "")
        self.broken = f"its process ended with exit code {code}"
        return PluginError(f"{self.where}: {doing}: the Python process running it "
                           f"({self.python}) ended with exit code {code}"
                           + (f"; its last stderr line: {last}" if last else ""))

    def request(self, message: dict[str, Any], doing: str, *,
                streams: dict[str, Iterator[Any]] | None = None,
                progress: Callable[..., Any] | None = None) -> Any:
        """Send `message`, answer the runner's requests for stream items and progress,
        and return its reply's value; a reply with an error returns it as {"error"}.
        Anything raised here on our side (a cancelled run) stops the process first."""
        with self.lock:
            if self.broken:
                raise PluginError(f"{self.where}: {doing}: {self.broken}")
            assert self.proc.stdout is not None
            try:
                first = json.dumps(message, default=_encode)
            except (TypeError, ValueError) as exc:
                raise PluginError(f"{self.where}: {doing}: {exc}") from None
            try:
                self._send(first)
                while True:
                    line = self.proc.stdout.readline()
                    if not line:
                        raise self.died(doing)
                    try:
                        reply = json.loads(line)
                    except ValueError:
                        raise PluginError(f"{self.where}: {doing}: its process wrote "
                                          f"{line[:80]!r}, not a protocol message") from None
                    if "next" in reply:
                        item = next((streams or {})[str(reply["next"])], _END)
                        self._send({"op": "end"} if item is _END
                                   else {"op": "item", "value": item})
                    elif "progress" in reply:
                        if progress is not None:
                            progress(*reply["progress"])
                    else:
                        return reply
            except BrokenPipeError:
                raise self.died(doing) from None
            except BaseException:  # mid-conversation: the process cannot go on
                self.broken = self.broken or "its process was stopped"
                self.stop()
                raise

    def stop(self) -> None:
        """Ask the runner to exit; kill it if it does not within a few seconds."""
        if self.proc.poll() is None:
            try:
                self._send({"op": "shutdown"})
                self.proc.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


_END = object()


def _chunks(items: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), REMOTE_CHUNK):
        yield list(items[start:start + REMOTE_CHUNK])


class RemoteObject:
    """The class in the other interpreter, as an object here: one method per method the
    class has among those the adapters call (remote_runner.METHODS), built by
    start_remote under the class's own name."""

    def __init__(self, process: RemoteProcess, facts: dict[str, Any]) -> None:
        self._process = process
        self._facts = facts
        for name, value in facts.get("attributes", {}).items():
            setattr(self, name, value)

    def remote_details(self) -> dict[str, Any]:
        """Recorded with the run: where the class ran."""
        return {"python": self._facts.get("executable") or str(self._process.python),
                "python_version": str(self._facts.get("python", "")).split()[0]}

    def _invoke(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        progress = kwargs.pop("progress", None)
        sent: list[Any] = []
        streams: dict[str, Iterator[Any]] = {}
        kinds: dict[str, str] = {}
        for position, arg in enumerate(args):
            if isinstance(arg, Iterator):
                streams[str(position)], kinds[str(position)] = arg, "lazy"
            elif isinstance(arg, list | tuple) and len(arg) > REMOTE_CHUNK:
                streams[str(position)], kinds[str(position)] = _chunks(arg), "list"
            else:
                sent.append(arg)
                continue
            sent.append(None)
        doing = f"{type(self).__name__}.{method}"
        reply = self._process.request(
            {"op": "call", "method": method, "args": sent, "kwargs": kwargs,
             "streams": kinds, "progress": callable(progress)},
            doing, streams=streams, progress=progress if callable(progress) else None)
        if "error" in reply:
            raise _remote_error(self._process, doing, reply["error"])
        value = reply.get("ok")
        if method == "index" and isinstance(value, dict) and "n_texts" in value:
            return IndexInfo(int(value["n_texts"]), float(value.get("seconds", 0.0)),
                             dict(value.get("details") or {}))
        return value


def _remote_error(process: RemoteProcess, doing: str, error: dict[str, Any]) -> PluginError:
    """PluginError naming `doing` and the traceback's last line; the traceback logged."""
    trace = str(error.get("traceback", ""))
    lines = [line for line in trace.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else f"{error.get('type')}: {error.get('message')}"
    log.warning("%s: %s raised in %s:\n%s", process.where, doing, process.python, trace)
    return PluginError(f"{process.where}: {doing} raised {last} (in {process.python}; the "
                       "traceback is in the log)")


def _method(name: str) -> Callable[..., Any]:
    def call(self: RemoteObject, *args: Any, **kwargs: Any) -> Any:
        return self._invoke(name, args, kwargs)

    call.__name__ = name
    return call


def start_remote(python: Path, ref: ClassRef, *, kind: str, where: str) -> RemoteObject:
    """Start `python`, build the class `ref` names there, and return its proxy; a class
    that cannot be imported or built raises PluginError with the remote error's last
    line, the process stopped. The process stops when the proxy is collected or at exit."""
    process = RemoteProcess(python, where)
    path = str(plugin_file(ref, kind)) if ref.is_file else None
    reply = process.request({"op": "construct", "file": path,
                             "module": None if ref.is_file else ref.target,
                             "name": ref.name, "kwargs": dict(ref.kwargs)},
                            f"building {ref.name}")
    if "error" in reply:
        process.stop()
        raise _remote_error(process, f"building {ref.name}", reply["error"])
    facts = reply["ok"]
    methods = {m: _method(m) for m in facts.get("methods", [])}
    proxy_class = type(str(facts.get("class") or ref.name), (RemoteObject,), methods)
    proxy = proxy_class(process, facts)
    weakref.finalize(proxy, process.stop)
    log.info("%s: %s built in %s (Python %s)", where, ref.name, python,
             str(facts.get("python", "")).split()[0])
    return proxy
