"""Plotly loads each trace type's and layout property's validator on its first use in a
process: 0.1-0.2 s of the first figure a page draws after a start. warm(), which the
dashboard's launcher calls in its background warm-up, draws the Overview's two figures
on tiny inputs and serializes them as st.plotly_chart does, so no page's first visit
pays that."""

from __future__ import annotations

import pandas as pd
import plotly.io

from target_core.figures.recall import recall_at_k_curves
from target_core.figures.slices import slice_bars

__all__ = ["warm"]


def warm() -> None:
    curves = pd.DataFrame({"label": ["bm25", "bm25"], "k": [1, 2], "recall": [0.5, 1.0]})
    slices = pd.DataFrame({"run": ["bm25", "bm25"], "name": ["R@10", "EX"],
                           "slice": ["easy", "easy"], "value": [0.5, 0.25]})
    for figure in (recall_at_k_curves(curves), slice_bars(slices, "difficulty")):
        plotly.io.to_json(figure.to_dict(), validate=False)
