"""Headline metrics per slice of the queries' metadata (difficulty, database_id,
failure_mode, any extra field): GTR-T's Figure 5 when sliced by difficulty, on the
Overview and the Compare page (analysis/slices.py, figures/slices.py and
read_models/slices.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from target_core.analysis.slices import (
    MAX_FIELD_VALUES,
    MISSING,
    field_values,
    metadata_frame,
    slice_frame,
    slice_table,
)
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.figures.slices import slice_bars
from target_core.read_models.slices import by_slice, runs_by_slice
from target_core.run_config import GenerationConfig, RunConfig
from target_core.types import Query


@pytest.fixture(scope="module")
def sql_runs(tmp_path_factory: pytest.TempPathFactory):
    settings = load_settings(tmp_path_factory.mktemp("levels"))
    runs = [run_retrieval(RunConfig("demo-sql", retriever, limit=80,
                                    generation=GenerationConfig("heuristic")),
                          settings=settings).run for retriever in ("bm25", "tfidf")]
    store = RunStore.in_workspace(settings.workspace)
    return store, runs, metadata_frame(load_dataset("demo-sql", settings).queries)


def test_frame_reads_every_stored_level(sql_runs) -> None:
    """Sliced by difficulty, the mean per-query EX, EM and VES are the stored per-level run
    metrics (`execution_accuracy/easy`, ...): one definition, two routes."""
    store, runs, metadata = sql_runs
    frame = slice_frame(store, runs, metadata, "difficulty")
    for run in runs:
        mine = frame[frame["run_id"] == run.run_id]
        for name, stored in (("EX", "execution_accuracy"), ("EM", "exact_set_match"),
                             ("VES", "ves")):
            part = mine[mine["name"] == name]
            expected = {k.split("/")[1]: v for k, v in run.metrics.items()
                        if k.startswith(f"{stored}/")}
            assert expected  # demo-sql queries carry difficulties
            assert dict(zip(part["slice"], part["value"], strict=True)) == pytest.approx(
                expected)
        assert set(mine["name"]) == {"R@1", "R@1 tables", "EX", "EM", "VES"}
    table = slice_table(frame)
    assert list(table["slice"]) == [lv for lv in ("easy", "medium", "hard", "extra")
                                    if lv in set(frame["slice"])]
    assert table["queries"].sum() == 80
    assert list(table.columns[2:7]) == ["bm25 → heuristic · R@1",
                                        "bm25 → heuristic · R@1 tables",
                                        "bm25 → heuristic · EX", "bm25 → heuristic · EM",
                                        "bm25 → heuristic · VES"]
    figure = slice_bars(frame, "difficulty")
    assert [a.text for a in figure.layout.annotations] == ["R@1", "R@1 tables", "EX", "EM",
                                                           "VES"]
    assert figure.layout.xaxis.type == "category"
    assert len(figure.data) == 5 * len(runs)


def test_any_field_slices_and_recall_is_the_per_query_mean(sql_runs) -> None:
    store, runs, metadata = sql_runs
    view = by_slice(store, runs[:1], metadata, "database_id", {runs[0].run_id: "bm25"})
    scores = {s.query_id: s.metrics for s in store.query_scores(runs[0].run_id)}
    by_db: dict[str, list[float]] = {}
    for qid, metrics in scores.items():
        by_db.setdefault(metadata.at[qid, "database_id"], []).append(metrics["db_hit@1"])
    row = view.table.set_index("slice")
    for database, values in by_db.items():
        assert row.at[database, "bm25 · R@1"] == pytest.approx(sum(values) / len(values))
        assert row.at[database, "queries"] == len(values)
    assert by_slice(store, runs, metadata, "nope").empty


def _query(qid: str, **meta: object) -> Query:
    return Query(qid, f"question {qid}", "a", (("wiki", "t1"),), "wiki",
                 difficulty=meta.pop("difficulty", None), meta=meta)  # type: ignore[arg-type]


def test_metadata_fields_are_scalar_fields_with_a_few_values() -> None:
    queries = [_query("q1", difficulty="hard", failure_mode="sibling", kind=True,
                      evidence=[{"row": 1}], note="x", serial=1),
               _query("q2", difficulty="easy", failure_mode=None, kind=False,
                      evidence=[], note="x", serial=2),
               _query("q3", kind=True, note="x", serial=3)]
    frame = metadata_frame(queries)
    # database_id and note have one value; evidence holds lists
    assert list(frame.columns) == ["difficulty", "failure_mode", "kind", "serial"]
    assert list(frame["difficulty"]) == ["hard", "easy", MISSING]
    assert list(frame["failure_mode"]) == ["sibling", MISSING, MISSING]
    assert list(frame["kind"]) == ["true", "false", "true"]
    assert field_values(frame)["difficulty"] == ["easy", "hard", MISSING]
    many = metadata_frame([_query(f"q{i}", serial=i) for i in range(MAX_FIELD_VALUES + 1)])
    assert "serial" not in many.columns
    assert metadata_frame([]).empty


def test_a_run_without_the_queries_metadata_adds_nothing(sql_runs) -> None:
    store, runs, _ = sql_runs
    metadata = pd.DataFrame({"difficulty": ["easy", "hard"]},
                            index=pd.Index(["x1", "x2"], name="query_id"))
    assert slice_frame(store, runs, metadata, "difficulty").empty
    assert by_slice(store, runs, metadata, "difficulty").empty


def test_pages_show_the_slices(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    ids = [run_retrieval(RunConfig("demo-sql", r, limit=40,
                                   generation=GenerationConfig("heuristic")),
                         settings=settings).run.run_id for r in ("bm25", "tfidf")]
    at = app("pages/overview.py")
    assert "By query metadata" in [h.value for h in at.subheader]
    assert at.selectbox(key="overview-slice-demo-sql").value == "difficulty"
    # 4 levels against 2 runs x 5 metrics: a row per run and metric
    table = next(d.value for d in at.dataframe
                 if list(d.value.columns[:2]) == ["run", "metric"])
    levels = [c.partition(" (") for c in table.columns[2:]]
    assert [level for level, _, _ in levels] == ["easy", "medium", "hard", "extra"]
    assert sum(int(count.rstrip(")")) for _, _, count in levels) == 40
    assert list(table["metric"][:5]) == ["R@1", "R@1 tables", "EX", "EM", "VES"]
    assert set(table["run"]) == {"bm25 → heuristic", "tfidf → heuristic"}
    at = app("pages/compare.py", runs=",".join(ids), slice="database_id")
    assert not at.error
    assert at.selectbox(key="compare-slice-demo-sql").value == "database_id"
    # fewer databases than the 2 runs' 10 metrics: a row per run and metric again
    table = next(d.value for d in at.dataframe
                 if list(d.value.columns[:2]) == ["run", "metric"])
    assert sum(int(c.rpartition(" (")[2].rstrip(")")) for c in table.columns[2:]) == 40
    cells = dict(zip(table["metric"], table[table.columns[2]], strict=False))
    assert len(cells["EX"].partition(".")[2]) == 3 and len(cells["VES"].partition(".")[2]) == 2
    at.selectbox(key="compare-slice-demo-sql").set_value("difficulty").run()
    assert at.query_params["slice"] in ("difficulty", ["difficulty"])
    table = next(d.value for d in at.dataframe
                 if list(d.value.columns[:2]) == ["run", "metric"])
    assert [c.split(" (")[0] for c in table.columns[2:]] == ["easy", "medium", "hard",
                                                             "extra"]


def test_a_run_per_row_names_each_value_and_its_queries() -> None:
    """runs_by_slice against slice_table, worked by hand: the same means, BLEU with 2
    decimals, a blank where a run has no query with the value; by_slice shows the
    orientation with fewer columns."""
    frame = pd.DataFrame({
        "run_id": ["r1", "r1", "r1", "r2"], "run": ["bm25", "bm25", "bm25", "tfidf"],
        "name": ["R@10", "R@10", "BLEU", "R@10"],
        "metric": ["recall_micro@10", "recall_micro@10", "bleu", "recall_micro@10"],
        "slice": ["hard", "easy", "easy", "hard"], "value": [0.5, 1.0, 12.345, 0.25],
        "queries": [2, 3, 3, 2]})
    table = runs_by_slice(frame)
    assert list(table.columns) == ["run", "metric", "easy (3)", "hard (2)"]
    assert table.to_dict("records") == [
        {"run": "bm25", "metric": "R@10", "easy (3)": "1.000", "hard (2)": "0.500"},
        {"run": "bm25", "metric": "BLEU", "easy (3)": "12.35", "hard (2)": ""},
        {"run": "tfidf", "metric": "R@10", "easy (3)": "", "hard (2)": "0.250"}]
    wide = slice_table(frame)
    assert list(wide.columns) == ["slice", "queries", "bm25 · R@10", "bm25 · BLEU",
                                  "tfidf · R@10"]
    assert len(table.columns) < len(wide.columns)
    many = frame.assign(slice=["a", "b", "c", "d"], run_id="r1", run="bm25", name="R@10")
    assert list(runs_by_slice(many).columns) == ["run", "metric", "a (2)", "b (3)",
                                                 "c (3)", "d (2)"]
    assert list(slice_table(many).columns) == ["slice", "queries", "bm25 · R@10"]


def test_bars_escape_values_and_run_names() -> None:
    frame = pd.DataFrame({"run_id": ["r1"], "run": ["<b>run</b>"], "name": ["R@10"],
                          "metric": ["recall@10"], "slice": ["<script>x</script>"],
                          "value": [0.5], "queries": [3]})
    figure = slice_bars(frame, "tag")
    assert list(figure.data[0].x) == ["&lt;script&gt;x&lt;/script&gt;"]
    assert figure.data[0].name == "&lt;b&gt;run&lt;/b&gt;"
    assert slice_table(frame).loc[0, "slice"] == "<script>x</script>"  # a table is text
