"""The Python API, for notebooks: the CLI's commands as functions, DataFrames out.

    from target_core import api

    api.datasets()                                  # `datasets`
    record = api.run("demo-qa", "bm25", limit=20)   # `run`
    api.runs(dataset="demo-qa")                     # `runs`
    api.queries(record.run_id)                      # `show RUN_ID --queries`
    api.compare(run_a, run_b)                       # `compare RUN_A RUN_B`
    api.failures(record.run_id)                     # `failures RUN_ID`

Each function calls what its command calls (datasets/, engine/, analysis/, read_models/) and
adds no rule of its own. `workspace` is the CLI's --workspace: None means
TARGET_WORKSPACE, else the default workspace (config.DEFAULT_WORKSPACE). Errors are the
CLI's too: a TargetError subclass whose message names the value. docs/api.md has the
examples; tests/test_api.py runs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from target_core.config import Settings, load_settings

if TYPE_CHECKING:
    import pandas as pd

    from target_core.analysis.compare import RunComparison
    from target_core.analysis.failures import FailureReport
    from target_core.engine.store import RunRecord, RunStore
    from target_core.table_view import TableView
    from target_core.types import Dataset

__all__ = ["compare", "datasets", "failures", "load_dataset", "queries", "run", "runs",
           "show"]

Workspace = str | Path | None


def _store(settings: Settings) -> RunStore:
    from target_core.engine.store import RunStore

    return RunStore.in_workspace(settings.workspace)


def datasets(*, remote: bool = False, workspace: Workspace = None) -> pd.DataFrame:
    """Every dataset `run` accepts, one row each: name, task, tables, queries, databases,
    kind, source, and the error of one that does not load. `remote` adds TARGET's hub
    datasets (named, not downloaded)."""
    import pandas as pd

    from target_core.datasets import list_datasets

    return pd.DataFrame([info.to_dict() for info in
                         list_datasets(load_settings(workspace), remote=remote)])


def load_dataset(name_or_path: str | Path, *, workspace: Workspace = None) -> Dataset:
    """A dataset by name (as `datasets` lists it) or folder path: its `tables`, `queries`
    (frozen dataclasses) and `task`."""
    from target_core.datasets import load_dataset as load

    return load(name_or_path, load_settings(workspace))


def run(dataset: str, retriever: str, *, top_k: int = 10, view: str | TableView = "default",
        limit: int | None = None, seed: int = 0, generator: str | None = None,
        context: str = "retrieved", context_k: int | None = None, fresh: bool = False,
        workspace: Workspace = None) -> RunRecord:
    """`run`: retrieve the top_k tables for each query (a seeded sample of `limit`), with
    `generator` answer each one from `context` ("retrieved", "oracle" or "none"), store
    the run and return its record (`run_id`, `metrics`, `status`, `error`, `config`).

    `view` is a TableView or a preset name (`--view`). As on the command line, a complete
    run of the same configuration is returned, not run again, unless `fresh`; an
    unfinished one is resumed. A run marked failed (too many failed generations) is
    returned with status "failed" and its reason in `error`.
    """
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import GenerationConfig, RunConfig
    from target_core.table_view import TableView

    generation = (GenerationConfig(generator=generator, context=context, context_k=context_k)
                  if generator else None)
    config = RunConfig(dataset=dataset, retriever=retriever, top_k=top_k, limit=limit,
                       seed=seed, generation=generation,
                       view=TableView.preset(view) if isinstance(view, str) else view)
    return run_retrieval(config, settings=load_settings(workspace), fresh=fresh).run


def runs(dataset: str | None = None, *, workspace: Workspace = None) -> pd.DataFrame:
    """`runs`: every stored run (on `dataset`'s content, by any of its names), newest
    first, with its headline numbers: the Run page's columns."""
    from target_core.read_models.runs import dataset_runs, runs_frame

    settings = load_settings(workspace)
    return runs_frame(dataset_runs(_store(settings), dataset, settings))


def show(run_id: str, *, workspace: Workspace = None) -> RunRecord:
    """`show RUN_ID`: the stored run (configuration, status, metrics, versions)."""
    return _store(load_settings(workspace)).get_run(run_id)


def queries(run_id: str, *, k: int | None = None, workspace: Workspace = None
            ) -> pd.DataFrame:
    """`show RUN_ID --queries`: one row per query, in query order: query_id, ms, gold,
    gold_ranks, last_gold_rank, `failed` (a gold table not within the first k; default
    k: the run's top_k), ranked ([database_id, table_id, score] in rank order), the
    generated answer's fields, then one column per per-query metric (recall@10, mrr, ...)."""
    from target_core.read_models.runs import queries_frame, query_rows

    store = _store(load_settings(workspace))
    record = store.get_run(run_id)
    return queries_frame(query_rows(store, record, record.config.top_k if k is None else k))


def compare(run_a: str, run_b: str, *more: str, k: int | None = None,
            workspace: Workspace = None) -> RunComparison:
    """`compare RUN_A RUN_B ...`: the paired comparison on the queries all runs share,
    `run_a` the baseline. `.pairs` hold per metric win/tie/loss, the test and its p-value,
    and the flipped queries; `.to_dict()` is `compare --json`."""
    from target_core.analysis.compare import compare_runs

    return compare_runs(_store(load_settings(workspace)), [run_a, run_b, *more], k=k)


def failures(run_id: str, *, k: int | None = None, workspace: Workspace = None
             ) -> FailureReport:
    """`failures RUN_ID`: every query missing a gold table within k (default: the run's
    top_k, at most 10), in the failure categories. `.counts` per category, `.frame()` one
    row per failed query, `.to_dict()` is `failures --json`."""
    from target_core.analysis.failures import analyse_failures
    from target_core.datasets import load_dataset as load

    settings = load_settings(workspace)
    store = _store(settings)
    record = store.get_run(run_id)
    return analyse_failures(store, load(record.config.dataset, settings), run_id, k=k)
