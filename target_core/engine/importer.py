"""Store runs made with the TARGET library, so they can be explored here.

TARGET's retrieval and downstream results files (read and checked by
engine/import_files.py) become runs scored against the dataset's gold exactly as a run
made here (SQL is executed read-only). `import_target` takes TARGET's results folder
`<dir>/<dataset_name>/<k>.jsonl` (or one dataset's folder in it, or a single file) and
stores one run per file: top_k is the file's k, the retriever is named by `label` or the
folder holding the dataset folders. A folder is all or nothing: every file is read,
checked and its dataset loaded before the first run is stored. Files imported before
(the same bytes, dataset, k and label) are recognised: their run is returned, not
stored twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.import_files import (
    RetrievalFile,
    dataset_name_of,
    file_digest,
    first_dataset_name,
    is_downstream,
    k_of,
    read_target_downstream,
    read_target_results,
    resolve_target_dataset,
    target_files,
)
from target_core.engine.results import QueryResult
from target_core.engine.runner import package_versions, run_metrics
from target_core.engine.store import RunRecord, RunStore, config_key
from target_core.errors import ConfigError, DatasetError, TargetError, UnknownNameError
from target_core.generators.base import Context, Generation
from target_core.metrics.capped import returned_summary
from target_core.metrics.documents import ranked_units
from target_core.metrics.measures import METRICS
from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    default_ks,
    gold_ranks,
    per_query_rows,
    pooled_target_metrics,
)
from target_core.run_config import GenerationConfig, RunConfig
from target_core.sql.execute import SqlLimits
from target_core.tasks import ANSWER_TASKS
from target_core.types import Dataset, TableKey

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class ImportedRun:
    """One stored run and what the user must know about it (partial coverage, a guessed
    top_k, tables the lists hold that the run cannot show): each warning is one sentence
    naming the file. `existing`: these files were imported before; `run` is that run."""

    run: RunRecord
    warnings: tuple[str, ...] = ()
    existing: bool = False


@dataclass(frozen=True)
class _Plan:
    """One run to store, read and checked."""

    config: RunConfig
    data: Dataset
    query_ids: list[str]
    ranked_of: dict[str, list[TableKey]]
    answers: dict[str, Generation] | None
    name: str
    index_info: dict[str, Any]
    warnings: list[str]
    returned_of: dict[str, list[TableKey]]
    """Each list as the file wrote it (repeats, more than k): TARGET counts these."""
    scores_of: dict[str, list[float]] | None = None
    """Each list's scores (TREC runs); None: TARGET's files have none (len - i is stored)."""


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
                  datasets: Mapping[str, str] | None = None, label: str | None = None,
                  downstream: str | None = None, store: RunStore | None = None,
                  top_k: int | None = None, partial: bool = False) -> list[ImportedRun]:
    """Import a file, or every `<dataset_name>/<k>.jsonl` of TARGET's results folder
    `path` (TARGET's results directory, or one dataset's folder in it): one run per file.

    All or nothing: every file is read and checked, and its dataset loaded, before any
    run is stored; the first error (naming its file) stores nothing. A file's dataset is
    `datasets[name]` for its `<name>/` folder or its dataset_name, else `dataset`, else
    the dataset TARGET's name stands for (`resolve_target_dataset`). `downstream` is
    the matching downstream file or folder (files pair by dataset and k; a downstream
    file without a retrieval file is imported alone). `top_k` is only for a single file
    not named `<k>.jsonl`.
    """
    root = Path(path)
    datasets = dict(datasets or {})
    if not root.is_dir():
        if not root.is_file():
            raise DatasetError("file not found", path=path)
        names = {root.resolve().parent.name, dataset_name_of(root, root.resolve().parent.name)}
        _check_mapping(datasets, names, path)
        spec = next((datasets[n] for n in sorted(names) if n in datasets), dataset)
        plans = [_plan_file(path, settings=settings, dataset=spec, label=label,
                            downstream=downstream, top_k=top_k, partial=partial)]
    else:
        if top_k is not None:
            raise TargetError("--top-k is for a single file: in TARGET's results folder "
                              "each file's name is its k")
        plans = _plan_folder(root, settings=settings, dataset=dataset, datasets=datasets,
                             label=label, downstream=downstream, partial=partial)
    store = store or RunStore.in_workspace(settings.workspace)
    return [_store(plan, settings, store) for plan in plans]


def _plan_folder(root: Path, *, settings: Settings, dataset: str | None,
                 datasets: dict[str, str], label: str | None, downstream: str | None,
                 partial: bool) -> list[_Plan]:
    found, name = target_files(root)
    pairs: dict[tuple[str, int], list[Path | None]] = {key: [file, None]
                                                     for key, file in found.items()}
    if downstream is not None:
        if not Path(downstream).is_dir():
            raise DatasetError("must be a folder like the results folder "
                               "(<dataset_name>/<k>.jsonl)", path=downstream)
        for key, file in target_files(Path(downstream))[0].items():
            pairs.setdefault(key, [None, None])[1] = file
    files = [(folder, first, retrieval, answers) for (folder, _k), (retrieval, answers)
             in sorted(pairs.items()) if (first := retrieval or answers) is not None]
    names = [{folder, dataset_name_of(first, folder)} for folder, first, _, _ in files]
    _check_mapping(datasets, set().union(*names), str(root))
    plans = []
    for (folder, first, retrieval, answers), named in zip(files, names, strict=True):
        mapped = [datasets[n] for n in sorted(named) if n in datasets]
        plans.append(_plan_file(str(first), settings=settings,
                                dataset=mapped[0] if mapped else dataset,
                                target_name=dataset_name_of(first, folder),
                                label=label or name,
                                downstream=str(answers) if retrieval and answers else None,
                                top_k=None, partial=partial))
    return plans


def _check_mapping(datasets: Mapping[str, str], names: set[str], path: str) -> None:
    """A `--dataset NAME=PATH` whose NAME is no dataset folder is a typo: refuse it."""
    unused = sorted(set(datasets) - names)
    if unused:
        raise ConfigError(f"--dataset {unused[0]}={datasets[unused[0]]}: {path} holds no "
                          f"results on {unused[0]!r} (its datasets: "
                          f"{', '.join(sorted(names))})")


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
    else the file's stem. Files imported before with the same dataset, k and label give
    back that run (`existing`), with a note.
    """
    plan = _plan_file(path, settings=settings, dataset=dataset, label=label,
                      downstream=downstream, top_k=top_k, partial=partial)
    return _store(plan, settings, store or RunStore.in_workspace(settings.workspace))


