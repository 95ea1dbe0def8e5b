"""What the figures share: the Figure type read models hand over (so that they need not
import plotly), the colours, the common margin, and dataset text made safe for labels.

plotly renders a subset of HTML in labels and hover text, and dataset content (query
ids, titles, tags, run names) may hold markup: `escape` it where HTML entities show as
text, or `plain` it where a label keeps its own <br> line breaks."""

from __future__ import annotations

import html
from typing import TypeAlias

import plotly.graph_objects as go

__all__ = ["BLUE", "Figure", "GREY", "MARGIN", "ORANGE", "RUN_COLORS", "empty", "escape",
           "plain", "wrap"]

Figure: TypeAlias = go.Figure
"""The type of every figure (read models name it in their dataclasses)."""

BLUE, GREY, ORANGE = "#2563eb", "#94a3b8", "#ea580c"
RUN_COLORS = ("#2563eb", "#f97316", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04")
"""One colour per run, in order, wherever runs are drawn side by side."""
MARGIN = {"l": 10, "r": 10, "t": 30, "b": 40}


def empty() -> Figure:
    """A figure with nothing drawn (a view with no data)."""
    return go.Figure()


def escape(text: object) -> str:
    """Dataset or configuration text for a label: its markup shown, never rendered."""
    return html.escape(str(text))


def plain(text: str) -> str:
    """Dataset text for a hover label that keeps its <br> line breaks: every other '<'
    and '>' defused, so that no markup of the dataset's is rendered."""
    return (text.replace("<br>", "\x00").replace("<", "‹").replace(">", "›")
            .replace("\x00", "<br>"))


def wrap(text: str, width: int = 60) -> str:
    """`text` broken into lines of at most `width` characters (between words) by <br>."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join([*lines, line] if line else lines)
