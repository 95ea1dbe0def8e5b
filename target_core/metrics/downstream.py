"""Downstream metrics of a run (QA, fact verification, text-to-SQL): per query, then named
aggregates, like `metrics.retrieval`.

1. `DownstreamOutcome`: one query's generated output with its reference.
2. `per_query_downstream(outcome)`: the query's own values (for the run store and UI).
3. `aggregate_downstream(outcomes, task)`: the run's numbers under DESIGN.md's names,
   overall and per difficulty level.

Averages, spelled out (n outcomes):

* QA: `sacrebleu` is corpus BLEU (n-gram counts pooled over all answers first: micro,
  TARGET's "SB"); `rouge_l` is the macro mean of per-query ROUGE-L F.
* Fact verification: accuracy, and sklearn's support-weighted and macro averages over
  labels (see `metrics.facts.fact_scores`).
* Exact match (a task whose entry scores by "exact"): `exact_match`, the macro mean of
  the per-query 0/1 `exact_match` (`metrics.answers.exact_match`).
* Text-to-SQL: each rate is the macro mean of a 0/1 per-query flag, e.g.
  execution_accuracy = (1/n) Σ_q execution_match_q; `ves` likewise the macro mean of
  the per-query ves_q = 100 · R_q (`metrics.ves`, BIRD's VES), when every outcome has one.

A failed generation (`failed=True`) stays in every denominator and scores as wrong:
an empty answer for BLEU/ROUGE, Not Enough Information for fact verification, no flag
set for SQL. Latency percentiles use numpy's default linear interpolation
(`np.percentile(..., method="linear")`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from target_core.metrics.answers import (
    answer_text,
    corpus_bleu,
    exact_match,
    rouge_l,
    sentence_bleu,
)
from target_core.metrics.facts import fact_correct, fact_scores, gold_label, map_prediction
from target_core.metrics.ves import ves as ves_mean
from target_core.tasks import ANSWER_TASKS, task_rules

__all__ = [
    "DIFFICULTY_ORDER", "SCORING_METRICS", "SQL_FLAGS", "SQL_METRICS",
    "DownstreamOutcome", "aggregate_downstream", "difficulty_order", "generation_summary",
    "per_query_downstream", "task_metrics",
]


SQL_FLAGS: tuple[str, ...] = (
    "execution_match", "execution_match_strict", "alt_interpretation", "exact_set_match")
"""Per-query text-to-SQL flags, computed by the SQL checker and carried in `sql_flags`."""

SQL_METRICS: dict[str, str] = {
    "execution_match": "execution_accuracy",
    "execution_match_strict": "execution_accuracy_strict",
    "alt_interpretation": "alt_interpretation_rate",
    "exact_set_match": "exact_set_match",
}
"""Per-query flag -> the run-level name of its mean."""

SCORING_METRICS: dict[str, tuple[str, ...]] = {
    "bleu": ("sacrebleu", "rouge_l"),
    "label": ("fact_accuracy", "fact_precision", "fact_recall", "fact_f1", "fact_macro_f1",
              "fact_nei_rate", "fact_recall_excl_nei"),
    "sql": tuple(SQL_METRICS.values()),
    "exact": ("exact_match",),
}
"""Each way of scoring answers (a task entry's `scoring`, tasks/base.py SCORINGS): its
quality metrics, in `aggregate_downstream`'s order; these (not latency or error counts)
are also reported per difficulty as `<name>/<difficulty>`. SQL adds `ves` after them
when its outcomes carry VES timings."""


def task_metrics(task: str) -> tuple[str, ...]:
    """The run-level quality metrics of `task`'s answers (SCORING_METRICS of its entry's
    scoring); () for a task without answers."""
    scoring = task_rules(task).scoring
    return SCORING_METRICS[scoring] if scoring else ()

DIFFICULTY_ORDER: tuple[str, ...] = ("easy", "medium", "hard", "extra")
"""Spider's levels, reported in this order before any other difficulty value."""


