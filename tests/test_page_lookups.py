"""The Ablations, Run and Overview (reproduction) pages open a large folder dataset
through its corpus index (datasets/lookup.py), never loading the corpus, with the same
numbers as the full load: the ablation report and its sensitivity lists, the schema
default, the haystack pool, the stored reproduction and a launch's reuse of a run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from target_core.actions.experiments import run_ablation
from target_core.config import load_settings
from target_core.datasets import load_dataset, lookup, open_lookup, registry
from target_core.engine.store import RunStore
from target_core.engine.workers import launch_run
from target_core.experiments.ablation import ablation_variants
from target_core.experiments.ablation import has_schema_context as schema_of_tables
from target_core.experiments.reproduce import stored_reproduction
from target_core.read_models.ablation import (
    has_schema_context,
    load_ablation,
    sensitivity_frame,
)
from target_core.read_models.haystack import pool_size
from target_core.run_config import RunConfig
from tests.conftest import query_record, table_record

VARIANTS = ablation_variants([None, 0], ["markdown"])  # all rows, header only, each ± title


pytestmark = pytest.mark.usefixtures("index_every_corpus")


def _loaded() -> set[str]:
    """The names of the datasets loaded in full so far."""
    return {dataset.name for dataset in registry._cache.values()}


def test_ablation_reads_through_the_index_match_the_full_load(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    store = RunStore.in_workspace(settings.workspace)
    run_ablation(store, settings, "demo-qa", "bm25", limit=40, variants=VARIANTS)
    full = load_dataset("demo-qa", settings)
    sql = load_dataset("demo-sql", settings)
    loaded = load_ablation(store, settings, full, "bm25", limit=40, variants=VARIANTS)
    repro = stored_reproduction(store, full)
    base = RunConfig("demo-qa", "bm25", limit=40)
    reused = launch_run(base, settings=settings, dataset=full, spawn=False).reused_run
    registry._cache.clear()

    found, found_sql = open_lookup("demo-qa", settings), open_lookup("demo-sql", settings)
    assert isinstance(found, lookup.DatasetLookup)
    assert isinstance(found_sql, lookup.DatasetLookup)
    indexed = load_ablation(store, settings, found, "bm25", limit=40, variants=VARIANTS)
    assert indexed.to_dict() == loaded.to_dict()
    groups = indexed.sensitivity()
    assert any(groups.values())
    for group in groups:
        assert sensitivity_frame(indexed, found, group).equals(
            sensitivity_frame(loaded, full, group))
    assert has_schema_context(found) is schema_of_tables(full) is False
    assert has_schema_context(found_sql) is schema_of_tables(sql) is True
    assert stored_reproduction(store, found) == repro
    again = launch_run(base, settings=settings, dataset=found, spawn=False).reused_run
    assert reused is not None and again is not None and again.run_id == reused.run_id
    assert found.n_tables == full.n_tables == 440
    assert not registry._cache, "a read model loaded the whole dataset"


def test_schema_context_and_haystack_pool_from_the_index(write_dataset, tmp_path: Path
                                                         ) -> None:
    settings = load_settings(tmp_path / "ws")
    corpus = [table_record(f"t{i}", [["name", f"col{i % 4}"], ["primary_key", i]],
                           title=f"Table {i}") for i in range(20)]
    queries = [query_record("q1", "t1")]
    plain = write_dataset(corpus, queries, name="plain")  # "primary_key" only in cells
    keyed = write_dataset([*corpus[:-1], {**corpus[-1], "context": {"primary_key": "name"}}],
                          queries, name="keyed")
    falsy = write_dataset([{**t, "context": {"primary_key": ""}} for t in corpus], queries,
                          name="falsy")
    # a haystack source: copies of three tables (same content, other keys), five others
    copies = [{**t, "database_id": "copy"} for t in corpus[2:5]]
    others = [table_record(f"o{i}", [["name", f"col{i % 4}"], ["x", i]]) for i in range(5)]
    source = write_dataset([*copies, *others], name="source")
    (source / "queries.jsonl").unlink()  # a haystack corpus: tables without queries
    for folder in (plain, keyed, falsy):
        full = load_dataset(folder, settings)
        registry._cache.clear()
        found = open_lookup(folder, settings)
        assert isinstance(found, lookup.DatasetLookup)
        assert has_schema_context(found) is schema_of_tables(full)
        assert pool_size(found, [str(source)], settings) == pool_size(
            full, [str(source)], settings)
    assert pool_size(open_lookup(plain, settings), [str(source)], settings) == 5
    assert [has_schema_context(open_lookup(f, settings)) for f in (plain, keyed, falsy)] \
        == [False, True, False]
    for folder in (plain, keyed, falsy):  # an index written before it kept context keys
        index = open_lookup(folder, settings).table_index
        assert isinstance(index, lookup.LazyTables)
        databases = index.database_count()
        with sqlite3.connect(index.index) as db:
            db.execute("DELETE FROM meta WHERE key IN ('context_keys', 'database_count')")
        old = lookup.LazyTables(index.corpus, index.index)
        assert old.database_count() == databases == 1  # counted in SQL
    assert [lookup.LazyTables(i.corpus, i.index).any_context(["primary_key"]) for i in
            (open_lookup(f, settings).table_index for f in (plain, keyed, falsy))] \
        == [False, True, False]


def test_the_haystack_pool_never_loads_an_indexed_source(write_dataset, tmp_path: Path
                                                        ) -> None:
    """The Ablations page of a small dataset counts the pool of a large indexed source
    (a million tables beside the demos took minutes and gigabytes, loading it whole):
    the count equals the pool's length, both ways round, and no source loads."""
    from target_core.engine.haystack import distractor_pool

    settings = load_settings(tmp_path / "ws")
    own = [table_record(f"t{i}", [["name", f"col{i % 4}"], ["x", i]], title=f"T{i}")
           for i in range(12)]
    small = write_dataset(own, [query_record("q1", "t1")], name="small")
    # the source: copies of four of them (same content, other keys: not distractors), a
    # near copy (same header, other rows: a distractor) and nine tables of other headers
    copies = [{**t, "database_id": "copy"} for t in own[3:7]]
    near = {**own[0], "table_id": "near", "table": [["name", "col0"], ["x", 99]]}
    others = [table_record(f"o{i}", [["city", "n"], ["x", i]]) for i in range(9)]
    big = write_dataset([*copies, near, *others], [query_record("q2", "o1")], name="big")
    loaded = {folder: load_dataset(folder, settings) for folder in (small, big)}
    expected = len(distractor_pool(loaded[small], (str(big),), settings)[0])
    reverse = len(distractor_pool(loaded[big], (str(small),), settings)[0])
    assert (expected, reverse) == (10, 8)
    registry._cache.clear()
    assert pool_size(loaded[small], [str(big)], settings) == expected
    assert pool_size(open_lookup(small, settings), [str(big)], settings) == expected
    assert pool_size(open_lookup(big, settings), [str(small)], settings) == reverse
    assert not _loaded(), "counting the pool loaded a dataset in full"


