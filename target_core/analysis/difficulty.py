"""Answer quality per difficulty level: GTR-T's Figure 5 (execution accuracy and exact
set match per Spider level) for any run whose queries carry a difficulty.

Runs store each task metric per level as `METRIC/LEVEL` (metrics.downstream); this
module reads those keys back into a long frame and draws one panel per metric with a
bar per run and level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from target_core.engine.store import RunRecord
from target_core.metrics.downstream import TASK_METRICS, difficulty_order

__all__ = ["DIFFICULTY_METRICS", "DifficultyView", "by_difficulty", "difficulty_bars",
           "difficulty_frame", "difficulty_table"]

DIFFICULTY_METRICS: dict[str, tuple[tuple[str, str], ...]] = {
    "sql": (("EX", "execution_accuracy"), ("EM", "exact_set_match")),
    "qa": (("SB", "sacrebleu"),),
    "fact": (("Acc", "fact_accuracy"), ("F1", "fact_f1")),
}
"""Per task, the metrics shown per difficulty: (short name, metric). Text-to-SQL's are
GTR-T's Figure 5."""

_COLORS = ("#2563eb", "#f97316", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04")


def difficulty_frame(runs: Sequence[RunRecord], names: Mapping[str, str] | None = None
                     ) -> pd.DataFrame:
    """Long frame (run_id, run, metric, name, difficulty, value): every per-level value of
    the runs' DIFFICULTY_METRICS, levels in Spider's order (easy, medium, hard, extra,
    then others). Runs without per-level metrics add no rows."""
    rows = []
    for run in runs:
        label = (names or {}).get(run.run_id, run.config.label)
        shown = DIFFICULTY_METRICS.get(run.task, ())
        levels = difficulty_order({key.split("/", 1)[1] for key in run.metrics
                                   if "/" in key and key.split("/", 1)[0]
                                   in TASK_METRICS.get(run.task, ())})
        for name, metric in shown:
            for level in levels:
                value = run.metrics.get(f"{metric}/{level}")
                if value is not None:
                    rows.append({"run_id": run.run_id, "run": label, "metric": metric,
                                 "name": name, "difficulty": level, "value": value})
    return pd.DataFrame(rows, columns=["run_id", "run", "metric", "name", "difficulty",
                                       "value"])


def difficulty_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run, a column per metric and level, e.g. "EX easy"; levels in order."""
    if frame.empty:
        return pd.DataFrame()
    levels = difficulty_order(set(frame["difficulty"]))
    order = [f"{name} {level}" for name in dict.fromkeys(frame["name"]) for level in levels]
    table = (frame.assign(column=frame["name"] + " " + frame["difficulty"])
             .pivot_table(index="run", columns="column", values="value", sort=False))
    return table[[c for c in order if c in table.columns]].reset_index()


def difficulty_bars(frame: pd.DataFrame) -> go.Figure:
    """One panel per metric (EX, EM for text-to-SQL), difficulty levels on x, a bar per
    run: GTR-T's Figure 5."""
    names = list(dict.fromkeys(frame["name"]))
    figure = make_subplots(rows=1, cols=max(1, len(names)), subplot_titles=names,
                           shared_yaxes=True)
    levels = difficulty_order(set(frame["difficulty"])) if not frame.empty else []
    for i, run in enumerate(dict.fromkeys(frame["run"])):
        for j, name in enumerate(names, start=1):
            part = frame[(frame["run"] == run) & (frame["name"] == name)]
            values = dict(zip(part["difficulty"], part["value"], strict=True))
            figure.add_trace(go.Bar(
                x=levels, y=[values.get(level) for level in levels], name=str(run),
                marker_color=_COLORS[i % len(_COLORS)], showlegend=j == 1,
                legendgroup=str(run), hovertemplate=f"{run}<br>%{{x}}: %{{y:.3f}}"
                "<extra></extra>"), row=1, col=j)
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=levels)
    figure.update_layout(barmode="group", height=340, margin={"l": 40, "r": 10, "t": 40,
                                                               "b": 40},
                         legend={"orientation": "h", "y": -0.2})
    return figure


@dataclass(frozen=True)
class DifficultyView:
    table: pd.DataFrame
    """One row per run, a column per metric and level ("EX easy")."""
    figure: go.Figure
    """GTR-T's Figure 5: a panel per metric, a bar per run and level."""

    @property
    def empty(self) -> bool:
        return self.table.empty


def by_difficulty(runs: Sequence[RunRecord], names: Mapping[str, str] | None = None
                  ) -> DifficultyView:
    """The runs' answer quality per difficulty level, as a table and GTR-T's Figure 5."""
    frame = difficulty_frame(runs, names)
    return DifficultyView(difficulty_table(frame), difficulty_bars(frame))
