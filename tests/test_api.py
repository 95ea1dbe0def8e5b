"""target_core.api: docs/api.md's examples run as written, and the API is the CLI's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from target_core import api
from target_core.cli import COMMANDS
from target_core.errors import TargetError

ROOT = Path(__file__).resolve().parent.parent
API_DOC = ROOT / "docs" / "api.md"


def _examples() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", API_DOC.read_text(encoding="utf-8"),
                      re.MULTILINE | re.DOTALL)


def test_the_documented_examples_run(tmp_path, monkeypatch) -> None:
    """Every ```python block of docs/api.md, in order, in one namespace and an empty
    workspace (as a notebook would run them)."""
    blocks = _examples()
    assert len(blocks) >= 5
    monkeypatch.setenv("TARGET_WORKSPACE", str(tmp_path / "workspace"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_api"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/api.md block {i + 1}", "exec"), namespace)
    bm25, per_query = namespace["bm25"], namespace["per_query"]
    assert bm25.status == "complete" and bm25.n_queries == 40  # type: ignore[attr-defined]
    assert len(per_query) == 40  # type: ignore[arg-type]
    assert per_query["mrr"].mean() == pytest.approx(bm25.metrics["mrr"])  # type: ignore[index,attr-defined]
    assert "sacrebleu" in namespace["answered"].metrics  # type: ignore[attr-defined]
    assert namespace["comparison"].n_queries == 40  # type: ignore[attr-defined]
    report = namespace["report"]
    assert report.n_queries == 40 and report.n_failed == sum(  # type: ignore[attr-defined]
        1 for failed in api.queries(namespace["tfidf"].run_id, k=1)["failed"]  # type: ignore[attr-defined]
        if failed)
    assert len(api.runs()) == 3
    assert {run.run_id for run in (bm25, namespace["tfidf"], namespace["answered"])} == set(
        api.runs()["run_id"])


def test_api_names_are_the_commands() -> None:
    # load_dataset has no command; queries is `show RUN_ID --queries`
    assert set(api.__all__) - {"load_dataset", "queries"} <= set(COMMANDS)
    for name in api.__all__:
        assert getattr(api, name).__doc__, f"api.{name} has no docstring"


def test_api_errors_are_target_errors(tmp_path) -> None:
    with pytest.raises(TargetError, match="nope"):
        api.show("nope", workspace=tmp_path)
    with pytest.raises(TargetError, match="no-such-dataset"):
        api.run("no-such-dataset", "bm25", workspace=tmp_path)
