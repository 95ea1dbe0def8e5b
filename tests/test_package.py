"""The package: pyproject.toml's dependencies agree with the pins, and a wheel built from
the repository, installed in a fresh venv, runs `target-explorer` from any directory:
`run` on the bundled demo data and `serve` (the dashboard it carries).

The fresh venv gets nothing from the network: it is made --without-pip, and a .pth file
puts the project venv's site-packages after its own (venv --system-site-packages would
reach the base interpreter's, not the project venv's), so the installed target_core is
the one imported, with its dependencies from the project venv; pip installs with
--no-deps --no-build-isolation --no-index (setuptools from requirements-test.txt).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "app.py", ".streamlit/config.toml",
           "pages", "target_core", "data/demo", "data/benchgen")
"""What a build reads (the sdist's content, MANIFEST.in): the rest stays behind."""


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        if (line := line.split("#")[0].strip()) and not line.startswith("-"):
            package, version = line.split("==")
            pins[canonicalize_name(package)] = version
    return pins


def test_dependencies_are_the_pinned_requirements() -> None:
    """pyproject.toml names exactly requirements.txt's packages, each range holding its
    pin (the version tested), so `pip install .` and `make run` agree."""
    declared = [Requirement(d) for d in
                tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    ranges = {canonicalize_name(r.name): r.specifier for r in declared}
    pins = _pins("requirements.txt")
    assert set(ranges) == set(pins)
    outside = {name: (pins[name], str(ranges[name])) for name in pins
               if not ranges[name].contains(pins[name])}
    assert not outside, outside
    assert all(r.specifier for r in declared), "every dependency has a lower bound"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """A fresh venv with the package installed from a copy of the repository."""
    tmp = tmp_path_factory.mktemp("package")
    source = tmp / "source"
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_app"))
        else:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                          "['purelib'])"], check=True, capture_output=True, text=True)
    Path(own.stdout.strip(), "project-venv.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--no-build-isolation", "--no-index", str(source)],
                   check=True, cwd=tmp)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return {"venv": venv, "home": tmp / "home", "cwd": elsewhere}


def _env(installed: dict[str, Path]) -> dict[str, str]:
    """No TARGET_WORKSPACE and a fresh HOME: the installed default workspace is used."""
    env = {k: v for k, v in os.environ.items() if k not in ("TARGET_WORKSPACE", "PYTHONPATH")}
    return env | {"HOME": str(installed["home"])}


def _target(installed: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([installed["venv"] / "bin" / "target-explorer", *args],
                          cwd=installed["cwd"], env=_env(installed), capture_output=True,
                          text=True, timeout=300)


def test_installed_package_is_used_with_its_app_and_data(installed) -> None:
    python = installed["venv"] / "bin" / "python"
    probe = subprocess.run(
        [python, "-c", "import json, target_core.config as c; print(json.dumps("
                       "[c.INSTALLED, str(c.APP_DIR), str(c.DEMO_DIR), "
                       "str(c.DEFAULT_WORKSPACE)]))"],
        cwd=installed["cwd"], env=_env(installed), capture_output=True, text=True, check=True)
    flag, app_dir, demo_dir, workspace = json.loads(probe.stdout)
    assert flag and Path(app_dir).is_relative_to(installed["venv"])
    assert (Path(app_dir) / "app.py").is_file() and (Path(app_dir) / "pages" / "_ui").is_dir()
    assert (Path(demo_dir) / "demo-qa" / "corpus.jsonl").is_file()
    assert Path(workspace).is_relative_to(installed["home"])
    # the dashboard's Streamlit settings travel with it, where Streamlit looks beside the
    # app it runs (the installed `serve` runs from any directory, not the checkout)
    config = Path(app_dir) / ".streamlit" / "config.toml"
    assert config.read_text() == (ROOT / ".streamlit" / "config.toml").read_text()
    from streamlit import config as streamlit_config

    saved = streamlit_config._main_script_path
    try:
        streamlit_config._main_script_path = str(Path(app_dir) / "app.py")
        assert str(config) in streamlit_config.get_config_files("config.toml")
    finally:
        streamlit_config._main_script_path = saved


def test_target_explorer_runs_from_any_directory(installed) -> None:
    done = _target(installed, "run", "--dataset", "demo-qa", "--retriever", "bm25",
                   "--limit", "5", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["n_queries"] == 5 and summary["metrics"]["recall@10"] > 0
    workspace = installed["home"] / ".local" / "share" / "target-explorer"
    assert (workspace / "runs.sqlite").is_file()
    listed = _target(installed, "runs", "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [summary["run_id"]]
    assert _target(installed, "--help").stdout.startswith("usage: target-explorer ")
    module = subprocess.run([installed["venv"] / "bin" / "python", "-m", "target_core",
                             "datasets", "--json"], cwd=installed["cwd"], env=_env(installed),
                            capture_output=True, text=True, timeout=300)
    assert module.returncode == 0, module.stderr
    assert "demo-qa" in {d["name"] for d in json.loads(module.stdout)}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode("utf-8", "replace")


def test_target_explorer_serves_the_dashboard(installed, tmp_path) -> None:
    port = _free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [installed["venv"] / "bin" / "target-explorer", "serve", "--port", str(port),
         "--headless"], cwd=installed["cwd"], env=_env(installed), stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True)
    try:
        health = None
        for _ in range(240):  # Streamlit starts in a few seconds; a loaded machine: more
            if server.poll() is not None:
                break
            try:
                health = _get(f"http://127.0.0.1:{port}/_stcore/health")
                break
            except OSError:
                time.sleep(0.5)
        assert health == (200, "ok"), (tmp_path / "serve.log").read_text()
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and re.search(r"<title>", page)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def test_installed_app_renders_its_pages(installed) -> None:
    """The installed app.py runs (AppTest): pages/ and the demo data are found beside it."""
    script = ("import target_core.config as c\n"
              "from streamlit.testing.v1 import AppTest\n"
              "at = AppTest.from_file(str(c.APP_DIR / 'app.py'), default_timeout=120).run()\n"
              "assert not at.exception, [e.value for e in at.exception]\n"
              "print(at.dataframe[0].value.to_csv())\n")  # Home: the datasets table
    done = subprocess.run([installed["venv"] / "bin" / "python", "-c", script],
                          cwd=installed["cwd"], env=_env(installed), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "demo-qa" in done.stdout
