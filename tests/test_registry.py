"""Dataset registry: names, paths, TARGET_DATASETS, duplicates and typos."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import query_record, table_record
from target_core.config import load_settings
from target_core.datasets import discover, list_datasets, load_dataset, resolve
from target_core.errors import ConfigError, DatasetError, UnknownNameError


def _settings(tmp_path: Path, *extra: Path):
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "TARGET_DATASETS": os.pathsep.join(map(str, extra))})


def test_demo_and_hub_names_are_known(settings) -> None:
    known = discover(settings)
    assert {"demo-qa", "demo-fact", "demo-sql"} <= set(known)
    assert known["demo-qa"].kind == "demo"
    assert known["hub:fetaqa"].kind == "hub"


def test_path_resolves_like_a_name(handmade_dir: Path, settings) -> None:
    entry = resolve(str(handmade_dir), settings)
    assert entry.name == "handmade-qa" and entry.kind == "folder"
    assert load_dataset(handmade_dir, settings).name == "handmade-qa"


def test_datasets_path_holds_folders_or_parents(tmp_path: Path, write_dataset) -> None:
    parent = tmp_path / "mine"
    parent.mkdir()
    a = write_dataset(name="mine/alpha")
    write_dataset(name="mine/beta", meta={"name": "beta-renamed", "task": "qa"})
    single = write_dataset(name="gamma")
    known = discover(_settings(tmp_path, parent, single))
    assert {"alpha", "beta-renamed", "gamma"} <= set(known)
    assert known["alpha"].location == str(a)


def test_unknown_name_suggests_closest(settings) -> None:
    with pytest.raises(UnknownNameError) as info:
        resolve("demo-qq", settings)
    assert info.value.suggestion == "demo-qa"
    assert "did you mean 'demo-qa'?" in str(info.value)
    assert "demo-sql" in str(info.value) and "hub:spider" in str(info.value)


def test_path_that_is_not_a_dataset(tmp_path: Path, settings) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="not a dataset"):
        resolve(str(tmp_path / "empty"), settings)


def test_duplicate_names_are_rejected(tmp_path: Path, write_dataset) -> None:
    first = write_dataset(name="one/same")
    second = write_dataset(name="two/same")
    with pytest.raises(ConfigError, match="used twice") as info:
        discover(_settings(tmp_path, first.parent, second.parent))
    assert str(first) in str(info.value) and str(second) in str(info.value)


def test_list_reports_broken_dataset_without_hiding_others(tmp_path: Path,
                                                           write_dataset) -> None:
    write_dataset(name="lib/good")
    write_dataset(name="lib/bad", queries=[query_record("q1", "missing")])
    infos = {i.name: i for i in list_datasets(_settings(tmp_path, tmp_path / "lib"))}
    assert infos["good"].tables == 2 and infos["good"].error is None
    assert infos["bad"].tables is None and "not in the corpus" in infos["bad"].error


def test_reload_after_file_change(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(name="lib/live")
    settings = _settings(tmp_path, tmp_path / "lib")
    assert len(load_dataset("live", settings).tables) == 2
    corpus = folder / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + '{"database_id": "wiki", "table_id": "t3", '
                      '"table": [["x"]]}\n')
    assert len(load_dataset("live", settings).tables) == 3


def test_remote_listing_includes_hub_without_counts(settings) -> None:
    infos = {i.name: i for i in list_datasets(settings, remote=True)}
    assert infos["hub:bird"].tables is None and infos["hub:bird"].kind == "hub"
    assert "hub:bird" not in {i.name for i in list_datasets(settings)}


def test_table_record_helper_shape() -> None:
    assert table_record("t")["table"][0] == ["a", "b"]


def test_spider_folder_by_path_and_by_name(tmp_path: Path) -> None:
    from test_spider_loader import make_spider

    spider = make_spider(tmp_path / "lib" / "my_spider")
    settings = _settings(tmp_path, tmp_path / "lib")
    assert discover(settings)["my_spider"].kind == "spider"
    by_name = load_dataset("my_spider", settings)
    by_path = load_dataset(str(spider), settings)
    assert by_name.task == by_path.task == "sql"
    # the registry indexes the split's databases only, as TARGET's per-split corpora do
    used = {q.database_id for q in by_name.queries}
    assert {t.database_id for t in by_name.tables} == used
