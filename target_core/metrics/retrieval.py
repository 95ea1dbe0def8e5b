"""Retrieval metrics of a run: per-query values, then the named averages over queries.

Two steps, kept apart:

1. `per_query_metrics(outcome, ks)`: the metrics of one query (what the run store saves
   per query), from the pure functions of `metrics.ranking`.
2. `aggregate_retrieval(outcomes, ks, task=...)`: the run's numbers under the names of
   DESIGN.md, vectorized with numpy over all queries at once.

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
from itertools import chain

import numpy as np

from target_core.metrics.capped import (
    capped_gold_at_k,
    capped_recall,
    returned_shape,
    target_counts,
)
from target_core.metrics.documents import document_level, ranked_units
from target_core.metrics.ranking import (
    GoldRanks,
    check_cutoff,
    db_hit_at_1,
    discount,
    gold_ranks,
    hit_at_k,
    hit_of_ranks,
    ideal_dcg,
    ndcg_at_k,
    ndcg_of_ranks,
    overlap_at_k,
    overlap_of_ranks,
    paired_sums,
    rank_positions,
    recall_at_k,
    reciprocal_rank,
    reciprocal_rank_of_ranks,
)
from target_core.types import TASKS, TableKey

__all__ = [
    "NDCG_K", "STANDARD_KS", "QueryOutcome", "aggregate_retrieval", "capped_gold_at_k",
    "capped_recall", "db_hit_at_1",
    "default_ks", "discount", "gold_ranks", "hit_at_k", "ideal_dcg", "latency_summary",
    "macro_average", "metric_names", "micro_recall", "ndcg_at_k", "overlap_at_k",
    "per_query_metrics", "pooled_target_metrics", "recall_at_k", "recall_curve",
    "reciprocal_rank",
]

STANDARD_KS: tuple[int, ...] = (1, 3, 5, 10)
NDCG_K = 10
"""nDCG is reported at 10 whatever the run's top_k (ranks beyond top_k hold no table)."""


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
    names = [f"recall@{k}" for k in ks] + [f"recall_micro@{k}" for k in ks]
    names += [f"capped_recall@{k}" for k in ks]
    names += [f"hit@{k}" for k in ks] + ["mrr", f"ndcg@{NDCG_K}"]
    if task == "sql":
        names.append("db_hit@1")
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
    ranks, n_gold = outcome.gold_ranks, len(outcome.gold)
    row: dict[str, float] = {}
    cutoffs = _cutoffs(ks)
    for k in cutoffs:
        overlap = overlap_of_ranks(ranks, k)
        row[f"recall@{k}"] = overlap / n_gold
        row[f"overlap@{k}"] = float(overlap)
        row[f"capped_gold@{k}"] = float(capped_gold_at_k(n_gold, len(outcome.retrieved), k))
        if outcome.returned is not None:
            counted = target_counts(outcome.returned, outcome.gold, k, whole=k == cutoffs[-1])
            row[f"overlap@{k}"], row[f"capped_gold@{k}"] = map(float, counted)
        row[f"hit@{k}"] = float(hit_of_ranks(ranks, k))
    if outcome.returned is not None:
        row |= returned_shape(outcome.returned, cutoffs[-1])
    row["mrr"] = reciprocal_rank_of_ranks(ranks)
    row[f"ndcg@{NDCG_K}"] = ndcg_of_ranks(ranks, NDCG_K)
    row["db_hit@1"] = float(db_hit_at_1(outcome.retrieved, outcome.gold_database))
    row["n_gold"] = float(n_gold)
    return row


