"""Shared fixtures: a hand-made dataset, a writer for throwaway datasets, isolated settings."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from target_core.config import Settings, load_settings

FIXTURES = Path(__file__).parent / "fixtures"

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["fake_openai"]  # the fake OpenAI-compatible server fixture


@pytest.fixture
def handmade_dir() -> Path:
    return FIXTURES / "handmade-qa"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a temporary workspace and no environment leaking in."""
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "workspace")})


def write_jsonl(path: Path, records: Iterable[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def make_sqlite(path: Path, statements: Iterable[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    return path


def table_record(table_id: str, rows: list[list[Any]] | None = None, database_id: str = "wiki",
                 title: str | None = None) -> dict[str, Any]:
    return {"database_id": database_id, "table_id": table_id,
            "table": rows if rows is not None else [["a", "b"], [1, 2]],
            "context": {"title": title or table_id.replace("_", " ")}}


def query_record(query_id: str, table_id: str | list[str], database_id: str = "wiki",
                 **extra: Any) -> dict[str, Any]:
    return {"query_id": query_id, "query": f"question {query_id}", "answer": "an answer",
            "table_id": table_id, "database_id": database_id, **extra}


@pytest.fixture
def index_every_corpus(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every folder dataset gets a corpus index (the demos are below the threshold), and
    no dataset or lookup opened by another test is reused."""
    from target_core.datasets import lookup, registry

    monkeypatch.setattr(lookup, "INDEX_MIN_TABLES", 1)
    registry._cache.clear()
    registry._lookups.clear()
    yield
    registry._cache.clear()
    registry._lookups.clear()


@pytest.fixture
def write_dataset(tmp_path: Path) -> Callable[..., Path]:
    """Write a folder-format dataset; each call makes a new folder under tmp_path."""
    counter = iter(range(10_000))

    def write(corpus: Iterable[Any] | None = None, queries: Iterable[Any] | None = None,
              meta: dict[str, Any] | None = None, name: str | None = None) -> Path:
        folder = tmp_path / (name or f"dataset-{next(counter)}")
        folder.mkdir(parents=True)
        if meta is not None:
            (folder / "dataset.json").write_text(json.dumps(meta), encoding="utf-8")
        write_jsonl(folder / "corpus.jsonl",
                    corpus if corpus is not None else [table_record("t1"), table_record("t2")])
        write_jsonl(folder / "queries.jsonl",
                    queries if queries is not None else [query_record("q1", "t1")])
        return folder

    return write


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, handmade_dir: Path):
    """Start the dashboard in AppTest on one page: `app(page, **query_params)`. The
    workspace is tmp_path/"ws" (empty), datasets: the bundled demos and handmade-qa."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TARGET_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("TARGET_DATASETS", str(handmade_dir))
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    st.cache_data.clear()

    def start(page: str = "pages/datasets.py", **params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
        at.switch_page(page)
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, at.exception
        return at

    return start
