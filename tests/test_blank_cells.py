"""Empty cells are blank: no page shows the text "None" (or "nan") in a table. Streamlit
draws None in a text column as a grey "None", so every frame a page shows is checked
for None and NaN in its object columns (numeric columns draw NaN blank). No page shows
a Markdown escape ("concert\\_singer"): every text element is rendered as Markdown
renders it and every table cell read as it is drawn. And no cell is cut: every cell's
text fits its column's width, but in the free-text columns whose row opens the whole
text (FREE_TEXT)."""

from __future__ import annotations

import json
import math
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
from target_core.read_models.cells import CELL_PADDING_PX, PAGE_PX, lines_needed
from target_core.read_models.text_width import text_px
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
        # its explanations run to a few lines: the drill-down wraps them
        ("pages/failures.py", {"run": sql, "category": "sibling-confusion"}),
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


LINE_PX, WRAPPING_ROW_PX = 20, 64
"""In rows taller than 64 px the grid wraps text, about 19 px a line (seen in chromium):
a wrapped cell fits when its lines do. A text's width is read_models.text_width's, the
advance widths of the grid's font measured in chromium (cells.lines_needed)."""
NAMED_WIDTHS = {"small": 75, "medium": 200, "large": 400}
SELECTION_PX = 35
"""The checkbox column of a grid whose rows can be selected."""
WIDE = {("pages/datasets.py", "query_id"): "the Queries grid: eight fields of each query",
        ("pages/matrix.py", "found"): "a column per run"}
"""Grids (page, first column) that may be wider than the page, and why; the others fit
PAGE_PX, the width the tables of a 1,500-pixel screen get (the browser tour checks that
in chromium, and agreed with _grid_px within 1 px on the Failures drill-down)."""
AUTO_MAX_PX = 500
"""An auto-sized column grows with its longest cell up to this (the pinned grid's
maxColumnAutoWidth, 31.25rem)."""
FREE_TEXT = {
    ("pages/datasets.py", "query"), ("pages/datasets.py", "answer"),
    ("pages/datasets.py", "gold"),  # the Queries grid: a row chosen shows its query whole
    ("pages/matrix.py", "question"),  # every run's cell opens the query in that run
}


def _cut_cells(page: str, element) -> list[str]:
    """The columns of a grid whose longest cell is wider than the column can show."""
    frame = element.value
    if not isinstance(frame, pd.DataFrame):
        return []
    config = json.loads(element.proto.columns or "{}")
    row_px = element.proto.row_height if element.proto.HasField("row_height") else 0
    lines = (row_px - CELL_PADDING_PX) // LINE_PX if row_px > WRAPPING_ROW_PX else 1
    cut = []
    for column in frame.columns:
        settings = config.get(str(column), {})
        if settings.get("hidden") or (page, str(column)) in FREE_TEXT:
            continue
        width = settings.get("width")
        room = NAMED_WIDTHS.get(width, width) if width else AUTO_MAX_PX
        shown = _link_text(settings.get("type_config", {}).get("display_text"))
        texts = [shown(v) for v in frame[column] if isinstance(v, str)]
        if texts and (longest := max(texts, key=text_px)) and \
                lines_needed(longest, room) > lines:
            cut.append(f"{column}: {longest[:60]!r} in {room} px, {lines} line(s)")
    return cut


def _grid_px(element) -> int:
    """How wide the grid draws `element`: its shown columns' widths (set, or sized to the
    header and the longest cell up to AUTO_MAX_PX), the index unless hidden, and the
    selection column."""
    frame = element.value
    if not isinstance(frame, pd.DataFrame):
        return 0
    config = json.loads(element.proto.columns or "{}")
    order = list(element.proto.column_order) or [str(c) for c in frame.columns]
    total = 0.0
    for column in frame.columns:
        settings = config.get(str(column), {})
        if settings.get("hidden") or str(column) not in order:
            continue
        width = settings.get("width")
        if width:
            total += NAMED_WIDTHS.get(width, width)
            continue
        shown = _link_text(settings.get("type_config", {}).get("display_text"))
        texts = [str(settings.get("label") or column),
                 *(shown(v) if isinstance(v, str) else str(v) for v in frame[column])]
        total += min(AUTO_MAX_PX, max(map(text_px, texts)) + CELL_PADDING_PX)
    if not config.get("_index", {}).get("hidden"):
        total += max(map(text_px, map(str, frame.index)), default=0) + CELL_PADDING_PX
    if list(element.proto.selection_mode):
        total += SELECTION_PX
    return math.ceil(total)


