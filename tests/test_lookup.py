"""The corpus index: a large folder dataset that loaded once is read table by table after,
with the same answers as the full load; a changed corpus is never read through a stale
index; the Query page uses it and renders exactly what the full load renders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from target_core.config import load_settings
from target_core.datasets import (
    corpus_stream,
    list_datasets,
    load_dataset,
    lookup,
    open_lookup,
    registry,
)
from target_core.errors import DatasetError, UnknownNameError
from target_core.types import Dataset
from tests.conftest import make_sqlite, query_record, table_record

pytestmark = pytest.mark.usefixtures("index_every_corpus")


def _corpus() -> list[dict]:
    return [table_record("t1", [["name", "n"], ["Ärø ✓", 1.5], [None, True]], title="One"),
            table_record("t2", title="Two"),
            table_record("t3", [["a"], ["x\ny"]], database_id="other", title="Three")]


def _forget_in_memory() -> None:
    registry._cache.clear()
    registry._lookups.clear()


def test_lookup_answers_like_the_full_load(write_dataset, tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1"), query_record("q2", ["t1", "t2"]),
                                       query_record("q3", "t3", database_id="other")],
                           meta={"name": "small", "task": "qa", "description": "d"})
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    full = load_dataset(folder, settings)
    assert list((tmp_path / "ws" / lookup.INDEX_DIR).glob("*.sqlite"))
    _forget_in_memory()
    found = open_lookup(folder, settings)
    assert isinstance(found, lookup.DatasetLookup)
    assert (found.name, found.task, found.description) == (full.name, full.task, "d")
    assert found.queries == full.queries
    assert list(found.table_index) == [t.key for t in full.tables]
    assert len(found.table_index) == 3
    for table in full.tables:
        assert found.table(table.key) == table
        assert found.table_index.get(table.key) == table
    assert found.table_index.get(("wiki", "nope")) is None
    with pytest.raises(UnknownNameError, match="nope"):
        found.table(("wiki", "nope"))
    with pytest.raises(UnknownNameError):
        found.query("q9")
    assert open_lookup(folder, settings) is found  # kept while the files are unchanged


def test_a_changed_corpus_loads_in_full_and_is_indexed_again(write_dataset,
                                                             tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    load_dataset(folder, settings)
    corpus = folder / "corpus.jsonl"
    text = corpus.read_text(encoding="utf-8").replace('"One"', '"One, renamed"')
    corpus.write_text(text, encoding="utf-8")
    os.utime(corpus, ns=(corpus.stat().st_atime_ns, corpus.stat().st_mtime_ns + 10**9))
    _forget_in_memory()
    again = open_lookup(folder, settings)
    assert isinstance(again, Dataset)  # no index for this version of the corpus yet
    assert again.table(("wiki", "t1")).title == "One, renamed"
    _forget_in_memory()
    indexed = open_lookup(folder, settings)
    assert isinstance(indexed, lookup.DatasetLookup)
    assert indexed.table(("wiki", "t1")).title == "One, renamed"


def test_a_table_rewritten_in_place_is_an_error_not_a_wrong_table(write_dataset,
                                                                  tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    load_dataset(folder, settings)
    _forget_in_memory()
    found = open_lookup(folder, settings)
    corpus = folder / "corpus.jsonl"
    stat = corpus.stat()
    lines = corpus.read_bytes().split(b"\n")
    lines[0], lines[1] = lines[1], lines[0]  # same size and (restored) time: index stale
    corpus.write_bytes(b"\n".join(lines))
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(DatasetError, match="changed since it was indexed"):
        found.table(("wiki", "t1"))


def test_queries_are_checked_against_the_index(write_dataset, tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    load_dataset(folder, settings)
    (folder / "queries.jsonl").write_text(
        '{"query_id": "q1", "query": "x", "answer": 1, "table_id": "gone", '
        '"database_id": "wiki"}\n', encoding="utf-8")
    _forget_in_memory()
    with pytest.raises(DatasetError, match="gold table .* is not in the corpus"):
        open_lookup(folder, settings)


@pytest.mark.parametrize("indexed_by", ["full load", "streaming"])
def test_a_database_only_a_table_names_must_have_its_sqlite_file(
        monkeypatch: pytest.MonkeyPatch, write_dataset, tmp_path: Path, indexed_by: str) -> None:
    """Database "b" is named by a table and by no query: the lookup refuses it without
    its SQLite file as the full load does, whether the index came from a full load made
    while the file was there or was written a table at a time (never a full load)."""
    folder = write_dataset([table_record("t1", database_id="a"),
                            table_record("t2", database_id="b")],
                           [query_record("q1", "t1", database_id="a", sql="SELECT x FROM t")],
                           meta={"name": "two-dbs", "task": "sql"})
    for database_id in ("a", "b"):
        make_sqlite(folder / "databases" / database_id / f"{database_id}.sqlite",
                    ["CREATE TABLE t (x)"])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    if indexed_by == "full load":
        load_dataset(folder, settings)
    else:
        monkeypatch.setattr(corpus_stream, "STREAM_MIN_BYTES", 1)
    (folder / "databases" / "b" / "b.sqlite").unlink()
    _forget_in_memory()
    with pytest.raises(DatasetError) as lookup_error:
        open_lookup(folder, settings)
    assert list((tmp_path / "ws" / lookup.INDEX_DIR).glob("*.sqlite"))  # the lookup's path
    _forget_in_memory()
    with pytest.raises(DatasetError) as full_error:
        load_dataset(folder, settings)
    assert str(lookup_error.value) == str(full_error.value)
    assert "corpus.jsonl, line 2, field 'database_id': database file" in str(full_error.value)
    assert str(Path("databases", "b", "b.sqlite")) in str(full_error.value)


def test_small_corpora_get_no_index(monkeypatch: pytest.MonkeyPatch, write_dataset,
                                    tmp_path: Path) -> None:
    monkeypatch.setattr(lookup, "INDEX_MIN_TABLES", 4)
    folder = write_dataset(_corpus(), [query_record("q1", "t1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    load_dataset(folder, settings)
    assert not (tmp_path / "ws" / lookup.INDEX_DIR).exists()
    _forget_in_memory()
    assert isinstance(open_lookup(folder, settings), Dataset)


def test_an_unwritable_workspace_only_costs_the_index(write_dataset, tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1")])
    blocked = tmp_path / "ws"
    blocked.mkdir()
    (blocked / "cache").write_text("a file where the cache folder would go")
    settings = load_settings(environ={"TARGET_WORKSPACE": str(blocked)})
    assert len(load_dataset(folder, settings).tables) == 3


def test_dataset_list_counts_from_the_index_without_loading(write_dataset,
                                                           tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1"), query_record("q2", "t2")],
                           meta={"name": "counted", "task": "qa"})
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                      "TARGET_DATASETS": str(folder)})
    loaded = {i.name: i for i in list_datasets(settings)}["counted"]
    _forget_in_memory()
    counted = {i.name: i for i in list_datasets(settings)}["counted"]
    assert counted == loaded and (counted.tables, counted.queries) == (3, 2)
    assert not any(d.name == "counted" for d in registry._cache.values())


@pytest.mark.parametrize("name", ["demo-qa", "demo-sql"])
def test_query_page_reads_through_the_index_and_shows_the_same(app, tmp_path: Path,
                                                               name: str) -> None:
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import GenerationConfig, RunConfig

    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig(name, "bm25", limit=12,
                                  generation=GenerationConfig("heuristic")),
                        settings=settings).run
    query_id = RunStore.in_workspace(tmp_path / "ws").query_metrics(run.run_id)[3][0]

    def render() -> tuple[list, list[str]]:
        at = app(page="pages/query.py", run=run.run_id, query=query_id)
        assert at.title[0].value.endswith(query_id.replace("-", "\\-"))
        assert not at.error, at.error
        return [d.value for d in at.dataframe], [m.value for m in at.markdown]

    _forget_in_memory()
    through_index = render()
    assert not registry._cache, "the Query page loaded the whole dataset"
    assert registry._lookups
    shutil.rmtree(tmp_path / "ws" / lookup.INDEX_DIR)
    _forget_in_memory()
    loaded = render()
    assert registry._cache and not registry._lookups
    assert len(through_index[0]) == len(loaded[0]) >= 3
    for ours, theirs in zip(through_index[0], loaded[0], strict=True):
        assert ours.equals(theirs)
    assert through_index[1] == loaded[1]
