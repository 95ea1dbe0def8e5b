"""Run orchestration: dataset -> table texts -> index -> retrieve -> (generate -> evaluate)
-> per-query metrics -> store.

Retrieval happens once, at the run's top_k; every smaller k is a prefix of that list.
When the run has a generator, each batch of retrieved queries is then answered, up to
the generator's concurrency at once, and evaluated (target_core.engine.generation).
Results are saved in small transactional batches, so a run killed at any point keeps
its finished queries, and starting the same configuration again resumes it: indexing
is cached (Chroma collections are named by content), finished queries are skipped,
and queries whose generation failed are asked again.

A run whose queries are all done is complete, unless its generations failed: every
one of them, or more than the TARGET_MAX_FAILED_GENERATIONS share. Then it is marked
failed with the reason (its numbers would measure the server, not the pipeline): it is
kept and can be opened, but it is never ranked, compared or reused as complete, and
running its configuration again resumes it. The retriever's own LLM calls (HySE's
tables, LLM summaries) are judged by the same policy before any query is searched: a run
they fail is marked failed and `RunFailed` raised (retrievers/llm_calls.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from target_core.config import Settings
from target_core.datasets import registered_name
from target_core.datasets.corpus_stream import run_tables, table_keys
from target_core.datasets.lookup import DatasetLookup
from target_core.engine.generation import DownstreamStep
from target_core.engine.haystack import Distractors, haystack_distractors, resolve_haystack
from target_core.engine.run_inputs import open_run_dataset, package_versions, select_queries
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.errors import Cancelled, ConfigError, TargetError
from target_core.generators import Generator, build_generator
from target_core.generators.prompts import prompt_set
from target_core.llm.policy import LLMStepFailed, failure_reason
from target_core.metrics.capped import returned_notes, returned_summary
from target_core.metrics.documents import ranked_units, unit_rank
from target_core.metrics.retrieval import (
    QueryOutcome,
    aggregate_retrieval,
    default_ks,
    gold_ranks,
    per_query_rows,
    pooled_target_metrics,
)
from target_core.progress import SCORING, SCORING_ANSWERS, Progress, no_progress
from target_core.retrievers import build_retriever
from target_core.retrievers.base import Retriever, rank_in
from target_core.retrievers.llm_calls import LLMCalls, llm_call_notes, llm_calls_info
from target_core.run_config import RunConfig, with_task_defaults
from target_core.serialize import texts_fingerprint
from target_core.sql.execute import SqlLimits
from target_core.tasks import ANSWER_TASKS
from target_core.tokens import get_counter
from target_core.types import Dataset, Query, TableKey, TableLookup

log = logging.getLogger(__name__)

BATCH_SIZE = 32


@dataclass(frozen=True)
class RunResult:
    run: RunRecord
    resumed: bool
    n_new: int
    """Queries retrieved by this call (fewer than n_queries when it resumed a run)."""
    reused: bool = False
    """The configuration was complete already: its stored run is returned, nothing ran."""

    @property
    def failed(self) -> bool:
        """The run's queries are done but it is marked failed (`run.error` says why)."""
        return self.run.status == "failed"


