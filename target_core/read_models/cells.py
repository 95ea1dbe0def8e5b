"""Cells as the dashboard draws them. Streamlit draws a null cell of any column type as
a grey "None" (a Styler's na_rep does not reach it), so a number column that may miss
values ("not measured", "the paper gives none") is shown as text, formatted here, with
a blank for the missing ones. Columns that are never missing stay numbers (they sort).
And how wide a cell's text is drawn, for widths and row heights that show it whole."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from target_core.read_models.text_width import text_px
from target_core.serialize import cell_text


def formatted(value: object, spec: str) -> str:
    """`value` with the format `spec` (e.g. ".3f", "+.3f", ",.2f"); "" when missing."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    return format(value, spec)


TWO_DECIMALS = frozenset({"SB", "sacreBLEU", "BLEU", "VES", "ms", "ms p50"})
"""Scores on a 0-100 scale (corpus and sentence BLEU, BIRD's VES) and retrieval times."""
ONE_DECIMAL = frozenset({"reply tokens", "response ms"})
"""GTR's reply length and response time."""


def number_format(name: str) -> str:
    """The format of a metric column by its short name (TWO_DECIMALS: ".2f", ONE_DECIMAL:
    ".1f", the 0-1 scores ".3f"), on every page."""
    return ".2f" if name in TWO_DECIMALS else ".1f" if name in ONE_DECIMAL else ".3f"


def as_text(frame: pd.DataFrame, formats: Mapping[str, str]) -> pd.DataFrame:
    """A copy of `frame` whose columns in `formats` are text formatted by their spec,
    blank where a value is missing."""
    out = frame.copy()
    for column, spec in formats.items():
        out[column] = [formatted(v, spec) for v in out[column]]
    return out


def display_column(values: pd.Series) -> pd.Series:
    """A column of table cells as a reader wants it: whole numbers as integers (never
    "1984.000000") when every cell holds one, else the text the table holds (cell_text)
    with empty cells blank: an integer column with a gap is text, since a missing
    integer would be drawn as "None"."""
    if len(values) and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return values.astype("Int64")
    return values.map(lambda v: "" if _empty(v) else cell_text(v)).astype(object)


def _empty(value: object) -> bool:
    """None, or the NaN pandas puts in its place in a numeric column."""
    return value is None or (isinstance(value, float) and value != value)


CELL_PADDING_PX, LINE_PX = 16, 20
"""The grid's padding of a cell (8 px each side), and a wrapped line's height (about 19
px seen in chromium); a text's own width is text_width.text_px."""
PAGE_PX = 978
"""The width of a page's tables on a 1,500-pixel screen (the sidebar open), seen in
chromium."""
WRAP_MIN_ROW_PX = 65
"""The pinned grid wraps text only in rows taller than 4rem (64 px)."""


def lines_needed(text: str, width: int) -> int:
    """Lines a cell `width` px wide wraps `text` into (by its width, not at words)."""
    return max(1, math.ceil(text_px(text) / (width - CELL_PADDING_PX)))


def wrapped_row_height(frame: pd.DataFrame, widths: Mapping[str, int],
                       most_lines: int = 8) -> int | None:
    """A row height at which the grid wraps every cell of the columns in `widths`
    (column -> width in px) whole, or None when each fits on one line (the default
    row). Beyond `most_lines` lines a cell is cut: the caller's details show it."""
    lines = max((lines_needed(str(text), width)
                 for column, width in widths.items() for text in frame[column]), default=1)
    if lines <= 1:
        return None
    return max(WRAP_MIN_ROW_PX, min(lines, most_lines) * LINE_PX + CELL_PADDING_PX)


def text_widths(frame: pd.DataFrame, *, bold: pd.DataFrame | None = None, most: int = 420
                ) -> dict[str, int]:
    """Column -> pixels that show its header and its longest cell whole (text_px; a cell
    that `bold`, a mask like `frame`, marks in bold: the leaderboard's best), with 4 px to
    spare, at most `most`."""
    def cell_px(column: object) -> float:
        marks = [False] * len(frame) if bold is None else list(bold[column])
        return max((text_px(str(v), bold=b) for v, b in zip(frame[column], marks,
                                                             strict=True)), default=0.0)

    return {str(c): min(most, math.ceil(max(text_px(str(c)), cell_px(c)) + CELL_PADDING_PX
                                        + 4)) for c in frame.columns}
