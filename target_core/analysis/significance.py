"""Per-query outcomes of several runs side by side, and the Overview's test of every
leaderboard row against the best row of its dataset.

`outcomes_frame` is the paired data behind a comparison (one row per query, a group of
columns per run); `significant_vs_best` asks, for each recall column of the leaderboard
(TARGET's Table 2), whether a row's per-query recall differs from the best row's on the
same queries: the exact McNemar test when every per-query value in the column is 0 or 1
(one gold table per query, so recall@k is hit@k), else the paired sign-flip
randomization test; Holm-adjusted over the rows of that column among `runs`: the family
is what the caller passes, so a page passes the rows it shows (after its filters) and
a run it does not show never moves a verdict it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from target_core.analysis.compare import BINARY_DOWNSTREAM, GRADED_DOWNSTREAM
from target_core.analysis.leaderboard import (
    headline_recall_columns,
    label_pair,
    leaderboard,
)
from target_core.analysis.memo import run_scores
from target_core.analysis.stats import ALPHA, holm, mcnemar_exact, paired_randomization
from target_core.engine.store import RunRecord, RunStore
from target_core.tasks.judging import per_query_metric

__all__ = ["OUTCOME_FIELDS", "VsBest", "outcome_column", "outcomes_frame",
           "significant_vs_best"]

OUTCOME_FIELDS = ("hit", "rr", "best_gold_rank", "found", "last_gold_rank")
"""Per-run columns of `outcomes_frame`, then any downstream metric the run has."""


def outcome_column(run_id: str, field: str) -> str:
    """Column name of one run's field in `outcomes_frame`, e.g. "RUN:hit"."""
    return f"{run_id}:{field}"



def outcomes_frame(store: RunStore, run_ids: Sequence[str], k: int) -> pd.DataFrame:
    """One row per query, with for each run: `RUN:hit` (hit@k, 0/1), `RUN:rr` (reciprocal
    rank of the first gold table), `RUN:best_gold_rank` (best rank of any gold table,
    beyond k when the retriever scored the whole corpus; <NA>: never ranked),
    `RUN:found` (1: every gold table within k, tasks.failure.FAILURE_RULE),
    `RUN:last_gold_rank` (the rank by which every gold table was retrieved; <NA>: some
    gold table never ranked) and each
    downstream metric the run has (`RUN:sentence_bleu`, `RUN:execution_match`,
    `RUN:fact_correct`).

    Rows follow the first run's query order, then queries only other runs answered; a
    run that did not answer a query has <NA> in its columns (its hit is <NA> too, which
    tells that apart from "not ranked"). The `k` attribute of the frame's `attrs` holds k.
    """
    rows: dict[str, dict[str, object]] = {}
    columns = ["query_id"]
    hit_key = f"hit@{k}"
    for run_id in run_ids:
        results = list(run_scores(store, store.get_run(run_id)).values())  # memo
        downstream = [m for m in (*BINARY_DOWNSTREAM, *GRADED_DOWNSTREAM)
                      if any(m in r.metrics for r in results)]
        fields = [*OUTCOME_FIELDS, *downstream]
        columns += [outcome_column(run_id, f) for f in fields]
        for result in results:
            row = rows.setdefault(result.query_id, {"query_id": result.query_id})
            metrics = result.metrics
            row[outcome_column(run_id, "hit")] = metrics.get(hit_key)
            row[outcome_column(run_id, "rr")] = metrics.get("mrr")
            row[outcome_column(run_id, "best_gold_rank")] = result.best_rank
            row[outcome_column(run_id, "found")] = 0 if result.failed_at(k) else 1
            row[outcome_column(run_id, "last_gold_rank")] = result.last_rank
            for metric in downstream:
                row[outcome_column(run_id, metric)] = metrics.get(metric)
    frame = pd.DataFrame(list(rows.values()), columns=columns)
    for column in frame.columns[1:]:
        if column.endswith((":hit", ":best_gold_rank", ":found", ":last_gold_rank")):
            frame[column] = frame[column].astype("Int64")
        else:
            frame[column] = frame[column].astype("Float64")
    frame.attrs["k"] = k
    return frame


TEST_NAMES = {"mcnemar": "McNemar", "randomization": "randomization"}
"""How each test is named in markers."""


