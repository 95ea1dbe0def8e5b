"""Retrieval metrics of a run: per-query values, then the named averages over queries.

Two steps, kept apart:

1. `per_query_metrics(outcome, ks)`: the metrics of one query (what the run store saves
   per query).
2. `aggregate_retrieval(outcomes, ks, task=...)`: the run's numbers under the names of
   DESIGN.md, vectorized with numpy over all queries at once.

Both read the registered metrics (`metrics.measures.METRICS`), each defined once by one
vectorised computation: step 1 runs it on a batch of one query, step 2 on all of them,
so the mean of the stored per-query values is the run's number exactly.

Averages, spelled out (n queries, query q with gold set G_q):

* macro: the mean over queries of a per-query value, each query weighing 1/n:
  recall@k = (1/n) Σ_q |G_q ∩ top-k_q| / |G_q|; likewise hit@k, mrr, ndcg@10, db_hit@1.
* micro: pooled over queries, each gold table weighing the same:
  recall_micro@k = Σ_q |G_q ∩ top-k_q| / Σ_q |G_q|, the number TARGET reports.
  The two differ only when queries have different numbers of gold tables.
  capped_recall@k = Σ_q |G_q ∩ top-k_q| / Σ_q min(|G_q|, |top-k_q|), TARGET's
  `capped_recall` (metrics.capped): micro too.
  When a query's list as returned is known and differs from its ranking (a
  TARGET-shaped plug-in or an imported TARGET file listing a table twice or more than
  k tables), both micro numbers count that list as TARGET does
  (`metrics.capped.target_counts`); the rank metrics (recall@k, hit@k, mrr, ndcg) use
  the ranking: each table at its first rank, cut to k.

Timing: `retrieval_ms_mean`, `retrieval_ms_p50`, `retrieval_ms_p95` over the queries'
milliseconds; percentiles use numpy's default (linear interpolation between the two
closest ranks, `np.percentile(..., method="linear")`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from target_core.metrics.capped import capped_gold_at_k, capped_recall, returned_shape
from target_core.metrics.documents import document_level, ranked_units
from target_core.metrics.measures import METRICS
from target_core.metrics.measures.base import RankBatch
from target_core.metrics.measures.db_hit import db_hit_at_1
from target_core.metrics.measures.hit import hit_at_k
from target_core.metrics.measures.mrr import reciprocal_rank
from target_core.metrics.measures.ndcg import NDCG_K, ndcg_at_k
from target_core.metrics.measures.recall import overlap_at_k, recall_at_k
from target_core.metrics.ranking import (
    GoldRanks,
    check_cutoff,
    discount,
    gold_ranks,
    ideal_dcg,
    paired_sums,
    rank_positions,
)
from target_core.tasks import TASKS
from target_core.types import TableKey

__all__ = [
    "NDCG_K", "STANDARD_KS", "QueryOutcome", "aggregate_retrieval", "capped_gold_at_k",
    "capped_recall", "db_hit_at_1",
    "default_ks", "discount", "gold_ranks", "hit_at_k", "ideal_dcg", "latency_summary",
    "macro_average", "metric_names", "micro_recall", "ndcg_at_k", "overlap_at_k",
    "per_query_metrics", "per_query_rows", "pooled_target_metrics", "recall_at_k",
    "recall_curve", "reciprocal_rank",
]

STANDARD_KS: tuple[int, ...] = (1, 3, 5, 10)


@dataclass(frozen=True)
class QueryOutcome:
    """One query's retrieval result with its gold: the input of every run-level metric.

    `retrieved` (best first, no key twice) is stored as a tuple; `gold` needs at least
    one key and none twice; `gold_database` is the query's database (for db_hit@1);
    `ms` is the retrieval time in milliseconds, or None when unknown (an imported run).
    `returned`: the list exactly as the retriever returned it at the run's k, repeats
    and entries beyond k kept, when it may differ from `retrieved` (TARGET-shaped
    plug-ins, imported TARGET files); None: `retrieved` is that list. TARGET's micro
    numbers count it (metrics.capped.target_counts); with document-level gold it is
    ignored (units are merged there by rule). Construction validates all of it
    (ValueError naming the query) and computes `gold_ranks` once: the 1-based rank of
    each gold key in `retrieved`, None if absent.
    """

    query_id: str
    retrieved: Sequence[TableKey]
    gold: tuple[TableKey, ...]
    gold_database: str
    ms: float | None = None
    returned: Sequence[TableKey] | None = None
    gold_ranks: GoldRanks = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        gold = tuple(self.gold)
        retrieved = ranked_units(tuple(self.retrieved), gold)  # document-level gold
        try:
            ranks = rank_positions(retrieved, gold)
        except ValueError as exc:
            raise ValueError(f"query {self.query_id!r}: {exc}") from None
        ms = self.ms
        if ms is not None:
            if (isinstance(ms, bool) or not isinstance(ms, numbers.Real)
                    or not math.isfinite(ms) or ms < 0):
                raise ValueError(f"query {self.query_id!r}: ms must be a finite number >= 0 "
                                 f"or None, got {ms!r}")
            ms = float(ms)
        object.__setattr__(self, "retrieved", retrieved)
        object.__setattr__(self, "gold", gold)
        returned = self.returned
        if returned is not None:
            returned = None if document_level(gold) else tuple(
                (str(d), str(t)) for d, t in returned)
        object.__setattr__(self, "returned", returned)
        object.__setattr__(self, "ms", ms)
        object.__setattr__(self, "gold_ranks", ranks)


def default_ks(top_k: int) -> tuple[int, ...]:
    """The cutoffs a run reports: 1, 3, 5, 10 up to top_k, then top_k itself."""
    top_k = check_cutoff(top_k, name="top_k")
    ks = tuple(k for k in STANDARD_KS if k <= top_k)
    return ks if top_k in ks else (*ks, top_k)


def metric_names(ks: Iterable[int], *, task: str, timed: bool = True) -> list[str]:
    """The keys of `aggregate_retrieval(outcomes, ks, task=task)`, in its order."""
    ks = _cutoffs(ks)
    _check_task(task)
    names = [key for metric in METRICS if metric.reported_for(task)
             for key in metric.keys(ks)]
    if timed:
        names += ["retrieval_ms_mean", "retrieval_ms_p50", "retrieval_ms_p95"]
    return names


def per_query_metrics(outcome: QueryOutcome, ks: Iterable[int]) -> dict[str, float]:
    """One query's metrics, as floats, for the run store.

    Keys: `recall@k`, `overlap@k` (|gold ∩ top-k|), `capped_gold@k` (min(|gold|,
    |top-k|)) and `hit@k` for each k in `ks`; `mrr` (this query's reciprocal rank),
    `ndcg@10`, `db_hit@1` and `n_gold` (|gold|). The mean over queries of a key gives
    the aggregate of the same name (macro), Σ overlap@k / Σ n_gold gives
    recall_micro@k and Σ overlap@k / Σ capped_gold@k capped_recall@k, so any subset of
    stored queries (one difficulty level, say) can be re-aggregated. db_hit@1 is
    computed for every task; `aggregate_retrieval` reports it for text-to-SQL only.
    With `outcome.returned`, overlap@k and capped_gold@k are TARGET's terms of that
    list (the largest k of `ks` is the run's: the whole list; smaller k: its first k
    entries), and `returned_repeats`, `returned_beyond_k` say what it held.
    """
    return per_query_rows([outcome], ks)[0]


def per_query_rows(outcomes: Sequence[QueryOutcome], ks: Iterable[int]
                   ) -> list[dict[str, float]]:
    """`per_query_metrics` of each outcome, computed for all of them at once (a run
    scores a batch of queries in one call: the metrics' numpy work is per batch)."""
    cutoffs = _cutoffs(ks)
    if not outcomes:
        return []
    batch = RankBatch.of(outcomes)
    at_k: dict[float, list[tuple[str, list[float]]]] = {float(k): [] for k in cutoffs}
    fixed: list[tuple[str, list[float]]] = []
    terms: list[tuple[str, list[float]]] = []  # pooled metrics' parts without a cutoff
    seen: set[str] = set()
    for metric in METRICS:
        if metric.pooled is None:
            cut = np.asarray(metric.cutoffs(cutoffs), dtype=np.float64)
            columns = metric.per_query(batch, cut).T.tolist()
            for k, column in zip(cut.tolist(), columns, strict=True):
                (at_k[k] if metric.per_k else fixed).append((metric.key(k), column))
            continue
        for part in metric.pooled:
            if part.name in seen:
                continue
            seen.add(part.name)
            cut = np.asarray(cutoffs if part.per_k else (math.inf,), dtype=np.float64)
            columns = batch.part(part, cut).T.tolist()
            for k, column in zip(cut.tolist(), columns, strict=True):
                (at_k[k] if part.per_k else terms).append((part.key(k), column))
    # Key order: each cutoff's keys together, the list's shape, then the rest.
    head = [pair for pairs in at_k.values() for pair in pairs]
    tail = fixed + terms
    head_keys, tail_keys = [k for k, _ in head], [k for k, _ in tail]
    rows = []
    for outcome, head_values, tail_values in zip(
            outcomes, _by_query(head, len(outcomes)), _by_query(tail, len(outcomes)),
            strict=True):
        row = dict(zip(head_keys, head_values, strict=True))
        if outcome.returned is not None:
            row |= returned_shape(outcome.returned, cutoffs[-1])
        row.update(zip(tail_keys, tail_values, strict=True))
        rows.append(row)
    return rows


def aggregate_retrieval(outcomes: Sequence[QueryOutcome], ks: Iterable[int], *,
                        task: str) -> dict[str, float]:
    """The run's retrieval metrics under DESIGN.md's names, averaged over `outcomes`.

    For each k in `ks` (see `default_ks`): `recall@k` (macro), `recall_micro@k` (micro,
    TARGET's number), `capped_recall@k` (micro, TARGET's capped recall), `hit@k`
    (macro); then `mrr`, `ndcg@10` (macro), `db_hit@1` (macro, only for a task whose
    Table 2 recall is database-level: its entry's `database_level`), and
    `retrieval_ms_mean`/`_p50`/`_p95` when the outcomes carry times (all of them: some
    with and some without -> ValueError).
    A k beyond the run's top_k is computed on the shorter list (recall cannot grow),
    which is why `default_ks` stops at top_k.
    Errors: no outcomes, empty or non-positive `ks`, unknown task -> ValueError.
    """
    outcomes = _nonempty(outcomes)
    ks = _cutoffs(ks)
    _check_task(task)
    batch = RankBatch.of(outcomes)
    metrics: dict[str, float] = {}
    for metric in METRICS:
        if metric.reported_for(task):
            metrics.update(zip(metric.keys(ks), metric.run_values(batch, ks).tolist(),
                               strict=True))
    timed = [o.ms for o in outcomes if o.ms is not None]
    if timed:
        if len(timed) != len(outcomes):
            raise ValueError(f"{len(outcomes) - len(timed)} of {len(outcomes)} query "
                             "outcomes have no retrieval time (ms); give all or none")
        metrics.update(latency_summary(timed))
    return metrics


def recall_curve(outcomes: Sequence[QueryOutcome], max_k: int) -> list[float]:
    """Macro recall@k for k = 1 .. max_k (Figure 2 of TARGET), in one pass.

    Element k-1 equals `aggregate_retrieval(...)["recall@k"]`. Each gold table found at
    rank r <= max_k adds 1 / (n · |gold|) to every k >= r: a weighted histogram of gold
    ranks, then a cumulative sum. The curve is flat beyond the lists' length.
    Errors: no outcomes or max_k <= 0 -> ValueError.
    """
    outcomes = _nonempty(outcomes)
    max_k = check_cutoff(max_k, name="max_k")
    batch = RankBatch.of(outcomes)
    ranks, n_gold = batch.ranks, batch.n_gold
    weight = np.repeat(1.0 / n_gold, n_gold)
    found = ranks <= max_k
    histogram = np.bincount(ranks[found].astype(np.int64), weights=weight[found],
                            minlength=max_k + 1)
    return [float(v) for v in np.cumsum(histogram[1:]) / len(outcomes)]


def macro_average(values: Iterable[float]) -> float:
    """Macro average: the plain mean of per-query values. No values -> ValueError."""
    array = np.fromiter(values, dtype=np.float64)
    if array.size == 0:
        raise ValueError("no per-query values to average")
    return float(array.mean())


def micro_recall(overlaps: Iterable[float], gold_sizes: Iterable[float]) -> float:
    """Micro recall: Σ overlap / Σ |gold| over queries (e.g. stored `overlap@k`, `n_gold`).

    Errors: lengths differ, no queries, or a gold size < 1 -> ValueError.
    """
    over, sizes = paired_sums(overlaps, gold_sizes, "gold sizes")
    if (sizes < 1).any():
        raise ValueError("every query needs at least one gold table")
    return float(over.sum() / sizes.sum())


def pooled_target_metrics(rows: Sequence[Mapping[str, float]], ks: Iterable[int]
                          ) -> dict[str, float]:
    """The pooled (micro) metrics, `recall_micro@k` and `capped_recall@k`, from stored
    per-query rows (their parts: `overlap@k`, `n_gold`, `capped_gold@k`): what
    `aggregate_retrieval` gives for the same queries, including lists counted as
    returned, whose lists are not stored. A metric at a cutoff some row lacks a part of
    is left out (rows stored before capped_gold@k existed)."""
    out: dict[str, float] = {}
    pooled = [metric for metric in METRICS if metric.pooled is not None]
    for k in _cutoffs(ks):
        for metric in pooled:
            keys = [part.key(k) for part in metric.pooled or ()]
            if not rows or any(key not in row for row in rows for key in keys):
                continue
            over, under = paired_sums((r[keys[0]] for r in rows), (r[keys[1]] for r in rows),
                                      f"{keys[1]} values")
            total = under.sum()
            out[metric.key(k)] = float(over.sum() / total) if total > 0 else 0.0
    return out


def latency_summary(ms: Iterable[float]) -> dict[str, float]:
    """`retrieval_ms_mean`, `retrieval_ms_p50` and `retrieval_ms_p95` of per-query times.

    Percentiles interpolate linearly between the two closest ranks (numpy's default
    method): for sorted times t_0..t_{n-1}, p = t_i + (t_{i+1} - t_i)·f where
    i + f = (n - 1)·p/100. One time -> all three equal it. No times -> ValueError.
    """
    array = np.fromiter(ms, dtype=np.float64)
    if array.size == 0:
        raise ValueError("no retrieval times to summarize")
    p50, p95 = np.percentile(array, [50, 95])
    return {"retrieval_ms_mean": float(array.mean()), "retrieval_ms_p50": float(p50),
            "retrieval_ms_p95": float(p95)}


# --- helpers -----------------------------------------------------------------------------

def _nonempty(outcomes: Sequence[QueryOutcome]) -> Sequence[QueryOutcome]:
    outcomes = outcomes if isinstance(outcomes, Sequence) else list(outcomes)
    if len(outcomes) == 0:
        raise ValueError("no query outcomes: retrieval metrics need at least one query")
    return outcomes


def _cutoffs(ks: Iterable[int]) -> tuple[int, ...]:
    checked = sorted({check_cutoff(k) for k in ks})
    if not checked:
        raise ValueError("ks must name at least one cutoff, e.g. default_ks(top_k)")
    return tuple(checked)


def _by_query(columns: list[tuple[str, list[float]]], n: int) -> list[tuple[float, ...]]:
    """Named columns of n values -> n rows of values (n empty rows for no columns)."""
    return list(zip(*(c for _, c in columns), strict=True)) if columns else [()] * n


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}")