def _load(spec: str, settings: Settings, source: str) -> Dataset:
    try:
        return load_dataset(spec, settings)
    except UnknownNameError as exc:
        raise DatasetError(f"--dataset {spec}: {exc}", path=source) from None


def _plan_file(path: str, *, settings: Settings, dataset: str | None, label: str | None,
               downstream: str | None, top_k: int | None, partial: bool,
               target_name: str | None = None) -> _Plan:
    """Read and check one file (and its downstream file): everything but storing. The
    dataset is `dataset`, else the one TARGET's `target_name` (default: the file's
    dataset_name) stands for."""
    for given in (path, downstream):
        if given is not None and not Path(given).is_file():
            raise DatasetError("file not found", path=given)
    retrieval_path: str | None = path
    if downstream is None and is_downstream(path):
        retrieval_path, downstream = None, path
    data = (_load(dataset, settings, path) if dataset else
            resolve_target_dataset(target_name or first_dataset_name(path), settings,
                                   source=path))
    file_k = k_of(Path(path))
    name = label or (Path(path).resolve().parent.parent.name if file_k is not None
                     else Path(path).stem)
    top_k = top_k or file_k
    warnings: list[str] = []
    read: RetrievalFile | None = None
    if retrieval_path:
        read = read_target_results(retrieval_path, data, top_k)
        warnings += read.warnings(retrieval_path, data.name)
    retrieved = read.lists if read else None
    answers = read_target_downstream(downstream, data) if downstream else None
    query_ids = _covered(retrieval_path, downstream, retrieved, answers, partial, warnings)
    ranked_of = dict(retrieved or [])
    returned_of = read.returned if read else {}
    if top_k is None:  # a list as TARGET wrote it at k holds at most k entries
        top_k = max([1] + [len(keys) for keys in returned_of.values()])
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
            raise TargetError(f"{path}: dataset '{data.name}' has task '{data.task}': "
                              "downstream results need a qa, fact or sql dataset")
        generation = GenerationConfig(generator=f"imported:{name}")
    config = RunConfig(dataset=dataset or data.name,
                       retriever=f"imported:{name}" if retrieved is not None else "imported:none",
                       top_k=top_k, generation=generation)
    sources = {role: p for role, p in (("retrieval", retrieval_path),
                                       ("downstream", downstream)) if p}
    key = json.dumps([config_key(config, data.fingerprint), partial,
                      {role: file_digest(p) for role, p in sources.items()}], sort_keys=True)
    index_info: dict[str, Any] = {"imported_from": [str(p) for p in sources.values()],
                  "import_key": hashlib.sha256(key.encode()).hexdigest()[:20],
                  "import_warnings": warnings}
    if read is not None:
        index_info["table_checks"] = read.counts()
    return _Plan(config, data, query_ids, ranked_of, answers, name, index_info, warnings,
                 returned_of)


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


