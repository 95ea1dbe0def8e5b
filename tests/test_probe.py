"""What-if probes (analysis/probe.py): a probe's ranks are a fresh run's ranks for that
query, lexical under any view and dense under a view a run embedded; under a view no run
embedded, dense ranks among the gold and top-k tables; notes round-trip."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import ROOT, write_jsonl
from target_core.analysis.probe import clear_cache, probe, probe_runs, probe_view
from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.engine.notes import notes, save_note
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import ConfigError
from target_core.read_models.probe import note_text, notes_by_query, probe_frame
from target_core.run_config import RunConfig
from target_core.table_view import TableView

DEMO = ROOT / "data" / "demo" / "demo-qa"
N_TABLES = 40
TOP_K = 5
NO_TITLE = TableView(title=False, section_title=False)


def _small_demo(folder: Path, edit: Callable[[dict[str, Any]], dict[str, Any]] = dict
                ) -> Path:
    """The first N_TABLES tables of demo-qa and the queries whose gold is among them."""
    corpus = [json.loads(line) for line in (DEMO / "corpus.jsonl").open()][:N_TABLES]
    keys = {(t["database_id"], t["table_id"]) for t in corpus}
    queries = []
    for line in (DEMO / "queries.jsonl").open():
        q = json.loads(line)
        gold = [q["table_id"]] if isinstance(q["table_id"], str) else q["table_id"]
        if all((q["database_id"], t) in keys for t in gold):
            queries.append(edit(q))
    folder.mkdir(parents=True)
    (folder / "dataset.json").write_text(json.dumps({"name": folder.name, "task": "qa"}))
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    return folder


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path]:
    """bm25 and tfidf under the default view, dense:minilm under the no-title view, k = 5."""
    root = tmp_path_factory.mktemp("probe")
    settings = load_settings(root / "ws")
    folder = _small_demo(root / "small-qa")
    for spec, view in (("bm25", TableView()), ("tfidf", TableView()),
                       ("dense:minilm", NO_TITLE)):
        run_retrieval(RunConfig(str(folder), spec, view=view, top_k=TOP_K), settings=settings)
    clear_cache()
    return settings, folder


def _fresh_ranks(settings: Settings, folder: Path, spec: str, view: TableView,
                 query_id: str) -> dict[Any, int | None]:
    """The gold ranks a fresh run of `spec` stores for `query_id` (k = every table)."""
    run = run_retrieval(RunConfig(str(folder), spec, view=view, top_k=N_TABLES),
                        settings=settings).run
    return RunStore.in_workspace(settings.workspace).get_result(run.run_id, query_id).gold_ranks


def _probed(result: Any, retriever: str) -> dict[str, int | None]:
    return {r.table: r.probed for r in result.ranks if r.retriever == retriever}


def test_probe_without_edits_gives_every_runs_stored_ranks(made: tuple[Settings, Path]) -> None:
    settings, folder = made
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(str(folder), settings)
    assert {r.config.retriever for r in probe_runs(store, dataset)} == {
        "bm25", "tfidf", "dense:minilm"}
    for query in dataset.queries[:6]:
        result = probe(store, dataset, settings, query.query_id)
        assert len(result.ranks) == 3 * len(query.gold)
        for rank in result.ranks:
            assert rank.among is None and rank.note == ""
            assert rank.probed == rank.original, (query.query_id, rank)
            assert rank.change in (0, None)
    warm = probe(store, dataset, settings, dataset.queries[0].query_id)
    assert warm.built == 0  # every index was kept in memory


def test_an_edited_query_under_another_view_ranks_as_a_fresh_run(
        made: tuple[Settings, Path], tmp_path: Path) -> None:
    settings, folder = made
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(str(folder), settings)
    dense = next(r for r in probe_runs(store, dataset) if r.config.retriever == "dense:minilm")
    query = next(dataset.query(r.query_id) for r in store.iter_results(dense.run_id)
                 if r.failed_at(TOP_K))  # a failed query: the gold ranked beyond k
    edited = query.query + " " + dataset.table(query.gold[0]).title
    result = probe(store, dataset, settings, query.query_id, edited, "title off")
    assert any(r.change for r in result.ranks)  # the edit moved a gold table
    # the same query, edited, in a dataset of its own: a fresh run of each retriever
    copy = _small_demo(tmp_path / "edited-qa", lambda q: q | (
        {"query": edited} if q["query_id"] == query.query_id else {}))
    for spec, view in (("bm25", NO_TITLE), ("tfidf", NO_TITLE), ("dense:minilm", NO_TITLE)):
        fresh = _fresh_ranks(settings, copy, spec, view, query.query_id)
        assert _probed(result, spec) == {"/".join(k): v for k, v in fresh.items()}, spec
    assert all(r.view == NO_TITLE.label for r in result.ranks)
    frame = probe_frame(result)
    assert [None if pd.isna(v) else v for v in frame["probed rank"]] == [
        r.probed for r in result.ranks]


def test_dense_under_a_view_no_run_embedded_ranks_among_the_tables_involved(
        made: tuple[Settings, Path]) -> None:
    settings, folder = made
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(str(folder), settings)
    query = dataset.queries[2]
    result = probe(store, dataset, settings, query.query_id, change="header only")
    dense = [r for r in result.ranks if r.retriever == "dense:minilm"]
    run = next(r for r in probe_runs(store, dataset) if r.config.retriever == "dense:minilm")
    stored = store.get_result(run.run_id, query.query_id)
    involved = {k for k, _ in stored.ranked} | set(query.gold)
    assert dense and all(r.among == len(involved) for r in dense)
    assert all(r.probed is not None and 1 <= r.probed <= (r.among or 0) for r in dense)
    assert "ranked among" in dense[0].note
    lexical = [r for r in result.ranks if r.retriever == "bm25"]
    assert all(r.among is None for r in lexical)


def test_a_view_the_run_cannot_take_is_said(made: tuple[Settings, Path]) -> None:
    ottqa = TableView(title=False, table_id=True, rows=0, format="ottqa")
    with pytest.raises(ConfigError, match="ottqa"):
        probe_view(ottqa, "title on")
    assert probe_view(TableView(), "first N rows", rows=3).rows == 3


def test_a_note_round_trips(made: tuple[Settings, Path]) -> None:
    settings, folder = made
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(str(folder), settings)
    query = dataset.queries[0]
    result = probe(store, dataset, settings, query.query_id, query.query + " medal")
    text = note_text(result)
    assert "medal" in text and "bm25" in text
    note_id = save_note(store, dataset.name, query.query_id, text, result.to_dict())
    save_note(store, dataset.name, "other", "a remark")
    again = RunStore.in_workspace(settings.workspace)
    (saved,) = notes(again, dataset.name, query.query_id)
    assert saved["note_id"] == note_id and saved["text"] == text
    assert saved["probe"]["ranks"][0]["probed"] == result.ranks[0].probed
    assert notes_by_query(notes(again, dataset.name)) == {query.query_id: text,
                                                          "other": "a remark"}
    assert notes(again, "another-dataset") == []
    with pytest.raises(ConfigError, match="needs a text"):
        save_note(store, dataset.name, query.query_id, "  ")
