"""Run orchestration: dataset -> table texts -> index -> retrieve -> per-query metrics -> store.

Retrieval happens once, at the run's top_k; every smaller k is a prefix of that list.
Results are saved in small transactional batches, so a run killed at any point keeps
its finished queries, and starting the same configuration again resumes it: indexing
is cached (Chroma collections are named by content), finished queries are skipped.
"""

from __future__ import annotations

import importlib.metadata
import logging
import platform
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.errors import TargetError
from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    default_ks,
    gold_ranks,
    per_query_metrics,
)
from target_core.retrievers import build_retriever
from target_core.retrievers.base import Progress, Retriever, no_progress, rank_in
from target_core.serialize import table_text, texts_fingerprint
from target_core.store import QueryResult, RunRecord, RunStore
from target_core.types import Dataset, Query, RunConfig, TableKey

log = logging.getLogger(__name__)

BATCH_SIZE = 32
_VERSIONED = ("chromadb", "rank-bm25", "scikit-learn", "numpy", "tokenizers", "openai",
              "sqlglot")


@dataclass(frozen=True)
class RunResult:
    run: RunRecord
    resumed: bool
    n_new: int
    """Queries retrieved by this call (fewer than n_queries when it resumed a run)."""


def select_queries(dataset: Dataset, limit: int | None, seed: int) -> list[Query]:
    """All queries, or a seeded sample of `limit` of them kept in dataset order."""
    queries = list(dataset.queries)
    if limit is None or limit >= len(queries):
        return queries
    chosen = sorted(random.Random(seed).sample(range(len(queries)), limit))
    return [queries[i] for i in chosen]


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def _gold_ranks(retriever: Retriever, query: Query, ranked: Sequence[TableKey],
                position: dict[TableKey, int]) -> dict[TableKey, int | None]:
    """Rank of each gold table: from the top-k list, else from the full scores when the
    retriever can give them (so near misses at k+1 are visible), else None."""
    ranks = gold_ranks(list(ranked), query.gold)
    missing = [key for key, rank in ranks.items() if rank is None]
    if missing:
        scores = retriever.score_all(query.query)
        if scores is not None:
            for key in missing:
                ranks[key] = rank_in(scores, position[key])
    return ranks


def run_metrics(store: RunStore, run: RunRecord, task: str) -> dict[str, float]:
    """Aggregate metrics over every stored query of the run (resumed parts included)."""
    outcomes = [r.outcome() for r in store.iter_results(run.run_id)]
    return aggregate_retrieval(outcomes, default_ks(run.config.top_k), task=task)


def run_retrieval(config: RunConfig, *, settings: Settings, store: RunStore | None = None,
                  progress: Progress = no_progress, batch_size: int = BATCH_SIZE) -> RunResult:
    """Run (or resume) one retrieval run and return its stored record.

    Raises TargetError for unknown names and configuration problems before any work.
    """
    dataset = load_dataset(config.dataset, settings)
    retriever = build_retriever(config.retriever, settings)
    queries = select_queries(dataset, config.limit, config.seed)
    store = store or RunStore.in_workspace(settings.workspace)
    run, resumed = store.start_run(config, dataset_fingerprint=dataset.fingerprint,
                                   task=dataset.task, n_queries=len(queries),
                                   versions=package_versions())
    try:
        n_new = _execute(config, dataset, retriever, queries, store, run, progress, batch_size)
        store.finish_run(run.run_id, run_metrics(store, run, dataset.task))
    except TargetError as exc:
        store.fail_run(run.run_id, str(exc))
        raise
    except KeyboardInterrupt:
        store.fail_run(run.run_id, "interrupted")
        raise
    return RunResult(store.get_run(run.run_id), resumed, n_new)