class RunFailed(TargetError):
    """A run is marked failed: it finished, or its retriever's LLM calls failed by the
    policy (then run_retrieval raises it); the message is its reason (for callers that
    must stop on it, such as a job's worker)."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        super().__init__(f"run {run.run_id} failed: {run.error}")


def _gold_ranks(retriever: Retriever, query: Query, ranked: Sequence[TableKey],
                position: dict[TableKey, int]) -> dict[TableKey, int | None]:
    """Rank of each gold table: from the top-k list, else from the full scores when the
    retriever can give them (so near misses at k+1 are visible), else None. A gold
    document is ranked among units (metrics/documents.py)."""
    ranks = gold_ranks(list(ranked_units(ranked, query.gold)), query.gold)
    missing = [key for key, rank in ranks.items() if rank is None]
    if missing:
        scores = retriever.score_all(query.query)
        if scores is not None:
            for key in missing:
                ranks[key] = (rank_in(scores, position[key]) if key in position
                              else unit_rank(scores, list(position), key))
    return ranks


def run_metrics(store: RunStore, run: RunRecord, dataset: Dataset | DatasetLookup
                ) -> dict[str, float]:
    """Aggregate metrics over every stored query of the run (resumed parts included):
    retrieval, then the downstream task's when the run has a generator."""
    from target_core.engine.answer_scores import gtr_run_metrics
    from target_core.engine.generation import downstream_outcome
    from target_core.metrics.downstream import aggregate_downstream

    results = list(store.iter_results(run.run_id))
    ks = default_ks(run.config.top_k)
    metrics = aggregate_retrieval([r.outcome() for r in results], ks, task=dataset.task)
    # lists counted as returned (TARGET-shaped plug-ins) live in the stored per-query terms
    metrics |= pooled_target_metrics([r.metrics for r in results], ks)
    if run.config.generation is not None and isinstance(dataset, Dataset):
        outcomes = [downstream_outcome(dataset.query(r.query_id), r.generation, dataset.task)
                    for r in results if r.generation is not None]
        metrics |= aggregate_downstream(outcomes, dataset.task)
        metrics |= gtr_run_metrics(store, run.run_id, dataset, results)  # QA: GTR's
    return metrics


def _generator_for(config: RunConfig, dataset: TableLookup, settings: Settings
                   ) -> Generator | None:
    if config.generation is None:
        return None
    if dataset.task not in ANSWER_TASKS:
        raise ConfigError(f"dataset '{dataset.name}' has task '{dataset.task}': generation "
                          "needs a qa, fact or sql dataset")
    prompt_set(config.generation.prompt_set)  # an unknown set stops the run before work
    return build_generator(config.generation.generator, settings)


def run_retrieval(config: RunConfig, *, settings: Settings, store: RunStore | None = None,
                  progress: Progress = no_progress, batch_size: int = BATCH_SIZE,
                  fresh: bool = False,
                  on_start: Callable[[RunRecord], None] | None = None) -> RunResult:
    """Run (or resume) one retrieval run and return its stored record.

    A configuration already complete on this dataset version is not run again: its run
    is returned (`reused`), so a leaderboard keeps showing the run it showed. `fresh`
    makes a new run anyway, never resuming an unfinished or failed one (all are kept;
    the runs list numbers them). `on_start` is
    told the run once it is started or resumed (a job records which run it fills).
    A `config.haystack` adds its distractor tables to the corpus (engine/haystack.py).
    A `Cancelled` raised by `progress` stops the run and marks it cancelled (resumable).
    Raises TargetError for unknown names and configuration problems before any work.
    """
    config = replace(config, dataset=registered_name(config.dataset, settings),
                     haystack=resolve_haystack(config.haystack, settings))
    dataset = open_run_dataset(config, settings)
    config = with_task_defaults(config, dataset.task)
    distractors = (haystack_distractors(dataset, config.haystack, settings)
                   if isinstance(dataset, Dataset) else Distractors())
    retriever = build_retriever(config.retriever, settings)
    if callable(check_view := getattr(retriever, "check_view", None)):
        check_view(config.view)  # a view the retriever cannot apply: refused before work
    generator = _generator_for(config, dataset, settings)
    store = store or RunStore.in_workspace(settings.workspace)
    if not fresh and (done := store.complete_run(config, dataset.fingerprint)) is not None:
        return RunResult(done, resumed=False, n_new=0, reused=True)
    queries = select_queries(dataset, config.limit, config.seed)
    run, resumed = store.start_run(config, dataset_fingerprint=dataset.fingerprint,
                                   task=dataset.task, n_queries=len(queries),
                                   versions=package_versions(), fresh=fresh)
    if on_start is not None:
        on_start(run)
    try:
        if resumed and generator is not None:
            _same_reply_settings(run, generator)
        n_new = _execute(config, dataset, retriever, generator, queries, store, run, progress,
                         batch_size, settings, distractors)
        # the step after the last query has its own name, not "N/N" (which reads as done)
        progress(len(queries), len(queries), SCORING if generator is None else SCORING_ANSWERS)
        metrics = run_metrics(store, run, dataset)
        _record_returned_lists(store, run)
        failed = failure_reason(store.generation_errors(run.run_id),
                                int(metrics.get("n_generated", 0)),
                                settings.max_failed_generations)
        store.finish_run(run.run_id, metrics, failed=failed)
        if failed:
            log.warning("run %s failed: %s", run.run_id, failed)
    except Cancelled:
        store.cancel_run(run.run_id)
        raise
    except LLMStepFailed as exc:  # the retriever's LLM calls failed: no query was stored
        store.fail_run(run.run_id, str(exc))
        log.warning("run %s failed: %s", run.run_id, exc)
        raise RunFailed(store.get_run(run.run_id)) from exc
    except TargetError as exc:
        store.fail_run(run.run_id, str(exc))
        raise
    except KeyboardInterrupt:
        store.fail_run(run.run_id, "interrupted")
        raise
    return RunResult(store.get_run(run.run_id), resumed, n_new)


