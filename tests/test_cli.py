"""The CLI as a user runs it: a real subprocess, JSON on stdout, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MINIMUMS = {"demo-qa": (400, 200, 0), "demo-fact": (300, 300, 0), "demo-sql": (30, 150, 6)}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TARGET_")}
    return subprocess.run([sys.executable, "-m", "target_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**base, **(env or {})})


def test_datasets_json_lists_the_demo_datasets(tmp_path: Path) -> None:
    result = run_cli("datasets", "--json", "--workspace", str(tmp_path))
    assert result.returncode == 0, result.stderr
    infos = {d["name"]: d for d in json.loads(result.stdout)}
    for name, (tables, queries, databases) in MINIMUMS.items():
        info = infos[name]
        assert info["error"] is None
        assert info["tables"] >= tables and info["queries"] >= queries
        assert info["databases"] >= databases
    assert infos["demo-qa"]["task"] == "qa" and infos["demo-fact"]["task"] == "fact"
    assert infos["demo-sql"]["task"] == "sql"


def test_datasets_text_output(tmp_path: Path) -> None:
    result = run_cli("datasets", "--workspace", str(tmp_path))
    assert result.returncode == 0
    header = result.stdout.splitlines()[0].split()
    assert header == ["name", "task", "tables", "passages", "queries", "databases", "kind",
                      "source"]
    assert "demo-sql" in result.stdout


def test_configuration_error_is_one_line_on_stderr(tmp_path: Path) -> None:
    for parent in ("a", "b"):
        folder = tmp_path / parent / "same"
        folder.mkdir(parents=True)
        (folder / "corpus.jsonl").write_text("")
    env = {"TARGET_DATASETS": os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")])}
    result = run_cli("datasets", "--json", env=env)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: dataset name 'same' is used twice")
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_number_setting_is_reported(tmp_path: Path) -> None:
    result = run_cli("datasets", env={"TARGET_HUB_TIMEOUT": "soon"})
    assert result.returncode == 2
    assert "TARGET_HUB_TIMEOUT" in result.stderr


def test_run_json_contract_then_runs_show_export(tmp_path: Path) -> None:
    result = run_cli("run", "--dataset", "demo-qa", "--retriever", "bm25", "--top-k", "10",
                     "--limit", "30", "--json", "--workspace", str(tmp_path))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert set(summary) == {"run_id", "dataset", "task", "retriever", "config", "n_queries",
                            "metrics"}
    assert summary["n_queries"] == 30 and 0 <= summary["metrics"]["recall@10"] <= 1
    listed = json.loads(run_cli("runs", "--json", "--workspace", str(tmp_path)).stdout)
    assert [r["run_id"] for r in listed] == [summary["run_id"]]
    shown = json.loads(run_cli("show", summary["run_id"], "--queries", "--json",
                               "--workspace", str(tmp_path)).stdout)
    assert len(shown["queries"]) == 30
    out = tmp_path / "run.trec"
    exported = run_cli("export", summary["run_id"], "--format", "trec", "--out", str(out),
                       "--workspace", str(tmp_path))
    assert exported.returncode == 0 and out.exists()


def test_run_with_unknown_retriever_lists_valid_ones(tmp_path: Path) -> None:
    result = run_cli("run", "--dataset", "demo-qa", "--retriever", "bm-25",
                     "--workspace", str(tmp_path))
    assert result.returncode == 2 and result.stdout == ""
    assert "unknown retriever 'bm-25'; did you mean 'bm25'?" in result.stderr
    assert "dense:minilm" in result.stderr
