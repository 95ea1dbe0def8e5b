"""Empty cells are blank: no page shows the text "None" (or "nan") in a table. Streamlit
draws None in a text column as a grey "None", so every frame a page shows is checked
for None and NaN in its object columns (numeric columns draw NaN blank). And no page
shows a Markdown escape ("concert\\_singer"): every text element is rendered as
Markdown renders it and every table cell read as it is drawn."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import markdown
import pandas as pd
import pytest

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.experiments.reproduce import reproduction_configs
from target_core.run_config import GenerationConfig, RunConfig


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
    # a run under way and a cancelled one: no metrics yet, blank cells in the runs table
    store = RunStore.in_workspace(settings.workspace)
    for limit in (7, 8):
        run, _ = store.start_run(RunConfig("demo-qa", "bm25", limit=limit), task="qa",
                                 dataset_fingerprint="unfinished", n_queries=limit,
                                 versions={})
        made[f"unfinished-{limit}"] = run.run_id
    store.cancel_run(made["unfinished-8"])
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
        ("pages/overview.py", {"mode": "reproduce"}),
        ("pages/overview.py", {"mode": "reproduce", "dataset": "demo-qa"}),
        ("pages/overview.py", {"mode": "reproduce", "dataset": "demo-qa", "paper": "FeTaQA"}),
        ("pages/overview.py", {"slice": "difficulty"}),
        ("pages/datasets.py", {"dataset": "demo-sql", "section": "Tables"}),
        ("pages/datasets.py", {"dataset": "demo-sql", "section": "Queries"}),
        # an integer column with empty cells ("Peak position")
        ("pages/datasets.py", {"dataset": "demo-qa", "section": "Tables",
                               "table": "wiki/Sander_Nordin_discography_1"}),
        ("pages/datasets.py", {"dataset": "demo-docs"}),
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


_ESCAPED = re.compile(r"\\[_*]")
"""A backslash before _ or *: Markdown's escape, shown as typed where it is not parsed
(a code span, a table cell, st.text) or typed twice."""
_MARKDOWN_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "info",
                      "warning", "error", "success")


def _rendered(source: str) -> str:
    """`source` as Markdown draws it, tags stripped (Python-Markdown: the escapes of
    CommonMark for _ and *, code spans verbatim)."""
    return re.sub(r"<[^>]+>", "", markdown.markdown(source))


def _escaped_texts(at) -> list[str]:
    """The texts a page draws that show a Markdown escape."""
    shown = [_rendered(e.value) for kind in _MARKDOWN_ELEMENTS for e in at.get(kind)]
    shown += [_rendered(e.label) for e in at.expander]
    shown += [str(e.value) for kind in ("text", "code") for e in at.get(kind)]
    for element in at.dataframe:
        frame = element.value
        if isinstance(frame, pd.DataFrame):
            shown += [str(c) for c in frame.columns]
            shown += [v for column in frame.columns for v in frame[column]
                      if isinstance(v, str)]
    return [text for text in shown if _ESCAPED.search(text)]


def test_rendered_text_is_read_as_drawn() -> None:
    """The check's own rule: an escape Markdown consumes is fine, one it shows is not."""
    from pages._ui.text import code, plain

    assert not _ESCAPED.search(_rendered(f"database {plain('concert_singer')}"))
    assert _ESCAPED.search(_rendered(f"database `{plain('concert_singer')}`"))
    assert _rendered(f"database {code('concert_singer')}") == "database concert_singer"
    assert not _ESCAPED.search(_rendered(code("a_b*c")))


def test_no_page_shows_none_in_a_table_or_an_escaped_markdown_character(
        app: Callable, runs: dict[str, str]) -> None:
    """One walk of every page (the workspace takes half a minute to build): no table
    cell is null, no text shows a Markdown escape."""
    nulls, escaped = {}, {}
    for page, params in _pages(runs):
        at = app(page, **params)
        assert not at.exception and not at.error, (page, params, at.error)
        if params.get("dataset") and params.get("mode") == "reproduce":
            assert at.dataframe, "no reproduction table: nothing checked"
        for i, frame in enumerate(at.dataframe):
            value = frame.value
            if isinstance(value, pd.DataFrame) and (bad := _none_cells(value)):
                nulls[f"{page} {params} #{i}"] = bad
        if bad := _escaped_texts(at):
            escaped[f"{page} {params}"] = bad[:3]
    assert not nulls, nulls
    assert not escaped, escaped
