"""The Compare page's figures (and the HTML report's): gold rank of run A against run B
per query, win/tie/loss per metric and pair, each run's means with bootstrap confidence
intervals, and GTR's Figure 3 (answer quality against reply length). Query ids and run
names are dataset or user content: escaped before they reach a figure."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from target_core.analysis.compare import RunComparison
from target_core.analysis.significance import outcome_column
from target_core.figures.style import RUN_COLORS, Figure, escape

__all__ = ["ci_forest", "quality_figure", "rank_scatter", "win_tie_loss_bars"]

_WIN, _TIE, _LOSS = "#16a34a", "#cbd5e1", "#dc2626"
_OUTCOME_COLORS = {"both found": "#2563eb", "only {a}": "#dc2626", "only {b}": "#16a34a",
                   "both missed": "#94a3b8"}
_MAX_IDS_IN_HOVER = 12


def _nice_above(value: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that is >= value."""
    decade = 10 ** max(0, math.floor(math.log10(max(value, 1))))
    return next(int(m * decade) for m in (1, 2, 5, 10) if m * decade >= value)


def rank_scatter(outcomes: pd.DataFrame, run_a: str, run_b: str, *,
                 names: Mapping[str, str] | None = None) -> Figure:
    """Per query, the rank by which each run retrieved every gold table (one gold table:
    its rank), run A on x and run B on y, log axes.

    Queries where some gold table was never ranked sit at an explicit "not ranked"
    position beyond the largest rank; queries with the same pair of ranks share one
    marker sized by their count (hover lists their ids). Colour says which run found
    the query at k (every gold table within k, tasks.failure.FAILURE_RULE; from
    `outcomes_frame`, whose attrs["k"] is k), so a marker is "found" exactly when it
    lies inside the dotted k lines; the diagonal is equal ranks (below it: B ranks the
    gold higher).
    """
    names = dict(names or {})
    name_a, name_b = names.get(run_a, run_a), names.get(run_b, run_b)
    k = int(outcomes.attrs.get("k", 10))
    hit_a, hit_b = outcome_column(run_a, "found"), outcome_column(run_b, "found")
    both = outcomes.dropna(subset=[hit_a, hit_b])
    rank_a = both[outcome_column(run_a, "last_gold_rank")]
    rank_b = both[outcome_column(run_b, "last_gold_rank")]
    largest = max([k, *rank_a.dropna().tolist(), *rank_b.dropna().tolist()])
    not_ranked = _nice_above(largest * 2.5)
    frame = pd.DataFrame({
        "query_id": both["query_id"], "x": rank_a.fillna(not_ranked).astype(int),
        "y": rank_b.fillna(not_ranked).astype(int),
        "outcome": [("both found" if a and b else "only {a}" if a else
                     "only {b}" if b else "both missed")
                    for a, b in zip(both[hit_a] > 0, both[hit_b] > 0, strict=True)]})
    figure = go.Figure()
    figure.add_trace(go.Scatter(
        x=[1, not_ranked], y=[1, not_ranked], mode="lines", hoverinfo="skip",
        line={"color": "#94a3b8", "dash": "dash", "width": 1}, showlegend=False))
    for outcome, color in _OUTCOME_COLORS.items():
        part = frame[frame["outcome"] == outcome]
        if part.empty:
            continue
        groups = part.groupby(["x", "y"], sort=False)["query_id"].agg(list).reset_index()
        counts = groups["query_id"].map(len)
        figure.add_trace(go.Scatter(
            x=groups["x"].tolist(), y=groups["y"].tolist(), mode="markers",  # lists: fast
            name=outcome.format(a=name_a, b=name_b),
            marker={"color": color,
                    "size": (7 + 3 * counts.map(math.sqrt).clip(upper=8)).tolist(),
                    "opacity": 0.75, "line": {"width": 0.5, "color": "white"}},
            customdata=[[_rank_text(x, not_ranked), _rank_text(y, not_ranked), len(ids),
                         _ids_text(ids)] for x, y, ids in groups.itertuples(index=False)],
            hovertemplate=(f"{escape(name_a)}: %{{customdata[0]}}<br>"
                           f"{escape(name_b)}: %{{customdata[1]}}<br>"
                           "%{customdata[2]} quer(ies): %{customdata[3]}<extra></extra>")))
    ticks = [v for v in (1, 3, 10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000)
             if v <= largest]
    if k not in ticks:
        ticks = sorted([*ticks, k])
    axis = {"type": "log", "range": [-0.1, math.log10(not_ranked) + 0.1],
            "tickvals": [*ticks, not_ranked],
            "ticktext": [str(t) for t in ticks] + ["not ranked"], "zeroline": False}
    figure.update_xaxes(title_text=f"all gold tables by rank: {name_a}", **axis)
    figure.update_yaxes(title_text=f"all gold tables by rank: {name_b}", **axis)
    for line in ("x", "y"):  # the hit@k boundary and the "not ranked" band
        k_edge = {"x0": k + 0.5, "x1": k + 0.5, "y0": 0, "y1": 1, "yref": "paper"}
        if line == "y":
            k_edge = {"y0": k + 0.5, "y1": k + 0.5, "x0": 0, "x1": 1, "xref": "paper"}
        figure.add_shape(type="line", line={"color": "#64748b", "dash": "dot", "width": 1},
                         **k_edge)
    figure.update_layout(height=440, margin={"l": 60, "r": 10, "t": 30, "b": 50},
                         legend={"orientation": "h", "y": 1.02, "yanchor": "bottom",
                                 "x": 0},
                         annotations=[{"text": f"k = {k}", "x": math.log10(k + 0.5),
                                       "y": 1, "xref": "x", "yref": "paper",
                                       "showarrow": False, "xanchor": "left",
                                       "yanchor": "top", "font": {"size": 10,
                                                                  "color": "#64748b"}}])
    return figure


