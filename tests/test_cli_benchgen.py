"""`benchgen sample` end to end on the demo databases: counts, questions, the draft file,
and clear errors for unknown names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TARGET_WORKSPACE": str(tmp_path / "ws")}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "target_core", "benchgen", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def test_sample_writes_a_draft_with_questions(tmp_path: Path) -> None:
    out = tmp_path / "draft.jsonl"
    done = _cli(tmp_path, "sample", "--database", "hospital", "--n", "2", "--json",
                "--out", str(out), "--reference-date", "2024-12-02")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    items = data["items"]
    assert items and all(i["database"] == "hospital" for i in items)
    counts = data["report"]["counts"]
    assert sum(c["kept"] for c in counts.values()) == len(items)
    assert all(c["kept"] <= 2 for c in counts.values())
    for item in items:
        assert item["n_rows"] >= 1 and item["questions"]
        assert all(q["text"] and "{" not in q["text"] for q in item["questions"])
        if item["time"]:
            assert item["time"]["reference"] in ("2024-12-02", item["reference_date"])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["sql"] for line in lines] == [i["sql"] for i in items]
    again = _cli(tmp_path, "sample", "--database", "hospital", "--n", "2", "--json",
                 "--reference-date", "2024-12-02")
    assert json.loads(again.stdout)["items"] == items  # seeded: the same draft


def test_sample_errors_are_one_line(tmp_path: Path) -> None:
    unknown = _cli(tmp_path, "sample", "--database", "nowhere")
    assert unknown.returncode == 2 and "nowhere" in unknown.stderr and not unknown.stdout
    bad_date = _cli(tmp_path, "sample", "--reference-date", "31/12/2024")
    assert bad_date.returncode == 2 and "YYYY-MM-DD" in bad_date.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"database": "hospital", "templates": [{"id": "x"}]}')
    bad = _cli(tmp_path, "sample", "--templates", str(broken))
    assert bad.returncode == 2 and "broken.json" in bad.stderr and "'x'" in bad.stderr


def test_the_whole_workflow_from_the_command_line(tmp_path: Path) -> None:
    made = _cli(tmp_path, "sample", "--database", "airline", "--n", "2", "--draft", "air",
                "--json")
    assert made.returncode == 0, made.stderr
    made = json.loads(made.stdout)
    assert made["draft"] == "air" and made["summary"]["pending"] == made["summary"]["total"]
    listed = json.loads(_cli(tmp_path, "drafts", "--json").stdout)
    assert [d["draft"] for d in listed] == ["air"] and listed[0]["writer"] == "template"
    first = made["items"][0]["questions"][0]["pair_id"]
    reviewed = _cli(tmp_path, "review", "air", "--reject", str(first), "--json")
    assert json.loads(reviewed.stdout)["rejected"] == 1
    reviewed = json.loads(_cli(tmp_path, "review", "air", "--accept-automatic",
                               "--json").stdout)
    assert reviewed["pending"] == 0 and reviewed["accepted"] == reviewed["total"] - 1
    assert reviewed["acceptance_rate"] == (reviewed["total"] - 1) / reviewed["total"]
    exported = _cli(tmp_path, "export", "air", "--name", "air-sql", "--json")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["queries"] == reviewed["accepted"]
    env = {**os.environ, "TARGET_WORKSPACE": str(tmp_path / "ws")}
    run = subprocess.run([sys.executable, "-m", "target_core", "run", "--dataset", "air-sql",
                          "--retriever", "bm25", "--generator", "heuristic", "--json"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    run_id = json.loads(run.stdout)["run_id"]
    evaluated = _cli(tmp_path, "evaluate", run_id, "--json")
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads(evaluated.stdout)
    assert sum(report["counts"].values()) == reviewed["accepted"]
    text = _cli(tmp_path, "evaluate", run_id)
    assert "Overall" in text.stdout and "EA" in text.stdout


def test_workflow_errors_are_one_line(tmp_path: Path) -> None:
    missing = _cli(tmp_path, "review", "nothing-here")
    assert missing.returncode == 2 and "nothing-here" in missing.stderr
    no_name = _cli(tmp_path, "export")
    assert no_name.returncode == 2 and "needs" in no_name.stderr
    unknown_writer = _cli(tmp_path, "sample", "--writer", "gpt-banana")
    assert unknown_writer.returncode == 2 and "gpt-banana" in unknown_writer.stderr
    no_key = _cli(tmp_path, "sample", "--writer", "openai")
    assert no_key.returncode == 2 and "OPENAI_API_KEY" in no_key.stderr


def _down_env(tmp_path: Path) -> dict[str, str]:
    """An OpenAI-compatible server that is not there (a stopped fake: its port refuses)."""
    from fake_openai import start_fake_openai

    down = start_fake_openai()
    down.stop()
    return {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": down.base_url,
            "TARGET_OPENAI_RETRIES": "0"}


def _cli_env(tmp_path: Path, extra: dict[str, str], *args: str
             ) -> subprocess.CompletedProcess:
    env = {**os.environ, "TARGET_WORKSPACE": str(tmp_path / "ws"), **extra}
    return subprocess.run([sys.executable, "-m", "target_core", "benchgen", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def test_sample_with_the_server_down_fails_and_saves_no_draft(tmp_path: Path) -> None:
    """Issue 24: `benchgen sample` exited 0 and saved an empty draft when every call
    of its LLM writer (or judge) failed."""
    env = _down_env(tmp_path)
    out = tmp_path / "draft.jsonl"
    writer = _cli_env(tmp_path, env, "sample", "--database", "hospital", "--n", "1",
                      "--writer", "openai:test-model", "--draft", "down", "--out", str(out))
    assert writer.returncode == 2, writer.stderr
    assert re.search(r"(\d+) of \1 question writings failed \(connection \1\); the "
                     r"first, template hospital[\w-]*: cannot connect", writer.stderr), \
        writer.stderr
    assert not writer.stdout and not out.exists()
    judge = _cli_env(tmp_path, env, "sample", "--database", "hospital", "--n", "1",
                     "--judge", "openai:test-model", "--draft", "down", "--json")
    assert judge.returncode == 2 and not judge.stdout
    assert re.search(r"(\d+) of \1 judgements failed \(connection \1\); the first, "
                     r"question '.+': cannot connect", judge.stderr), judge.stderr
    listed = _cli_env(tmp_path, env, "drafts", "--json")
    assert json.loads(listed.stdout) == []  # neither left a draft behind
