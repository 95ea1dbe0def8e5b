"""Recall curves: recall@k against k (TARGET's Figure 2, on the Overview and in the
reproduction), and recall against the number of distractor tables (TARGET's needle in a
haystack, on the Ablations page)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from target_core.figures.style import Figure
from target_core.metrics.labels import label

__all__ = ["haystack_figure", "recall_at_k_curves"]

_HAYSTACK_COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")


def recall_at_k_curves(curves: pd.DataFrame, title: str = "") -> Figure:
    """Recall@k against k, one line per run (TARGET's Figure 2): `curves` has label, k
    and recall (analysis.leaderboard.recall_curves, labelled)."""
    figure = go.Figure()
    for name, part in curves.groupby("label", sort=False):
        figure.add_trace(go.Scatter(
            x=part["k"], y=part["recall"], mode="lines+markers", name=str(name),
            hovertemplate="k=%{x}<br>recall=%{y:.3f}<extra>%{fullData.name}</extra>"))
    figure.update_layout(title=title or None, height=380, xaxis_title="k",
                         yaxis_title="mean recall@k", yaxis_range=[0, 1.02],
                         legend={"orientation": "h", "y": -0.25},
                         margin={"l": 50, "r": 10, "t": 40 if title else 10, "b": 40})
    figure.update_xaxes(dtick=1 if curves["k"].max() <= 20 else None)
    return figure


def haystack_figure(frame: pd.DataFrame, metrics: Sequence[str] = ("recall@1", "recall@10")
                    ) -> Figure:
    """Recall against N (read_models.haystack's curve frame: retriever, N, corpus, run_id
    and the metrics), one colour per retriever, a solid line for the last metric and
    dashed for the others. The x axis is logarithmic when the sizes span two decades or
    more; N = 0 then sits one step left of the smallest N, labelled 0. The y axis starts
    0.05 below the lowest point, so small changes are visible."""
    shown = frame.dropna(subset=[m for m in metrics if m in frame])
    sizes = sorted(set(shown["N"]))
    positive = [n for n in sizes if n > 0]
    log = len(positive) >= 2 and positive[-1] / positive[0] >= 100
    zero = positive[0] / 3 if log and positive else 0

    def x(n: int) -> float:
        return zero if n == 0 else n

    figure = go.Figure()
    palette = _HAYSTACK_COLORS
    for i, (retriever, part) in enumerate(shown.groupby("retriever", sort=False)):
        part = part.sort_values("N")
        for j, metric in enumerate(m for m in metrics if m in part):
            last = j == len([m for m in metrics if m in part]) - 1
            figure.add_trace(go.Scatter(
                x=[x(n) for n in part["N"]], y=part[metric], mode="lines+markers",
                name=f"{retriever} {label(metric)}", legendgroup=str(retriever),
                line={"color": palette[i % len(palette)], "dash": None if last else "dash"},
                customdata=list(zip(part["N"], part["corpus"], part["run_id"], strict=True)),
                hovertemplate=(f"{label(metric)}=%{{y:.3f}}<br>N=%{{customdata[0]}} distractors "
                               "(corpus %{customdata[1]})<br>run %{customdata[2]}"
                               "<extra>%{fullData.name}</extra>")))
    axis: dict[str, object] = {"title": "distractor tables added (N)"}
    if log:
        axis |= {"type": "log", "tickvals": [x(n) for n in sizes],
                 "ticktext": [f"{n:,}" for n in sizes]}
    values = shown[[m for m in metrics if m in shown]].to_numpy().ravel()
    low = max(0.0, float(values.min()) - 0.05) if len(values) else 0.0  # the changes show
    figure.update_layout(height=400, xaxis=axis, yaxis_title="mean recall",
                         yaxis_range=[low, 1.01], yaxis_tickformat=".2f",
                         legend={"orientation": "h", "y": -0.25},
                         margin={"l": 50, "r": 10, "t": 10, "b": 40})
    return figure
