"""Generated SQL that tries to write cannot, end to end: a text-to-SQL run whose model
(the fake OpenAI-compatible server) answers every question with a write, a schema change,
an ATTACH or a stacked statement leaves every database byte-for-byte unchanged, stores
each such query as refused, and the Query page shows the refusal."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.run_config import GenerationConfig, RunConfig

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
WRITES = [
    "DELETE FROM employees",
    "DROP TABLE departments",
    "UPDATE employees SET salary = 0",
    "INSERT INTO departments VALUES (999, 'x', 'y', 1, 2000)",
    "CREATE TABLE pwned (x)",
    "ATTACH DATABASE '{tmp}/other.sqlite' AS other",
    "SELECT 1; DROP TABLE employees",
    "PRAGMA writable_schema = 1",
    "VACUUM INTO '{tmp}/copy.sqlite'",
    "WITH x AS (SELECT 1) DELETE FROM employees",
    "REPLACE INTO departments VALUES (1, 'x', 'y', 1, 2000)",
]


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_generated_writes_change_nothing(app, tmp_path: Path, fake_openai: FakeOpenAI,
                                         monkeypatch) -> None:
    source = ROOT / "data" / "demo" / "demo-sql"
    copy = tmp_path / "datasets" / "writes-sql"
    shutil.copytree(source, copy)
    meta = json.loads((copy / "dataset.json").read_text())
    (copy / "dataset.json").write_text(json.dumps(meta | {"name": "writes-sql"}))
    lines = (copy / "queries.jsonl").read_text().splitlines()  # hospital only: the model
    (copy / "queries.jsonl").write_text("\n".join(  # answers on that database
        line for line in lines if json.loads(line)["database_id"] == "hospital") + "\n")
    before = _digests(copy / "databases")
    cycle = itertools.cycle(WRITES)

    def answer(body: dict[str, Any]) -> str:
        sql = next(cycle).format(tmp=tmp_path)
        return json.dumps({"chain_of_thought_reasoning": "write", "sql_query": sql,
                           "database_id": "hospital"})

    fake_openai.chat_responder = answer
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url,
               "TARGET_DATASETS": str(tmp_path / "datasets")}
    settings = load_settings(tmp_path / "ws", environ=environ)
    run = run_retrieval(RunConfig("writes-sql", "bm25", limit=2 * len(WRITES),
                                  generation=GenerationConfig("openai:test-model")),
                        settings=settings).run
    assert _digests(copy / "databases") == before
    assert not (tmp_path / "copy.sqlite").exists() and not (tmp_path / "other.sqlite").exists()
    results = list(RunStore.in_workspace(tmp_path / "ws").iter_results(run.run_id))
    assert len(results) == 2 * len(WRITES)
    classes = {r.generation["sql"]["error_class"] for r in results}
    assert classes <= {"refused", "multiple_statements"}, classes
    assert run.metrics["execution_accuracy"] == 0

    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    at = app("pages/query.py", run=run.run_id, query=results[0].query_id)
    assert not at.exception
    shown = " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.error,
                                            *at.warning, *at.code])
    assert results[0].generation["answer"] in shown  # the write that was refused
    assert "refused" in shown.lower() or "not authorized" in shown.lower()
    assert _digests(copy / "databases") == before
