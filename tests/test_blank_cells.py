"""Empty cells are blank: no page shows the text "None" (or "nan") in a table. Streamlit
draws None in a text column as a grey "None", so every frame a page shows is checked
for None and NaN in its object columns (numeric columns draw NaN blank)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from target_core.config import load_settings
from target_core.engine.reproduce import reproduction_configs
from target_core.engine.runner import run_retrieval
from target_core.types import GenerationConfig, RunConfig


@pytest.fixture
def runs(app, tmp_path: Path) -> dict[str, str]:
    settings = load_settings(tmp_path / "ws")
    made = {}
    for dataset in ("demo-qa", "demo-sql"):
        for spec in ("bm25", "tfidf"):
            made[f"{dataset}-{spec}"] = run_retrieval(
                RunConfig(dataset, spec, limit=30, generation=GenerationConfig("heuristic")),
                settings=settings).run.run_id
    made["demo-qa-plain"] = run_retrieval(RunConfig("demo-qa", "bm25", limit=30, top_k=5),
                                          settings=settings).run.run_id
    # the lexical Table 2 baselines, with and without a generator, on every query (as
    # the Overview asks by default): the reproduction tables have rows
    for generator in ("heuristic", None):
        for baseline, config in reproduction_configs("demo-qa", generator=generator):
            if baseline.retriever in ("ottqa:bm25", "ottqa:tfidf", "no-context"):
                run_retrieval(config, settings=settings)
    return made


def _none_cells(frame: pd.DataFrame) -> list[str]:
    """Columns with a null cell: Streamlit draws null as a grey "None" in every column
    type (a Styler's na_rep does not reach it)."""
    return [str(column) for column in frame.columns if frame[column].isna().any()]


def _pages(runs: dict[str, str]) -> list[tuple[str, dict[str, str]]]:
    qa, sql = runs["demo-qa-bm25"], runs["demo-sql-bm25"]
    return [
        ("pages/home.py", {}),
        ("pages/overview.py", {}),
        ("pages/overview.py", {"mode": "reproduce", "dataset": "demo-qa"}),
        ("pages/overview.py", {"mode": "reproduce", "dataset": "demo-qa", "paper": "FeTaQA"}),
        ("pages/overview.py", {"slice": "difficulty"}),
        ("pages/datasets.py", {"dataset": "demo-sql", "section": "Tables"}),
        ("pages/datasets.py", {"dataset": "demo-sql", "section": "Queries"}),
        ("pages/run.py", {"dataset": "demo-qa"}),
        ("pages/run.py", {"dataset": "demo-sql"}),
        ("pages/query.py", {"run": qa}),
        ("pages/query.py", {"run": sql}),
        ("pages/query.py", {"run": runs["demo-qa-plain"]}),
        ("pages/compare.py", {"runs": f"{qa},{runs['demo-qa-tfidf']}"}),
        ("pages/compare.py", {"runs": f"{sql},{runs['demo-sql-tfidf']}", "slice": "difficulty"}),
        ("pages/matrix.py", {"dataset": "demo-sql"}),
        ("pages/failures.py", {"run": qa}),
        ("pages/failures.py", {"run": sql}),
        ("pages/ablations.py", {"dataset": "demo-qa"}),
        ("pages/ablations.py", {"dataset": "demo-sql"}),
        ("pages/benchmark_builder.py", {}),
    ]


def test_no_page_shows_none_in_a_table(app: Callable, runs: dict[str, str]) -> None:
    shown = {}
    for page, params in _pages(runs):
        at = app(page, **params)
        assert not at.exception and not at.error, (page, params, at.error)
        if params.get("mode") == "reproduce":
            assert at.dataframe, "no reproduction table: nothing checked"
        for i, frame in enumerate(at.dataframe):
            value = frame.value
            if isinstance(value, pd.DataFrame) and (bad := _none_cells(value)):
                shown[f"{page} {params} #{i}"] = bad
    assert not shown, shown
