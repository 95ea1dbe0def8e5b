"""How a task's runs are judged, read from its entry: whether an answer is right, the
reference it is judged against, and TARGET's Table 2 columns.

Every page, the CLI and the analyses ask here (and the entry, `task_rules`): which
run-level metric is a task's headline for its answers, which per-query metric says an
answer is right, which columns and cutoffs TARGET's Table 2 shows for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from target_core.tasks import task_rules
from target_core.types import Query

__all__ = ["QA_BLEU_THRESHOLD", "answer_right", "per_query_metric", "reference_of",
           "right_rule", "table2_recall_columns"]

QA_BLEU_THRESHOLD = 20.0
"""A QA answer counts as right when its sentence BLEU (0-100) reaches this, where a
right/wrong split is needed (attribution); QA has no right/wrong of its own."""


def answer_right(task: str, metrics: Mapping[str, float], *,
                 bleu_threshold: float | None = None) -> bool | None:
    """Whether a query's answer is right: the task's right/wrong metric is 1 (fact,
    text-to-SQL); for a graded task (QA), its score >= bleu_threshold when one is given.
    None: no such notion, or the query has no score."""
    rules = task_rules(task)
    if rules.right_metric is not None:
        value = metrics.get(rules.right_metric)
        return None if value is None else value > 0
    if rules.score_metric is not None and bleu_threshold is not None:
        value = metrics.get(rules.score_metric)
        return None if value is None else value >= bleu_threshold
    return None


def right_rule(task: str, bleu_threshold: float | None = None) -> str:
    """`answer_right`'s rule for `task` in words, e.g. "execution_match = 1"."""
    rules = task_rules(task)
    if rules.right_metric is not None:
        return f"{rules.right_metric} = 1"
    if rules.score_metric is not None and bleu_threshold is not None:
        return f"{rules.score_metric} >= {bleu_threshold:g}"
    return "no right/wrong"


def table2_recall_columns(task: str, top_k: int) -> list[tuple[str, str]]:
    """Table 2's retrieval columns for a run of `task` with `top_k`: (column, metric),
    the metric stored per run and per query.

    R@c at the task's cutoff c (capped at top_k) is TARGET's recall, micro-averaged
    (Σ gold tables within c / Σ gold tables: `recall_micro@c`); a database-level task's
    R@1 (text-to-SQL) is `db_hit@1`, TARGET's rule, its table-level recall@1 follows as
    "R@1 tables"."""
    rules = task_rules(task)
    cutoff = min(rules.table2_cutoff, top_k)
    if rules.database_level:
        return [("R@1", "db_hit@1"), (f"R@{cutoff} tables", f"recall_micro@{cutoff}")]
    return [(f"R@{cutoff}", f"recall_micro@{cutoff}")]


def per_query_metric(metric: str) -> str:
    """The per-query value behind a run-level metric, for paired tests: a micro recall is
    a ratio of sums, so its queries are compared on their own recall@k."""
    return metric.replace("recall_micro@", "recall@")


def reference_of(query: Query, task: str) -> Any:
    """What a generated answer is judged against: the query field the task's entry names
    (`reference`: its gold SQL, its label, its answer), the answer when the query has
    none."""
    value = getattr(query, task_rules(task).reference)
    return query.answer if value is None or value == "" else value
