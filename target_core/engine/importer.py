"""Import runs made with the TARGET library, so they can be explored here.

Two JSON Lines files, as TARGET writes them:
- retrieval results: {"dataset_name", "query_id", "retrieval_results": [[db, table], ...]};
- downstream results: {"dataset_name", "query_id", "generated_results"}, where
  generated_results is the answer text (QA), the label text (fact verification) or
  [sql, database_id] (text-to-SQL).
Either may come alone, or both together (`downstream=`). Everything is scored against
the dataset's gold exactly as a run made here (SQL is executed read-only), and each
line is validated: unknown query ids and malformed lines name the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.runner import package_versions, run_metrics
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.errors import DatasetError, TargetError
from target_core.generators.base import Context, Generation
from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    default_ks,
    gold_ranks,
    per_query_metrics,
)
from target_core.metrics.tasks import ANSWER_TASKS
from target_core.sql.execute import SqlLimits
from target_core.types import Dataset, GenerationConfig, RunConfig, TableKey


def _records(path: str | Path, dataset: Dataset, field: str
             ) -> Iterator[tuple[Any, str, Any]]:
    from target_core.datasets.folder import iter_jsonl

    known = dataset.query_index
    seen: set[str] = set()
    for where, record in iter_jsonl(Path(path)):
        if not isinstance(record, dict):
            raise where.error("each line must be a JSON object")
        query_id = str(record.get("query_id", ""))
        if query_id not in known:
            raise where.error(f"query {query_id!r} is not in dataset {dataset.name!r}",
                              "query_id")
        if query_id in seen:
            raise where.error(f"query {query_id!r} appears twice", "query_id")
        seen.add(query_id)
        if field not in record:
            raise where.error(f"missing '{field}'", field)
        yield where, query_id, record[field]


def read_target_results(path: str | Path, dataset: Dataset) -> list[tuple[str, list[TableKey]]]:
    """(query_id, retrieved keys) from a TARGET retrieval-results JSONL file."""
    results: list[tuple[str, list[TableKey]]] = []
    for where, query_id, raw in _records(path, dataset, "retrieval_results"):
        if not isinstance(raw, list) or not all(
                isinstance(k, list) and len(k) == 2 for k in raw):
            raise where.error("must be a list of [database_id, table_id] pairs",
                              "retrieval_results")
        keys = [(str(d), str(t)) for d, t in raw]
        results.append((query_id, list(dict.fromkeys(keys))))
    if not results:
        raise DatasetError("no results in the file", path=path)
    return results


def read_target_downstream(path: str | Path, dataset: Dataset
                           ) -> dict[str, Generation]:
    """query_id -> the imported answer as a Generation (SQL: with its database id)."""
    answers: dict[str, Generation] = {}
    for where, query_id, raw in _records(path, dataset, "generated_results"):
        if dataset.task == "sql":
            if not (isinstance(raw, list) and len(raw) == 2
                    and all(isinstance(v, str) for v in raw)):
                raise where.error("must be [sql, database_id] for a text-to-SQL dataset",
                                  "generated_results")
            answers[query_id] = Generation(answer=raw[0], database_id=raw[1] or None)
        elif isinstance(raw, str):
            answers[query_id] = Generation(answer=raw)
        else:
            raise where.error("must be a string (the generated answer)", "generated_results")
    if not answers:
        raise DatasetError("no results in the file", path=path)
    return answers


def _first_dataset_name(path: str | Path) -> str:
    with open(path, encoding="utf-8-sig") as handle:  # iter_jsonl accepts a BOM too
        first = handle.readline()
    try:
        return str(json.loads(first)["dataset_name"])
    except (ValueError, KeyError, TypeError):
        raise DatasetError("names no dataset_name; pass --dataset", path=path, line=1,
                           field="dataset_name") from None


def _is_downstream(path: str | Path) -> bool:
    with open(path, encoding="utf-8-sig") as handle:  # iter_jsonl accepts a BOM too
        first = handle.readline()
    try:
        return "generated_results" in json.loads(first)
    except (ValueError, TypeError):
        return False


def import_target_results(path: str, *, settings: Settings, dataset: str | None = None,
                          label: str | None = None, downstream: str | None = None,
                          store: RunStore | None = None) -> RunRecord:
    """Store a run made with the TARGET library, scored against the dataset's gold.

    `path` is a retrieval-results or a downstream-results file; `downstream` adds the
    downstream results to a retrieval file. The dataset is `dataset` or the file's
    `dataset_name`.
    """
    for given in (path, downstream):
        if given is not None and not Path(given).is_file():
            raise DatasetError("file not found", path=given)
    retrieval_path: str | None = path
    if downstream is None and _is_downstream(path):
        retrieval_path, downstream = None, path
    dataset = dataset or _first_dataset_name(path)
    data = load_dataset(dataset, settings)
    name = label or Path(path).stem
    retrieved = read_target_results(retrieval_path, data) if retrieval_path else None
    answers = read_target_downstream(downstream, data) if downstream else None
    query_ids = ([q for q, _ in retrieved] if retrieved is not None
                 else list(answers or {}))
    ranked_of = dict(retrieved or [])
    top_k = max([1] + [len(keys) for keys in ranked_of.values()])
    generation = None
    if answers is not None:
        if data.task not in ANSWER_TASKS:
            raise TargetError(f"dataset '{data.name}' has task '{data.task}': downstream "
                              "results need a qa, fact or sql dataset")
        generation = GenerationConfig(generator=f"imported:{name}")
    config = RunConfig(dataset=dataset,
                       retriever=f"imported:{name}" if retrieved is not None else "imported:none",
                       top_k=top_k, generation=generation)
    store = store or RunStore.in_workspace(settings.workspace)
    run, _ = store.start_run(config, dataset_fingerprint=data.fingerprint, task=data.task,
                             n_queries=len(query_ids), versions=package_versions())
    store.save_results(run.run_id, _results(data, query_ids, ranked_of, answers, top_k, name,
                                            SqlLimits(settings.sql_timeout,
                                                      settings.sql_row_cap)))
    store.record_index(run.run_id, index_info={"imported_from": [str(p) for p in
                                                                 (retrieval_path, downstream)
                                                                 if p]},
                       text_fingerprint="", text_example="")
    run = store.get_run(run.run_id)
    metrics = run_metrics(store, run, data)
    if retrieved is None:  # nothing was retrieved: no retrieval metrics to report
        metrics = {k: v for k, v in metrics.items() if k in _downstream_names(metrics)}
    else:  # imported runs have no timings
        outcomes = [replace(r.outcome(), ms=None) for r in store.iter_results(run.run_id)]
        metrics = aggregate_retrieval(outcomes, default_ks(top_k), task=data.task) | {
            k: v for k, v in metrics.items() if k in _downstream_names(metrics)}
    store.finish_run(run.run_id, metrics)
    return store.get_run(run.run_id)


def _downstream_names(metrics: dict[str, float]) -> set[str]:
    retrieval = ("recall", "hit@", "mrr", "ndcg", "db_hit", "retrieval_ms")
    return {k for k in metrics if not k.startswith(retrieval)}


def _results(data: Dataset, query_ids: list[str], ranked_of: dict[str, list[TableKey]],
             answers: dict[str, Generation] | None, top_k: int, name: str,
             limits: SqlLimits) -> list[QueryResult]:
    from target_core.engine.generation import Evaluator

    evaluator = Evaluator(data, limits) if answers is not None else None
    ks = default_ks(top_k)
    position = {q.query_id: i for i, q in enumerate(data.queries)}
    rows = []
    for query_id in query_ids:
        query = data.query(query_id)
        keys = ranked_of.get(query_id, [])
        outcome = QueryOutcome(query_id=query_id, retrieved=keys, gold=query.gold,
                               gold_database=query.database_id)
        metrics = per_query_metrics(outcome, ks)
        record: dict[str, Any] | None = None
        if evaluator is not None and answers is not None:
            generation = answers.get(query_id, Generation(answer="", error="not in the file"))
            databases = tuple(dict.fromkeys(k[0] for k in keys))
            record, extra = evaluator.evaluate(
                query, generation, Context(mode="retrieved", databases=databases),
                generator=f"imported:{name}", label=f"imported from TARGET ({name})")
            metrics |= extra
        rows.append(QueryResult(query_id=query_id, position=position[query_id],
                                ranked=[(k, float(len(keys) - i)) for i, k in enumerate(keys)],
                                gold=list(query.gold), gold_ranks=gold_ranks(keys, query.gold),
                                metrics=metrics, ms=0.0, generation=record))
    return rows
