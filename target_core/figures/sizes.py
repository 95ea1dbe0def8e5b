"""The Datasets page's figure: how large the tables (and passages) of a corpus are."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from target_core.figures.style import BLUE, Figure

__all__ = ["histogram", "size_distributions"]

N_BINS = 30


def histogram(values: pd.Series, n_bins: int = N_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(edges, counts) of `values` in at most about `n_bins` bins of a round width (1, 2,
    2.5 or 5 times a power of ten; whole numbers at least 1 wide: sizes are counts).
    Counted here, so a figure of a million tables carries 30 bars, not a million
    values; each bin holds its lower edge and not its upper one (the last edge lies
    above the largest value)."""
    data = np.asarray(values, dtype=float)
    if not len(data):
        return np.array([0.0, 1.0]), np.array([0])
    low, high = float(data.min()), float(data.max())
    raw = max((high - low) / n_bins, 1.0)
    power = 10.0 ** math.floor(math.log10(raw))
    width = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    start = math.floor(low / width) * width
    n = max(1, math.floor((high - start) / width) + 1)
    edges = start + width * np.arange(n + 1)
    counts, _ = np.histogram(data, bins=edges)
    return edges, counts


def size_distributions(tables: pd.DataFrame) -> Figure:
    """Histograms of rows and columns per table and of tokens per table (and passage,
    when the corpus has passages: they have no rows or columns), side by side."""
    grids = tables[tables["kind"] == "table"] if "kind" in tables else tables
    items = ("table" if len(grids) == len(tables) else
             "passage" if grids.empty else "table or passage")
    panels = [("rows", "Rows per table", grids), ("columns", "Columns per table", grids),
              ("tokens", f"Tokens per {items}", tables)]
    if grids.empty and not tables.empty:  # passages only: they have no rows or columns
        panels = panels[2:]
    figure = make_subplots(rows=1, cols=len(panels),
                           subplot_titles=[title for _, title, _ in panels])
    for i, (column, _, frame) in enumerate(panels, start=1):
        values = frame[column].dropna() if column in frame else pd.Series(dtype=float)
        edges, counts = histogram(values)
        lows, highs = edges[:-1], edges[1:]
        figure.add_trace(go.Bar(
            x=(lows + highs) / 2, y=counts, width=highs - lows, marker_color=BLUE,
            name=column, customdata=np.stack([lows, highs], axis=-1),
            hovertemplate=(f"{column}: %{{customdata[0]:,}} to under %{{customdata[1]:,}}"
                           "<br>count: %{y:,}<extra></extra>")), row=1, col=i)
        figure.update_xaxes(title_text=column, row=1, col=i)
        figure.update_yaxes(title_text="count" if i == 1 else None, row=1, col=i)
    figure.update_layout(showlegend=False, height=320, margin={"l": 40, "r": 10, "t": 40,
                                                                "b": 40}, bargap=0.05)
    return figure
