"""Import runs made with the TARGET library, so they can be explored here.

Two JSON Lines files, as TARGET writes them:
- retrieval results: {"dataset_name", "query_id", "retrieval_results": [[db, table], ...]};
- downstream results: {"dataset_name", "query_id", "generated_results"}, where
  generated_results is the answer text (QA), the label text (fact verification) or
  [sql, database_id] (text-to-SQL).
Either may come alone, or both together (`downstream=`). Everything is scored against
the dataset's gold exactly as a run made here (SQL is executed read-only), and each
line is validated: unknown query ids and malformed lines name the file and line.

TARGET's evaluator writes one file per dataset and k, `<dir>/<dataset_name>/<k>.jsonl`
(tasks/utils.py `construct_persistence_path`), retrieval and downstream results in
two such folders. `import_target` takes such a folder (or one dataset's folder, or a
single file) and stores one run per file: top_k is the file's k, the retriever is named
by `label` or the folder holding the dataset folders, and TARGET's dataset names
(`fetaqa`, `spider-test`, ...) resolve to a dataset of that name here, else to TARGET's
hub dataset (`hub:fetaqa`, `hub:spider`, ...).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.results import QueryResult
from target_core.engine.runner import package_versions, run_metrics
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import (
    DatasetError,
    DatasetUnavailableError,
    TargetError,
    UnknownNameError,
)
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

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImportedRun:
    """One stored run and what the user must know about it (partial coverage, a guessed
    top_k): each warning is one sentence naming the file."""

    run: RunRecord
    warnings: tuple[str, ...] = ()


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
            raise where.error(f"query {query_id!r} is not in dataset {dataset.name!r} "
                              f"(pass --dataset with the dataset these results are on)",
                              "query_id")
        if query_id in seen:
            raise where.error(f"query {query_id!r} appears twice", "query_id")
        seen.add(query_id)
        if field not in record:
            raise where.error(f"missing '{field}'", field)
        yield where, query_id, record[field]


def read_target_results(path: str | Path, dataset: Dataset, top_k: int | None = None
                        ) -> list[tuple[str, list[TableKey]]]:
    """(query_id, retrieved keys) from a TARGET retrieval-results JSONL file; a list
    longer than `top_k` is an error (it cannot come from a run at that k)."""
    results: list[tuple[str, list[TableKey]]] = []
    for where, query_id, raw in _records(path, dataset, "retrieval_results"):
        if not isinstance(raw, list) or not all(
                isinstance(k, list) and len(k) == 2 for k in raw):
            raise where.error("must be a list of [database_id, table_id] pairs",
                              "retrieval_results")
        keys = list(dict.fromkeys((str(d), str(t)) for d, t in raw))
        if top_k is not None and len(keys) > top_k:
            raise where.error(f"lists {len(keys)} tables, more than top_k = {top_k}",
                              "retrieval_results")
        results.append((query_id, keys))
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


def _first_record(path: str | Path) -> Any:
    with open(path, encoding="utf-8-sig") as handle:  # iter_jsonl accepts a BOM too
        first = handle.readline()
    try:
        return json.loads(first)
    except ValueError:
        return None


def _first_dataset_name(path: str | Path) -> str:
    record = _first_record(path)
    if isinstance(record, dict) and "dataset_name" in record:
        return str(record["dataset_name"])
    raise DatasetError("names no dataset_name; pass --dataset", path=path, line=1,
                       field="dataset_name")


def _is_downstream(path: str | Path) -> bool:
    record = _first_record(path)
    return isinstance(record, dict) and "generated_results" in record


def _k_of(path: Path) -> int | None:
    """The k of TARGET's `<dataset_name>/<k>.jsonl` (None for any other name)."""
    if path.suffix != ".jsonl" or not path.stem.isdigit() or int(path.stem) < 1:
        return None
    return int(path.stem)


def resolve_target_dataset(name: str, settings: Settings, *, source: str | Path) -> Dataset:
    """The dataset TARGET's results in `source` call `name`: a dataset of that name (or
    path) here, else TARGET's hub dataset of that name (`spider-test` is `hub:spider`).
    Raises DatasetError naming the file and saying which --dataset to pass."""
    from target_core.datasets.registry import resolve
    from target_core.datasets.target_hub import HUB_DATASETS, hub_name_of_target

    try:
        resolve(name, settings)
        return load_dataset(name, settings)
    except UnknownNameError as unknown:
        hub = hub_name_of_target(name)
        if hub is None:
            targets = ", ".join(s.dataset_name for s in HUB_DATASETS.values())
            raise DatasetError(f"the results are on dataset {name!r}, which is neither a "
                               f"dataset here nor one of TARGET's ({targets}); pass "
                               f"--dataset with its name or folder ({unknown})",
                               path=source) from None
    try:
        return load_dataset(hub, settings)
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            f"{source}: the results are on TARGET's {name!r}, which is {hub} here and cannot "
            f"be loaded ({exc}). Pass --dataset with a copy of it on this machine: its folder, "
            f"or its name in `python -m target_core datasets`") from None


