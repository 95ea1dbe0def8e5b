"""Plotly figures for failures, ablations and attribution. Reports in, go.Figure out; no
streamlit. Dataset-derived text (failure_mode tags) is escaped: plotly renders a subset
of HTML in labels and hover text."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from target_core.analysis.ablation import AblationReport
from target_core.analysis.attribution import RankQuality
from target_core.analysis.failures import CATEGORIES, FailureReport
from target_core.benchgen.error_sources import ErrorSourceReport

__all__ = ["ablation_bars", "category_bars", "error_source_bars", "rank_quality_bars",
           "tag_heatmap"]

_BLUE, _GREY, _ORANGE = "#2563eb", "#94a3b8", "#ea580c"
_MARGIN = {"l": 10, "r": 10, "t": 30, "b": 40}


def _wrap(text: str, width: int = 60) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join([*lines, line] if line else lines)


def category_bars(report: FailureReport) -> go.Figure:
    """Failed queries per category, largest at the top; hover gives the definition."""
    counts = report.counts
    names = list(reversed(list(CATEGORIES)))
    figure = go.Figure(go.Bar(
        x=[counts[n] for n in names], y=names, orientation="h", marker_color=[
            _GREY if n in ("near-miss", "deep-miss") else _BLUE for n in names],
        text=[counts[n] for n in names], textposition="outside", cliponaxis=False,
        customdata=[_wrap(html.escape(CATEGORIES[n])) for n in names],
        hovertemplate="%{y}: %{x} queries<br>%{customdata}<extra></extra>"))
    figure.update_layout(height=340, margin=_MARGIN, xaxis_title=(
        f"failed queries (of {report.n_failed}; a query can be in several categories)"),
        title=f"{report.n_failed} of {report.n_queries} queries missed a gold table "
              f"within k = {report.k}")
    return figure


def tag_heatmap(report: FailureReport) -> go.Figure | None:
    """failure_mode tag × category counts (None when the queries carry no tags)."""
    table = report.by_tag()
    if not table:
        return None
    tags = list(table)
    names = [n for n in CATEGORIES if any(table[t][n] for t in tags)]
    z = [[table[t][n] for n in names] for t in tags]
    figure = go.Figure(go.Heatmap(
        z=z, x=names, y=[html.escape(t) for t in tags], colorscale="Blues",
        text=z, texttemplate="%{text}", showscale=False,
        hovertemplate="tag %{y}, %{x}: %{z}<extra></extra>"))
    figure.update_layout(height=120 + 40 * len(tags), margin=_MARGIN,
                         title="The queries' own failure_mode tag against the categories",
                         xaxis_tickangle=-30)
    return figure


def rank_quality_bars(quality: RankQuality) -> go.Figure:
    """Mean downstream score per best-gold-rank bin, with the number of queries."""
    labels = [b.label for b in quality.bins]
    figure = go.Figure(go.Bar(
        x=labels, y=[b.mean if b.mean is not None else 0 for b in quality.bins],
        marker_color=[_GREY if b.n == 0 else (_ORANGE if b.low is None else _BLUE)
                      for b in quality.bins],
        text=[f"n = {b.n}" for b in quality.bins], textposition="outside",
        cliponaxis=False,
        hovertemplate="gold rank %{x}<br>mean %{y:.3f}<br>%{text}<extra></extra>"))
    rho = "n/a" if quality.rho is None else f"{quality.rho:.3f}"
    figure.update_layout(height=320, margin=_MARGIN, xaxis_title="best gold rank",
                         yaxis_title=f"mean {quality.metric}",
                         title=f"Spearman rho (rank, score) = {rho}, n = {quality.n}")
    # bins are categories: labels "1" and "2" would otherwise make a numeric axis on
    # which "3-5", "6-10" and "not retrieved" are not drawn
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    return figure


def ablation_bars(report: AblationReport) -> go.Figure:
    """recall@1 and recall@k of every variant that was run, in the table's order."""
    table = report.table().dropna(subset=["run"])
    italic = set(report.italic_rows())
    figure = go.Figure()
    for column, color in (("R@1", _GREY), (f"R@{min(report.k, 10)}", _BLUE)):
        if column in table:
            figure.add_trace(go.Bar(
                x=table["variant"], y=table[column], name=column, marker_color=color,
                text=[f"{v:.2f}" for v in table[column]], textposition="outside",
                cliponaxis=False,
                hovertemplate="%{x}<br>" + column + " %{y:.3f}<extra></extra>"))
    figure.update_layout(barmode="group", height=360, margin=_MARGIN, yaxis_range=[0, 1.08],
                         yaxis_title="recall", legend={"orientation": "h", "y": 1.12})
    figure.update_xaxes(ticktext=[f"<i>{v}</i>" if i in italic else v
                                  for i, v in zip(table.index, table["variant"],
                                                  strict=True)],
                        tickvals=list(table["variant"]))
    return figure


_SOURCE_COLORS = {"EA": "#16a34a", "Alt": "#86efac", "Time": _ORANGE, "SQL": "#dc2626",
                  "Retrieval": "#7c3aed", "Others": _GREY}


def error_source_bars(report: ErrorSourceReport) -> go.Figure:
    """Seed 002's Table 1 as stacked bars: the share of each source, for all queries and
    per difficulty; the bars end at 100 %."""
    table = report.table()
    levels = report.by_difficulty()
    frame = table if levels.empty else pd.concat([table, levels])
    names = [html.escape(str(i)) for i in frame.index]
    figure = go.Figure([go.Bar(
        name=column, y=names, x=frame[column], orientation="h",
        marker_color=_SOURCE_COLORS[column],
        hovertemplate=f"{column}: %{{x:.1f}}%<extra>%{{y}}</extra>")
        for column in _SOURCE_COLORS])
    figure.update_layout(barmode="stack", height=110 + 40 * len(names), margin=_MARGIN,
                         xaxis={"title": "% of queries", "range": [0, 100]},
                         yaxis={"autorange": "reversed"},
                         legend={"orientation": "h", "y": 1.15, "traceorder": "normal"})
    return figure
