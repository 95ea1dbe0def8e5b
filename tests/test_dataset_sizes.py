"""Table sizes of a large corpus: stored per (corpus, view) and read back, a seeded sample
until every table is measured, a changed corpus never read through stale counts; the
Datasets and Failures pages read a large corpus through its index with the same numbers
as the full load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from target_core.config import load_settings
from target_core.datasets import load_dataset, lookup, open_lookup, registry
from target_core.read_models import dataset_sizes
from target_core.read_models.dataset_sizes import (
    TableRefs,
    dataset_summary,
    measure_all,
    sizes_path,
)
from target_core.table_view import TableView
from target_core.tokens import get_counter
from tests.conftest import query_record, table_record

N_TABLES = 30


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch, index_every_corpus: None) -> None:
    monkeypatch.setattr(dataset_sizes, "EXACT_MAX_TABLES", 10)
    monkeypatch.setattr(dataset_sizes, "SAMPLE_SIZE", 7)


def _corpus(extra: str = "") -> list[dict]:
    return [table_record(f"t{i}", [["name", "n"], *[[f"row {j} {extra}", j] for j in range(i)]],
                         database_id=f"db{i % 3}", title=f"Table {i}")
            for i in range(N_TABLES)]


def _no_counting(*args: object) -> None:
    raise AssertionError("counted tokens instead of reading the stored counts")


def test_sizes_are_sampled_stored_then_measured_in_full(write_dataset, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1", database_id="db1")],
                           meta={"name": "sized", "task": "qa"})
    workspace = tmp_path / "ws"
    settings = load_settings(environ={"TARGET_WORKSPACE": str(workspace)})
    view = TableView()
    full = measure_all(load_dataset(folder, settings), view, tmp_path / "full")  # every table
    registry._cache.clear()
    found = open_lookup(folder, settings)
    assert isinstance(found, lookup.DatasetLookup)

    sampled = dataset_summary(found, view, workspace)
    assert not sampled.exact and sampled.measured == 7 and sampled.n_tables == N_TABLES
    for column in ("table", "title", "rows", "columns"):  # the catalogue: every table, exact
        assert sampled.tables[column].tolist() == full.tables[column].tolist()
    measured = sampled.tables["tokens"].notna()
    assert sampled.tables["tokens"][measured].tolist() == full.tables["tokens"][measured].tolist()
    assert sampled.tokens.equals(sampled.tables["tokens"][measured])

    with monkeypatch.context() as patch:  # a second visit reads the stored sample
        patch.setattr(dataset_sizes, "_count", _no_counting)
        again = dataset_summary(found, view, workspace)
    assert again.tables.equals(sampled.tables)

    exact = measure_all(found, view, workspace)
    assert exact.exact and exact.tables["tokens"].tolist() == full.tables["tokens"].tolist()
    with monkeypatch.context() as patch:
        patch.setattr(dataset_sizes, "_count", _no_counting)
        stored = dataset_summary(found, view, workspace)
    assert stored.exact and stored.tables["tokens"].tolist() == full.tables["tokens"].tolist()
    assert stored.largest(3)["tokens"].tolist() == full.largest(3)["tokens"].tolist()

    # another view is another file: nothing stored for it yet
    assert not dataset_summary(found, TableView(title=False), workspace).exact


def test_a_changed_corpus_never_reads_the_old_counts(write_dataset, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1", database_id="db1")],
                           meta={"name": "sized", "task": "qa"})
    workspace = tmp_path / "ws"
    settings = load_settings(environ={"TARGET_WORKSPACE": str(workspace)})
    load_dataset(folder, settings)
    registry._cache.clear()
    before = open_lookup(folder, settings)
    measure_all(before, TableView(), workspace)
    old = sizes_path(workspace, before, TableView(), get_counter(), sample=False)
    assert old.is_file()

    write_dataset(_corpus(extra="changed"), [query_record("q1", "t1", database_id="db1")],
                  meta={"name": "sized", "task": "qa"}, name="changed")
    (folder / "corpus.jsonl").write_bytes((folder.parent / "changed" / "corpus.jsonl")
                                          .read_bytes())
    registry._cache.clear()
    registry._lookups.clear()
    load_dataset(folder, settings)  # the changed corpus loads in full: a new index
    registry._cache.clear()
    after = open_lookup(folder, settings)
    assert after.corpus_fingerprint != before.corpus_fingerprint
    monkeypatch.setattr(dataset_sizes, "_count", _no_counting)
    with pytest.raises(AssertionError, match="counted tokens"):
        dataset_summary(after, TableView(), workspace)


def test_table_refs_answer_membership_from_the_index(write_dataset, tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1", database_id="db1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    load_dataset(folder, settings)
    registry._cache.clear()
    refs = TableRefs(open_lookup(folder, settings))
    assert "db1/t1" in refs and "db2/t1" not in refs and 3 not in refs
    assert refs._all is None  # no list of every table for a lookup that succeeds
    assert len(refs) == N_TABLES and refs[0] == "db0/t0"


def _one_seek_per_table(*args: object) -> None:
    raise AssertionError("read a table by its own seek instead of in bulk")


def test_failures_through_the_index_match_the_full_load(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from target_core.analysis import memo
    from target_core.analysis.failures import analyse_failures
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.read_models.failures import aggregates_view
    from target_core.run_config import RunConfig

    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("demo-qa", "bm25", limit=60, view=TableView(title=False)),
                        settings=settings).run
    store = RunStore.in_workspace(tmp_path / "ws")
    full = load_dataset("demo-qa", settings)
    loaded = analyse_failures(store, full, run.run_id, k=3, settings=settings)
    recurring = aggregates_view(store, full, loaded)
    memo.clear_all()  # the same numbers computed afresh through the index, not remembered
    registry._cache.clear()
    # the taxonomy reads the tables ranked above a gold one and the gold tables in bulk
    monkeypatch.setattr(lookup.LazyTables, "_read", _one_seek_per_table)
    found = open_lookup("demo-qa", settings)
    assert isinstance(found, lookup.DatasetLookup)
    assert found.fingerprint == full.fingerprint
    indexed = analyse_failures(store, found, run.run_id, k=3, settings=settings)
    assert not registry._cache, "the failure analysis loaded the whole dataset"
    assert indexed.n_failed > 0 and indexed.counts["sibling-confusion"] > 0
    assert indexed.to_dict() == loaded.to_dict()
    again = aggregates_view(store, found, indexed)
    assert again is not recurring and again.frame.equals(recurring.frame)
    assert again.export.equals(recurring.export)
    assert (again.frame["kind"] == "winner feature").any()
    assert again.frame.loc[again.frame["kind"] == "winner feature", "queries"].sum() > 0


def test_table_heads_from_the_index_are_the_tables_names_and_headers(write_dataset,
                                                                     tmp_path: Path) -> None:
    folder = write_dataset(_corpus(), [query_record("q1", "t1", database_id="db1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    full = load_dataset(folder, settings)
    registry._cache.clear()
    found = open_lookup(folder, settings)
    assert isinstance(found, lookup.DatasetLookup)
    keys = [("db2", "t5"), ("db0", "t0"), ("db9", "t1"), ("db0", "t0"), ("db1", "t28")]
    heads = lookup.table_heads(found.table_index, keys)
    assert set(heads) == {("db2", "t5"), ("db0", "t0"), ("db1", "t28")}  # unknown: left out
    for key, head in heads.items():
        table = full.table(key)
        assert isinstance(head, lookup.TableHead)
        assert (head.key, head.header, head.title, head.section_title) == (
            table.key, table.header, table.title, table.section_title)
    read = lookup.tables_of(found.table_index, keys)
    assert read == {key: full.table(key) for key in heads}
    assert lookup.database_count(found.table_index) == 3
    assert lookup.database_count(full.table_index) == 3


def test_failures_page_reads_through_the_index_and_remembers_its_report(app, tmp_path: Path
                                                                        ) -> None:
    from target_core.analysis.failures import analyse_failures
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.read_models import failures as failures_view
    from target_core.run_config import RunConfig

    settings = load_settings(tmp_path / "ws")  # the run loads demo-qa: its corpus index
    run_id = run_retrieval(RunConfig("demo-qa", "bm25", limit=60, view=TableView(title=False)),
                           settings=settings).run.run_id
    expected = analyse_failures(RunStore.in_workspace(tmp_path / "ws"),
                                load_dataset("demo-qa", settings), run_id, settings=settings)
    registry._cache.clear()
    at = app(page="pages/failures.py", run=run_id)
    assert not registry._cache, "the Failures page loaded the whole dataset"
    assert not at.error, at.error
    assert [m.value for m in at.metric][:2] == [str(expected.n_queries),
                                                  str(expected.n_failed)]
    made = failures_view._REPORTS.misses, failures_view._AGGREGATES.misses
    at.run()  # a rerun: the report and its aggregates are remembered
    assert not at.exception and not registry._cache
    assert (failures_view._REPORTS.misses, failures_view._AGGREGATES.misses) == made


def test_datasets_page_offers_to_measure_a_sampled_corpus(app, tmp_path: Path) -> None:
    load_dataset("demo-qa", load_settings(tmp_path / "ws"))  # writes its corpus index
    registry._cache.clear()
    at = app(page="pages/datasets.py", dataset="demo-qa")
    assert not registry._cache, "the Datasets page loaded the whole dataset"
    assert any("sample of 7 of 440 tables" in i.value for i in at.info), at.info
    at.button(key="datasets-measure-all").click().run()
    assert not at.exception, at.exception
    assert not any("sample" in i.value for i in at.info)
    stored = list((tmp_path / "ws" / dataset_sizes.SIZES_DIR).glob("*.npz"))
    assert len(stored) == 2  # the sample and every table
    assert {len(np.load(p)["tokens"]) for p in stored} == {7, 440}


def test_the_catalogue_is_stored_column_wise_beside_the_index(write_dataset, tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture
                                                              ) -> None:
    """The index's catalogue is written with it, read back equal to the full load's, and
    rewritten when missing; an unreadable one is read from the index instead."""
    from target_core.datasets.catalogue import catalogue_path

    folder = write_dataset(_corpus(), [query_record("q1", "t1", database_id="db1")])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    full = dataset_sizes.catalogue(load_dataset(folder, settings))
    registry._cache.clear()
    found = open_lookup(folder, settings)
    assert isinstance(found, lookup.DatasetLookup)
    stored = catalogue_path(found.table_index.index)
    assert stored.is_file()  # written with the index
    assert dataset_sizes.catalogue(found).astype(object).equals(full.astype(object))
    stored.unlink()
    assert dataset_sizes.catalogue(found)["table"].tolist() == full["table"].tolist()
    assert stored.is_file()  # rewritten on first use
    stored.write_bytes(b"not arrow")
    assert dataset_sizes.catalogue(found)["rows"].tolist() == full["rows"].tolist()
    assert "unreadable catalogue" in caplog.text


def test_size_histograms_are_counted_into_round_bins() -> None:
    """The Datasets figure carries bin counts, not one value per table."""
    import pandas as pd

    from target_core.figures.sizes import histogram, size_distributions

    values = pd.Series(np.arange(0, 100_000, 7))
    edges, counts = histogram(values)
    assert counts.sum() == len(values) and len(counts) <= 30
    assert np.allclose(np.diff(edges), 5_000) and edges[0] == 0 and edges[-1] > values.max()
    edges, counts = histogram(pd.Series([1, 2, 3, 3, 12]))  # whole numbers: width 1
    assert edges.tolist() == list(range(1, 14)) and counts.tolist()[:3] == [1, 1, 2]
    frame = pd.DataFrame({"rows": values, "columns": values % 9, "tokens": values * 3,
                          "kind": "table"})
    figure = size_distributions(frame)
    assert [t.type for t in figure.data] == ["bar"] * 3
    assert all(len(t.y) <= 30 and sum(t.y) == len(values) for t in figure.data)


def test_the_launcher_measures_a_large_datasets_sample_at_start(
        write_dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's warm-up stores each large dataset's token sample under the
    Datasets page's default view, so that page's first visit ever reads it back."""
    from pages._ui import launch
    from target_core.datasets import discover

    folder = write_dataset(_corpus(), [query_record("q1", "t1", database_id="db1")],
                           meta={"name": "sized", "task": "qa"})
    workspace = tmp_path / "ws"
    monkeypatch.setenv("TARGET_WORKSPACE", str(workspace))
    monkeypatch.setenv("TARGET_DATASETS", str(folder))
    settings = load_settings()
    load_dataset(folder, settings)  # writes its corpus index
    registry._cache.clear()
    name = next(n for n, e in discover(settings).items() if Path(e.location) == folder)
    found = open_lookup(name, settings)
    assert isinstance(found, lookup.DatasetLookup)
    stored = sizes_path(workspace, found, TableView(), get_counter(), sample=True)
    assert not stored.exists()
    launch._measure_samples()
    assert stored.is_file()
    monkeypatch.setattr(dataset_sizes, "_count", _no_counting)  # the page reads it back
    assert not dataset_summary(found, TableView(), workspace).exact

    summarised: list[object] = []  # (the warm-up swallows errors: count, do not raise)
    monkeypatch.setattr(dataset_sizes, "dataset_summary", lambda *a: summarised.append(a))
    launch._measure_samples()  # stored: a later start reads nothing
    assert summarised == []


def test_the_tables_grid_leaves_out_ids_and_a_kind_every_row_shares() -> None:
    from target_core.read_models.dataset_sizes import browsed_columns

    rows = pd.DataFrame({"table": ["wiki/a", "wiki/b"], "database_id": ["wiki"] * 2,
                         "table_id": ["a", "b"], "title": ["A", "B"], "kind": ["table"] * 2})
    assert browsed_columns(rows) == ["table", "title"]
    mixed = rows.assign(kind=["table", "passage"])
    assert browsed_columns(mixed) == ["table", "title", "kind"]