def import_target_results(path: str, *, settings: Settings, dataset: str | None = None,
                          label: str | None = None, downstream: str | None = None,
                          store: RunStore | None = None, top_k: int | None = None,
                          partial: bool = False) -> RunRecord:
    """Store a run made with the TARGET library (one file, or a retrieval file and its
    `downstream` file), scored against the dataset's gold; warnings are logged.
    See `import_file`."""
    imported = import_file(path, settings=settings, dataset=dataset, label=label,
                           downstream=downstream, store=store, top_k=top_k, partial=partial)
    for warning in imported.warnings:
        logger.warning("%s", warning)
    return imported.run


def import_target(path: str, *, settings: Settings, dataset: str | None = None,
                  label: str | None = None, downstream: str | None = None,
                  store: RunStore | None = None, top_k: int | None = None,
                  partial: bool = False) -> list[ImportedRun]:
    """Import a file, or every `<dataset_name>/<k>.jsonl` of TARGET's results folder
    `path` (TARGET's results directory, or one dataset's folder in it): one run per file.

    `downstream` is the matching downstream file or folder (files pair by dataset and
    k; a downstream file without a retrieval file is imported alone). `top_k` is only
    for a single file not named `<k>.jsonl`.
    """
    root = Path(path)
    if not root.is_dir():
        return [import_file(path, settings=settings, dataset=dataset, label=label,
                            downstream=downstream, store=store, top_k=top_k,
                            partial=partial)]
    if top_k is not None:
        raise TargetError("--top-k is for a single file: in TARGET's results folder each "
                          "file's name is its k")
    found, name = target_files(root)
    pairs: dict[tuple[str, int], list[Path | None]] = {key: [file, None]
                                                     for key, file in found.items()}
    if downstream is not None:
        if not Path(downstream).is_dir():
            raise DatasetError("must be a folder like the results folder "
                               "(<dataset_name>/<k>.jsonl)", path=downstream)
        for key, file in target_files(Path(downstream))[0].items():
            pairs.setdefault(key, [None, None])[1] = file
    store = store or RunStore.in_workspace(settings.workspace)
    runs = []
    for (dataset_name, _k), (retrieval, answers) in sorted(pairs.items()):
        first = retrieval or answers
        if first is None:  # every pair has one file at least
            continue
        runs.append(import_file(str(first), settings=settings,
                                dataset=dataset or _dataset_of(first, dataset_name),
                                label=label or name,
                                downstream=str(answers) if retrieval and answers else None,
                                store=store, partial=partial))
    return runs


def _dataset_of(path: Path, folder_name: str) -> str:
    record = _first_record(path)
    if isinstance(record, dict) and "dataset_name" in record:
        return str(record["dataset_name"])
    return folder_name


def target_files(root: Path) -> tuple[dict[tuple[str, int], Path], str]:
    """TARGET's results files under `root` by (dataset_name, k), and the name of the
    folder holding the dataset folders (the default label of the runs)."""
    own = {(root.name, k): f for f in sorted(root.iterdir()) if (k := _k_of(f)) is not None}
    if own:
        return own, root.resolve().parent.name
    found = {(d.name, k): f for d in sorted(root.iterdir()) if d.is_dir()
             for f in sorted(d.iterdir()) if (k := _k_of(f)) is not None}
    if not found:
        raise DatasetError("holds no <dataset_name>/<k>.jsonl files (the layout of "
                           "TARGET's results folder)", path=root)
    return found, root.resolve().name


