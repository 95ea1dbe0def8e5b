"""Figures of where runs go wrong: failed queries per category and per failure_mode
tag, downstream score per gold rank (attribution), the ablation's recall per variant,
and seed 002's error sources (Table 1). Reports in, Figure out. Dataset-derived text
(failure_mode tags, difficulty levels) is escaped."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from target_core.analysis.ablation import AblationReport
from target_core.analysis.attribution import RankQuality
from target_core.analysis.failures import CATEGORIES, FailureReport
from target_core.benchgen.error_source_report import ErrorSourceReport
from target_core.figures.style import BLUE, GREY, MARGIN, ORANGE, Figure, escape, wrap

__all__ = ["ablation_bars", "category_bars", "error_source_bars", "rank_quality_bars",
           "tag_heatmap"]


def category_bars(report: FailureReport) -> Figure:
    """Failed queries per category, largest at the top; hover gives the definition."""
    counts = report.counts
    names = list(reversed(list(CATEGORIES)))
    figure = go.Figure(go.Bar(
        x=[counts[n] for n in names], y=names, orientation="h", marker_color=[
            GREY if n in ("near-miss", "deep-miss") else BLUE for n in names],
        text=[counts[n] for n in names], textposition="outside", cliponaxis=False,
        customdata=[wrap(escape(CATEGORIES[n])) for n in names],
        hovertemplate="%{y}: %{x} queries<br>%{customdata}<extra></extra>"))
    figure.update_layout(height=340, margin=MARGIN, xaxis_title=(
        f"failed queries (of {report.n_failed}; a query can be in several categories)"),
        title=f"{report.n_failed} of {report.n_queries} queries missed a gold table "
              f"within k = {report.k}")
    return figure


def tag_heatmap(report: FailureReport) -> Figure | None:
    """failure_mode tag × category counts (None when the queries carry no tags)."""
    table = report.by_tag()
    if not table:
        return None
    tags = list(table)
    names = [n for n in CATEGORIES if any(table[t][n] for t in tags)]
    z = [[table[t][n] for n in names] for t in tags]
    figure = go.Figure(go.Heatmap(
        z=z, x=names, y=[escape(t) for t in tags], colorscale="Blues",
        text=z, texttemplate="%{text}", showscale=False,
        hovertemplate="tag %{y}, %{x}: %{z}<extra></extra>"))
    figure.update_layout(height=120 + 40 * len(tags), margin=MARGIN,
                         title="The queries' own failure_mode tag against the categories",
                         xaxis_tickangle=-30)
    return figure


def rank_quality_bars(quality: RankQuality) -> Figure:
    """Mean downstream score per best-gold-rank bin, with the number of queries."""
    labels = [b.label for b in quality.bins]
    figure = go.Figure(go.Bar(
        x=labels, y=[b.mean if b.mean is not None else 0 for b in quality.bins],
        marker_color=[GREY if b.n == 0 else (ORANGE if b.low is None else BLUE)
                      for b in quality.bins],
        text=[f"n = {b.n}" for b in quality.bins], textposition="outside",
        cliponaxis=False,
        hovertemplate="gold rank %{x}<br>mean %{y:.3f}<br>%{text}<extra></extra>"))
    rho = "n/a" if quality.rho is None else f"{quality.rho:.3f}"
    figure.update_layout(height=320, margin=MARGIN, xaxis_title="best gold rank",
                         yaxis_title=f"mean {quality.metric}",
                         title=f"Spearman rho (rank, score) = {rho}, n = {quality.n}")
    # bins are categories: labels "1" and "2" would otherwise make a numeric axis on
    # which "3-5", "6-10" and "not retrieved" are not drawn
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    return figure


def ablation_bars(report: AblationReport) -> Figure:
    """recall@1 and recall@k of every variant that was run, in the table's order."""
    table = report.table().dropna(subset=["run"])
    italic = set(report.italic_rows())
    figure = go.Figure()
    for column, color in (("R@1", GREY), (f"R@{min(report.k, 10)}", BLUE)):
        if column in table:
            figure.add_trace(go.Bar(
                x=table["variant"], y=table[column], name=column, marker_color=color,
                text=[f"{v:.2f}" for v in table[column]], textposition="outside",
                cliponaxis=False,
                hovertemplate="%{x}<br>" + column + " %{y:.3f}<extra></extra>"))
    figure.update_layout(barmode="group", height=360, margin=MARGIN, yaxis_range=[0, 1.08],
                         yaxis_title="recall", legend={"orientation": "h", "y": 1.12})
    figure.update_xaxes(ticktext=[f"<i>{v}</i>" if i in italic else v
                                  for i, v in zip(table.index, table["variant"],
                                                  strict=True)],
                        tickvals=list(table["variant"]))
    return figure


_SOURCE_COLORS = {"EA": "#16a34a", "Alt": "#86efac", "Time": ORANGE, "SQL": "#dc2626",
                  "Retrieval": "#7c3aed", "Others": GREY}


def error_source_bars(report: ErrorSourceReport) -> Figure:
    """Seed 002's Table 1 as stacked bars: the share of each source, for all queries and
    per difficulty; the bars end at 100 %."""
    table = report.table()
    levels = report.by_difficulty()
    frame = table if levels.empty else pd.concat([table, levels])
    names = [escape(i) for i in frame.index]
    figure = go.Figure([go.Bar(
        name=column, y=names, x=frame[column], orientation="h",
        marker_color=_SOURCE_COLORS[column],
        hovertemplate=f"{column}: %{{x:.1f}}%<extra>%{{y}}</extra>")
        for column in _SOURCE_COLORS])
    figure.update_layout(barmode="stack", height=110 + 40 * len(names), margin=MARGIN,
                         xaxis={"title": "% of queries", "range": [0, 100]},
                         yaxis={"autorange": "reversed"},
                         legend={"orientation": "h", "y": 1.15, "traceorder": "normal"})
    return figure
