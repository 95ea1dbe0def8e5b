"""One name per number: the label every page, command, export and import summary shows
for a metric key, and its definition in one line.

"R@k" is TARGET's recall wherever it shows (the header of TARGET's Table 2): micro,
Σ gold tables found within k / Σ gold tables (`recall_micro@k`). The mean over queries
of each query's recall (`recall@k`) is "mean recall@k"; the two differ when queries have
several gold tables. Text-to-SQL's Table 2 "R@1" is database-level (`db_hit@1`), so there
table-level recall is "R@k tables" (tasks.judging.table2_recall_columns names the Table 2
columns; this module follows it). Metric keys (JSON, the store) never change; only what a
person reads does. Keys without a label of their own (hit@k, mrr, ...) are their label.
"""

from __future__ import annotations

import math

from target_core.metrics.measures import METRICS
from target_core.tasks import is_task, task_rules
from target_core.tasks.judging import table2_recall_columns

__all__ = ["definition", "label", "metric_of"]


def _table2_names(task: str | None) -> dict[str, str]:
    """metric -> Table 2 column name of `task` (every cutoff up to 10)."""
    if task is None or not is_task(task):
        return {}
    return {metric: name for name, metric in table2_recall_columns(task, 10)}


def label(metric: str, task: str | None = None) -> str:
    """What a person reads for `metric` (a run's metric key) in a run of `task`:
    "R@10" for recall_micro@10, "mean recall@10" for recall@10, "capped R@10",
    Table 2's column names for the task (text-to-SQL's "R@1" is db_hit@1), the task's
    answer columns (e.g. "SB" for sacrebleu); any other key is its own label."""
    if name := _table2_names(task).get(metric):
        return name
    if is_task(task):
        rules = task_rules(task)
        answers = dict((m, n) for n, m in (*rules.table2_answers, *rules.answer_extras))
        if metric in answers:
            return answers[metric]
    found = METRICS.of_key(metric)
    if found is None or not found[0].label:
        return metric
    entry, k = found
    tables = " tables" if is_task(task) and task_rules(task).database_level else ""
    return entry.label.format(k=int(k) if math.isfinite(k) else "", tables=tables)


def metric_of(name: str, task: str | None = None) -> str | None:
    """The metric key whose label is `name` (the inverse of `label` for the retrieval
    metrics at k <= 100 and the task's answer columns); None when no metric has it."""
    keys = [key for entry in METRICS for key in entry.keys(range(1, 101))]
    if is_task(task):
        rules = task_rules(task)
        keys += [m for _, m in (*rules.table2_answers, *rules.answer_extras)]
    return next((key for key in keys if label(key, task) == name), None)


def definition(metric: str) -> str:
    """`metric`'s definition in one line (for captions and help); "" when unknown."""
    found = METRICS.of_key(metric)
    return found[0].definition if found else ""
