"""What the pages share across reruns: settings, the run store, dataset loads and
lookups, and the cached summaries and cost estimates."""

from __future__ import annotations

import streamlit as st

from target_core.actions.datasets import Upload, add_dataset, remove_dataset
from target_core.read_models.dataset_sizes import dataset_summary
from target_core.read_models.dataset_sizes import measure_all as measure_all_tables
from target_core.read_models.datasets import DatasetSummary
from target_core.read_models.resources import (
    DatasetInfo,
    DatasetLookup,
    Progress,
    RunCostEstimate,
    RunStore,
    Settings,
    added_names,
    discover,
    estimate_run_cost,
    list_datasets,
    load_dataset,
    load_settings,
    open_lookup,
)
from target_core.read_models.runs import billed
from target_core.run_config import GenerationConfig
from target_core.table_view import TableView
from target_core.types import Dataset, TableLookup


@st.cache_resource(show_spinner=False)
def settings() -> Settings:
    return load_settings()


def store() -> RunStore:
    """The workspace's run store (a new connection per script run: sqlite connections
    must not cross Streamlit's threads)."""
    return RunStore.in_workspace(settings().workspace)


def dataset_names() -> list[str]:
    """The local datasets' names (hub datasets excluded); raises TargetError."""
    return [name for name, entry in discover(settings()).items() if entry.kind != "hub"]


@st.cache_data(show_spinner="Counting datasets…", ttl=60)
def dataset_infos() -> list[DatasetInfo]:
    """Every local dataset with counts (or the error that stops it loading)."""
    return list_datasets(settings())


def add(source: str | Upload, name: str | None) -> DatasetInfo:
    """Validate and register a dataset (a server path or an upload); raises TargetError.
    Every page's dataset list has it at its next run."""
    info = add_dataset(source, settings(), name=name)
    datasets_changed()
    return info


def remove(name: str) -> None:
    remove_dataset(name, settings())
    datasets_changed()


def removable() -> list[str]:
    """The added datasets' names (the ones `remove` takes)."""
    return added_names(settings())


def datasets_changed() -> None:
    """Forget the cached dataset lists and loads: a name may now mean other files."""
    dataset_infos.clear()
    _load.clear()


@st.cache_resource(show_spinner="Loading dataset…", max_entries=8)
def _load(name: str, workspace: str) -> Dataset:
    return load_dataset(name, settings())


def load_by_name(name: str) -> Dataset:
    """Load a dataset (cached); raises TargetError."""
    return _load(name, str(settings().workspace))


def lookup_by_name(name: str) -> Dataset | DatasetLookup:
    """A dataset's queries and tables for showing a few of them: large corpora that
    loaded before are read table by table instead of in full; raises TargetError."""
    return open_lookup(name, settings())


@st.cache_resource(show_spinner="Measuring tables…", max_entries=8)
def _summary(_dataset: TableLookup, fingerprint: str, view: dict[str, object]
             ) -> DatasetSummary:
    return dataset_summary(_dataset, TableView.from_dict(view), settings().workspace)


def summary(dataset: Dataset | DatasetLookup, view: TableView) -> DatasetSummary:
    """Per-table sizes under `view` (a large corpus's stored, or a sample's), cached per
    (dataset fingerprint, view): one shared summary, never copied (a pickled copy of a
    million-row catalogue on every rerun cost seconds), so the page must not change it."""
    return _summary(dataset, dataset.fingerprint, view.to_dict())


def measure_all(dataset: TableLookup, view: TableView, progress: Progress) -> None:
    """Count every table's tokens under `view` and store them (the summary has them next)."""
    measure_all_tables(dataset, view, settings().workspace, progress=progress)
    _summary.clear()


@st.cache_data(show_spinner="Estimating tokens…", max_entries=64)
def _run_estimate(_dataset: Dataset, fingerprint: str, spec: str,
                  generation: dict[str, object] | None, view: dict[str, object], top_k: int,
                  n_queries: int) -> RunCostEstimate:
    config = None if generation is None else GenerationConfig.from_dict(generation)
    return estimate_run_cost(_dataset, spec, config, top_k=top_k, n_queries=n_queries,
                             view=TableView.from_dict(view))


def run_estimate(lookup: TableLookup, spec: str, generation: GenerationConfig | None,
                 view: TableView, *, top_k: int, n_queries: int) -> RunCostEstimate:
    """The cost estimate of one run, cached: it counts the tokens of every table, so a
    dataset on its corpus index loads in full only when an API bills the run (an unknown
    spec raises UnknownNameError either way)."""
    if not isinstance(lookup, Dataset) and not billed(spec, generation):
        return RunCostEstimate(spec, generation.generator if generation else None, ())  # no lines
    dataset = lookup if isinstance(lookup, Dataset) else load_by_name(lookup.name)
    return _run_estimate(dataset, dataset.fingerprint, spec,
                         None if generation is None else generation.to_dict(), view.to_dict(),
                         top_k, n_queries)