def _rank_text(rank: int, not_ranked: int) -> str:
    return "not ranked" if rank == not_ranked else str(rank)


def _ids_text(ids: list[str]) -> str:
    shown = ", ".join(escape(q) for q in ids[:_MAX_IDS_IN_HOVER])
    return shown + (f", … (+{len(ids) - _MAX_IDS_IN_HOVER})"
                    if len(ids) > _MAX_IDS_IN_HOVER else "")


def win_tie_loss_bars(comparison: RunComparison, *,
                      names: Mapping[str, str] | None = None) -> Figure:
    """Horizontal stacked bars, one per (pair, metric): queries where the compared run
    scores higher (win), the same (tie) or lower (loss) than the baseline."""
    names = dict(names or {})
    labels, wins, ties, losses = [], [], [], []
    for pair in comparison.pairs:
        for test in pair.tests:
            labels.append(f"{test.metric} · {escape(names.get(pair.other, pair.other))}")
            wins.append(test.wins)
            ties.append(test.ties)
            losses.append(test.losses)
    base = escape(names.get(comparison.runs[0].run_id, comparison.runs[0].run_id))
    figure = go.Figure()
    for name, values, color in ((f"win (better than {base})", wins, _WIN),
                                ("tie", ties, _TIE), (f"loss (worse than {base})", losses,
                                                      _LOSS)):
        figure.add_trace(go.Bar(
            y=labels, x=values, name=name, orientation="h", marker_color=color,
            text=[v or "" for v in values], textposition="inside", insidetextanchor="middle",
            hovertemplate="%{y}<br>%{x} queries<extra>" + name + "</extra>"))
    figure.update_layout(barmode="stack", height=110 + 34 * len(labels),
                         margin={"l": 10, "r": 10, "t": 30, "b": 40},
                         xaxis_title=f"queries (of {comparison.n_queries})",
                         yaxis={"autorange": "reversed", "automargin": True},
                         legend={"orientation": "h", "y": 1.02, "yanchor": "bottom",
                                 "x": 0, "traceorder": "normal"})
    return figure


def ci_forest(comparison: RunComparison, *,
              names: Mapping[str, str] | None = None) -> Figure:
    """One panel per metric: each run's mean with its bootstrap 95% CI as error bars,
    the baseline on top."""
    names = dict(names or {})
    metrics = list(dict.fromkeys(m for r in comparison.runs for m in r.cis))
    figure = make_subplots(rows=1, cols=len(metrics), subplot_titles=metrics,
                           shared_yaxes=True, horizontal_spacing=0.04)
    labels = [escape(names.get(r.run_id, r.run_id)) for r in comparison.runs]
    for col, metric in enumerate(metrics, start=1):
        rows = [(label, *run.cis[metric]) for label, run in zip(labels, comparison.runs,
                                                                 strict=True)
                if metric in run.cis]
        means = [m for _, m, _, _ in rows]
        figure.add_trace(go.Scatter(
            x=means, y=[label for label, *_ in rows], mode="markers",
            marker={"size": 9, "color": "#2563eb"}, showlegend=False,
            error_x={"type": "data", "symmetric": False,
                     "array": [hi - m for _, m, _, hi in rows],
                     "arrayminus": [m - lo for _, m, lo, _ in rows], "thickness": 1.5},
            customdata=[[lo, hi] for _, _, lo, hi in rows],
            hovertemplate=("%{y}<br>" + metric + " = %{x:.3f}"
                           "<br>95% CI [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
                           "<extra></extra>")), row=1, col=col)
    figure.update_yaxes(autorange="reversed", automargin=True)
    figure.update_layout(height=120 + 36 * len(comparison.runs),
                         margin={"l": 10, "r": 10, "t": 40, "b": 30})
    return figure


def quality_figure(points: pd.DataFrame, axis_title: str) -> Figure:
    """GTR's Figure 3: one point per answered query and run (`points`: run, query_id,
    reply_tokens, value), one colour per run; `axis_title` names the quality."""
    figure = go.Figure()
    for i, (name, part) in enumerate(points.groupby("run", sort=False)):
        figure.add_trace(go.Scatter(
            x=part["reply_tokens"], y=part["value"], mode="markers", name=str(name),
            text=part["query_id"], opacity=0.75,
            marker_color=RUN_COLORS[i % len(RUN_COLORS)],
            hovertemplate="%{text}<br>reply tokens=%{x}<br>" + axis_title
            + "=%{y:.3f}<extra>%{fullData.name}</extra>"))
    figure.update_layout(height=400, xaxis_title="reply length (o200k tokens)",
                         yaxis_title=axis_title, yaxis_range=[-0.05, 1.05],
                         legend={"orientation": "h", "y": -0.25},
                         margin={"l": 50, "r": 10, "t": 10, "b": 40})
    return figure