def _link_text(display: str | None) -> Callable[[str], str]:
    """What a cell shows: its text, a link column's display text, or the part of its URL
    the display text's group picks (a regex such as "run=(.+)$")."""
    if not display:
        return str
    if "(" not in display:
        return lambda url: display
    pattern = re.compile(display)
    return lambda url: (found.group(1) if (found := pattern.search(url)) else url)


def test_the_cut_cell_rule() -> None:
    """The check's own rule, on a grid drawn in AppTest."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string("""
import pandas as pd
import streamlit as st
frame = pd.DataFrame({"short": ["ok"], "long": ["x" * 90], "sized": ["y" * 40],
                      "hidden": ["z" * 90], "link": ["http://a/" + "w" * 90],
                      "id": ["query?run=" + "9" * 18], "id_cut": ["query?run=" + "9" * 19]})
st.dataframe(frame, column_config={
    "sized": st.column_config.TextColumn(width="medium"), "hidden": None,
    "link": st.column_config.LinkColumn(display_text="open"),
    "id": st.column_config.LinkColumn(display_text="run=(.+)$", width=142),
    "id_cut": st.column_config.LinkColumn(display_text="run=(.+)$", width=142)})
""").run()
    # 90 x: 562 px in an auto-sized column (500); 40 y: 262 px in 200; a link shows its id,
    # 18 digits (125 px) fit 142 px less 16 of padding, 19 (132 px) do not
    assert [c.split(":")[0] for c in _cut_cells("page", at.dataframe[0])] == [
        "long", "sized", "id_cut"]
    wrapped = AppTest.from_string("""
import pandas as pd
import streamlit as st
frame = pd.DataFrame({"two": ["x" * 50], "three": ["y" * 150]})
st.dataframe(frame, row_height=60, column_config={
    "two": st.column_config.TextColumn(width=200), "three": st.column_config.TextColumn(width=200)})
st.dataframe(frame, row_height=56 + 1 * 20, column_config={
    "two": st.column_config.TextColumn(width=200), "three": st.column_config.TextColumn(width=200)})
""").run()
    assert len(_cut_cells("page", wrapped.dataframe[0])) == 2  # 60 px: no wrapping
    assert [c.split(":")[0] for c in _cut_cells("page", wrapped.dataframe[1])] == ["three"]


def test_wrapped_rows_are_as_tall_as_their_longest_cell() -> None:
    """read_models.cells.wrapped_row_height: no height when every cell fits one line, the
    grid's least wrapping height for two lines, then 20 px a line, up to its limit."""
    from target_core.read_models.cells import wrapped_row_height

    frame = pd.DataFrame({"a": ["x" * 20, "y" * 5], "b": ["z" * 100, ""]})
    assert wrapped_row_height(frame, {"a": 200}) is None  # 20 x: 125 px, one line of 184
    assert wrapped_row_height(frame, {"a": 100}) == 65  # 2 lines of 84 px: 56, at least 65
    assert wrapped_row_height(frame, {"a": 200, "b": 200}) == 4 * 20 + 16  # 100 z: 595 px
    assert wrapped_row_height(frame, {"b": 50}, most_lines=8) == 8 * 20 + 16


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
    cell is null or cut, no table is wider than the page (but WIDE), no text shows a
    Markdown escape."""
    nulls, escaped, cut, wide = {}, {}, {}, {}
    for page, params in _pages(runs):
        at = app(page, **params)
        assert not at.exception and not at.error, (page, params, at.error)
        if params.get("dataset") and params.get("mode") == "reproduce":
            assert at.dataframe, "no reproduction table: nothing checked"
        for i, frame in enumerate(at.dataframe):
            value = frame.value
            if isinstance(value, pd.DataFrame) and (bad := _none_cells(value)):
                nulls[f"{page} {params} #{i}"] = bad
            if too_wide := _cut_cells(page, frame):
                cut[f"{page} {params} #{i}"] = too_wide
            if _grid_px(frame) > PAGE_PX and (page, str(frame.value.columns[0])) not in WIDE:
                wide[f"{page} {params} #{i}"] = _grid_px(frame)
        if bad := _escaped_texts(at):
            escaped[f"{page} {params}"] = bad[:3]
    assert not nulls, nulls
    assert not escaped, escaped
    assert not cut, cut
    assert not wide, f"tables wider than the page's {PAGE_PX} px: {wide}"
