"""Cells as the dashboard draws them. Streamlit draws a null cell of any column type as
a grey "None" (a Styler's na_rep does not reach it), so a number column that may miss
values ("not measured", "the paper gives none") is shown as text, formatted here, with
a blank for the missing ones. Columns that are never missing stay numbers (they sort).
And how wide a cell's text is drawn, for widths and row heights that show it whole."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from target_core.serialize import cell_text


def formatted(value: object, spec: str) -> str:
    """`value` with the format `spec` (e.g. ".3f", "+.3f", ",.2f"); "" when missing."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    return format(value, spec)


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


PX_PER_CHAR, CELL_PADDING_PX, LINE_PX = 6.2, 16, 20
"""A grid cell's text as drawn (14px Source Sans, upper end: 5.4-6.2 px per character
measured in chromium on labels, p-values, verdicts and questions), the grid's padding on
both sides, and a wrapped line's height (about 19 px seen)."""
PAGE_PX = 978
"""The width of a page's tables on a 1,500-pixel screen (the sidebar open), seen in
chromium."""
WRAP_MIN_ROW_PX = 65
"""The pinned grid wraps text only in rows taller than 4rem (64 px)."""


def wrapped_row_height(frame: pd.DataFrame, widths: Mapping[str, int],
                       most_lines: int = 8) -> int | None:
    """A row height at which the grid wraps every cell of the columns in `widths`
    (column -> width in px) whole, or None when each fits on one line (the default
    row). Beyond `most_lines` lines a cell is cut: the caller's details show it."""
    lines = max((math.ceil(len(str(text)) * PX_PER_CHAR / (width - CELL_PADDING_PX))
                 for column, width in widths.items() for text in frame[column]), default=1)
    if lines <= 1:
        return None
    return max(WRAP_MIN_ROW_PX, min(lines, most_lines) * LINE_PX + CELL_PADDING_PX)


def text_widths(frame: pd.DataFrame, px_per_char: float = 6.8, most: int = 420
                ) -> dict[str, int]:
    """Column -> pixels that show its header and its longest cell whole, at most `most`.
    More per character than a body cell's (PX_PER_CHAR): headers, and the leaderboard's
    best cells, are drawn bold."""
    return {str(c): min(most, 20 + int(px_per_char * max(
        [len(str(c)), *(len(str(v)) for v in frame[c])]))) for c in frame.columns}
