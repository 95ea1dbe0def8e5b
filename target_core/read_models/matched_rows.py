"""Which rows matched: for one query of a `rows` run (retrievers/rows.py), the best rows
of each retrieved table, and of each gold table it missed, with their cosines.

The run stores its ranked tables, not its rows: the rows are found again by opening the
run's retriever again (engine/reopen.py: over the run's texts, its Chroma index reused,
so this embeds only the query). A dataset that changed since the run gives other texts:
then its rows are not matched again (reopen.StaleIndexError).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from target_core.config import Settings
from target_core.engine.reopen import open_run
from target_core.engine.store import QueryResult, RunRecord
from target_core.errors import TargetError
from target_core.read_models.datasets import table_frame
from target_core.retrievers.rows import MATCHED_ROWS, RowsRetriever, row_texts
from target_core.serialize import visible_rows
from target_core.types import Table, table_ref


@dataclass(frozen=True)
class MatchedTable:
    """One table's best rows for the query."""

    table: str
    rank: int | None
    """Its rank in the run's list; None for a gold table the run did not retrieve."""
    gold: bool
    rows: pd.DataFrame
    """row (1-based, or "header" for a table shown without rows), cosine, the row's
    cells, and the text that was embedded; best first."""
    matched: tuple[int, ...]
    """The matched rows' 0-based indices into table.rows (for highlighting)."""

    @property
    def label(self) -> str:
        where = "gold, not retrieved" if self.rank is None else f"rank {self.rank}"
        best = self.rows.iloc[0] if len(self.rows) else None
        tail = "" if best is None else f" · best row {best['row']} ({best['cosine']:.4f})"
        return f"{'★ ' if self.gold else ''}{self.table} · {where}{tail}"


def is_rows_run(run: RunRecord) -> bool:
    """The run's retriever scores tables by their best row (Entry.scores_rows)."""
    from target_core.retrievers import split_spec

    try:
        return split_spec(run.config.retriever)[0].scores_rows
    except TargetError:
        return False


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
            frame = pd.concat([frame, _cells(table, lines, taken=("row", "cosine", "text"))],
                              axis=1)
        frame["text"] = [texts[line] for line in lines]
        out.append(MatchedTable(table_ref(key), rank.get(key), key in gold, frame,
                                tuple(lines) if shown else ()))
    return out


def _cells(table: Table, lines: list[int], taken: tuple[str, ...]) -> pd.DataFrame:
    """The rows `lines` of `table` as display columns, renamed where a column's name is
    one of `taken` (a table may have a column called "row")."""
    cells = table_frame(table).iloc[lines].reset_index(drop=True)
    names: list[str] = list(taken)
    renamed = []
    for name in cells.columns:
        while name in names:
            name += "'"
        names.append(name)
        renamed.append(name)
    cells.columns = renamed
    return cells
