"""Did retrieval or generation cause a wrong answer? (TARGET's error analysis)

`attribution` crosses *gold retrieved* (every gold table among the tables the generator
was given) with *answer correct*, and splits wrong answers against an oracle-context run
of the same generator: retrieval-caused (right once given the gold tables) or
generation-caused (wrong even then). `rank_quality` relates the best gold rank to the
downstream score: mean per rank bin and Spearman's rho.

Right/wrong: fact verification `fact_correct` = 1, text-to-SQL `execution_match` = 1
(tasks: TaskRules.right_metric); QA has no right/wrong, so an answer counts as
right when its `sentence_bleu` (0-100) reaches `bleu_threshold` (default 20).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from target_core.analysis.memo import run_results
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.errors import TargetError
from target_core.run_config import GenerationConfig
from target_core.tasks import task_rules
from target_core.tasks.judging import QA_BLEU_THRESHOLD, answer_right, right_rule

__all__ = ["Attribution", "AttributionError", "OracleSplit", "RankBin", "RankQuality",
           "attribution", "find_oracle_run", "rank_quality"]

DEFAULT_BLEU_THRESHOLD = QA_BLEU_THRESHOLD
"""QA answers with sentence BLEU >= this (0-100) count as right."""
RANK_BINS: tuple[tuple[str, int | None, int | None], ...] = (
    ("1", 1, 1), ("2", 2, 2), ("3-5", 3, 5), ("6-10", 6, 10), ("not retrieved", None, None))
NOT_RETRIEVED_RANK = 11
"""The rank a query in the "not retrieved" bin gets in the correlation."""


class AttributionError(TargetError):
    """A run that cannot be attributed (no generator, no retrieved context, no scores) or
    an oracle run that does not match it."""


@dataclass(frozen=True)
class OracleSplit:
    """The retrieved run's answers against an oracle-context run, on common queries."""

    oracle_run_id: str
    n_common: int
    n_wrong: int
    """Wrong answers of the retrieved run among the common queries."""
    retrieval_caused: list[str]
    """Wrong with retrieved context, right with the gold tables."""
    generation_caused: list[str]
    """Wrong with both."""
    oracle_worse: list[str]
    """Right with retrieved context, wrong with the gold tables."""


@dataclass(frozen=True)
class Attribution:
    """The 2x2 of gold retrieved x answer correct (query ids in query order)."""

    run_id: str
    dataset: str
    task: str
    generator: str
    k: int
    """Gold retrieved = every gold table ranked within the first k (the context given)."""
    correct_rule: str
    """How an answer was judged right, e.g. "sentence_bleu >= 20"."""
    n_queries: int
    retrieved_correct: list[str]
    retrieved_wrong: list[str]
    missed_correct: list[str]
    missed_wrong: list[str]
    oracle: OracleSplit | None
    """None when no oracle-context run of the same generator and data exists."""

    @property
    def counts(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in
                ("retrieved_correct", "retrieved_wrong", "missed_correct", "missed_wrong")}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"counts": self.counts}


@dataclass(frozen=True)
class RankBin:
    label: str
    low: int | None
    """Best gold rank range [low, high]; None for "not retrieved" (no rank or > 10)."""
    high: int | None
    n: int
    mean: float | None
    """Mean downstream score of the bin; None when empty."""
    query_ids: list[str]


