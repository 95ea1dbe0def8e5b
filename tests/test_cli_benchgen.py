"""`benchgen sample` end to end on the demo databases: counts, questions, the draft file,
and clear errors for unknown names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TARGET_WORKSPACE": str(tmp_path / "ws")}
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