def import_file(path: str, *, settings: Settings, dataset: str | None = None,
                label: str | None = None, downstream: str | None = None,
                store: RunStore | None = None, top_k: int | None = None,
                partial: bool = False) -> ImportedRun:
    """Store a run made with the TARGET library, scored against the dataset's gold.

    `path` is a retrieval-results or a downstream-results file; `downstream` adds the
    downstream results to a retrieval file (both must hold the same queries unless
    `partial`: then the run keeps those both hold). The dataset is `dataset` or the
    file's `dataset_name` (`resolve_target_dataset`). top_k is `top_k`, else the k of a
    file named `<k>.jsonl`, else the longest list (with a warning). The retriever is
    `imported:<label>`; the default label of `<x>/<dataset_name>/<k>.jsonl` is x's name,
    else the file's stem.
    """
    for given in (path, downstream):
        if given is not None and not Path(given).is_file():
            raise DatasetError("file not found", path=given)
    retrieval_path: str | None = path
    if downstream is None and _is_downstream(path):
        retrieval_path, downstream = None, path
    data = (load_dataset(dataset, settings) if dataset else
            resolve_target_dataset(_first_dataset_name(path), settings, source=path))
    file_k = _k_of(Path(path))
    name = label or (Path(path).resolve().parent.parent.name if file_k is not None
                     else Path(path).stem)
    top_k = top_k or file_k
    warnings: list[str] = []
    retrieved = read_target_results(retrieval_path, data, top_k) if retrieval_path else None
    answers = read_target_downstream(downstream, data) if downstream else None
    query_ids = _covered(retrieval_path, downstream, retrieved, answers, partial, warnings)
    ranked_of = dict(retrieved or [])
    if top_k is None:
        top_k = max([1] + [len(keys) for keys in ranked_of.values()])
        if retrieved is not None:
            warnings.append(f"{path}: took top_k = {top_k} from the longest list; pass "
                            f"--top-k with the k the results were retrieved at")
    if len(query_ids) < len(data.queries):
        warnings.append(f"{downstream if retrieved is None else retrieval_path}: holds "
                        f"{len(query_ids)} of the {len(data.queries)} queries of "
                        f"{data.name}; the run's numbers are over those {len(query_ids)} only")
    generation = None
    if answers is not None:
        if data.task not in ANSWER_TASKS:
            raise TargetError(f"dataset '{data.name}' has task '{data.task}': downstream "
                              "results need a qa, fact or sql dataset")
        generation = GenerationConfig(generator=f"imported:{name}")
    config = RunConfig(dataset=dataset or data.name,
                       retriever=f"imported:{name}" if retrieved is not None else "imported:none",
                       top_k=top_k, generation=generation)
    return ImportedRun(_store_run(config, data, query_ids, ranked_of, answers, name,
                                  settings, store, [p for p in (retrieval_path, downstream)
                                                    if p], warnings), tuple(warnings))


def _covered(retrieval_path: str | None, downstream: str | None,
             retrieved: list[tuple[str, list[TableKey]]] | None,
             answers: dict[str, Generation] | None, partial: bool,
             warnings: list[str]) -> list[str]:
    """The queries of the run: a retrieval file and its downstream file must hold the
    same ones (else DatasetError), unless `partial`, which keeps those both hold."""
    if retrieved is None:
        return list(answers or {})
    query_ids = [q for q, _ in retrieved]
    if answers is None:
        return query_ids
    missing = [q for q in query_ids if q not in answers]
    extra = [q for q in answers if q not in set(query_ids)]
    if not missing and not extra:
        return query_ids
    both = [q for q in query_ids if q in answers]
    what = (f"answers {len(answers)} queries, {len(both)} of the {len(query_ids)} in "
            f"{retrieval_path}" + (f" (none for {missing[0]!r})" if missing else "")
            + (f" and {len(extra)} it does not hold ({extra[0]!r})" if extra else ""))
    if not partial:
        raise DatasetError(f"{what}; unanswered queries would score as wrong. Pass "
                           f"--partial to import only the {len(both)} queries both files "
                           f"hold, or import each file alone", path=downstream)
    if not both:
        raise DatasetError(f"{what}: no query in common", path=downstream)
    warnings.append(f"{downstream}: {what}; imported the {len(both)} both hold (--partial)")
    return both


def _store_run(config: RunConfig, data: Dataset, query_ids: list[str],
               ranked_of: dict[str, list[TableKey]], answers: dict[str, Generation] | None,
               name: str, settings: Settings, store: RunStore | None, sources: list[str],
               warnings: list[str]) -> RunRecord:
    store = store or RunStore.in_workspace(settings.workspace)
    run, _ = store.start_run(config, dataset_fingerprint=data.fingerprint, task=data.task,
                             n_queries=len(query_ids), versions=package_versions())
    store.save_results(run.run_id, _results(data, query_ids, ranked_of, answers,
                                            config.top_k, name,
                                            SqlLimits(settings.sql_timeout,
                                                      settings.sql_row_cap)))
    store.record_index(run.run_id, index_info={"imported_from": [str(p) for p in sources],
                                               "import_warnings": warnings},
                       text_fingerprint="", text_example="")
    run = store.get_run(run.run_id)
    metrics = run_metrics(store, run, data)
    downstream = {k: v for k, v in metrics.items() if k in _downstream_names(metrics)}
    if config.retriever == "imported:none":  # nothing retrieved: no retrieval metrics
        metrics = downstream
    else:  # imported runs have no timings
        outcomes = [replace(r.outcome(), ms=None) for r in store.iter_results(run.run_id)]
        metrics = aggregate_retrieval(outcomes, default_ks(config.top_k),
                                      task=data.task) | downstream
    store.finish_run(run.run_id, metrics)
    return store.get_run(run.run_id)


def _downstream_names(metrics: dict[str, float]) -> set[str]:
    retrieval = ("recall", "capped_recall", "hit@", "mrr", "ndcg", "db_hit", "retrieval_ms")
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
