"""Issue 28's display bugs, each pinned where its rule lives (the page walks in
tests/test_blank_cells.py check every page for None cells and shown escapes)."""

from __future__ import annotations

from pathlib import Path

from target_core.config import load_settings
from target_core.datasets.registry import list_datasets
from target_core.engine.store import RunStore
from target_core.read_models.answer import _frame, _note
from target_core.read_models.home import datasets_frame
from target_core.read_models.reproduce import default_dataset
from target_core.read_models.runs import runs_table
from target_core.run_config import RunConfig


def test_one_row_is_singular() -> None:
    assert _note({"rows": [[1]], "n_rows": 1, "ms": 2.0}).startswith("1 row · ")
    assert _note({"rows": [[1], [2]], "n_rows": 2}).startswith("2 rows · ")


def test_a_sql_null_is_a_blank_cell() -> None:
    frame = _frame({"columns": ["a", "b"], "rows": [[1, None], [2, "x"], [3]]})
    assert not frame.isna().any().any()
    assert frame["b"].tolist() == ["", "x", ""] and frame["a"].tolist() == [1, 2, 3]


def test_running_and_cancelled_runs_show_blank_metrics(tmp_path: Path) -> None:
    store = RunStore.in_workspace(tmp_path)
    runs = []
    for limit in (3, 4):
        run, _ = store.start_run(RunConfig("demo-qa", "bm25", limit=limit), task="qa",
                                 dataset_fingerprint="f", n_queries=limit, versions={})
        runs.append(run.run_id)
    store.cancel_run(runs[1])
    table = runs_table(store.list_runs())
    assert not table.isna().any().any(), table
    assert set(table["R@k"]) == {""} and set(table["ms p50"]) == {""}


def test_home_counts_tables_and_passages_as_the_datasets_page(tmp_path: Path) -> None:
    infos = list_datasets(load_settings(tmp_path))
    frame = datasets_frame(infos).set_index("name")
    assert not frame.isna().any().any()
    # demo-docs is a text corpus: no tables, 175 passages (the Datasets page's figures)
    assert frame.loc["demo-docs", "tables"] == "0"
    assert frame.loc["demo-docs", "passages"] == "175"
    assert frame.loc["demo-qa", "passages"] == ""
    # the reproduction (TARGET's Table 2, over tables) opens on a dataset with tables
    assert infos[0].name == "demo-docs" and default_dataset(infos) == "demo-fact"