def test_pages_open_a_large_dataset_through_its_index(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    run_ablation(RunStore.in_workspace(settings.workspace), settings, "demo-qa", "bm25",
                 limit=40, variants=ablation_variants(formats=["markdown"]))
    registry._cache.clear()  # the index is written: the pages may read through it

    at = app("pages/ablations.py", dataset="demo-qa", limit="40")
    assert not at.error, at.error
    assert "demo-qa" not in _loaded(), "the Ablations page loaded demo-qa"
    assert at.table and at.metric  # the Table 2 layout and the sensitivity counts
    assert any(len(frame.value) for frame in at.dataframe)

    at = app("pages/run.py", dataset="demo-qa")
    assert not at.error, at.error
    assert "440 tables" in at.caption[0].value
    at.multiselect(key="run-specs").set_value(["bm25", "dense:openai"]).run()
    assert any("dense:openai" in i.value for i in at.info)  # a paid run: estimated
    assert "demo-qa" in _loaded()  # ... which counts every table's tokens
    registry._cache.clear()

    at = app("pages/overview.py", mode="reproduce", dataset="demo-qa")
    assert not at.error, at.error
    assert any("440" in c.value for c in at.caption)
    assert "demo-qa" not in _loaded(), "the reproduction loaded demo-qa"


def test_recall_curves_are_kept_until_the_run_changes(tmp_path: Path) -> None:
    from target_core.analysis import leaderboard
    from target_core.analysis.memo import clear_all
    from target_core.engine.runner import run_retrieval

    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("demo-qa", "bm25", limit=30), settings=settings).run
    store = RunStore.in_workspace(settings.workspace)
    clear_all()
    first = leaderboard.recall_curves(store, [store.get_run(run.run_id)])
    made = leaderboard._CURVES.misses
    again = leaderboard.recall_curves(store, [store.get_run(run.run_id)])
    assert leaderboard._CURVES.misses == made and again.equals(first)
    assert first["recall"].is_monotonic_increasing and len(first) == 10
    store.merge_run_metrics(run.run_id, {"judged": 1.0})  # the run changed: computed afresh
    leaderboard.recall_curves(store, [store.get_run(run.run_id)])
    assert leaderboard._CURVES.misses == made + 1