def aggregate_retrieval(outcomes: Sequence[QueryOutcome], ks: Iterable[int], *,
                        task: str) -> dict[str, float]:
    """The run's retrieval metrics under DESIGN.md's names, averaged over `outcomes`.

    For each k in `ks` (see `default_ks`): `recall@k` (macro), `recall_micro@k` (micro,
    TARGET's number), `capped_recall@k` (micro, TARGET's capped recall), `hit@k`
    (macro); then `mrr`, `ndcg@10` (macro), `db_hit@1` (macro, only when task ==
    "sql"), and `retrieval_ms_mean`/`_p50`/`_p95` when the outcomes
    carry times (all of them: some with and some without -> ValueError).
    A k beyond the run's top_k is computed on the shorter list (recall cannot grow),
    which is why `default_ks` stops at top_k.
    Errors: no outcomes, empty or non-positive `ks`, unknown task -> ValueError.
    """
    outcomes = _nonempty(outcomes)
    ks = _cutoffs(ks)
    _check_task(task)
    ranks, n_gold, starts = _rank_arrays(outcomes)
    first = np.minimum.reduceat(ranks, starts)  # rank of each query's first gold (inf: none)
    ks_array = np.asarray(ks, dtype=float)
    overlap = np.add.reduceat((ranks[:, None] <= ks_array).astype(np.int64), starts, axis=0)
    recall_macro = (overlap / n_gold[:, None]).mean(axis=0)
    lengths = np.fromiter((len(o.retrieved) for o in outcomes), dtype=np.int64,
                          count=len(outcomes))
    capped_q = np.minimum(n_gold[:, None], np.minimum(lengths[:, None], ks_array))
    counted = overlap.copy()
    for i, o in enumerate(outcomes):  # lists as returned: counted as TARGET counts them
        if o.returned is not None:
            for j, k in enumerate(ks):
                counted[i, j], capped_q[i, j] = target_counts(o.returned, o.gold, k,
                                                              whole=k == ks[-1])
    recall_micro = counted.sum(axis=0) / n_gold.sum()
    capped = capped_q.sum(axis=0)
    capped_micro = np.divide(counted.sum(axis=0), capped, out=np.zeros(len(ks)),
                             where=capped > 0)
    hit = (first[:, None] <= ks_array).mean(axis=0)

    metrics: dict[str, float] = {}
    metrics.update({f"recall@{k}": float(v) for k, v in zip(ks, recall_macro, strict=True)})
    metrics.update({f"recall_micro@{k}": float(v)
                    for k, v in zip(ks, recall_micro, strict=True)})
    metrics.update({f"capped_recall@{k}": float(v)
                    for k, v in zip(ks, capped_micro, strict=True)})
    metrics.update({f"hit@{k}": float(v) for k, v in zip(ks, hit, strict=True)})
    metrics["mrr"] = float((1.0 / first).mean())
    metrics[f"ndcg@{NDCG_K}"] = float(_ndcg(ranks, n_gold, starts, NDCG_K).mean())
    if task == "sql":
        metrics["db_hit@1"] = float(np.fromiter(
            (db_hit_at_1(o.retrieved, o.gold_database) for o in outcomes),
            dtype=np.float64, count=len(outcomes)).mean())
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
    ranks, n_gold, _ = _rank_arrays(outcomes)
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
    """`recall_micro@k` and `capped_recall@k` from stored per-query rows (their
    `overlap@k`, `n_gold`, `capped_gold@k`): what `aggregate_retrieval` gives for the
    same queries, including lists counted as returned, whose lists are not stored. A
    cutoff some row lacks is left out (rows stored before capped_gold@k existed)."""
    out: dict[str, float] = {}
    for k in _cutoffs(ks):
        keys = (f"overlap@{k}", "n_gold", f"capped_gold@{k}")
        if not rows or any(key not in row for row in rows for key in keys):
            continue
        out[f"recall_micro@{k}"] = micro_recall([r[keys[0]] for r in rows],
                                                [r["n_gold"] for r in rows])
        out[f"capped_recall@{k}"] = capped_recall([r[keys[0]] for r in rows],
                                                  [r[keys[2]] for r in rows])
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


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}")


def _rank_arrays(outcomes: Sequence[QueryOutcome]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every gold rank as one float array (inf = not retrieved), grouped by query;
    each query's |gold|; and where each query's group starts (groups are never empty)."""
    n_gold = np.fromiter((len(o.gold_ranks) for o in outcomes), dtype=np.int64,
                         count=len(outcomes))
    ranks = np.fromiter((math.inf if r is None else r
                         for r in chain.from_iterable(o.gold_ranks for o in outcomes)),
                        dtype=np.float64, count=int(n_gold.sum()))
    starts = np.concatenate(([0], np.cumsum(n_gold)[:-1]))
    return ranks, n_gold, starts


def _ndcg(ranks: np.ndarray, n_gold: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    """Per-query nDCG@k from grouped ranks: Σ_{r<=k} 1/log2(r+1) / IDCG(min(|gold|, k))."""
    gains = np.where(ranks <= k, 1.0 / np.log2(ranks + 1.0), 0.0)  # inf rank -> gain 0
    ideal = np.array([ideal_dcg(m) if m else 1.0 for m in range(k + 1)])
    return np.add.reduceat(gains, starts) / ideal[np.minimum(n_gold, k)]
