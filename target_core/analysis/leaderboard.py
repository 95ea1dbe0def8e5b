"""The leaderboard over stored runs: a leaderboard in the layout of TARGET's Table 2 and recall@k
curves as in its Figure 2, from the runs in the store.

Table 2: one row per retriever and variant (its table view, and its top-k when runs of
one dataset differ only in that), one column group per dataset with recall at the task's
cutoff (R@10 for QA and fact verification, R@1 for text-to-SQL, as the paper reports)
and the mean retrieval time per query (in milliseconds: the paper's seconds round most
lexical retrievers to 0.001). Runs with
a generator add the downstream column of their task: SB (corpus sacreBLEU) for QA,
P / R / F1 (weighted, as TARGET) for fact verification, EX (execution accuracy) and
VES (BIRD's valid efficiency score, not in the paper's Table 2) for text-to-SQL; their
row names the generator (and the context when it is not the retrieved tables). A
no-context run has no retrieval columns. When a configuration was run more than once,
the newest complete run counts; a failed run (its generations failed: engine.runner) is
never ranked, whatever its numbers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial

import pandas as pd

from target_core.analysis.memo import Memo, run_state
from target_core.engine.store import RunRecord, RunStore
from target_core.metrics.retrieval import recall_curve
from target_core.tasks import task_rules
from target_core.tasks.base import UNRANKED_EXTRAS
from target_core.tasks.judging import table2_recall_columns


def run_label(run: RunRecord) -> tuple[str, str]:
    """(retriever [→ generator], variant): the row of a run in the leaderboard."""
    return run.config.label, run.config.view.label


def no_retrieval(run: RunRecord) -> bool:
    """Runs whose generator did not read the retrieved tables (no-context, oracle): their
    retrieval numbers say nothing about their answers, so the row leaves them out."""
    generation = run.config.generation
    return run.config.retriever in ("no-context", "imported:none") or (
        generation is not None and generation.context != "retrieved")


def latest_complete(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """The newest complete run of each (dataset, retriever, generator, view, top_k);
    running, cancelled and failed runs are left out."""
    chosen: dict[tuple[str, str, str, int], RunRecord] = {}
    for run in runs:
        if run.status != "complete":
            continue
        key = (run.config.dataset, run.config.label, run.config.view.key, run.config.top_k)
        if key not in chosen or run.created_at > chosen[key].created_at:
            chosen[key] = run
    return sorted(chosen.values(), key=lambda r: (r.config.dataset, *run_label(r)))


@dataclass(frozen=True)
class Leaderboard:
    table: pd.DataFrame
    """Index (retriever, variant); columns MultiIndex (dataset, metric)."""
    best: pd.DataFrame
    """Same shape: True where the cell is the best of its column."""
    runs: dict[tuple[str, str, str], str]
    """(dataset, retriever, variant) -> run_id, for links."""
    recall_metrics: dict[tuple[str, str], str] = field(default_factory=dict)
    """(dataset, recall column) -> the metric behind it (stored per run and per query),
    e.g. ("demo-sql", "R@1") -> "db_hit@1" (tasks.judging.table2_recall_columns)."""


def label_pair(label: Hashable) -> tuple[str, str]:
    """A leaderboard label as the pair it is: a column's (dataset, metric) or a row's
    (retriever, variant). Both axes are two-level MultiIndexes, which pandas-stubs types
    as single labels."""
    if not (isinstance(label, tuple) and len(label) == 2
            and isinstance(label[0], str) and isinstance(label[1], str)):
        raise TypeError(f"a leaderboard label is a pair of strings, got {label!r}")
    return label[0], label[1]


def column_pairs(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The (dataset, metric) of each column of a leaderboard frame, in order."""
    return [label_pair(c) for c in frame.columns]


def _rows(runs: Sequence[RunRecord]) -> dict[str, tuple[str, str]]:
    """Each run's row: its run_label, with "· k=K" added to the variant when runs of one
    dataset differ only in top-k, so that neither overwrites the other."""
    ks: dict[tuple[str, str, str], set[int]] = {}
    for run in runs:
        ks.setdefault((run.config.dataset, *run_label(run)), set()).add(run.config.top_k)
    rows = {}
    for run in runs:
        label, variant = run_label(run)
        if len(ks[(run.config.dataset, label, variant)]) > 1:
            variant = f"{variant} · k={run.config.top_k}"
        rows[run.run_id] = (label, variant)
    return rows


