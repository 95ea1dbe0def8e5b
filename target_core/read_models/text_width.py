"""How wide the dashboard's grids draw a text: the advance widths of 14px Source Sans
(the grid's font), regular and bold, measured once in Debian's chromium with canvas
measureText (a sum of them is within 1 px of the whole string's width: the font kerns
little). Characters not in the table count as a wide Latin letter, East Asian wide ones
as the font size."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

CHARS = "".join(chr(c) for c in range(32, 127)) + "→·–—≠✱…Δé°×≤≥✓✗±"
"""Printable ASCII, then the symbols the pages write (arrows, dots, dashes, marks)."""
REGULAR = (
    2.80, 4.05, 5.96, 6.96, 6.96, 11.54, 8.53, 3.49, 4.24, 4.24, 5.85, 6.96, 3.49, 4.35,
    3.49, 4.90, 6.96, 6.96, 6.96, 6.96, 6.96, 6.96, 6.96, 6.96, 6.96, 6.96, 3.49, 3.49,
    6.96, 6.96, 6.96, 5.95, 11.86, 7.52, 8.23, 7.61, 8.61, 7.38, 6.92, 8.64, 9.13, 3.68,
    6.17, 8.11, 6.80, 10.18, 9.06, 9.30, 7.92, 9.30, 7.97, 7.29, 7.50, 9.03, 7.34,
    11.00, 7.18, 6.66, 7.33, 4.24, 4.90, 4.24, 6.96, 7.00, 7.59, 7.06, 7.74, 6.10, 7.77,
    6.94, 4.04, 7.06, 7.62, 3.44, 3.46, 6.93, 3.57, 11.61, 7.66, 7.59, 7.77, 7.77, 4.86,
    5.87, 4.47, 7.62, 6.54, 10.07, 6.24, 6.54, 5.95, 4.24, 3.37, 4.24, 6.96, 8.67, 3.49,
    6.72, 11.20, 6.96, 11.73, 13.27, 8.23, 6.94, 4.63, 6.96, 6.96, 6.96, 8.57, 7.36,
    6.96)
BOLD = (
    2.80, 4.76, 7.52, 7.39, 7.39, 12.00, 9.34, 4.20, 4.82, 4.82, 6.40, 7.39, 4.20, 4.65,
    4.20, 4.75, 7.39, 7.39, 7.39, 7.39, 7.39, 7.39, 7.39, 7.39, 7.39, 7.39, 4.20, 4.20,
    7.39, 7.39, 7.39, 6.48, 12.63, 8.00, 8.47, 7.66, 8.89, 7.67, 7.34, 8.93, 9.44, 4.21,
    6.59, 8.60, 7.25, 10.67, 9.31, 9.58, 8.34, 9.58, 8.58, 7.54, 7.78, 9.31, 7.92,
    11.38, 7.94, 7.35, 7.42, 4.82, 4.75, 4.82, 7.39, 7.00, 7.77, 7.38, 8.02, 6.19, 8.02,
    7.25, 4.60, 7.48, 7.99, 3.86, 3.89, 7.67, 4.00, 12.00, 8.01, 7.77, 8.02, 8.02, 5.57,
    6.20, 5.10, 7.95, 7.32, 10.86, 7.20, 7.29, 6.44, 4.82, 3.75, 4.82, 7.39, 8.64, 4.20,
    6.72, 11.20, 7.39, 11.73, 13.69, 8.96, 7.25, 5.11, 7.39, 7.39, 7.39, 9.06, 7.91,
    7.39)
UNKNOWN_PX, WIDE_PX = 8.0, 14.0
_REGULAR, _BOLD = dict(zip(CHARS, REGULAR, strict=True)), dict(zip(CHARS, BOLD, strict=True))


def text_px(text: str, *, bold: bool = False) -> float:
    """Pixels `text` takes on one line of a grid cell (weight 400, or 700 when `bold`)."""
    table = _BOLD if bold else _REGULAR
    return sum(table.get(ch) or _other(ch) for ch in text)


@lru_cache(maxsize=1024)
def _other(ch: str) -> float:
    return WIDE_PX if unicodedata.east_asian_width(ch) in "WF" else UNKNOWN_PX
