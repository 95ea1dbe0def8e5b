"""Which rows matched, as the Query page shows them: for one query of a `rows` run
(retrievers/rows.py), the best rows of each retrieved table, and of each gold table it
missed, with their cosines and cells. The run stores its ranked tables, not its rows:
finding them again opens the run's retriever (actions/query.py's matched_rows_view)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from target_core.engine.store import RunRecord
from target_core.errors import TargetError
from target_core.read_models.datasets import table_frame
from target_core.retrievers import split_spec
from target_core.types import Table


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
    try:
        return split_spec(run.config.retriever)[0].scores_rows
    except TargetError:
        return False


def matched_cells(table: Table, lines: list[int], taken: tuple[str, ...]) -> pd.DataFrame:
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
