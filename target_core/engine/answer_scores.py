"""GTR's answer metrics over a stored run (metrics.gtr): what needs the whole run at once.

`gtr_run_metrics(store, run_id, dataset, results)` runs when a run's metrics are
aggregated (engine.runner.run_metrics), for QA runs with a generator:

1. per query, ROUGE-1/2/L P/R/F, reply tokens and response ms (`gtr_query_metrics`)
   for any result stored without them (a run scored before these metrics existed);
2. SAS: every answer and every reference embedded by the local MiniLM in one batched
   call for the whole run (not one call per query), then the cosine per query
   (`metrics.gtr.sas_scores`);

stores the per-query values into each query's metrics (RunStore.merge_query_metrics)
and returns the run-level means (`metrics.gtr.aggregate_gtr`). MiniLM runs offline;
if its files are missing SAS is left out (a warning), the other metrics stay.
`backfill_gtr(store, run_id, settings)` does the same for a finished run and merges the
run-level values into its metrics (the `judge` command does it first).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from target_core.engine.results import QueryResult
from target_core.engine.store import RunStore
from target_core.metrics.answers import answer_text
from target_core.metrics.gtr import (
    ROUGE_METRICS,
    aggregate_gtr,
    gtr_query_metrics,
    sas_scores,
)
from target_core.tasks import task_rules
from target_core.tasks.judging import reference_of
from target_core.types import Dataset

log = logging.getLogger(__name__)


SAS_EMBEDDER = "minilm"


@lru_cache(maxsize=1)
def _embedder() -> Any:
    from target_core.config import load_settings
    from target_core.embeddings import get_embedder

    return get_embedder(SAS_EMBEDDER, load_settings())


def sas_of(answers: Sequence[str], references: Sequence[str]) -> list[float] | None:
    """SAS (MiniLM cosine) of each answer against its reference: one embed call for
    all 2n texts. None when the MiniLM model cannot be loaded."""
    from target_core.embeddings import EmbeddingError

    if not answers:
        return []
    try:
        vectors = _embedder().embed([*answers, *references], kind="document")
    except EmbeddingError as error:
        log.warning("SAS left out: the MiniLM embedder failed: %s", error)
        return None
    n = len(answers)
    empty = [not a.strip() or not r.strip() for a, r in zip(answers, references, strict=True)]
    return sas_scores(vectors[:n], vectors[n:], empty)


def gtr_run_metrics(store: RunStore, run_id: str, dataset: Dataset,
                    results: Sequence[QueryResult]) -> dict[str, float]:
    """Store each answered query's GTR metrics and return the run-level means ({} for a
    task without text answers)."""
    if not task_rules(dataset.task).gtr:  # GTR scores text answers only
        return {}
    answered = [r for r in results if r.generation is not None]
    if not answered:
        return {}
    rows: list[dict[str, float]] = []
    answers, references = [], []
    for result in answered:
        record = result.generation or {}
        failed = bool(record.get("error"))
        answer = "" if failed else str(record.get("answer") or "")
        reference = answer_text(reference_of(dataset.query(result.query_id), dataset.task))
        row = {k: v for k, v in result.metrics.items()
               if k in (*ROUGE_METRICS, "reply_tokens", "response_ms")}
        if not all(name in row for name in ROUGE_METRICS):
            row = gtr_query_metrics(answer, reference, failed=failed, ms=record.get("ms"))
        rows.append(row)
        answers.append(answer)
        references.append(reference)
    sas = sas_of(answers, references)
    if sas is not None:
        for row, value in zip(rows, sas, strict=True):
            row["sas"] = value
    store.merge_query_metrics(run_id, {r.query_id: row
                                       for r, row in zip(answered, rows, strict=True)})
    cached = [bool((r.generation or {}).get("cached")) for r in answered]
    return aggregate_gtr(rows, cached)


def backfill_gtr(store: RunStore, run_id: str, dataset: Dataset) -> dict[str, float]:
    """GTR's metrics for a stored run (one scored before they existed): per query and
    merged into the run's metrics; returns the run-level values."""
    results = list(store.iter_results(run_id))
    values = gtr_run_metrics(store, run_id, dataset, results)
    if values:
        store.merge_run_metrics(run_id, values)
    return values
