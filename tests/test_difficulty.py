"""Answer quality per difficulty (GTR-T's Figure 5) from the per-level run metrics, on
the Overview and the Compare page."""

from __future__ import annotations

from pathlib import Path

import pytest

from target_core.analysis.difficulty import difficulty_bars, difficulty_frame, difficulty_table
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.types import GenerationConfig, RunConfig


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    settings = load_settings(tmp_path_factory.mktemp("levels"))
    return [run_retrieval(RunConfig("demo-sql", retriever, limit=80,
                                    generation=GenerationConfig("heuristic")),
                          settings=settings).run for retriever in ("bm25", "tfidf")]


def test_frame_reads_every_stored_level(runs) -> None:
    frame = difficulty_frame(runs)
    for run in runs:
        mine = frame[frame["run_id"] == run.run_id]
        expected = {(m, k.split("/")[1]): v for k, v in run.metrics.items()
                    for m in ("execution_accuracy", "exact_set_match")
                    if k.startswith(f"{m}/")}
        assert {(m, d): v for m, d, v in zip(mine["metric"], mine["difficulty"],
                                             mine["value"], strict=True)} == expected
        assert expected  # demo-sql queries carry difficulties
    levels = list(dict.fromkeys(frame["difficulty"]))
    order = ["easy", "medium", "hard", "extra"]
    assert levels == [lv for lv in order if lv in levels]
    table = difficulty_table(frame)
    assert list(table["run"]) == [r.config.label for r in runs]
    assert table.columns[1].startswith("EX ") and any(c.startswith("EM ") for c in table)
    figure = difficulty_bars(frame)
    assert [a.text for a in figure.layout.annotations] == ["EX", "EM"]
    assert figure.layout.xaxis.type == "category"
    assert len(figure.data) == 2 * len(runs)


def test_runs_without_levels_add_nothing(tmp_path: Path) -> None:
    run = run_retrieval(RunConfig("demo-sql", "bm25", limit=10),
                        settings=load_settings(tmp_path)).run
    assert difficulty_frame([run]).empty and difficulty_table(difficulty_frame([run])).empty


def test_pages_show_the_levels(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    ids = [run_retrieval(RunConfig("demo-sql", r, limit=40,
                                   generation=GenerationConfig("heuristic")),
                         settings=settings).run.run_id for r in ("bm25", "tfidf")]
    at = app("pages/overview.py")
    assert "By difficulty" in [h.value for h in at.subheader]
    at = app("pages/compare.py", runs=",".join(ids))
    assert "By difficulty" in [h.value for h in at.subheader]
    table = next(d.value for d in at.dataframe if "EX easy" in d.value.columns)
    assert len(table) == 2
