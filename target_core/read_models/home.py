"""The Home page's read model: every local dataset with its counts and a link to browse
it (a dataset that does not load shows its error instead of counts)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from target_core.datasets import DatasetInfo
from target_core.read_models.links import dataset_link

HOME_COLUMNS = ["name", "task", "tables", "passages", "queries", "databases", "kind", "browse",
                "error"]


def datasets_frame(infos: Sequence[DatasetInfo]) -> pd.DataFrame:
    """One row per dataset, counted as the Datasets page counts (DatasetInfo: tables,
    and apart the passages cut from documents); a count is text, blank where a dataset
    did not load (a null cell is drawn as "None"), passages blank where there are none
    and no passages column without a passage; the error is empty text where there is none."""
    frame = pd.DataFrame([i.to_dict() for i in infos],
                         columns=[c for c in HOME_COLUMNS if c != "browse"])
    for column in ("tables", "passages", "queries", "databases"):
        frame[column] = [_count(v, blank_zero=column == "passages") for v in frame[column]]
    frame["error"] = frame["error"].fillna("")
    frame["browse"] = [dataset_link(name) for name in frame["name"]]
    shown = [c for c in HOME_COLUMNS
             if c != "passages" or any(i.passages for i in infos)]
    return frame[shown]


def _count(value: object, *, blank_zero: bool = False) -> str:
    if value is None or pd.isna(value) or (blank_zero and not value):  # type: ignore[call-overload]
        return ""
    return f"{int(value):,}"  # type: ignore[call-overload]

