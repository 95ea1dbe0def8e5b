"""The "By query metadata" section of the Overview and Compare pages: the runs' headline
metrics per value of a query metadata field (analysis.slices), as a table and as bars
(figures.slices)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from target_core.analysis.slices import metadata_frame as metadata_frame
from target_core.analysis.slices import slice_frame, slice_table
from target_core.engine.store import RunRecord, RunStore
from target_core.figures.slices import slice_bars
from target_core.figures.style import Figure, empty

__all__ = ["SliceView", "by_slice"]


@dataclass(frozen=True)
class SliceView:
    field: str
    table: pd.DataFrame
    """One row per value of the field, its query count, a column per run and metric."""
    figure: Figure
    """A panel per metric, a bar per run and value."""

    @property
    def empty(self) -> bool:
        return self.table.empty


def by_slice(store: RunStore, runs: Sequence[RunRecord], metadata: pd.DataFrame,
             field: str, names: Mapping[str, str] | None = None) -> SliceView:
    """The runs' headline metrics per value of `field` (a column of analysis.slices'
    metadata_frame), as a table and as bars; empty when the field is unknown or no run
    has a value."""
    if field not in metadata.columns or not runs:
        return SliceView(field, pd.DataFrame(), empty())
    frame = slice_frame(store, runs, metadata, field, names)
    if frame.empty:
        return SliceView(field, pd.DataFrame(), empty())
    return SliceView(field, slice_table(frame), slice_bars(frame, field))