def _same_reply_settings(run: RunRecord, generator: Generator) -> None:
    """A resumed run's generator shapes its replies as when the run started (llm.chat
    REPLY_SETTINGS), else ConfigError: one run would mix replies made under two windows,
    reply budgets or sampling settings."""
    from target_core.llm.chat import changed_settings

    details = getattr(generator, "run_details", None)
    if not callable(details) or not (changed := changed_settings(
            run.index_info.get("server") or {}, details())):
        return
    raise ConfigError(f"run {run.run_id} was started with other settings ({'; '.join(changed)});"
                      " resuming it would mix replies made under both: run with --fresh for a "
                      "new run, or restore the settings")


def _execute(config: RunConfig, dataset: Dataset | DatasetLookup, retriever: Retriever,
             generator: Generator | None, queries: list[Query], store: RunStore,
             run: RunRecord, progress: Progress, batch_size: int, settings: Settings,
             distractors: Distractors) -> int:
    # a corpus index's tables are read one at a time; a haystack's distractors come last
    tables = distractors.corpus(run_tables(dataset))
    # the view's serialization, or the retriever's own texts (LLM table summaries)
    texts = retriever.prepare_texts(tables, config.view, progress=progress)
    for calls in _llm_calls(retriever, queries):  # failed summaries: stop before embedding
        calls.enforce(settings.max_failed_generations)
    fingerprint = texts_fingerprint(texts)
    info = retriever.index(texts, corpus_key=fingerprint, progress=progress)
    example = texts[0][:4000] if texts else ""
    del texts  # indexed: at a million tables the list is 1.3 GB the queries do not need
    keys = table_keys(tables)
    position = {key: i for i, key in enumerate(keys)}
    details = (dict(info.details) | retriever.tune_on_gold(queries, position)
               | retriever.prepare_queries([q.query for q in queries], progress=progress)
               | distractors.info)
    llm_calls = _llm_calls(retriever, queries)
    details |= llm_calls_info(llm_calls)
    if generator is not None:
        details["generator"] = generator.label
        if callable(server := getattr(generator, "run_details", None)):
            details["server"] = server()  # window, slots, sampling settings sent (llm.chat)
    if isinstance(dataset, Dataset) and dataset.chunking:  # documents cut into passages
        details["chunking"] = dataset.chunking
    store.record_index(run.run_id, text_fingerprint=fingerprint,
                       text_example=example,
                       index_info={"n_texts": info.n_texts, "seconds": round(info.seconds, 4),
                                   **details})
    for calls in llm_calls:  # HySE's tables: judged before any query is searched and stored
        calls.enforce(settings.max_failed_generations)
    for note in llm_call_notes(details):  # within the policy's tolerance, never silent
        log.warning("run %s: %s", run.run_id, note)
    step = _downstream_step(config, dataset, generator, settings)
    ks = default_ks(config.top_k)
    done = store.done_query_ids(run.run_id)
    if step is not None:  # a failed generation is asked again (failures are not cached)
        done -= {query_id for query_id, _, _ in store.generation_errors(run.run_id)}
    todo = [(i, q) for i, q in enumerate(queries) if q.query_id not in done]
    what = "retrieving" if step is None else "retrieving + generating"
    batch: list[tuple[Query, QueryResult]] = []
    outcomes: list[QueryOutcome] = []  # the batch's, scored together when it is saved
    progress(len(done), len(queries), what)
    for n, (index, query) in enumerate(todo, start=1):
        started = time.perf_counter()
        hits = retriever.search([query.query], top_k=config.top_k)[0]
        ms = (time.perf_counter() - started) * 1000
        ranked = [(keys[i], score) for i, score in hits]
        ranks = _gold_ranks(retriever, query, [k for k, _ in ranked], position)
        outcome = QueryOutcome(query_id=query.query_id, retrieved=[k for k, _ in ranked],
                               gold=query.gold, gold_database=query.database_id, ms=ms,
                               returned=_as_returned(retriever))
        outcomes.append(outcome)
        batch.append((query, QueryResult(query_id=query.query_id, position=index,
                                         ranked=ranked, gold=list(query.gold),
                                         gold_ranks=ranks, metrics={}, ms=ms)))
        if step is None:
            progress(len(done) + n, len(queries), what)
        if len(batch) >= batch_size or n == len(todo):
            batch = [(q, replace(r, metrics=m)) for (q, r), m
                     in zip(batch, per_query_rows(outcomes, ks), strict=True)]
            outcomes = []
            first = len(done) + n - len(batch)
            results = []
            for i, result in enumerate(_generate(step, generator, batch), start=1):
                results.append(result)
                if step is not None:
                    progress(first + i, len(queries), what)
            store.save_results(run.run_id, results)
            batch = []
    log.info("run %s: %d queries done (%d resumed)", run.run_id, len(todo), len(done))
    return len(todo)