def _execute(config: RunConfig, dataset: Dataset, retriever: Retriever, queries: list[Query],
             store: RunStore, run: RunRecord, progress: Progress, batch_size: int) -> int:
    texts = [table_text(t, config.view) for t in dataset.tables]
    fingerprint = texts_fingerprint(texts)
    info = retriever.index(texts, corpus_key=fingerprint, progress=progress)
    store.record_index(run.run_id, text_fingerprint=fingerprint, text_example=texts[0][:4000],
                       index_info={"n_texts": info.n_texts, "seconds": round(info.seconds, 4),
                                   **info.details})
    keys = [t.key for t in dataset.tables]
    position = {key: i for i, key in enumerate(keys)}
    ks = default_ks(config.top_k)
    done = store.done_query_ids(run.run_id)
    todo = [(i, q) for i, q in enumerate(queries) if q.query_id not in done]
    batch: list[QueryResult] = []
    progress(len(done), len(queries), "retrieving")
    for n, (index, query) in enumerate(todo, start=1):
        started = time.perf_counter()
        hits = retriever.search([query.query], top_k=config.top_k)[0]
        ms = (time.perf_counter() - started) * 1000
        ranked = [(keys[i], score) for i, score in hits]
        ranks = _gold_ranks(retriever, query, [k for k, _ in ranked], position)
        outcome = QueryOutcome(query_id=query.query_id, retrieved=[k for k, _ in ranked],
                               gold=query.gold, gold_database=query.database_id, ms=ms)
        batch.append(QueryResult(query_id=query.query_id, position=index, ranked=ranked,
                                 gold=list(query.gold), gold_ranks=ranks,
                                 metrics=per_query_metrics(outcome, ks), ms=ms))
        if len(batch) >= batch_size:
            store.save_results(run.run_id, batch)
            batch = []
        progress(len(done) + n, len(queries), "retrieving")
    if batch:
        store.save_results(run.run_id, batch)
    log.info("run %s: %d queries retrieved (%d resumed)", run.run_id, len(todo), len(done))
    return len(todo)


def import_target_results(path: str, *, settings: Settings, dataset: str | None = None,
                          label: str | None = None, store: RunStore | None = None
                          ) -> RunRecord:
    """Store a run made with the TARGET library from its retrieval-results JSONL, scored
    against the dataset's gold; the dataset is `dataset` or the file's `dataset_name`."""
    import json
    from pathlib import Path

    from target_core.export import read_target_results

    if dataset is None:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
        try:
            dataset = str(json.loads(first)["dataset_name"])
        except (ValueError, KeyError, TypeError):
            raise TargetError(f"{path}: line 1 names no dataset_name; pass --dataset") from None
    data = load_dataset(dataset, settings)
    results = read_target_results(path, data)
    top_k = max(1, max(len(keys) for _, keys in results))
    config = RunConfig(dataset=dataset, retriever=f"imported:{label or Path(path).stem}",
                       top_k=top_k)
    store = store or RunStore.in_workspace(settings.workspace)
    run, _ = store.start_run(config, dataset_fingerprint=data.fingerprint, task=data.task,
                             n_queries=len(results), versions=package_versions())
    ks = default_ks(top_k)
    position = {q.query_id: i for i, q in enumerate(data.queries)}
    rows = []
    for query_id, keys in results:
        query = data.query(query_id)
        outcome = QueryOutcome(query_id=query_id, retrieved=keys, gold=query.gold,
                               gold_database=query.database_id)
        rows.append(QueryResult(query_id=query_id, position=position[query_id],
                                ranked=[(k, float(len(keys) - i)) for i, k in enumerate(keys)],
                                gold=list(query.gold), gold_ranks=gold_ranks(keys, query.gold),
                                metrics=per_query_metrics(outcome, ks), ms=0.0))
    store.save_results(run.run_id, rows)
    store.record_index(run.run_id, index_info={"imported_from": str(path)},
                       text_fingerprint="", text_example="")
    outcomes = [replace(r.outcome(), ms=None) for r in rows]  # imported runs have no timings
    store.finish_run(run.run_id, aggregate_retrieval(outcomes, ks, task=data.task))
    return store.get_run(run.run_id)
