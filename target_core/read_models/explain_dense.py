"""The Query page's dense section: explain_dense's dict as what the page draws: a
caption, one row per table (where the window cut it, its evidence), and per table its
evidence cells, the text the embedder read, and its rows' cosines with the query."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["DenseSection", "DenseTable", "render_dense"]


@dataclass(frozen=True)
class DenseTable:
    label: str
    """"★ gold db/table · rank 14 · cut after row 6 of 40"."""
    cut: str
    evidence: pd.DataFrame
    """row, column, source, where (inside / beyond the cut / not in the view)."""
    rows: pd.DataFrame
    """row ("title + header" first), cosine, vs title + header, read (inside the cut)."""
    rows_note: str
    text_seen: str
    text_note: str


@dataclass(frozen=True)
class DenseSection:
    caption: str
    overview: pd.DataFrame
    """One row per table: table, role, rank, tokens, cut, evidence."""
    tables: list[DenseTable]
    warning: str | None


def _rows_frame(entry: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
    sim = entry.get("similarity")
    if not sim:
        return pd.DataFrame(columns=["row", "cosine", "vs title + header", "read"]), \
            "Row similarity not computed."
    seen = entry.get("rows_seen")
    records = [{"row": "whole text (indexed)", "cosine": sim["table"],
                "vs title + header": None, "read": None},
               {"row": "title + header", "cosine": sim["title_header"],
                "vs title + header": 0.0, "read": True}]
    records += [{"row": str(r["row"]), "cosine": r["cosine"], "vs title + header": r["delta"],
                 "read": None if seen is None else r["row"] <= seen} for r in sim["rows"]]
    note = (f"Each row embedded with the title and header; the first "
            f"{sim['rows_embedded']} of {sim['rows_total']} rows"
            + (" (capped)." if sim["capped"] else ".")
            + (f" Best: row {sim['best_row']}." if sim.get("best_row") else ""))
    return pd.DataFrame(records), note


def render_dense(section: Mapping[str, Any] | None) -> DenseSection | None:
    """What the page draws for explain()'s "dense" key (None: not a dense run)."""
    if not section:
        return None
    window = section.get("window")
    caption = (f"{section['embedder']} reads {window} tokens ({section['tokenizer']}); "
               f"view {section['view']}. " if window else
               f"{section['embedder']}: its input window is not known here; view "
               f"{section['view']}. ") + str(section.get("summary") or "")
    overview, tables = [], []
    for e in section["tables"]:
        verdict = {"beyond": "beyond the cut", "inside": "read",
                   None: "none found"}.get(e.get("evidence_verdict"), "")
        overview.append({"table": e["table"], "role": e.get("role", ""),
                         "rank": e.get("rank"), "tokens": e.get("tokens"),
                         "cut": e.get("cut", "window unknown"), "evidence": verdict})
        evidence = pd.DataFrame(e.get("evidence") or [],
                                columns=["row", "column", "source", "where"])
        evidence["row"] = evidence["row"].astype(str)
        rows, note = _rows_frame(e)
        beyond = e.get("chars_beyond") or 0
        text_note = (f"{beyond:,} characters beyond the cut were never read."
                     if beyond else "The embedder read the whole text.")
        if e.get("text_seen_clipped"):
            text_note += " (Shown clipped.)"
        star = "★ " if e.get("role") == "gold" else ""
        rank = f" · rank {e['rank']}" if e.get("rank") is not None else ""
        tables.append(DenseTable(label=f"{star}{e.get('role', '')} {e['table']}{rank} · "
                                 f"{e.get('cut', 'window unknown')}".strip(),
                                 cut=e.get("cut", ""), evidence=evidence, rows=rows,
                                 rows_note=note, text_seen=e.get("text_seen", ""),
                                 text_note=text_note))
    warning = (f"Row similarity unavailable: {section['similarity_error']}"
               if section.get("similarity_error") else None)
    return DenseSection(caption=caption, overview=pd.DataFrame(
        overview, columns=["table", "role", "rank", "tokens", "cut", "evidence"]),
        tables=tables, warning=warning)
