"""The Query page's work on one query: finding a rows run's matched rows again (engine/
reopen.py opens the run's retriever over its texts, its Chroma index reused, so this
embeds only the query; a dataset changed since the run gives other texts, and then its
rows are not matched again: reopen.StaleIndexError), the what-if probe (every stored
retriever re-ranks the query, analysis/probe.py), and saving a probe as a note."""

from __future__ import annotations

import pandas as pd

from target_core.analysis.probe import probe
from target_core.config import Settings
from target_core.engine.notes import save_note
from target_core.engine.reopen import open_run
from target_core.engine.store import QueryResult, RunRecord
from target_core.errors import TargetError
from target_core.read_models.matched_rows import MatchedTable, is_rows_run, matched_cells
from target_core.retrievers.rows import MATCHED_ROWS, RowsRetriever, row_texts
from target_core.serialize import visible_rows
from target_core.types import table_ref

__all__ = ["matched_rows_view", "probe", "save_note"]


def matched_rows_view(run: RunRecord, result: QueryResult, query: str, settings: Settings,
                      *, per_table: int = MATCHED_ROWS) -> list[MatchedTable] | None:
    """Each retrieved table's `per_table` best rows for `query`, in rank order, then each
    gold table the run missed; None when the run's retriever is not rows-based. Raises
    TargetError when the dataset changed since the run (reopen.StaleIndexError)."""
    if not is_rows_run(run):
        return None
    opened = open_run(run, settings)
    if not isinstance(opened.retriever, RowsRetriever):
        raise TargetError(f"run {run.run_id}'s retriever '{run.config.retriever}' does not "
                          "index rows")
    ranked = [key for key, _ in result.ranked]
    missed = [key for key in result.gold if key not in set(ranked)]
    keys = [key for key in ranked + missed if key in opened.position]
    with opened.lock:  # the retriever keeps the last query's vector: one caller at a time
        found = opened.retriever.matched_rows(query, [opened.position[k] for k in keys],
                                              per_table)
    rank = {key: i for i, key in enumerate(ranked, start=1)}
    gold = set(result.gold)
    out = []
    for key, rows in zip(keys, found, strict=True):
        table = opened.tables[opened.position[key]]
        texts = row_texts(table, run.config.view)
        shown = bool(visible_rows(table, run.config.view))
        lines = [line for line, _ in rows]
        frame = pd.DataFrame({"row": [str(line + 1) if shown else "header" for line in lines],
                              "cosine": [score for _, score in rows]})
        if shown:  # the row's cells, then the text that was embedded
            frame = pd.concat([frame, matched_cells(table, lines, taken=("row", "cosine", "text"))],
                              axis=1)
        frame["text"] = [texts[line] for line in lines]
        out.append(MatchedTable(table_ref(key), rank.get(key), key in gold, frame,
                                tuple(lines) if shown else ()))
    return out
