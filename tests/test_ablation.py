"""Ablations: the variants, runs reused and resumed, the Table 2 layout, paired p-values
(the same as compare's) and the per-query sensitivity on a dataset built so that the
title, the rows or neither decides each query; the CLI on the demo data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import query_record, table_record
from target_core.actions.experiments import run_ablation
from target_core.analysis.compare import compare_runs
from target_core.engine.store import RunStore
from target_core.errors import ConfigError
from target_core.read_models.ablation import ablation_variants, load_ablation
from target_core.table_view import TableView

ROOT = Path(__file__).resolve().parent.parent


def test_default_variants_follow_the_issue() -> None:
    variants = ablation_variants()
    assert [v.name for v in variants] == [
        "all rows", "w/o title", "first 100 rows", "w/o title, first 100 rows",
        "header only", "w/o title, header only", "csv format", "json format"]
    assert variants[0].view == TableView()
    assert variants[1].view == TableView(title=False, section_title=False)
    assert variants[4].view == TableView(rows=0)
    assert variants[7].view == TableView(format="json")
    assert [v.name for v in ablation_variants(rows=(0,), formats=("markdown",))] == [
        "header only", "w/o title, header only"]
    with pytest.raises(ConfigError):
        ablation_variants(formats=("yaml",))
    with pytest.raises(ConfigError):
        ablation_variants(rows=())


def _topic_tables() -> list[dict]:
    """Ten tables with the same header; each title names a place that no cell names, and
    each first row holds a distinctive item."""
    places = ["Arlen", "Bexley", "Corran", "Dunmore", "Elgin", "Fairholt", "Garrow",
              "Halden", "Inver", "Jesmond"]
    items = ["zircon", "yarrow", "xylem", "walnut", "violet", "umber", "tansy", "sorrel",
             "quartz", "poppy"]
    return [table_record(f"stock_{i}", [["item", "count"], [items[i], i + 1]],
                         title=f"{place} depot stock") for i, place in enumerate(places)]


@pytest.fixture
def ablation_dataset(write_dataset) -> Path:
    queries = [  # 5 queries only the title answers, 5 only the rows answer
        *[dict(query_record(f"title-{i}", f"stock_{i}"), query=f"stock held in {place}")
          for i, place in enumerate(["Arlen", "Bexley", "Corran", "Dunmore", "Elgin"])],
        *[dict(query_record(f"rows-{i}", f"stock_{i}"), query=f"how many {item} items")
          for i, item in zip(range(5, 10), ["umber", "tansy", "sorrel", "quartz", "poppy"],
                             strict=True)],
    ]
    return write_dataset(_topic_tables(), queries, meta={"name": "stock", "task": "qa"})


def test_run_ablation_table_and_sensitivity(ablation_dataset: Path, settings) -> None:
    store = RunStore.in_workspace(settings.workspace)
    variants = ablation_variants(rows=(None, 0), formats=("markdown", "csv"))
    seen = []
    report = run_ablation(store, settings, str(ablation_dataset), "bm25", top_k=3,
                          variants=variants, on_variant=lambda i, n, name: seen.append(
                              (i, n, name)))
    assert seen == [(0, 5, "all rows"), (1, 5, "w/o title"), (2, 5, "header only"),
                    (3, 5, "w/o title, header only"), (4, 5, "csv format")]
    assert report.complete and report.k == 3
    table = report.table().set_index("variant")
    assert table.loc["all rows", "R@1"] == 1.0
    assert table.loc["w/o title", "R@1"] == 0.5  # the rows queries only
    assert table.loc["header only", "R@1"] == 0.5  # the title queries only
    assert table.loc["w/o title, header only", "R@1"] < 0.5
    assert report.italic_rows() == [1, 2, 3]
    sensitivity = report.sensitivity()
    assert sensitivity["only with the title"] == [f"title-{i}" for i in range(5)]
    assert sensitivity["only with rows"] == [f"rows-{i}" for i in range(5, 10)]
    assert sensitivity["only without the title"] == sensitivity["only header only"] == []
    # p-values: McNemar on found at k (every gold table within k), Holm over the variants
    runs = [v.run.run_id for v in report.variants]
    expected = {p.other: p.tests[0].p_holm for p in compare_runs(store, runs, k=3).pairs}
    assert report.variants[0].p_value is None
    assert {v.run.run_id: v.p_value for v in report.variants[1:]} == expected
    assert json.loads(json.dumps(report.to_dict()))["table"][0]["p vs base"] is None


def test_ablation_reuses_complete_runs_and_shows_missing_ones(ablation_dataset: Path,
                                                              settings) -> None:
    store = RunStore.in_workspace(settings.workspace)
    variants = ablation_variants(rows=(None,), formats=("markdown",))
    partial = load_ablation(store, settings, str(ablation_dataset), "bm25", top_k=3,
                            variants=variants)
    assert not partial.complete and partial.hits.empty
    first = run_ablation(store, settings, str(ablation_dataset), "bm25", top_k=3,
                         variants=variants)
    again = run_ablation(store, settings, str(ablation_dataset), "bm25", top_k=3,
                         variants=variants)
    assert [v.run.run_id for v in again.variants] == [v.run.run_id for v in first.variants]
    assert len(store.list_runs()) == 2


def test_ablate_cli_on_demo_data(tmp_path: Path) -> None:
    env = {**os.environ, "TARGET_WORKSPACE": str(tmp_path / "ws")}
    command = [sys.executable, "-m", "target_core", "ablate", "--dataset", "demo-qa",
               "--retriever", "bm25", "--limit", "60", "--rows", "all,0", "--formats",
               "markdown"]
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=True)
    data = json.loads(done.stdout)
    assert [row["variant"] for row in data["table"]] == [
        "all rows", "w/o title", "header only", "w/o title, header only"]
    assert data["italic_rows"] == [1, 2, 3]
    with_title, without = data["table"][0]["R@10"], data["table"][1]["R@10"]
    assert with_title > without  # the demo's title-only and sibling queries need titles
    assert data["table"][1]["p vs base"] < 0.05
    text = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True).stdout
    assert "* w/o title" in text and "only with the title" in text
    bad = subprocess.run([*command[:-4], "--rows", "all,many"], capture_output=True,
                         text=True, env=env, cwd=ROOT)
    assert bad.returncode == 2 and "many" in bad.stderr
