"""The Query page's "What if?" section: a probe as a table of retrievers × gold tables,
and the notes saved on a query."""

from __future__ import annotations

from typing import Any

import pandas as pd

from target_core.analysis.probe import VIEW_CHANGES as VIEW_CHANGES
from target_core.analysis.probe import Probe
from target_core.engine.notes import notes as notes
from target_core.wording import counted

PROBE_COLUMNS = ["retriever", "view", "gold table", "original rank", "probed rank",
                 "change", "ranked among", "note"]


def probe_frame(result: Probe) -> pd.DataFrame:
    """One row per (stored retriever, gold table): the stored rank, the probed one, the
    places gained (positive: up), among how many tables ("all" or N), and why a rank is
    missing."""
    rows = [{"retriever": r.retriever, "view": r.view, "gold table": r.table,
             "original rank": r.original, "probed rank": r.probed, "change": r.change,
             "ranked among": "all" if r.among is None else str(r.among), "note": r.note}
            for r in result.ranks]
    frame = pd.DataFrame(rows, columns=PROBE_COLUMNS)
    for column in ("original rank", "probed rank", "change"):
        frame[column] = frame[column].astype("Int64")
    return frame


def probe_caption(result: Probe) -> str:
    """What was probed and how long it took."""
    edited = "its own text" if result.text == result.original_text else f"“{result.text}”"
    view = result.change + (f" (N = {result.rows})" if result.change == "first N rows" else "")
    runs = len({r.run_id for r in result.ranks})
    built = f"; {counted(result.built, 'index')} built first" if result.built else ""
    return (f"Query {result.query_id} with {edited}, view: {view}, across "
            f"{counted(runs, 'stored retriever')} in {result.seconds * 1000:.0f} ms{built}. "
            "Change: places gained (positive: the gold table moved up).")


def note_text(result: Probe) -> str:
    """A note's default text for a probe: the edit and each retriever's rank change."""
    parts = []
    for r in result.ranks:
        if r.probed is None and r.original is None:
            continue
        before = "-" if r.original is None else str(r.original)
        after = "-" if r.probed is None else str(r.probed)
        parts.append(f"{r.retriever} {r.table}: {before} → {after}")
    view = "" if result.change == "as run" else f" [{result.change}]"
    return f"What if “{result.text}”{view}: " + "; ".join(parts)


def notes_frame(notes: list[dict[str, Any]]) -> pd.DataFrame:
    """Saved notes, newest first: when, the query, the text."""
    return pd.DataFrame(
        [{"saved": pd.Timestamp(n["created_at"], unit="s").strftime("%Y-%m-%d %H:%M"),
          "query_id": n["query_id"], "note": n["text"]} for n in notes],
        columns=["saved", "query_id", "note"])


def notes_by_query(notes: list[dict[str, Any]]) -> dict[str, str]:
    """query_id -> its notes joined (newest first), for the Failures drill-down."""
    joined: dict[str, list[str]] = {}
    for n in notes:
        joined.setdefault(n["query_id"], []).append(n["text"])
    return {q: " | ".join(texts) for q, texts in joined.items()}
