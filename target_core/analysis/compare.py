"""Paired comparison of two or more runs on the same dataset, query by query.

A dataset is its content (the fingerprint stored with each run), not the string a run
was started with: runs made with a folder path and with the dataset's name compare.

The first run is the baseline; every other run is compared with it on the queries
present in all runs. Win/tie/loss are counted from the other run's side (a win: the
other run scores higher on that query than the baseline). Binary metrics (hit@k,
execution_match, fact_correct) get the exact McNemar test; graded ones (reciprocal
rank `mrr`, sentence_bleu, VES's per-query `ves`) the paired sign-flip randomization
test. With more than two runs, the p-values of one metric over all pairs form a family
adjusted by Holm.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

from target_core.analysis.memo import Memo, digest, run_scores, run_state
from target_core.analysis.stats import (
    bootstrap_ci,
    detectable,
    holm,
    mcnemar_exact,
    paired_randomization,
)
from target_core.engine.results import QueryScore
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import TargetError

__all__ = ["FlippedQuery", "MetricTest", "PairComparison", "RunComparison", "RunSummary",
           "compare_runs", "dataset_label", "run_names"]

HIT_CUTOFFS = (1, 3, 5, 10)
BINARY_DOWNSTREAM = ("execution_match", "fact_correct", "truthfulness")
GRADED_DOWNSTREAM = ("sentence_bleu", "ves", "rougeL_p", "sas")


class CompareError(TargetError):
    """Runs that cannot be compared (fewer than two, different datasets, no common queries)."""


@dataclass(frozen=True)
class MetricTest:
    """One metric of one pair: means, win/tie/loss (other vs baseline) and p-values."""

    metric: str
    test: str  # "mcnemar" or "randomization"
    mean_baseline: float
    mean_other: float
    wins: int
    ties: int
    losses: int
    p_value: float
    p_holm: float | None = None
    """Holm-adjusted over all pairs for this metric; None with only two runs."""


@dataclass(frozen=True)
class FlippedQuery:
    """A query that one run found and the other failed at k (tasks.failure.FAILURE_RULE:
    found = every gold table within k; `hit_*` keep their names for the JSON contract)."""

    query_id: str
    hit_baseline: bool
    hit_other: bool
    rr_baseline: float
    rr_other: float
    rank_baseline: int | None
    """Best rank of any gold table in the baseline run (None: never ranked)."""
    rank_other: int | None
    last_rank_baseline: int | None = None
    """The rank by which the baseline retrieved every gold table (None: some never)."""
    last_rank_other: int | None = None


@dataclass(frozen=True)
class PairComparison:
    baseline: str
    other: str
    tests: list[MetricTest]
    flipped: list[FlippedQuery]
    """Sorted by |rr_other - rr_baseline|, largest first."""
    warning: str | None


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    label: str
    top_k: int
    cis: dict[str, tuple[float, float, float]]
    """metric -> (mean, low, high): percentile bootstrap 95% CI of the mean."""


@dataclass(frozen=True)
class RunComparison:
    dataset: str
    k: int
    n_queries: int
    runs: list[RunSummary]
    pairs: list[PairComparison]

    @property
    def hit_key(self) -> str:
        return f"hit@{self.k}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (tuples become lists)."""
        return {"dataset": self.dataset, "k": self.k, "hit_key": self.hit_key,
                "n_queries": self.n_queries,
                "runs": [asdict(r) | {"cis": {m: list(v) for m, v in r.cis.items()}}
                         for r in self.runs],
                "pairs": [asdict(p) for p in self.pairs]}



def dataset_label(runs: Sequence[RunRecord], chosen: str | None = None) -> str:
    """What to call the dataset of `runs` (one fingerprint): `chosen` when some run was
    made with that name (the user asked for the group by it), else the first dataset
    string that is a name rather than a folder path, else the first."""
    names = [r.config.dataset for r in runs]
    if chosen is not None and chosen in names:
        return chosen
    return next((n for n in names if "/" not in n and "\\" not in n), names[0])