def leaderboard(runs: Sequence[RunRecord]) -> Leaderboard:
    """Table 2 from the newest complete run of each configuration."""
    cells: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
    links: dict[tuple[str, str, str], str] = {}
    latest = latest_complete(runs)
    rows = _rows(latest)
    recall_metrics: dict[tuple[str, str], str] = {}
    for run in latest:
        row = cells.setdefault(rows[run.run_id], {})
        for name, metric in table2_recall_columns(run.task, run.config.top_k):
            recall = run.metrics.get(metric)
            if recall is not None and not no_retrieval(run):
                row[(run.config.dataset, name)] = recall
                recall_metrics[(run.config.dataset, name)] = metric
        if "retrieval_ms_mean" in run.metrics and not no_retrieval(run):
            row[(run.config.dataset, "ms")] = run.metrics["retrieval_ms_mean"]
        rules = task_rules(run.task)
        for column, metric in (*rules.table2_answers, *rules.answer_extras):
            if run.config.generation is not None and metric in run.metrics:
                row[(run.config.dataset, column)] = run.metrics[metric]
        links[(run.config.dataset, *rows[run.run_id])] = run.run_id
    if not cells:
        empty = pd.DataFrame()
        return Leaderboard(empty, empty, links, recall_metrics)
    table = pd.DataFrame.from_dict(cells, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["retriever", "variant"])
    table.columns = pd.MultiIndex.from_tuples(column_pairs(table), names=["dataset", "metric"])
    order = ["R@1", "R@1 tables", "R@3", "R@5", "R@10", "ms", "SB", "P", "R", "F1", "EX",
             "VES"]
    columns = sorted(column_pairs(table), key=lambda c: (c[0], order.index(c[1])
                                                         if c[1] in order else 99, c[1]))
    table = table[columns]
    best = pd.DataFrame(False, index=table.index, columns=table.columns)
    for column in table.columns:
        values = table[column]
        if values.notna().any() and column[1] not in UNRANKED_EXTRAS:
            target = values.min() if column[1].endswith("ms") else values.max()
            best[column] = values == target
    return Leaderboard(table, best, links, recall_metrics)


def headline_recall_columns(board: Leaderboard) -> list[tuple[str, str]]:
    """The (dataset, column) of each dataset's Table 2 recall: the first recall column
    of its task (database-level R@1 for text-to-SQL), the one tested against the best
    row; the table-level "R@1 tables" is shown, not tested."""
    return [column for column in column_pairs(board.table)
            if column in board.recall_metrics and not column[1].endswith(" tables")]


def distinct_retrievals(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """One run per retrieval configuration (retriever, view, k): runs that add a
    generator to the same retrieval have the same recall, so one curve is enough."""
    chosen: dict[tuple[str, str, int], RunRecord] = {}
    for run in sorted(runs, key=lambda r: (r.config.generation is not None, -r.created_at)):
        if no_retrieval(run):
            continue
        chosen.setdefault((run.config.retriever, run.config.view.key, run.config.top_k), run)
    return list(chosen.values())


def recall_curves(store: RunStore, runs: Sequence[RunRecord], max_k: int | None = None
                  ) -> pd.DataFrame:
    """Long frame (run_id, label, k, recall) with macro recall@k for k = 1..max_k."""
    rows = []
    for run in runs:
        k_max = min(max_k or run.config.top_k, run.config.top_k)
        curve = _CURVES.get(("curve", k_max, *run_state(store, run)),
                            partial(_curve, store, run, k_max))
        label = f"{run.config.retriever} · {run.config.view.label}"
        for k, value in enumerate(curve, start=1):
            rows.append({"run_id": run.run_id, "label": label, "k": k, "recall": value})
    return pd.DataFrame(rows, columns=["run_id", "label", "k", "recall"])


_CURVES: Memo[tuple[float, ...]] = Memo(64)
"""Each run's curve, kept while the run is unchanged: reading a run's ranked lists back
takes about a second per 5,000 queries."""


def _curve(store: RunStore, run: RunRecord, k_max: int) -> tuple[float, ...]:
    """Macro recall@k for k = 1..k_max of one run; empty for a run without results."""
    outcomes = store.outcomes(run.run_id)
    return tuple(recall_curve(outcomes, k_max)) if outcomes else ()
