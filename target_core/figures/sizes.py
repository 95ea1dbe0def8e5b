"""The Datasets page's figure: how large the tables (and passages) of a corpus are."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from target_core.figures.style import BLUE, Figure

__all__ = ["size_distributions"]


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
        figure.add_trace(
            go.Histogram(x=values, marker_color=BLUE, name=column, nbinsx=30,
                         hovertemplate=f"{column}: %{{x}}<br>count: %{{y}}<extra></extra>"),
            row=1, col=i)
        figure.update_xaxes(title_text=column, row=1, col=i)
        figure.update_yaxes(title_text="count" if i == 1 else None, row=1, col=i)
    figure.update_layout(showlegend=False, height=320, margin={"l": 40, "r": 10, "t": 40,
                                                                "b": 40}, bargap=0.05)
    return figure
