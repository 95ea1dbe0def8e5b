"""The Compare page's read model: which runs can be compared (complete runs of one
dataset), the shared cutoffs, and one comparison with its per-query outcomes, names and
flipped-query tables with links to each run's Query page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from target_core.analysis.compare import RunComparison, compare_runs
from target_core.analysis.figures import run_names
from target_core.analysis.report import flipped_table
from target_core.analysis.significance import outcomes_frame
from target_core.analysis.slices import SliceView, by_slice
from target_core.engine.store import RunRecord, RunStore
from target_core.metrics.retrieval import STANDARD_KS, default_ks
from target_core.views.links import query_link


@dataclass(frozen=True)
class CompareChoices:
    """Complete runs by dataset (newest first), for the pickers."""

    by_dataset: dict[str, list[RunRecord]]

    @property
    def eligible(self) -> list[str]:
        """Datasets with at least two complete runs."""
        return sorted(name for name, runs in self.by_dataset.items() if len(runs) >= 2)

    def run(self, run_id: str) -> RunRecord | None:
        return next((r for runs in self.by_dataset.values() for r in runs
                     if r.run_id == run_id), None)

    def dataset_of(self, run_ids: Sequence[str]) -> str | None:
        """The dataset of the first of `run_ids` that is a complete run."""
        return next((run.config.dataset for r in run_ids if (run := self.run(r))), None)

    def labels(self, dataset: str) -> dict[str, str]:
        return {r.run_id: f"{r.config.label} · {r.config.view.label} · k={r.config.top_k} "
                          f"· {r.run_id}" for r in self.by_dataset.get(dataset, [])}

    def default_runs(self, dataset: str) -> list[str]:
        """The two newest runs, the older one first (the baseline)."""
        return [r.run_id for r in reversed(self.by_dataset.get(dataset, [])[:2])]

    def shared_ks(self, run_ids: Sequence[str]) -> list[int]:
        """The cutoffs every one of the runs reports."""
        runs = [run for r in run_ids if (run := self.run(r))]
        if not runs:
            return []
        return sorted(set.intersection(*(set(default_ks(r.config.top_k)) for r in runs)))

    def default_k(self, run_ids: Sequence[str]) -> int | None:
        """The largest standard cutoff (1, 3, 5, 10) they share, else their largest."""
        ks = self.shared_ks(run_ids)
        standard = [k for k in ks if k in STANDARD_KS]
        if standard:
            return standard[-1]
        return ks[-1] if ks else None


def compare_choices(store: RunStore) -> CompareChoices:
    by_dataset: dict[str, list[RunRecord]] = {}
    for record in store.list_runs(status="complete"):  # newest first
        by_dataset.setdefault(record.config.dataset, []).append(record)
    return CompareChoices(by_dataset)


@dataclass(frozen=True)
class CompareView:
    comparison: RunComparison
    runs: list[RunRecord]
    outcomes: pd.DataFrame
    """One row per query, a group of columns per run (analysis.significance)."""
    names: dict[str, str]
    """run_id -> a short distinct name."""
    flipped: dict[str, pd.DataFrame]
    """Compared run id -> its flipped queries vs the baseline, with `open baseline` and
    `open compared` links to the Query page."""

    @property
    def file_stem(self) -> str:
        return f"compare-{self.comparison.dataset}-{'-vs-'.join(r.run_id for r in self.runs)}"


def compare_view(store: RunStore, run_ids: Sequence[str], k: int | None = None
                 ) -> CompareView:
    """Compare `run_ids` (the first is the baseline) at k; raises TargetError."""
    comparison = compare_runs(store, run_ids, k=k)
    outcomes = outcomes_frame(store, run_ids, comparison.k)
    runs = [store.get_run(r) for r in run_ids]
    names = run_names(runs)
    flipped = {}
    for pair in comparison.pairs:
        table = flipped_table(pair, names)
        table["open baseline"] = [query_link(pair.baseline, q) for q in table["query_id"]]
        table["open compared"] = [query_link(pair.other, q) for q in table["query_id"]]
        flipped[pair.other] = table
    return CompareView(comparison, runs, outcomes, names, flipped)


def compare_slices(store: RunStore, view: CompareView, metadata: pd.DataFrame, field: str
                   ) -> SliceView:
    """The compared runs' headline metrics per value of the query metadata `field` (a
    column of analysis.slices.metadata_frame of the dataset's queries)."""
    return by_slice(store, view.runs, metadata, field, view.names)