def named_by_content(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """`runs` with one dataset name per content: runs whose datasets have the same
    fingerprint (made by a name, another name or a folder path) carry `dataset_label`'s
    name of their group, so pages that group by dataset show them as one."""
    groups: dict[str, list[RunRecord]] = {}
    for run in runs:
        groups.setdefault(run.dataset_fingerprint, []).append(run)
    names = {fingerprint: dataset_label(group) for fingerprint, group in groups.items()}
    return [run if run.config.dataset == names[run.dataset_fingerprint] else
            replace(run, config=replace(run.config, dataset=names[run.dataset_fingerprint]))
            for run in runs]


def _choose_k(runs: Sequence[RunRecord], k: int | None) -> int:
    min_k = min(r.config.top_k for r in runs)
    if k is None:
        return max(c for c in HIT_CUTOFFS if c <= min_k)
    if k < 1 or k > min_k:
        raise CompareError(f"--k {k} must be between 1 and the smallest top_k of the runs "
                           f"({min_k})")
    return k


def _win_tie_loss(base: list[float], other: list[float]) -> tuple[int, int, int]:
    wins = sum(o > b for b, o in zip(base, other, strict=True))
    losses = sum(o < b for b, o in zip(base, other, strict=True))
    return wins, len(base) - wins - losses, losses


def _test(metric: str, base: list[float], other: list[float], *, binary: bool) -> MetricTest:
    wins, ties, losses = _win_tie_loss(base, other)
    if binary:  # wins are exactly the (miss, hit) pairs and losses the (hit, miss) pairs
        p, test = mcnemar_exact(losses, wins), "mcnemar"
    else:
        p, test = paired_randomization(other, base), "randomization"
    n = len(base)
    return MetricTest(metric=metric, test=test, mean_baseline=sum(base) / n,
                      mean_other=sum(other) / n, wins=wins, ties=ties, losses=losses,
                      p_value=p)


def _metrics_present(results: dict[str, QueryScore], query_ids: list[str]) -> set[str]:
    names = set(BINARY_DOWNSTREAM + GRADED_DOWNSTREAM)
    for q in query_ids:
        names &= set(results[q].metrics)
    return names


def compare_runs(store: RunStore, run_ids: Sequence[str], *, k: int | None = None
                 ) -> RunComparison:
    """Compare runs[1:] with runs[0] on the queries all runs answered.

    k defaults to the largest of 1, 3, 5, 10 not above the smallest top_k of the runs.
    Raises CompareError for fewer than two runs, a run listed twice, runs on different
    data (by content: one dataset by path and by name is the same), or no query in
    common.
    """
    if len(run_ids) < 2:
        raise CompareError("compare needs at least two runs")
    if len(set(run_ids)) != len(run_ids):
        raise CompareError("a run is listed twice: " + ", ".join(run_ids))
    runs = [store.get_run(r) for r in run_ids]
    if len({r.dataset_fingerprint for r in runs}) > 1:
        listed = ", ".join(f"{r.run_id} on {r.config.dataset} (content "
                           f"{r.dataset_fingerprint[:8]})" for r in runs)
        raise CompareError(f"runs are not on the same dataset (or its content changed): "
                           f"{listed}")
    k = _choose_k(runs, k)
    hit_key = f"hit@{k}"
    results = [run_scores(store, run) for run in runs]  # kept while a run is unchanged
    common = set(results[0]).intersection(*results[1:])
    query_ids = [q for q in results[0] if q in common]  # the baseline's query order
    if not query_ids:
        raise CompareError("the runs have no query in common")
    for run, res in zip(runs, results, strict=True):
        if any(hit_key not in res[q].metrics for q in query_ids):
            raise CompareError(f"run {run.run_id} has no per-query {hit_key}")
    # each run's CIs and each pair's tests are computed once per (runs' states, k, queries)
    queries = digest(query_ids)
    states = [run_state(store, run) for run in runs]
    summaries = [_SUMMARIES.get((states[i], k, queries), partial(
        _summary, run, results[i], query_ids, hit_key)) for i, run in enumerate(runs)]
    pairs = [_PAIRS.get((states[0], states[i], k, queries), partial(
        _pair, runs[0], runs[i], results[0], results[i], query_ids, k))
        for i in range(1, len(runs))]
    if len(runs) > 2:
        pairs = _with_holm(pairs)
    return RunComparison(dataset=dataset_label(runs), k=k, n_queries=len(query_ids),
                         runs=summaries, pairs=pairs)


_SUMMARIES: Memo[RunSummary] = Memo(64)
_PAIRS: Memo[PairComparison] = Memo(64)


def _values(results: dict[str, QueryScore], query_ids: list[str], metric: str) -> list[float]:
    return [float(results[q].metrics[metric]) for q in query_ids]


def _summary(run: RunRecord, results: dict[str, QueryScore], query_ids: list[str],
             hit_key: str) -> RunSummary:
    """One run's means with their bootstrap CIs on the compared queries."""
    cis = {}
    for metric in [hit_key, "mrr", *sorted(_metrics_present(results, query_ids))]:
        vals = _values(results, query_ids, metric)
        cis[metric] = (sum(vals) / len(vals), *bootstrap_ci(vals))
    return RunSummary(run_id=run.run_id, label=run.config.label, top_k=run.config.top_k,
                      cis=cis)


def _pair(baseline: RunRecord, other: RunRecord, base: dict[str, QueryScore],
          results: dict[str, QueryScore], query_ids: list[str], k: int) -> PairComparison:
    """One pair's paired tests (before Holm), flipped queries and warning."""
    hit_key = f"hit@{k}"
    shared = _metrics_present(base, query_ids) & _metrics_present(results, query_ids)

    def test(metric: str, binary: bool) -> MetricTest:
        return _test(metric, _values(base, query_ids, metric),
                     _values(results, query_ids, metric), binary=binary)

    tests = [test(hit_key, True), test("mrr", False)]
    tests += [test(m, m in BINARY_DOWNSTREAM)
              for m in (*BINARY_DOWNSTREAM, *GRADED_DOWNSTREAM) if m in shared]
    flipped = []
    for q in query_ids:
        a, b = base[q], results[q]
        hit_a, hit_b = not a.failed_at(k), not b.failed_at(k)
        if hit_a != hit_b:
            flipped.append(FlippedQuery(
                query_id=q, hit_baseline=hit_a, hit_other=hit_b,
                rr_baseline=float(a.metrics["mrr"]), rr_other=float(b.metrics["mrr"]),
                rank_baseline=a.best_rank, rank_other=b.best_rank,
                last_rank_baseline=a.last_rank, last_rank_other=b.last_rank))
    flipped.sort(key=lambda f: -abs(f.rr_other - f.rr_baseline))  # stable: query order
    hit_test = tests[0]
    return PairComparison(
        baseline=baseline.run_id, other=other.run_id, tests=tests, flipped=flipped,
        warning=detectable(len(query_ids), hit_test.losses, hit_test.wins))


def _with_holm(pairs: list[PairComparison]) -> list[PairComparison]:
    """Adjust each metric's p-values over the pairs that tested it (one family per metric)."""
    metrics = {t.metric for p in pairs for t in p.tests}
    adjusted: dict[tuple[int, str], float] = {}
    for metric in metrics:
        where = [(i, t) for i, p in enumerate(pairs) for t in p.tests if t.metric == metric]
        for (i, _), p_adj in zip(where, holm([t.p_value for _, t in where]), strict=True):
            adjusted[(i, metric)] = p_adj
    return [PairComparison(
        baseline=p.baseline, other=p.other, flipped=p.flipped, warning=p.warning,
        tests=[MetricTest(**(asdict(t) | {"p_holm": adjusted[(i, t.metric)]}))
               for t in p.tests]) for i, p in enumerate(pairs)]


def run_names(runs: Sequence[RunRecord]) -> dict[str, str]:
    """Short distinct names: the pipeline label, plus the view and k where runs differ
    in them, plus the run id where that still leaves two runs with one name."""
    views = {r.config.view.key for r in runs}
    ks = {r.config.top_k for r in runs}
    names = {}
    for run in runs:
        name = run.config.label
        if len(views) > 1:
            name += f" · {run.config.view.label}"
        if len(ks) > 1:
            name += f" · k={run.config.top_k}"
        names[run.run_id] = name
    counts = Counter(names.values())
    return {rid: f"{n} ({rid})" if counts[n] > 1 else n for rid, n in names.items()}
