"""Why a dense retriever ranked a table where it did: what its embedder saw of each table.

For a dense run (dense:EMBEDDER, or hybrid's dense side) and the tables explain() picked
(the gold and the winner), per table:

- the text after the run's view, where the embedder's input window cut it ("cut after
  row 6 of 40", analysis/dense_window.py) and the text it read;
- the cells the answer rests on (annotation, gold SQL, answer string) and whether each
  lies inside or beyond the cut;
- row-level similarity, with the run's embedder: the query's cosine with the table's
  whole text (what was indexed), with its title and header alone, and with the title and
  header plus one row, for the first ROW_CAP rows of the view: the row whose cosine
  rises most above the title and header alone is the row that pulled the table up.

Pure logic over a stored run; embeds the query and those texts only (at most
2 + ROW_CAP texts per table).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from target_core.analysis.dense_window import (
    TableWindow,
    Window,
    dense_embedder,
    table_window,
    window_for,
)
from target_core.config import Settings
from target_core.datasets.chunking import is_passage
from target_core.engine.store import RunRecord
from target_core.errors import TargetError
from target_core.serialize import table_text, visible_rows
from target_core.table_view import TableView
from target_core.types import Query, Table, TableKey, TableLookup, parse_table_ref

__all__ = ["ROW_CAP", "SEEN_CHARS", "explain_dense", "row_similarity"]

log = logging.getLogger(__name__)

ROW_CAP = 50
"""Rows per table embedded for row-level similarity (the first ROW_CAP of the view)."""
SEEN_CHARS = 6000
"""Characters of the text read by the embedder kept in the explanation."""


def _entries(tables: Sequence[Any]) -> list[dict[str, Any]]:
    """explain()'s table entries ({"table": "db/table", "role", "rank", "score"}), or
    Table objects, or table keys, as entries."""
    out = []
    for item in tables:
        if isinstance(item, Mapping):
            out.append(dict(item))
        elif isinstance(item, Table):
            out.append({"table": f"{item.database_id}/{item.table_id}"})
        else:
            key: TableKey = tuple(item)
            out.append({"table": f"{key[0]}/{key[1]}"})
    return out


def row_similarity(embedder: Any, query: str, table: Table, view: TableView,
                   cap: int = ROW_CAP) -> dict[str, Any]:
    """The query's cosine with the table's whole text, with its title and header alone,
    and with the title and header plus each of its first `cap` rows (one text per row,
    the view's format), all embedded by `embedder`."""
    rows = list(visible_rows(table, view))
    shown = rows[:cap]
    texts = [table_text(table, view), table_text(table, view.with_(rows=0))]
    texts += [table_text(dataclasses.replace(table, rows=(tuple(row),)),
                         view.with_(rows=None)) for row in shown]
    q = embedder.embed([query], kind="query")[0]
    vectors = embedder.embed(texts, kind="document")
    cosines = [float(c) for c in np.asarray(vectors, dtype=np.float64) @ q]
    base = cosines[1]
    scored = [{"row": i + 1, "cosine": c, "delta": c - base}
              for i, c in enumerate(cosines[2:])]
    best = max(scored, key=lambda r: r["cosine"], default=None)
    return {"table": cosines[0], "title_header": base, "rows": scored,
            "rows_embedded": len(shown), "rows_total": len(rows),
            "capped": len(rows) > cap, "best_row": best["row"] if best else None}


def _window_fields(where: TableWindow, full: str) -> dict[str, Any]:
    seen = full if where.cut_at is None else full[:where.cut_at]
    return {"tokens": where.tokens, "chars": where.chars, "cut_at": where.cut_at,
            "rows_total": where.rows_total, "rows_seen": where.rows_seen,
            "cut": where.cut_label, "text_seen": seen[:SEEN_CHARS],
            "text_seen_clipped": len(seen) > SEEN_CHARS,
            "chars_beyond": 0 if where.cut_at is None else len(full) - where.cut_at,
            "evidence": [{"row": "header" if c.row < 0 else c.row + 1, "column": c.column,
                          "source": c.source, "where": place} for c, place in where.evidence],
            "evidence_verdict": where.verdict}


def _summary(window: Window | None, entries: list[dict[str, Any]]) -> str:
    """One sentence on the pair: where the gold's evidence lies, which row pulled the
    winner up."""
    parts = []
    for e in entries:
        name = e.get("role") or "table"
        if window is not None and "cut" in e:
            verdict = e.get("evidence_verdict")
            tail = {"beyond": "; its evidence lies beyond the cut",
                    "inside": "; its evidence was read"}.get(verdict or "", "")
            parts.append(f"{name} {e['table']}: {e['cut']}{tail}")
        sim = e.get("similarity")
        if sim and sim.get("best_row"):
            best = sim["rows"][sim["best_row"] - 1]
            parts.append(f"{name}'s best row is row {best['row']} (cosine "
                         f"{best['cosine']:.3f}, {best['delta']:+.3f} over title and header)")
    return ". ".join(parts) + ("." if parts else "")


def explain_dense(run: RunRecord, dataset: TableLookup, query: Query,
                  tables: Sequence[Any], settings: Settings, *, similarity: bool = True
                  ) -> dict[str, Any] | None:
    """What the run's embedder saw of each of `tables` (explain()'s entries, Table objects
    or keys) for `query`; None when the run is not dense (dense:*, hybrid). JSON-ready.
    `similarity=False` skips the row-level cosines (nothing is embedded)."""
    spec = dense_embedder(run.config.retriever)
    if spec is None:
        return None
    view = run.config.view
    window = window_for(spec, settings)
    embedder = None
    error = None
    if similarity:
        try:
            from target_core.embeddings import get_embedder

            embedder = get_embedder(spec, settings)
        except TargetError as exc:
            error = str(exc)
    entries = []
    for entry in _entries(tables):
        table = dataset.table(parse_table_ref(entry["table"]))
        full = table_text(table, view)
        if window is not None:
            entry |= _window_fields(table_window(window, table, view, query), full)
        else:
            entry |= {"tokens": None, "chars": len(full), "text_seen": full[:SEEN_CHARS],
                      "text_seen_clipped": len(full) > SEEN_CHARS}
        if embedder is not None and not is_passage(table):
            try:
                entry["similarity"] = row_similarity(embedder, query.query, table, view)
            except TargetError as exc:
                error = str(exc)
                embedder = None
        entries.append(entry)
    if error:
        log.warning("dense explanation without row similarity: %s", error)
    return {"retriever": run.config.retriever, "embedder": spec,
            "window": window.limit if window else None,
            "tokenizer": window.tokenizer if window else None,
            "view": view.label, "row_cap": ROW_CAP, "tables": entries,
            "similarity_error": error, "summary": _summary(window, entries)}