@dataclass(frozen=True)
class DownstreamOutcome:
    """One query's generated output and its reference: the input of downstream metrics.

    * `task`: a task with answers (qa, fact, sql, ...); its entry's `scoring` says how
      the outcome is scored, below by scoring ("bleu" as qa, "label" as fact, "sql").
    * `prediction`: qa, the generated answer; fact, the raw generated text (labelled by
      TARGET's rule); sql, the generated SQL.
    * `reference`: qa, the reference answer in any form (`answer_text` makes it text);
      fact, the gold verdict (bool, str, None, or a label in {1, 0, -1}); sql, the
      gold SQL (kept for display; scoring uses `sql_flags`).
    * `sql_flags`: sql only, the checker's verdicts keyed by names in `SQL_FLAGS`; a
      missing key (or None) counts as False.
    * `ves`: sql only, ves_q = 100 · R_q (`metrics.ves`), or None when the run was
      scored before VES existed (a failed outcome counts 0).
    * `ms`: generation latency in milliseconds, or None when unknown.
    * `failed`: the generator call failed; `prediction` must then be "" and the
      query scores as wrong on every metric.
    * `cached`: the reply came from the response cache, so `ms` is a cache lookup, not
      a model's latency (latency percentiles leave it out).

    Construction checks all of it (ValueError naming the query).
    """

    query_id: str
    task: str
    difficulty: str | None
    prediction: str
    reference: Any
    sql_flags: Mapping[str, bool] | None = None
    ms: float | None = None
    ves: float | None = None
    failed: bool = False
    cached: bool = False

    def __post_init__(self) -> None:
        def fail(message: str) -> ValueError:
            return ValueError(f"query {self.query_id!r}: {message}")

        if self.task not in ANSWER_TASKS:
            raise fail(f"unknown downstream task {self.task!r}")
        if not isinstance(self.prediction, str):
            raise fail(f"prediction must be a string, got {type(self.prediction).__name__}")
        if self.failed and self.prediction:
            raise fail("a failed generation has an empty prediction")
        if self.difficulty is not None and not isinstance(self.difficulty, str):
            raise fail(f"difficulty must be a string or None, got {self.difficulty!r}")
        scoring = task_rules(self.task).scoring
        if self.sql_flags is not None:
            if scoring != "sql":
                raise fail(f"sql_flags are for the sql task, not {self.task!r}")
            unknown = sorted(set(self.sql_flags) - set(SQL_FLAGS))
            if unknown:
                raise fail(f"unknown SQL flags {unknown}; expected some of {list(SQL_FLAGS)}")
            object.__setattr__(self, "sql_flags",
                               {name: bool(value) for name, value in self.sql_flags.items()})
        ms = self.ms
        if ms is not None:
            if (isinstance(ms, bool) or not isinstance(ms, numbers.Real)
                    or not math.isfinite(ms) or ms < 0):
                raise fail(f"ms must be a finite number >= 0 or None, got {ms!r}")
            object.__setattr__(self, "ms", float(ms))
        if scoring == "label":
            try:
                gold_label(self.reference)
            except (TypeError, ValueError) as exc:
                raise fail(str(exc)) from None


def per_query_downstream(outcome: DownstreamOutcome) -> dict[str, float]:
    """One query's downstream values, as floats, for the run store and the UI.

    * qa: `sentence_bleu` (sacrebleu sentence BLEU, 0-100) and `rouge_l` (F, 0-1) of
      the prediction against `answer_text(reference)`.
    * fact: `fact_correct` (1.0 / 0.0) and `fact_pred`, the predicted label
      (1.0 True, 0.0 False, -1.0 Not Enough Information).
    * sql: each flag of `SQL_FLAGS` as 1.0 / 0.0 (missing -> 0.0), and `ves`
      (ves_q, 0-100+) when the outcome has one.

    A failed outcome scores 0.0 everywhere, with fact_pred -1.0 (also when the gold is
    NEI: a failure is never correct). The mean of `rouge_l`, `fact_correct` or a SQL
    flag over queries gives the run's rouge_l, fact_accuracy (see
    `aggregate_downstream` for the NEI caveat) or SQL rate; BLEU does not average:
    re-aggregate with `corpus_bleu` on the texts.
    """
    scoring = task_rules(outcome.task).scoring
    if scoring == "exact":
        return {"exact_match": 0.0 if outcome.failed
                else exact_match(outcome.prediction, outcome.reference)}
    if scoring == "bleu":
        if outcome.failed:
            return {"sentence_bleu": 0.0, "rouge_l": 0.0}
        reference = answer_text(outcome.reference)
        return {"sentence_bleu": sentence_bleu(outcome.prediction, reference),
                "rouge_l": rouge_l(outcome.prediction, reference)}
    if scoring == "label":
        if outcome.failed:
            return {"fact_correct": 0.0, "fact_pred": -1.0}
        pred = map_prediction(outcome.prediction)
        return {"fact_correct": fact_correct(gold_label(outcome.reference), pred),
                "fact_pred": float(pred)}
    values = {name: float(value) for name, value in _sql_flags(outcome).items()}
    score = _ves(outcome)
    if score is not None:
        values["ves"] = score
    return values


