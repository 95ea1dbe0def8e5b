"""The runs' headline metrics per slice of the queries' metadata (analysis.slices), as
bars: for difficulty on text-to-SQL runs, GTR-T's Figure 5."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from target_core.analysis.slices import slice_order
from target_core.figures.style import RUN_COLORS, Figure, escape

__all__ = ["slice_bars"]


def slice_bars(frame: pd.DataFrame, field: str = "") -> Figure:
    """One panel per metric (R@10, EX, ...) of analysis.slices.slice_frame's `frame`, the
    field's values on x, a bar per run. Values and run names come from the data:
    escaped."""
    names = list(dict.fromkeys(frame["name"]))
    # each panel its own scale: recall is 0-1, BLEU 0-100 (a shared axis flattened recall)
    figure = make_subplots(rows=1, cols=max(1, len(names)), subplot_titles=names)
    order = slice_order(set(frame["slice"])) if not frame.empty else []
    shown = [escape(value) for value in order]
    # one pass over the frame (a mask per run and metric was 0.25 s of the Overview)
    parts = {key: dict(zip(part["slice"], part["value"], strict=True))
             for key, part in frame.groupby(["run", "name"], sort=False)}
    for i, run in enumerate(dict.fromkeys(frame["run"])):
        label = escape(run)
        for j, name in enumerate(names, start=1):
            values = parts.get((run, name), {})
            figure.add_trace(go.Bar(
                x=shown, y=[values.get(value) for value in order], name=label,
                marker_color=RUN_COLORS[i % len(RUN_COLORS)], showlegend=j == 1,
                legendgroup=label, hovertemplate=f"{label}<br>%{{x}}: %{{y:.3f}}"
                "<extra></extra>"), row=1, col=j)
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=shown)
    figure.update_layout(barmode="group", height=380, margin={"l": 40, "r": 10, "t": 80,
                                                               "b": 40},
                         title={"text": escape(field), "x": 0, "font": {"size": 13}},
                         legend={"orientation": "h", "x": 0.3, "y": 1.22})
    return figure