def _store(plan: _Plan, settings: Settings, store: RunStore) -> ImportedRun:
    config, data = plan.config, plan.data
    existing = _imported_before(store, config, plan.index_info["import_key"])
    if existing is not None:
        note = (f"{plan.index_info['imported_from'][0]}: already imported as run "
                f"{existing.run_id} (the same file on {data.name} at k = {config.top_k} as "
                f"{config.retriever}); returned that run instead of storing it twice "
                f"(--label stores it under another name)")
        return ImportedRun(existing, (note, *plan.warnings), existing=True)
    run, _ = store.start_run(config, dataset_fingerprint=data.fingerprint, task=data.task,
                             n_queries=len(plan.query_ids), versions=package_versions())
    rows = _results(plan, config.top_k, SqlLimits(settings.sql_timeout, settings.sql_row_cap))
    store.save_results(run.run_id, rows)
    returned = returned_summary(r.metrics for r in rows)
    store.record_index(run.run_id, text_fingerprint="", text_example="",
                       index_info=plan.index_info | ({"returned_lists": returned}
                                                     if returned else {}))
    run = store.get_run(run.run_id)
    metrics = run_metrics(store, run, data)
    downstream = {k: v for k, v in metrics.items() if k in _downstream_names(metrics)}
    if config.retriever == "imported:none":  # nothing retrieved: no retrieval metrics
        metrics = downstream
    else:  # imported runs have no timings
        results = list(store.iter_results(run.run_id))
        ks = default_ks(config.top_k)
        metrics = (aggregate_retrieval([replace(r.outcome(), ms=None) for r in results], ks,
                                       task=data.task)
                   | pooled_target_metrics([r.metrics for r in results], ks) | downstream)
    store.finish_run(run.run_id, metrics)
    return ImportedRun(store.get_run(run.run_id), tuple(plan.warnings))


def _imported_before(store: RunStore, config: RunConfig, import_key: str
                     ) -> RunRecord | None:
    """The complete run these very files were imported as (same bytes, dataset, k and
    label), if any."""
    for run in store.list_runs(dataset=config.dataset, status="complete"):
        if run.index_info.get("import_key") == import_key:
            return run
    return None


def _downstream_names(metrics: dict[str, float]) -> set[str]:
    return {k for k in metrics
            if METRICS.of_key(k) is None and not k.startswith("retrieval_ms")}


def _results(plan: _Plan, top_k: int, limits: SqlLimits) -> list[QueryResult]:
    """One stored result per query: ranked at each table's first place within k (a gold
    table listed beyond k keeps its rank there, a near miss), with TARGET's terms of the
    list as written (metrics.retrieval.per_query_metrics)."""
    from target_core.engine.generation import Evaluator

    data, query_ids, answers, name = plan.data, plan.query_ids, plan.answers, plan.name
    evaluator = Evaluator(data, limits) if answers is not None else None
    ks = default_ks(top_k)
    position = {q.query_id: i for i, q in enumerate(data.queries)}
    rows = []
    scored = per_query_rows([
        QueryOutcome(query_id=query_id, retrieved=plan.ranked_of.get(query_id, [])[:top_k],
                     gold=data.query(query_id).gold,
                     gold_database=data.query(query_id).database_id,
                     returned=plan.returned_of.get(query_id)) for query_id in query_ids], ks)
    for query_id, metrics in zip(query_ids, scored, strict=True):
        query = data.query(query_id)
        keys = plan.ranked_of.get(query_id, [])
        record: dict[str, Any] | None = None
        if evaluator is not None and answers is not None:
            generation = answers.get(query_id, Generation(answer="", error="not in the file"))
            databases = tuple(dict.fromkeys(k[0] for k in keys))
            record, extra = evaluator.evaluate(
                query, generation, Context(mode="retrieved", databases=databases),
                generator=f"imported:{name}", label=f"imported from TARGET ({name})")
            metrics |= extra
        scores = (plan.scores_of[query_id] if plan.scores_of is not None
                  else [float(len(keys) - i) for i in range(len(keys))])
        rows.append(QueryResult(query_id=query_id, position=position[query_id],
                                ranked=list(zip(keys[:top_k], scores[:top_k], strict=True)),
                                gold=list(query.gold),
                                gold_ranks=gold_ranks(ranked_units(keys, query.gold),
                                                      query.gold),
                                metrics=metrics, ms=0.0, generation=record))
    return rows
