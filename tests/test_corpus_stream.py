"""A large folder dataset read a table at a time: the corpus index written in one pass is
the full load's, with the full load's errors; a run that only retrieves over it stores
exactly what a run over the loaded dataset stores, and never loads the dataset."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from target_core.config import Settings, load_settings
from target_core.datasets import corpus_stream, load_dataset, lookup, open_lookup, registry
from target_core.datasets.corpus_stream import CorpusTables, index_streaming, run_tables
from target_core.engine.run_inputs import open_run_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import DatasetError
from target_core.run_config import RunConfig
from target_core.types import Dataset
from tests.conftest import query_record, table_record

pytestmark = pytest.mark.usefixtures("index_every_corpus")

WORDS = ("river", "mountain", "election", "season", "album", "station", "county", "bridge",
         "painter", "league", "island", "census")


def _corpus() -> list[dict[str, Any]]:
    tables = []
    for i in range(36):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 5 + 3) % len(WORDS)]
        rows = [["name", "year", a], [f"{a} {b} {i}", 1990 + i, i * 1.5], [b, None, True]]
        record = table_record(f"t{i:02d}", rows, database_id=f"db{i % 3}",
                              title=f"{a.title()} of {b} ({i})")
        record["context"]["section_title"] = f"{b} list"
        tables.append(record)
    tables[4]["table"] = [["Ärø ✓", "x"], ["a\nb", 2]]  # non-ASCII and a newline in a cell
    return tables


def _queries() -> list[dict[str, Any]]:
    out = []
    for i in range(0, 36, 3):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 5 + 3) % len(WORDS)]
        gold = [f"t{i:02d}"] if i % 2 else [f"t{i:02d}", f"t{(i + 3) % 36:02d}"]
        record = query_record(f"q{i}", gold, database_id=f"db{i % 3}")
        record["query"] = f"which {a} had the most {b} in {1990 + i}"
        if i % 2 == 0:
            record["table_id"] = [f"t{i:02d}"]
        out.append(record)
    return out


def _settings(workspace: Path) -> Settings:
    return load_settings(environ={"TARGET_WORKSPACE": str(workspace)})


def _forget_in_memory() -> None:
    registry._cache.clear()
    registry._lookups.clear()


def _stored(settings: Settings, run_id: str) -> dict[str, Any]:
    """What the run stored, but for times, its id and where its workspace is."""
    store = RunStore.in_workspace(settings.workspace)
    run = store.get_run(run_id)
    timing = ("retrieval_ms", "seconds", "index_s", "store")
    return {"key": (run.config_key, run.dataset_fingerprint, run.task, run.status,
                    run.n_queries, run.text_fingerprint, run.text_example),
            "index": {k: v for k, v in run.index_info.items() if k not in timing},
            "metrics": {k: v for k, v in run.metrics.items() if not k.startswith(timing)},
            "results": [(r.query_id, r.position, r.ranked, r.gold, r.gold_ranks,
                         {k: v for k, v in r.metrics.items() if k != "ms"})
                        for r in store.iter_results(run_id)]}


@pytest.mark.parametrize("spec", ["bm25", "tfidf", "dense:minilm", "summary:minilm"])
def test_a_run_over_the_corpus_index_stores_what_the_loaded_dataset_stores(
        write_dataset, tmp_path: Path, spec: str) -> None:
    folder = write_dataset(_corpus(), _queries(), meta={"name": "streamed", "task": "qa"})
    config = RunConfig(str(folder), spec, top_k=5)
    loaded = _settings(tmp_path / "loaded")
    load_dataset(folder, loaded)  # in memory: the run uses the Dataset
    assert isinstance(open_run_dataset(config, loaded), Dataset)
    before = run_retrieval(config, settings=loaded).run
    _forget_in_memory()
    streamed = _settings(tmp_path / "streamed")
    index_streaming(streamed.workspace, folder / "corpus.jsonl")
    assert isinstance(open_run_dataset(config, streamed), lookup.DatasetLookup)
    after = run_retrieval(config, settings=streamed).run
    assert not registry._cache  # no full load happened
    assert _stored(streamed, after.run_id) == _stored(loaded, before.run_id)
    assert after.metrics["recall@5"] > 0


def _index_rows(path: Path) -> tuple[list[tuple], list[tuple]]:
    with sqlite3.connect(path) as db:
        spans = db.execute("SELECT * FROM spans ORDER BY line").fetchall()
        meta = db.execute("SELECT * FROM meta ORDER BY key").fetchall()
    db.close()
    return spans, meta


def test_the_streamed_index_is_the_full_loads(write_dataset, tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), _queries())
    corpus = folder / "corpus.jsonl"
    full = _settings(tmp_path / "full")
    dataset = load_dataset(folder, full)  # writes the index (INDEX_MIN_TABLES is 1 here)
    index_streaming(tmp_path / "streamed", corpus)
    full_rows = _index_rows(lookup.index_path(full.workspace, corpus))
    streamed_rows = _index_rows(lookup.index_path(tmp_path / "streamed", corpus))
    assert streamed_rows == full_rows
    assert streamed_rows[1] == [("context_keys", '["section_title", "title"]'),
                                ("corpus_fingerprint", dataset.corpus_fingerprint),
                                ("database_count", str(len({t.database_id for t in
                                                            dataset.tables})))]
    assert len(streamed_rows[0]) == 36


def test_corpus_tables_read_in_order_and_by_position(write_dataset, tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), _queries())
    dataset = load_dataset(folder, _settings(tmp_path / "full"))
    _forget_in_memory()
    index_streaming(tmp_path / "ws", folder / "corpus.jsonl")
    found = open_lookup(folder, _settings(tmp_path / "ws"))
    assert isinstance(found, lookup.DatasetLookup)
    tables = run_tables(found)
    assert isinstance(tables, CorpusTables)
    assert len(tables) == 36 and tables.keys == [t.key for t in dataset.tables]
    assert list(tables) == list(dataset.tables)
    assert tables[4] == dataset.tables[4] and tables[-1] == dataset.tables[-1]
    assert list(tables[2:5]) == list(dataset.tables[2:5])


def test_a_repeated_or_bad_table_stops_the_streamed_index(write_dataset,
                                                          tmp_path: Path) -> None:
    corpus = _corpus()
    repeated = write_dataset([*corpus[:3], corpus[1]], _queries()[:1])
    with pytest.raises(DatasetError, match=r"line 4.*duplicate table \('db1', 't01'\); "
                                           r"first defined at line 2"):
        index_streaming(tmp_path / "ws", repeated / "corpus.jsonl")
    bad = write_dataset([*corpus[:2], {"database_id": "db0", "table_id": "x", "table": []}],
                        _queries()[:1])
    with pytest.raises(DatasetError, match="line 3.*no header"):
        index_streaming(tmp_path / "ws", bad / "corpus.jsonl")
    empty = write_dataset([], _queries()[:1])
    with pytest.raises(DatasetError, match="the corpus is empty"):
        index_streaming(tmp_path / "ws", empty / "corpus.jsonl")
    index_dir = tmp_path / "ws" / lookup.INDEX_DIR
    assert not list(index_dir.iterdir())  # no index, not even a partial one


def test_a_large_corpus_opens_without_a_full_load(write_dataset, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_dataset(_corpus(), _queries())
    dataset = load_dataset(folder, _settings(tmp_path / "full"))
    _forget_in_memory()
    monkeypatch.setattr(corpus_stream, "STREAM_MIN_BYTES", 1)
    found = open_lookup(folder, _settings(tmp_path / "ws"))
    assert isinstance(found, lookup.DatasetLookup) and not registry._cache
    assert found.fingerprint == dataset.fingerprint
    assert found.queries == dataset.queries


def test_a_workspace_that_cannot_hold_the_index_loads_the_dataset_whole(
        write_dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_dataset(_corpus(), _queries())
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "cache").write_text("a file where the cache folder would be")
    monkeypatch.setattr(corpus_stream, "STREAM_MIN_BYTES", 1)
    found = open_lookup(folder, _settings(workspace))
    assert isinstance(found, Dataset) and len(found.tables) == 36