def aggregate_downstream(outcomes: Sequence[DownstreamOutcome], task: str) -> dict[str, float]:
    """A run's downstream metrics under DESIGN.md's names, over outcomes of one task.

    Overall, in this order:

    * qa: `sacrebleu` = corpus_bleu over all outcomes (a failed one contributes an
      empty hypothesis), `rouge_l` = macro mean of per-query ROUGE-L F (failed: 0).
    * fact: the keys of `fact_scores` (weighted P/R/F1 as TARGET, macro F1, NEI
      rate), a failed outcome predicting -1 (NEI), the label TARGET's rule gives an
      empty text. Caveat: against a gold NEI that prediction counts as correct here,
      while its per-query `fact_correct` is 0.0 (TabFact has no NEI gold).
    * sql: `execution_accuracy`, `execution_accuracy_strict`, `alt_interpretation_rate`,
      `exact_set_match`: means of the per-query flags (failed: all 0); `ves`, the mean
      of ves_q, when every outcome has one, a failed one counting 0 (runs scored before
      VES have none; a subset of failed outcomes alone has none either).
    * every task: `generation_ms_p50`, `generation_ms_p90` over the real calls, the
      outcomes whose ms is known and whose reply did not come from the cache (omitted
      when there is none; numpy's linear interpolation), `generation_cached` (replies
      from the cache) and `generation_cached_ms_p50` (their lookup time, when any), then
      `generation_errors` (failed outcomes) and `n_generated` (all outcomes, failed
      included: the denominator of every rate).

    Then, when at least one outcome has a difficulty, the task's metrics (not latency
    or counts) for each difficulty level as `<name>/<difficulty>`, e.g.
    `execution_accuracy/easy`, levels ordered by `difficulty_order`; outcomes without
    a difficulty count only overall.
    Errors: unknown task, no outcomes, or an outcome of another task -> ValueError.
    """
    _check_task(task)
    if len(outcomes) == 0:
        raise ValueError("no outcomes: downstream metrics need at least one query")
    other = next((o for o in outcomes if o.task != task), None)
    if other is not None:
        raise ValueError(f"query {other.query_id!r} is a {other.task!r} outcome, "
                         f"not {task!r}")
    metrics = _task_metrics(outcomes, task)
    metrics.update(generation_summary([o.ms for o in outcomes
                                       if o.ms is not None and not o.cached]))
    cached = [o.ms for o in outcomes if o.cached and o.ms is not None]
    metrics["generation_cached"] = float(sum(1 for o in outcomes if o.cached))
    if cached:
        metrics["generation_cached_ms_p50"] = float(np.percentile(cached, 50))
    metrics["generation_errors"] = float(sum(1 for o in outcomes if o.failed))
    metrics["n_generated"] = float(len(outcomes))
    levels = {o.difficulty for o in outcomes if o.difficulty is not None}
    for level in difficulty_order(levels):
        subset = [o for o in outcomes if o.difficulty == level]
        metrics.update({f"{name}/{level}": value
                        for name, value in _task_metrics(subset, task).items()})
    return metrics


def generation_summary(ms: Sequence[float]) -> dict[str, float]:
    """`generation_ms_p50` and `generation_ms_p90` of per-query generation times.

    Linear interpolation between the two closest ranks (numpy's default): for sorted
    times t_0..t_{n-1}, p = t_i + (t_{i+1} - t_i)·f where i + f = (n - 1)·p/100;
    e.g. [10, 20, 30, 40] -> p50 = 25, p90 = 37. No times -> {} (nothing to report).
    """
    if len(ms) == 0:
        return {}
    p50, p90 = np.percentile(np.asarray(ms, dtype=np.float64), [50, 90])
    return {"generation_ms_p50": float(p50), "generation_ms_p90": float(p90)}


def difficulty_order(levels: set[str] | Sequence[str]) -> list[str]:
    """The distinct levels, Spider's easy, medium, hard, extra first (in that order),
    then any others sorted."""
    distinct = set(levels)
    known = [level for level in DIFFICULTY_ORDER if level in distinct]
    return known + sorted(distinct - set(DIFFICULTY_ORDER))


# --- helpers -----------------------------------------------------------------------------

def _task_metrics(outcomes: Sequence[DownstreamOutcome], task: str) -> dict[str, float]:
    """The quality metrics of task_metrics(task) over a non-empty set of outcomes."""
    scoring = task_rules(task).scoring
    if scoring == "exact":
        return {"exact_match": float(np.mean([
            0.0 if o.failed else exact_match(o.prediction, o.reference) for o in outcomes]))}
    if scoring == "bleu":
        hypotheses = [o.prediction for o in outcomes]  # a failed one's is ""
        references = [answer_text(o.reference) for o in outcomes]
        rouge = [0.0 if o.failed else rouge_l(o.prediction, ref)
                 for o, ref in zip(outcomes, references, strict=True)]
        return {"sacrebleu": corpus_bleu(hypotheses, references),
                "rouge_l": float(np.mean(rouge))}
    if scoring == "label":
        golds = [gold_label(o.reference) for o in outcomes]
        preds = [-1 if o.failed else map_prediction(o.prediction) for o in outcomes]
        return fact_scores(golds, preds)
    flags = [_sql_flags(o) for o in outcomes]
    metrics = {metric: float(np.mean([f[flag] for f in flags]))
               for flag, metric in SQL_METRICS.items()}
    scores = [_ves(o) for o in outcomes]
    if all(score is not None for score in scores) and any(o.ves is not None
                                                          for o in outcomes):
        metrics["ves"] = ves_mean([s for s in scores if s is not None])
    return metrics


def _ves(outcome: DownstreamOutcome) -> float | None:
    if outcome.failed:
        return 0.0
    return None if outcome.ves is None else float(outcome.ves)


def _sql_flags(outcome: DownstreamOutcome) -> dict[str, bool]:
    given = {} if outcome.failed or outcome.sql_flags is None else outcome.sql_flags
    return {flag: bool(given.get(flag, False)) for flag in SQL_FLAGS}


def _check_task(task: str) -> None:
    if task not in ANSWER_TASKS:
        raise ValueError(f"unknown downstream task {task!r}; expected one of "
                         f"{', '.join(ANSWER_TASKS)}")
