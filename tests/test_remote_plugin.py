"""A retriever class run by another Python interpreter (`pyenv:PYTHON:PATH.py:CLASS`,
retrievers/remote.py): classes that need numpy 1 (tests/plugins/numpy1_retriever.py)
run from a second venv (.venv-plugin, `make plugin-venv`) beside our numpy 2, through
the CLI and the engine, with the adapters' checks, resume, reuse and clear errors."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from target_core.cli.main import main
from target_core.config import Settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import Cancelled
from target_core.pyclass import parse_pyenv, spec_fingerprints
from target_core.registry import PluginError
from target_core.retrievers import build_retriever, remote
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Table

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_VENV = ROOT / ".venv-plugin"
CLASSES = Path(__file__).parent / "plugins" / "numpy1_retriever.py"


@pytest.fixture(scope="session")
def venv() -> Path:
    """The second venv (numpy 1.26.4), made by `make plugin-venv` when missing, under a
    lock (two test workers may ask at once). Without it: skipped, or failed under CI."""
    stamp = PLUGIN_VENV / ".installed"
    if not stamp.exists():
        lock = Path(tempfile.gettempdir()) / "target-explorer-plugin-venv.lock"
        with lock.open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            if not stamp.exists():
                made = subprocess.run(["make", "-s", "plugin-venv"], cwd=ROOT,
                                      capture_output=True, text=True, check=False)
                if made.returncode != 0:
                    reason = f"make plugin-venv failed: {made.stderr.strip()[-300:]}"
                    if os.environ.get("CI"):
                        pytest.fail(reason, pytrace=False)
                    pytest.skip(reason)
    return PLUGIN_VENV


def _spec(venv: Path, cls: str = "Numpy1Retriever", path: Path = CLASSES,
          args: str = "") -> str:
    return f"pyenv:{venv}:{path}:{cls}" + (f":{args}" if args else "")


def test_a_numpy1_class_runs_from_its_venv_through_the_cli(
        venv: Path, settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(venv)
    with pytest.raises(PluginError, match=r"Numpy1Retriever\(\) failed: AssertionError: "
                                          r"numpy 2\."):
        build_retriever(f"py:{CLASSES}:Numpy1Retriever", settings)  # not in our numpy 2
    argv = ["run", "--dataset", "demo-qa", "--retriever", spec, "--limit", "30",
            "--workspace", str(settings.workspace), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["retriever"] == spec and out["n_queries"] == 30
    assert out["metrics"]["recall@10"] > 0.5
    run = RunStore.in_workspace(settings.workspace).get_run(out["run_id"])
    info = run.index_info
    assert info["numpy"] == "1.26.4"  # the class's own IndexInfo details, from the venv
    assert info["python"].startswith(str(venv)) and info["shape"] == "protocol"
    assert info["ranks_beyond_k"] is True and info["code"]
    assert run.config.label == "pyenv:.venv-plugin:numpy1_retriever.py:Numpy1Retriever"
    assert main(argv) == 0  # the same run again: reused, not run twice
    assert json.loads(capsys.readouterr().out)["run_id"] == out["run_id"]


def test_the_interpreter_and_the_code_are_in_the_run_key(
        venv: Path, tmp_path: Path, handmade_dir: Path, settings: Settings) -> None:
    path = tmp_path / "mine.py"
    shutil.copy(CLASSES, path)
    spec = _spec(venv, path=path)
    keys = spec_fingerprints([spec])
    assert keys[f"python {venv / 'bin' / 'python'}"].startswith("3.")
    assert keys[f"{path}:Numpy1Retriever"]
    config = RunConfig(dataset=str(handmade_dir), retriever=spec, top_k=2)
    first = run_retrieval(config, settings=settings)
    assert first.run.status == "complete" and first.run.index_info["numpy"] == "1.26.4"
    assert run_retrieval(config, settings=settings).reused
    path.write_text(CLASSES.read_text() + "\n# tuned\n", encoding="utf-8")
    assert spec_fingerprints([spec]) != keys
    second = run_retrieval(config, settings=settings)
    assert not second.reused and second.run.run_id != first.run.run_id


def test_targets_two_shapes_run_remotely(venv: Path, settings: Settings) -> None:
    standard = run_retrieval(RunConfig(dataset="demo-qa", retriever=_spec(
        venv, "Numpy1Embedder", args="dimension=128"), limit=20), settings=settings).run
    assert standard.status == "complete", standard.error
    assert standard.index_info["shape"] == "standard"
    assert standard.index_info["embedded"] == 440  # one vector per table, lists of floats
    assert standard.metrics["recall@10"] > 0.1
    custom = run_retrieval(RunConfig(dataset="demo-qa", retriever=_spec(venv, "Numpy1Target"),
                                     limit=20), settings=settings).run
    assert custom.status == "complete", custom.error
    assert custom.index_info["shape"] == "target" and custom.metrics["recall@10"] > 0.25


def test_long_lists_are_streamed_in_chunks_and_progress_comes_back(
        venv: Path, monkeypatch: pytest.MonkeyPatch, settings: Settings,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(remote, "REMOTE_CHUNK", 7)
    retriever = build_retriever(_spec(venv), settings)
    texts = [f"table {i} about topic{i % 5}" for i in range(50)]
    seen: list[tuple[int, int, str]] = []
    with caplog.at_level(logging.INFO, logger="target_core.retrievers.remote"):
        info = retriever.index(texts, corpus_key="k",
                               progress=lambda d, t, w="": seen.append((d, t, w)))
        assert info.n_texts == 50 and seen and seen[-1][1] == 50
        deadline = time.monotonic() + 10  # stderr is logged by a thread of its own
        while "indexing with numpy" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "indexing with numpy 1.26.4" in caplog.text  # its print, through stderr to the log
    hits = retriever.search(["topic3 table 13"], top_k=5)[0]
    assert hits[0][0] == 13 and all(isinstance(i, int) for i, _ in hits)
    scores = retriever.score_all("topic3")
    assert isinstance(scores, np.ndarray) and scores.shape == (50,) and scores[3] > scores[4]


def test_an_exception_in_the_class_names_the_class_and_its_last_traceback_line(
        venv: Path, settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(venv, args="fail=search")
    argv = ["run", "--dataset", "demo-qa", "--retriever", spec, "--limit", "3",
            "--workspace", str(settings.workspace)]
    assert main(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Numpy1Retriever.search raised ValueError: no good query" in err
    assert spec in err


def test_a_process_that_dies_gives_its_exit_code_and_last_words(
        venv: Path, settings: Settings) -> None:
    retriever = build_retriever(_spec(venv, args="fail=die"), settings)
    with pytest.raises(PluginError, match=r"Numpy1Retriever\.index: the Python process "
                                          r"running it \(.*\) ended with exit code 7; its "
                                          r"last stderr line: dying now"):
        retriever.index(["a", "b"], corpus_key="k")
    with pytest.raises(PluginError, match="ended with exit code 7"):
        retriever.score_all("a")  # and it stays dead, saying so


def test_a_cancelled_remote_run_resumes(venv: Path, handmade_dir: Path,
                                        settings: Settings) -> None:
    config = RunConfig(dataset=str(handmade_dir), retriever=_spec(venv))

    def stop_after_one(done: int, total: int, what: str) -> None:
        if done >= 2 and what == "retrieving":
            raise Cancelled("stopped")

    with pytest.raises(Cancelled):
        run_retrieval(config, settings=settings, progress=stop_after_one, batch_size=1)
    resumed = run_retrieval(config, settings=settings)
    assert resumed.resumed and resumed.run.status == "complete"


def test_clear_errors_before_anything_runs(venv: Path, settings: Settings) -> None:
    with pytest.raises(PluginError, match="has no argument 'bogus'.*takes fail"):
        build_retriever(_spec(venv, args="bogus=1"), settings)
    with pytest.raises(PluginError, match="no Python interpreter at .*nowhere"):
        build_retriever(f"pyenv:/nowhere/python:{CLASSES}:Numpy1Retriever", settings)
    with pytest.raises(PluginError, match="has no 'Nope'; classes there:"):
        build_retriever(_spec(venv, "Nope"), settings)
    with pytest.raises(PluginError, match="expected pyenv:PYTHON:PATH.py:CLASS"):
        build_retriever(f"pyenv:{venv}", settings)
    python, ref = parse_pyenv(r"C:\envs\t\python.exe:x.py:Mine:k=2", "retriever")
    assert python == r"C:\envs\t\python.exe" and ref.name == "Mine" and ref.kwargs == (("k", 2),)


def test_tables_and_views_reach_a_remote_prepare_texts(
        venv: Path, tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "texts.py"
    path.write_text(CLASSES.read_text() + '''

class WithTexts(Numpy1Retriever):
    def prepare_texts(self, tables, view):
        return [f"{t.table_id} {' '.join(t.header)} {view.format}" for t in tables]
''', encoding="utf-8")
    retriever = build_retriever(_spec(venv, "WithTexts", path=path), settings)
    tables = [Table("db", "t1", ("a", "b"), (("1", "2"),), {"title": "T"})]
    assert retriever.prepare_texts(tables, TableView()) == ["t1 a b markdown"]
