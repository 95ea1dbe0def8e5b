"""The Query page's "Why this ranking?" figures: each query term's share of the two
tables' lexical scores, side by side (read_models.explain_lexical's per-term frame)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from target_core.figures.style import Figure

__all__ = ["LEXICAL_COLOURS", "lexical_bars"]

LEXICAL_COLOURS = ("#2563eb", "#f97316")
"""Gold, then the other table."""


def lexical_bars(terms: pd.DataFrame, roles: Sequence[str], tables: Sequence[str],
                 scorer: str) -> Figure:
    """A bar per query term and table: `terms` has a "term" column and one column of
    shares per role (gold first); `tables` names each role's table."""
    figure = go.Figure([go.Bar(name=f"{role}: {table}", x=terms["term"], y=terms[role],
                               marker_color=LEXICAL_COLOURS[i % 2])
                        for i, (role, table) in enumerate(zip(roles, tables, strict=True))])
    figure.update_layout(barmode="group", height=320, margin={"l": 10, "r": 10, "t": 30,
                                                             "b": 10},
                         yaxis_title="share of the score", legend={"orientation": "h"},
                         title=f"Each query term's share ({scorer})")
    return figure