@dataclass(frozen=True)
class VsBest:
    """One leaderboard row's recall tested against the best row of its column."""

    run_id: str
    best_run_id: str
    metric: str
    """The per-query metric tested, e.g. "recall@10"."""
    test: str
    """"mcnemar", "randomization", or "" for the best run itself."""
    n_queries: int
    p_value: float | None = None
    """Unadjusted."""
    p_holm: float | None = None
    """Holm-adjusted over the column's other rows (the family: `n_rows` - 1 tests)."""
    n_rows: int = 1
    """Rows of the column in the family, the best included."""

    @property
    def is_best(self) -> bool:
        return self.run_id == self.best_run_id

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < ALPHA

    @property
    def marker(self) -> str:
        """"best", or "≠ best (TEST)" / "n.s. (TEST)": the verdict at the Holm-adjusted p
        and the test's name. The p-values have their own cell (`p_text`) and the
        per-query metric tested is the column's (its header names it, e.g. "R@10 vs
        best"; `metric` holds it), so a leaderboard of three datasets stays readable."""
        if self.is_best or self.p_holm is None:
            return "best"
        return (f"{'≠ best' if self.significant else 'n.s.'} "
                f"({TEST_NAMES.get(self.test, self.test)})")

    @property
    def p_text(self) -> str:
        """"p (Holm p)", e.g. "0.044 (0.154)": the unadjusted p, which no other row
        changes, then the adjusted one the verdict uses; "–" for the best row."""
        if self.is_best or self.p_value is None or self.p_holm is None:
            return "–"
        return f"{format_p(self.p_value)} ({format_p(self.p_holm)})"


def format_p(p: float) -> str:
    """A p-value for tables: 3 significant digits, "<0.0001" below that."""
    return "<0.0001" if p < 1e-4 else f"{p:.3g}"


def _binary(values: Sequence[dict[str, dict[str, float]]], metric: str) -> bool:
    return all(m[metric] in (0.0, 1.0) for v in values for m in v.values() if metric in m)


def significant_vs_best(store: RunStore, runs: Sequence[RunRecord]) -> dict[str, VsBest]:
    """For each dataset's Table 2 recall column of `leaderboard(runs)`
    (`headline_recall_columns`: recall at the task's cutoff, database-level R@1 for
    text-to-SQL), test every row against the column's best row (highest recall; the
    first on a tie).

    The family Holm adjusts over is a column's rows among `runs` (pass the runs a page
    shows). Returns run_id -> VsBest for the runs behind the rows of a column with at
    least two rows whose per-query metric (`recall@k`, `db_hit@1`) is stored; the best run maps
    to itself. Queries are paired on the ones both runs answered. Only the newest
    complete run of each configuration is a row, as on the leaderboard.
    """
    board = leaderboard(runs)
    found: dict[str, VsBest] = {}
    per_query: dict[str, dict[str, dict[str, float]]] = {}

    def metrics_of(run_id: str) -> dict[str, dict[str, float]]:
        if run_id not in per_query:
            per_query[run_id] = dict(store.query_metrics(run_id))
        return per_query[run_id]

    for column in headline_recall_columns(board):
        dataset, name = column
        values = board.table[column].dropna()
        if len(values) < 2:
            continue
        metric = per_query_metric(board.recall_metrics[column])
        best_id = board.runs[(dataset, *label_pair(values.idxmax()))]
        best = metrics_of(best_id)
        rows = {row: board.runs[(dataset, *label_pair(row))] for row in values.index}
        binary = _binary([metrics_of(r) for r in rows.values()], metric)
        tested: list[VsBest] = []
        p_values: list[float] = []
        for run_id in rows.values():
            if run_id == best_id:
                continue
            other = metrics_of(run_id)
            common = [q for q in best if q in other and metric in best[q]
                      and metric in other[q]]
            if not common:
                continue
            x, y = [best[q][metric] for q in common], [other[q][metric] for q in common]
            if binary:  # recall@k is hit@k here: McNemar on the discordant queries
                test = "mcnemar"
                p = mcnemar_exact(sum(a > b for a, b in zip(x, y, strict=True)),
                                  sum(b > a for a, b in zip(x, y, strict=True)))
            else:
                test, p = "randomization", paired_randomization(y, x)
            tested.append(VsBest(run_id=run_id, best_run_id=best_id, metric=metric,
                                 test=test, n_queries=len(common), p_value=p))
            p_values.append(p)
        if not tested:
            continue
        n_rows = len(tested) + 1
        found[best_id] = VsBest(run_id=best_id, best_run_id=best_id, metric=metric,
                                test="", n_queries=len(best), n_rows=n_rows)
        for item, p_adj in zip(tested, holm(p_values), strict=True):
            found[item.run_id] = replace(item, p_holm=p_adj, n_rows=n_rows)
    return found