@dataclass(frozen=True)
class RankQuality:
    """Downstream score against the best gold rank, as in TARGET's error analysis."""

    run_id: str
    dataset: str
    task: str
    metric: str
    bins: list[RankBin]
    rho: float | None
    """Spearman's rho of (rank, score); negative: better ranks go with better answers.
    None when undefined (fewer than 3 queries or a constant input)."""
    p_value: float | None
    n: int
    """Queries in the run (all enter the bins and the correlation)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _generation_run(store: RunStore, run_id: str) -> tuple[RunRecord, GenerationConfig]:
    run = store.get_run(run_id)
    generation = run.config.generation
    if generation is None:
        raise AttributionError(f"run {run_id} has no generator: there are no answers to "
                               f"attribute (run it with --generator)")
    if generation.context != "retrieved":
        raise AttributionError(f"run {run_id} gives the generator {generation.context} "
                               f"context, not retrieved tables: nothing to attribute to "
                               f"retrieval")
    return run, generation


def _scores(run: RunRecord, results: Sequence[QueryResult]) -> tuple[str, dict[str, float]]:
    metric = task_rules(run.task).score_metric
    if metric is None or any(metric not in r.metrics for r in results):
        raise AttributionError(f"run {run.run_id} ({run.task}) has no per-query downstream "
                               f"score{f' ({metric})' if metric else ''}")
    return metric, {r.query_id: float(r.metrics[metric]) for r in results}


def _correct(run: RunRecord, results: Sequence[QueryResult], bleu_threshold: float
             ) -> tuple[str, dict[str, bool]]:
    _scores(run, results)  # every query has a score, or a clear error
    return (right_rule(run.task, bleu_threshold),
            {r.query_id: bool(answer_right(run.task, r.metrics, bleu_threshold=bleu_threshold))
             for r in results})


def _oracle_problem(run: RunRecord, generator: str, oracle: RunRecord) -> str | None:
    generation = oracle.config.generation
    if oracle.run_id == run.run_id:
        return "is the run itself"
    if generation is None or generation.context != "oracle":
        return "is not an oracle-context run"
    if generation.generator != generator:
        return f"uses generator {generation.generator}, not {generator}"
    if oracle.dataset_fingerprint != run.dataset_fingerprint:
        return "is not on the same dataset (or its content changed)"
    return None


def find_oracle_run(store: RunStore, run: RunRecord, generator: str) -> RunRecord | None:
    """The newest complete oracle-context run of `generator` on the same data that
    shares at least one query with `run`."""
    done = store.done_query_ids(run.run_id)
    for other in store.list_runs(dataset=run.config.dataset, status="complete"):
        if (_oracle_problem(run, generator, other) is None
                and done & store.done_query_ids(other.run_id)):
            return other
    return None


def _split(store: RunStore, oracle: RunRecord, correct: dict[str, bool],
           bleu_threshold: float) -> OracleSplit:
    results = run_results(store, oracle)
    _, oracle_correct = _correct(oracle, results, bleu_threshold)
    common = [q for q in correct if q in oracle_correct]
    if not common:
        raise AttributionError(f"oracle run {oracle.run_id} has no query in common with "
                               f"the run")
    wrong = [q for q in common if not correct[q]]
    return OracleSplit(
        oracle_run_id=oracle.run_id, n_common=len(common), n_wrong=len(wrong),
        retrieval_caused=[q for q in wrong if oracle_correct[q]],
        generation_caused=[q for q in wrong if not oracle_correct[q]],
        oracle_worse=[q for q in common if correct[q] and not oracle_correct[q]])


def attribution(store: RunStore, run_id: str, *, oracle_run_id: str | None = None,
                k: int | None = None, bleu_threshold: float = DEFAULT_BLEU_THRESHOLD
                ) -> Attribution:
    """The 2x2 of gold retrieved x answer correct for a run with retrieved context, and
    the split of its wrong answers against an oracle-context run.

    Gold retrieved: every gold table at rank <= k, where k defaults to the tables the
    generator was given (the run's `context_k`, or its top_k when unset; token-budget
    cuts inside the prompt are not taken into account). The oracle run is found when
    not given (`find_oracle_run`; None in the result when there is none). Raises
    AttributionError for a run without a generator or with oracle/no context, a k outside
    1..top_k, and an explicit oracle run that is not an oracle-context run of the same
    generator on the same data or shares no query.
    """
    run, generation = _generation_run(store, run_id)
    top_k = run.config.top_k
    if k is None:
        k = min(generation.context_k or top_k, top_k)
    elif not 1 <= k <= top_k:
        raise AttributionError(f"k {k} must be between 1 and run {run_id}'s top_k ({top_k})")
    results = run_results(store, run)
    rule, correct = _correct(run, results, bleu_threshold)
    found = {r.query_id: not r.failed_at(k) for r in results}
    cells: dict[tuple[bool, bool], list[str]] = {(f, c): [] for f in (True, False)
                                                 for c in (True, False)}
    for r in results:
        cells[(found[r.query_id], correct[r.query_id])].append(r.query_id)

    oracle = None if oracle_run_id is None else store.get_run(oracle_run_id)
    if oracle is None:
        oracle = find_oracle_run(store, run, generation.generator)
    elif problem := _oracle_problem(run, generation.generator, oracle):
        raise AttributionError(f"run {oracle_run_id} cannot be the oracle of run {run_id}: "
                               f"it {problem}")
    split = None if oracle is None else _split(store, oracle, correct, bleu_threshold)
    return Attribution(
        run_id=run_id, dataset=run.config.dataset, task=run.task,
        generator=generation.generator, k=k, correct_rule=rule, n_queries=len(results),
        retrieved_correct=cells[(True, True)], retrieved_wrong=cells[(True, False)],
        missed_correct=cells[(False, True)], missed_wrong=cells[(False, False)],
        oracle=split)



def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _spearman(ranks: list[int], scores: list[float]) -> tuple[float | None, float | None]:
    if len(ranks) < 3 or len(set(ranks)) < 2 or len(set(scores)) < 2:
        return None, None
    from scipy.stats import spearmanr

    rho, p_value = spearmanr(ranks, scores)
    return float(rho), float(p_value)


def rank_quality(store: RunStore, run_id: str) -> RankQuality:
    """Mean downstream score per best-gold-rank bin (1, 2, 3-5, 6-10, not retrieved:
    no gold table ranked, or the best one below 10) and Spearman's rho between the best
    gold rank and the score over all queries.

    In the correlation, every "not retrieved" query gets rank 11 (`NOT_RETRIEVED_RANK`):
    tied just below the last bin, so bins and correlation rank queries the same way, and
    a gold at rank 40 is not told apart from one never ranked (the generator saw
    neither). rho < 0 means better (smaller) ranks go with better answers. Works for any
    run with a per-query downstream score (sentence_bleu, fact_correct or
    execution_match), whatever its context; AttributionError otherwise.
    """
    run = store.get_run(run_id)
    results = run_results(store, run)  # shared with the failure report (analysis.memo)
    metric, scores = _scores(run, results)
    members: dict[str, list[str]] = {label: [] for label, _, _ in RANK_BINS}
    ranks = []
    for r in results:
        rank = r.best_rank
        rank = NOT_RETRIEVED_RANK if rank is None or rank > 10 else rank
        label = next(lab for lab, _, high in RANK_BINS if high is None or rank <= high)
        members[label].append(r.query_id)
        ranks.append(rank)
    bins = [RankBin(label=label, low=low, high=high, n=len(members[label]),
                    mean=_mean([scores[q] for q in members[label]]), query_ids=members[label])
            for label, low, high in RANK_BINS]
    rho, p_value = _spearman(ranks, [scores[r.query_id] for r in results])
    return RankQuality(run_id=run_id, dataset=run.config.dataset, task=run.task,
                       metric=metric, bins=bins, rho=rho, p_value=p_value, n=len(results))
