"""The lexical part of the Query page's "Why this ranking?": the per-term table of the
two tables, a bar chart of the contributions side by side, the vocabulary gap line and,
for hybrid, each side's share (from analysis/explain_lexical.py's section)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from target_core.figures.explain import lexical_bars
from target_core.figures.style import Figure
from target_core.read_models.cells import as_text


@dataclass(frozen=True)
class LexicalSection:
    """What the page draws."""

    caption: str
    terms: pd.DataFrame
    """term, each table's share (named by its role), each table's tf, idf."""
    figure: Figure
    sums: list[str]
    gap: str
    only_other: str
    fusion: pd.DataFrame | None
    decided: str
    notes: list[str]


def render_lexical(section: dict[str, Any]) -> LexicalSection:
    """The page's data for explain()'s "lexical" section (without "error")."""
    tables = section["tables"]
    roles = [t["role"] for t in tables]
    frame = pd.DataFrame({
        "term": [row["term"] for row in section["terms"]],
        **{role: [row["contributions"][i] for row in section["terms"]]
           for i, role in enumerate(roles)},
        **{f"tf {role}": [row["parts"][i].get("tf") for row in section["terms"]]
           for i, role in enumerate(roles)},
        "idf": [row["parts"][0].get("idf") for row in section["terms"]]})
    figure = lexical_bars(frame, roles, [t["table"] for t in tables], section["scorer"])
    sums = [f"{t['role']} {t['table']}: terms sum to {t['sum']:.4f} = its "
            f"{section['scorer']} score {t['lexical_score']:.4f}"
            + (f"; fused score {t['fused']:.4f}" if "fused" in t else "") for t in tables]
    missing = section["gap"]["missing"]
    method = section["gap"]["method"]
    gap = ("The gold lacks " + "; ".join(
        m["term"] + (f" (it has {', '.join(m['nearest'])})" if m["nearest"] else "")
        for m in missing) + "."
        + (f" {method[0].upper()}{method[1:]}." if any(m["nearest"] for m in missing)
           else "") if missing else "The gold table has every query word.")
    only = (f"Only the {roles[1]} has: {', '.join(section['only_other'])}."
            if section["only_other"] else "")
    fusion, decided = None, ""
    if (fused := section.get("fusion")) is not None:
        fusion = pd.DataFrame([
            {"table": t["table"], "side": side, "rank": c["rank"], "score": c["score"],
             "normalised": c["normalised"], "weight": c["weight"], "share": c["share"]}
            for t in fused["tables"] for side, c in zip(fused["sides"], t["components"],
                                                        strict=True)])
        decided = (f"Decided by the {fused['decided_by']} side ({fused['method']})."
                   if fused["decided_by"] else "Neither side gave the other table a lead.")
    # a term in no table has no idf (nor tf there): blank, never a grey "None"
    shown = as_text(frame, {"idf": ".4f", **{f"tf {role}": "g" for role in roles}})
    return LexicalSection(caption=section["formula"], terms=shown, figure=figure, sums=sums,
                          gap=gap, only_other=only, fusion=fusion, decided=decided,
                          notes=list(section["notes"]))
