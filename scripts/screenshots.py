"""Serve the dashboard and screenshot pages in Debian's chromium (headless), to look at them.

    .venv/bin/python scripts/screenshots.py OUT_DIR "datasets?dataset=demo-qa" ...

Each argument is a path+query under the app; one PNG per argument lands in OUT_DIR.
Needs `apt-get install chromium`: Playwright drives the system browser and never
downloads one. tests/test_browser.py uses the same helpers.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve_app(env: dict[str, str] | None = None, timeout: float = 90,
              root: Path = ROOT, plain: bool = False) -> Iterator[str]:
    """Start the dashboard as `make run` does (pages/_ui/launch.py), or plain `streamlit
    run app.py` in another `root`, on a free loopback port; yield its base URL."""
    port = free_port()
    start = (["pages/_ui/launch.py"] if root == ROOT and not plain
             else ["-m", "streamlit", "run", "app.py"])
    process = subprocess.Popen(
        [sys.executable, *start, "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("streamlit did not start") from None
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def browser_page(width: int = 1440, height: int = 2400) -> Iterator[Any]:
    """A Playwright page in headless Debian chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


_SETTLED = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  return app && app.getAttribute("data-test-script-state") === "notRunning"
    && !document.querySelector("[data-testid='stSkeleton']")
    && !document.querySelector("[data-stale='true']");
}"""


def visit(page: Any, url: str, settle_ms: int = 800) -> None:
    """Open `url` and wait until Streamlit has run the script and drawn everything.

    "Settled" must hold twice, `settle_ms` apart, because a page may rerun itself
    (see pages/_ui/shell.py, frame()) right after its first run finishes.
    """
    page.goto(url)
    settle(page, settle_ms)


def settle(page: Any, settle_ms: int = 800) -> None:
    """Wait until the script run triggered by the last action has finished drawing."""
    for _ in range(2):
        page.wait_for_timeout(settle_ms)
        page.wait_for_function(_SETTLED, timeout=120_000)


def file_name(target: str) -> str:
    return (re.sub(r"[^A-Za-z0-9_.-]+", "_", target).strip("_") or "home") + ".png"


def shoot(out_dir: Path, targets: list[str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with serve_app() as base, browser_page(1500, 1100) as page:  # the size pages are judged at
        for target in targets:
            visit(page, f"{base}/{target}")
            page.screenshot(path=str(out_dir / file_name(target)), full_page=True)
            shown = page.locator("[data-testid='stException']").count()
            print(file_name(target) + ("  EXCEPTION SHOWN" if shown else ""))


if __name__ == "__main__":
    shoot(Path(sys.argv[1]), sys.argv[2:] or ["datasets"])
