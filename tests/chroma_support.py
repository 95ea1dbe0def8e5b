"""A real `chroma run` server for tests, and a gating proxy in front of it.

`start_chroma` runs the chroma CLI that ships with chromadb (a pinned dependency, so a
missing binary fails the test rather than skipping it) on 127.0.0.1 and waits until it
answers its heartbeat. `GatedProxy` forwards HTTP to that server unchanged, except that it
can hold the first N requests of a kind (say, "add to a collection") until all N have
arrived and then let them through together: two client processes are then known to race
on the server, instead of racing only when the timing happens to work out.
"""

from __future__ import annotations

import http.client
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"
STARTUP_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def chroma_cli() -> str:
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    assert chroma, "the chroma CLI ships with chromadb (pinned): reinstall the .venv"
    return chroma


def _heartbeat(port: int) -> bool:
    connection = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        connection.request("GET", "/api/v2/heartbeat")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


@dataclass
class ChromaServer:
    process: subprocess.Popen[bytes]
    port: int
    path: Path
    """The server's --path: where it persists collections."""
    log: Path

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@contextmanager
def start_chroma(path: Path, log: Path | None = None) -> Iterator[ChromaServer]:
    """`chroma run --path PATH` on a free loopback port, answering once yielded; stopped
    (SIGTERM, then SIGKILL) on exit. Its output goes to `log` for failure messages."""
    port = free_port()
    log = log or path.with_name(path.name + ".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        process = subprocess.Popen([chroma_cli(), "run", "--path", str(path), "--host", HOST,
                                    "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    server = ChromaServer(process, port, path, log)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _heartbeat(port):
            assert process.poll() is None, f"chroma run exited:\n{server.log_tail()}"
            assert time.monotonic() < deadline, (f"chroma run: no heartbeat within "
                                                 f"{STARTUP_TIMEOUT:g} s\n{server.log_tail()}")
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# --- a proxy that makes requests meet -------------------------------------------------------

@dataclass
class Gate:
    """Holds the first `parties` requests that `matches` until all have arrived (at most
    `timeout` seconds; then they go on and `met` stays False)."""

    name: str
    matches: Callable[[str, str], bool]
    """(method, path) -> whether this gate holds the request."""
    parties: int = 2
    timeout: float = 60.0
    arrived: int = 0
    met: bool = False
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def pass_through(self, method: str, path: str) -> None:
        if not self.matches(method, path):
            return
        with self._cond:
            if self.arrived >= self.parties:  # the gate is spent: later requests pass
                return
            self.arrived += 1
            if self.arrived == self.parties:
                self.met = True
                self._cond.notify_all()
                return
            self._cond.wait_for(lambda: self.met, self.timeout)


_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
               "proxy-authorization", "proxy-authenticate", "content-length", "host",
               "date", "server"}


class GatedProxy:
    """An HTTP/1.1 reverse proxy on a free loopback port to 127.0.0.1:`upstream`.
    Every request is forwarded as it is; requests matched by a gate wait there first.
    `requests` lists (method, path) of everything forwarded, in arrival order."""

    def __init__(self, upstream: int, gates: list[Gate]) -> None:
        self.upstream = upstream
        self.gates = gates
        self.requests: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as httpx expects

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.requests.append((self.command, self.path))
                for gate in proxy.gates:
                    gate.pass_through(self.command, self.path)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in _HOP_BY_HOP}
                connection = http.client.HTTPConnection(HOST, proxy.upstream, timeout=120)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    payload = response.read()
                    self.send_response(response.status, response.reason)
                    for key, value in response.getheaders():
                        if key.lower() not in _HOP_BY_HOP:
                            self.send_header(key, value)
                finally:
                    connection.close()
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, name="gated-proxy",
                                        daemon=True)

    def __enter__(self) -> GatedProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(10)