def _as_returned(retriever: Retriever) -> list[TableKey] | None:
    """The last query's list exactly as a TARGET-shaped class returned it (repeats and
    entries beyond k kept: TARGET counts them), None for every other retriever."""
    lists = getattr(retriever, "lists_as_returned", None)
    return list(lists()[0]) if callable(lists) else None


def _record_returned_lists(store: RunStore, run: RunRecord) -> None:
    """Record (index_info `returned_lists`) and log how many of the run's lists held
    repeats or more than k tables; nothing for runs whose lists are their rankings."""
    summary = returned_summary(m for _, m in store.query_metrics(run.run_id))
    if summary:
        now = store.get_run(run.run_id)
        store.record_index(run.run_id, index_info=now.index_info | {"returned_lists": summary},
                           text_fingerprint=now.text_fingerprint, text_example=now.text_example)
        for note in returned_notes({"returned_lists": summary}):
            log.warning("run %s: %s", run.run_id, note)


def _llm_calls(retriever: Retriever, queries: Sequence[Query]) -> list[LLMCalls]:
    """The retriever's LLM calls so far (retrievers/llm_calls.py), a query that failed
    named by its id rather than its text."""
    ids: dict[str, str] = {}
    for query in queries:
        ids.setdefault(query.query, query.query_id)
    return [c.named(ids) if c.item == "query" else c for c in retriever.llm_calls()]


def _downstream_step(config: RunConfig, dataset: Dataset | DatasetLookup,
                     generator: Generator | None, settings: Settings) -> DownstreamStep | None:
    if generator is None or config.generation is None or not isinstance(dataset, Dataset):
        return None  # a run with a generator has its dataset loaded (run_inputs)
    counter = get_counter(timeout=settings.token_timeout)
    return DownstreamStep(dataset, config.generation, generator, config.view, counter,
                          top_k=config.top_k,
                          limits=SqlLimits(settings.sql_timeout, settings.sql_row_cap),
                          ves_repeats=settings.ves_repeats, workspace=settings.workspace)


def _generate(step: DownstreamStep | None, generator: Generator | None,
              batch: list[tuple[Query, QueryResult]]) -> Iterator[QueryResult]:
    """The batch's results with their generations, in order, `concurrency` requests at a
    time (yielded in the caller's thread, so progress callbacks stay there)."""
    if step is None or generator is None:
        yield from (result for _, result in batch)
        return

    def one(item: tuple[Query, QueryResult]) -> QueryResult:
        query, result = item
        record, metrics = step(query, [k for k, _ in result.ranked])
        return replace(result, generation=record, metrics=result.metrics | metrics)

    if generator.concurrency <= 1 or len(batch) == 1:
        yield from (one(item) for item in batch)
        return
    with ThreadPoolExecutor(max_workers=generator.concurrency,
                            thread_name_prefix="generate") as pool:
        yield from pool.map(one, batch)
