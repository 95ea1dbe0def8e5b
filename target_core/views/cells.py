"""Cells as the dashboard draws them. Streamlit draws a null cell of any column type as
a grey "None" (a Styler's na_rep does not reach it), so a number column that may miss
values ("not measured", "the paper gives none") is shown as text, formatted here, with
a blank for the missing ones. Columns that are never missing stay numbers (they sort)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd


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
