"""A planted API key never leaves the process: not in the run store, caches, Chroma files,
exports, reports, benchmark drafts, logs, command output or the pages.

Everything that uses the key runs against the fake OpenAI-compatible server: OpenAI
embeddings for retrieval, the openai generator for answers, the benchmark builder's
writer and judge, and a server that rejects the key with a 401 echoing it (as OpenAI's
does). Then every byte written under the workspace and the export folder is searched.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import ConfigError
from target_core.run_config import GenerationConfig, RunConfig

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

KEY = "sk-planted-4f1d9c2e7a-never-store-me"
ROOT = Path(__file__).resolve().parent.parent


def _answers(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "answerable" in json.dumps(body.get("response_format") or {}):
        return json.dumps({"reason": "ok", "answerable": True})
    if "questions" in json.dumps(body.get("response_format") or {}):
        return json.dumps({"analysis": "a", "questions": ["How many?"]})
    return f"an answer ({len(prompt)} characters of prompt)"


def _files_holding(root: Path, secret: str) -> list[str]:
    needle = secret.encode()
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_planted_key_is_never_written_anywhere(tmp_path: Path, fake_openai: FakeOpenAI,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    from target_core.engine.export import export_run
    from target_core.figures.report import comparison_report

    caplog.set_level(logging.DEBUG)
    fake_openai.chat_responder = _answers
    environ = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_openai.base_url}
    workspace, exports = tmp_path / "ws", tmp_path / "exports"
    settings = load_settings(workspace, environ=environ)
    store = RunStore.in_workspace(workspace)
    dense = run_retrieval(RunConfig("demo-qa", "dense:openai", limit=12,
                                    generation=GenerationConfig("openai:test-model")),
                          settings=settings).run.run_id
    bm25 = run_retrieval(RunConfig("demo-qa", "bm25", limit=12), settings=settings).run.run_id
    assert all(r.generation for r in store.iter_results(dense))
    assert all(request.headers.get("authorization") == f"Bearer {KEY}"
               for request in fake_openai.requests)  # the key did reach the server

    # A server that rejects the key and echoes it: the run stops with a scrubbed reason.
    fake_openai.fail_next(50, "401")
    with pytest.raises(ConfigError) as rejected:
        run_retrieval(RunConfig("demo-qa", "bm25", limit=5, seed=1,
                                generation=GenerationConfig("openai:test-model")),
                      settings=settings)
    assert KEY not in str(rejected.value)
    fake_openai._faults.clear()  # the run stopped before using them all

    for fmt in ("target", "trec", "csv"):
        export_run(store, dense, fmt, exports / f"dense.{fmt}")
    (exports / "report.html").write_text(comparison_report(store, [bm25, dense]))

    env = {**environ, "TARGET_WORKSPACE": str(workspace)}
    cli = subprocess.run([sys.executable, "-m", "target_core", "benchgen", "sample",
                          "--database", "hospital", "--n", "1", "--writer", "openai:test-model",
                          "--judge", "openai:test-model", "--draft", "secret", "--json"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert cli.returncode == 0, cli.stderr
    runs = subprocess.run([sys.executable, "-m", "target_core", "runs", "--json"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert runs.returncode == 0, runs.stderr
    for output in (cli.stdout, cli.stderr, runs.stdout, runs.stderr):
        assert KEY not in output

    assert _files_holding(workspace, KEY) == []
    assert _files_holding(exports, KEY) == []
    assert (workspace / "runs.sqlite").is_file() and any(workspace.rglob("*chroma*"))
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert logged and KEY not in logged


def test_pages_never_show_the_key(app, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The Run page (with its cost estimate and settings) and the Home page with a key set."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for page, params in (("pages/run.py", {"dataset": "demo-qa"}), ("pages/home.py", {}),
                         ("pages/benchmark_builder.py", {})):
        at = app(page, **params)
        shown = [str(getattr(e, "value", "")) for e in at.main] + \
                [str(getattr(e, "value", "")) for e in at.sidebar]
        shown += [str(e.proto) for e in at.main] + [str(e.proto) for e in at.sidebar]
        assert not [s for s in shown if KEY in s], page
