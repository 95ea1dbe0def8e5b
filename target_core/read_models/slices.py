"""The "By query metadata" section of the Overview and Compare pages: the runs' headline
metrics per value of a query metadata field (analysis.slices), as a table and as bars
(figures.slices)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from target_core.analysis.slices import metadata_frame as metadata_frame
from target_core.analysis.slices import slice_frame, slice_order, slice_table
from target_core.engine.store import RunRecord, RunStore
from target_core.figures.slices import slice_bars
from target_core.figures.style import Figure, empty
from target_core.read_models.cells import as_text, formatted, number_format

__all__ = ["SliceView", "by_slice", "runs_by_slice"]


@dataclass(frozen=True)
class SliceView:
    field: str
    table: pd.DataFrame
    """One row per value of the field, its query count, a column per run and metric."""
    figure: Figure
    """A panel per metric, a bar per run and value."""
    shown: pd.DataFrame
    """The table as a page shows it, as text: `table`, or runs_by_slice's frame when that
    has fewer columns (a run per row fits a screen where a run per column would not)."""

    @property
    def empty(self) -> bool:
        return self.table.empty

    @property
    def runs_as_rows(self) -> bool:
        return "metric" in self.shown.columns


def runs_by_slice(frame: pd.DataFrame) -> pd.DataFrame:
    """slice_frame's long `frame` as a row per run and metric ("run", "metric") and a
    column per value in slice_order, headed "value (queries)", as text (cells.number_format); blank
    where the run has no query with the value."""
    order = slice_order(set(frame["slice"]))
    counts = frame.groupby("slice")["queries"].max()
    headers = {value: f"{value} ({counts[value]})" for value in order}
    rows = []
    for (_, name), part in frame.groupby(["run_id", "name"], sort=False):
        means = dict(zip(part["slice"], part["value"], strict=True))
        rows.append({"run": part["run"].iat[0], "metric": name,
                     **{headers[value]: formatted(means.get(value), number_format(str(name)))
                        for value in order}})
    return pd.DataFrame(rows, columns=["run", "metric", *headers.values()])


def by_slice(store: RunStore, runs: Sequence[RunRecord], metadata: pd.DataFrame,
             field: str, names: Mapping[str, str] | None = None) -> SliceView:
    """The runs' headline metrics per value of `field` (a column of analysis.slices'
    metadata_frame), as a table and as bars; empty when the field is unknown or no run
    has a value."""
    if field not in metadata.columns or not runs:
        return SliceView(field, pd.DataFrame(), empty(), pd.DataFrame())
    frame = slice_frame(store, runs, metadata, field, names)
    if frame.empty:
        return SliceView(field, pd.DataFrame(), empty(), pd.DataFrame())
    table, by_run = slice_table(frame), runs_by_slice(frame)
    shown = by_run if len(by_run.columns) <= len(table.columns) else as_text(
        table, {c: number_format(c.rpartition(" · ")[2]) for c in table.columns[2:]})
    return SliceView(field, table, slice_bars(frame, field), shown)
