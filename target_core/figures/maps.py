"""The embedding map's figure (the Query and Failures pages): the corpus in grey, then
traces of marked points (a question, its gold and retrieved tables), joined by faint
lines. Hover texts come in ready (read_models.embedding_map makes dataset text plain)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from target_core.analysis.embedding_map import CorpusMap
from target_core.figures.style import Figure

__all__ = ["GOLD", "GREY", "Points", "QUESTION", "RETRIEVED", "map_figure"]

GREY, GOLD, RETRIEVED, QUESTION = "#cbd5e1", "#16a34a", "#2563eb", "#dc2626"


@dataclass(frozen=True)
class Points:
    """One trace of marked points."""

    name: str
    xy: np.ndarray
    hover: list[str]
    color: str
    symbol: str = "circle"
    size: int = 10
    labels: list[str] = field(default_factory=list)
    """Text drawn beside each point (ranks); none when empty."""


def map_figure(cmap: CorpusMap, background: np.ndarray, background_hover: list[str],
               marked: Sequence[Points], lines: np.ndarray | None = None,
               title: str = "", zoom: tuple[list[float], list[float]] | None = None
               ) -> Figure:
    """Grey background points (`background`: rows of cmap.xy), faint lines (pairs of
    points, as rows [x0, y0, x1, y1]), then the marked traces in order (last on top);
    `zoom`: the initial x and y ranges (a double click shows the whole map)."""
    figure = go.Figure()
    figure.add_trace(go.Scattergl(
        x=cmap.xy[background, 0], y=cmap.xy[background, 1], mode="markers",
        name="other tables", marker={"color": GREY, "size": 5},
        text=background_hover, hovertemplate="%{text}<extra></extra>"))
    if lines is not None and len(lines):
        xs = np.column_stack([lines[:, 0], lines[:, 2], np.full(len(lines), np.nan)]).ravel()
        ys = np.column_stack([lines[:, 1], lines[:, 3], np.full(len(lines), np.nan)]).ravel()
        figure.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="question → gold",
                                    line={"color": "#fca5a5", "width": 1},
                                    hoverinfo="skip"))
    for points in marked:
        if not len(points.xy):
            continue
        figure.add_trace(go.Scatter(
            x=points.xy[:, 0], y=points.xy[:, 1],
            mode="markers+text" if points.labels else "markers", name=points.name,
            text=points.labels or None, textposition="top center",
            textfont={"size": 10, "color": points.color},
            customdata=points.hover, hovertemplate="%{customdata}<extra></extra>",
            marker={"color": points.color, "symbol": points.symbol, "size": points.size,
                    "line": {"color": "white", "width": 1}}))
    figure.update_layout(
        title=title or None, height=560, legend={"orientation": "h", "y": -0.08},
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        plot_bgcolor="white")
    figure.update_xaxes(showticklabels=False, showgrid=False, zeroline=False,
                        **({"range": zoom[0]} if zoom else {}))
    figure.update_yaxes(showticklabels=False, showgrid=False, zeroline=False,
                        **({"range": zoom[1]} if zoom else {}))
    return figure
