"""The runs list that the Run page and `runs` show: one row per run with its headline
numbers (R@k: TARGET's recall at the run's k capped at 10, MRR, retrieval p50, the task's answer
metric from target_core.tasks)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from target_core.config import Settings
from target_core.costs import chat_model, paid_parts
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import TargetError
from target_core.llm.policy import llm_call_notes
from target_core.read_models.cells import (
    PAGE_PX,
    as_text,
    formatted,
    number_format,
    text_widths,
    wrapped_row_height,
)
from target_core.read_models.links import run_queries_link
from target_core.registry import Part
from target_core.run_config import GenerationConfig
from target_core.tasks import all_tasks, task_rules
from target_core.tasks.base import GTR_COLUMNS

EXTRA_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys(
    column for rules in all_tasks() for column, _ in rules.answer_extras))
"""Answer metrics shown beside the headline (the task entry's answer_extras): VES, GTR's."""
RUN_COLUMNS = ("run_id", "dataset", "pipeline", "view", "k", "status", "repeat", "queries",
               "R@k", "mrr", "ms p50", "answers", *EXTRA_COLUMNS, "open")


def answers_label(task: str) -> str:
    """What the runs list's "answers" column holds for `task`, e.g. "EX"."""
    return task_rules(task).answer_label or "answers"


def recall_name(run: RunRecord) -> str:
    """The recall metric a runs list shows for `run` (column "R@k", metrics.labels):
    TARGET's recall at min(10, top_k), table-level, `recall_micro@k`."""
    return f"recall_micro@{min(10, run.config.top_k)}"


def repeat_labels(runs: Sequence[RunRecord]) -> dict[str, str]:
    """run_id -> "2 of 3" for runs of a configuration that was run more than once (a
    fresh run beside the stored one), oldest first; "" for the others."""
    by_key: dict[str, list[RunRecord]] = {}
    for run in runs:
        by_key.setdefault(run.config_key, []).append(run)
    labels = {}
    for same in by_key.values():
        ordered = sorted(same, key=lambda r: r.created_at)
        for i, run in enumerate(ordered, start=1):
            labels[run.run_id] = f"{i} of {len(ordered)}" if len(ordered) > 1 else ""
    return labels


def runs_frame(runs: Sequence[RunRecord]) -> pd.DataFrame:
    """One row per run, newest first as given; numbers are floats (NaN: not measured);
    `open` links to the run's queries on the Query page. A failed run has no answer
    score: what its generations scored measures the failures, not the pipeline."""
    repeats = repeat_labels(runs)
    rows = [{"run_id": r.run_id, "dataset": r.config.dataset, "pipeline": r.config.label,
             "view": r.config.view.label, "k": r.config.top_k, "status": r.status,
             "repeat": repeats[r.run_id],
             "queries": f"{r.n_done}/{r.n_queries}",
             "R@k": r.metrics.get(recall_name(r)), "mrr": r.metrics.get("mrr"),
             "ms p50": r.metrics.get("retrieval_ms_p50"),
             "answers": None if r.status == "failed"
             else r.metrics.get(task_rules(r.task).answer_metric or ""),
             **{c: None if r.status == "failed" else _extra(r, c) for c in EXTRA_COLUMNS},
             "open": run_queries_link(r.run_id)}
            for r in runs]
    frame = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    for column in ("R@k", "mrr", "ms p50", "answers", *EXTRA_COLUMNS):
        frame[column] = frame[column].astype("float64")
    return frame


def _extra(run: RunRecord, column: str) -> float | None:
    """The run's value of an answer metric shown beside the headline (text-to-SQL's VES)."""
    metric = dict(task_rules(run.task).answer_extras).get(column)
    return None if metric is None else run.metrics.get(metric)


def runs_table(runs: Sequence[RunRecord]) -> pd.DataFrame:
    """runs_frame as the Run page shows it: numbers as text (cells.number_format; the
    answer score by its task's metric: sacreBLEU with 2 decimals, F1 and EX with 3),
    blank for a run without them (a running or cancelled run has no metrics yet; a null
    cell is drawn as "None"); an extra column only when some run has it."""
    frame = runs_frame(runs)
    frame = frame.drop(columns=[c for c in EXTRA_COLUMNS if frame[c].isna().all()])
    answers = [formatted(v, number_format(task_rules(r.task).answer_label))
               for r, v in zip(runs, frame["answers"], strict=True)]
    shown = as_text(frame, {c: number_format(c) for c in (
        "R@k", "mrr", "ms p50", *(c for c in EXTRA_COLUMNS if c in frame.columns))})
    shown["answers"] = answers
    return shown


RUN_LABELS = ("run", "pipeline", "view", "status", "repeat")
"""The run list's columns of words; the others hold numbers."""
WRAPPED = {"view": 150, "pipeline": 150}
"""Run-list columns that wrap, in this order, down to these widths (px), when the list
would not fit the page otherwise (the longest pipelines and ablation views)."""


@dataclass(frozen=True)
class RunList:
    """The Run page's list of runs, in two tables that each fit a 1,500-pixel screen."""

    runs: pd.DataFrame
    """runs_table without the dataset, the retrieval ms (the Overview has them), GTR's
    answer metrics and the columns no run fills (repeat; answers without a generator);
    its first column "run" is the run's Query page link (the page shows the id)."""
    answers: pd.DataFrame
    """"run", "pipeline" and GTR's answer metrics of the runs that have any (QA runs with
    a generator); empty when none has."""
    widths: dict[str, int]
    """`runs`' column -> pixels that show its header and longest cell whole (the run
    column measured by the id it shows), or WRAPPED's less when the sum would pass
    cells.PAGE_PX."""
    row_height: int | None
    """A row height that shows WRAPPED's cells whole; None when each fits one line."""

    @property
    def numbers(self) -> list[str]:
        """`runs`' columns of numbers (right-aligned): all but the labels."""
        return [c for c in self.runs.columns if c not in RUN_LABELS]


def run_list(runs: Sequence[RunRecord], page_px: int = PAGE_PX) -> RunList:
    """`runs` as the Run page lists them (RunList), on a page `page_px` wide."""
    table = runs_table(runs).drop(columns=["dataset", "run_id", "ms p50"])
    table.insert(0, "run", table.pop("open"))
    table = table.drop(columns=[c for c in ("repeat", "answers") if not (table[c] != "").any()])
    gtr = [c for c in table.columns if c in GTR_COLUMNS]
    answers = table.loc[(table[gtr] != "").any(axis=1), ["run", "pipeline", *gtr]]
    table = table.drop(columns=gtr)
    widths = text_widths(table.assign(run=[r.run_id for r in runs]))
    over = sum(widths.values()) - page_px
    for column, least in WRAPPED.items():
        cut = max(0, min(over, widths[column] - least))
        widths[column] -= cut
        over -= cut
    return RunList(table, answers.reset_index(drop=True), widths,
                   wrapped_row_height(table, {c: widths[c] for c in WRAPPED}))


def failed_banner(run: RunRecord) -> str | None:
    """What the Query and Failures pages say above a failed run; None for any other."""
    if run.status != "failed":
        return None
    return (f"This run failed: {run.error or 'no reason recorded'}. It is not ranked on "
            "the Overview; its queries are shown as stored.")


def failed_notes(runs: Sequence[RunRecord], limit: int = 5) -> list[str]:
    """One sentence per failed run (newest first) whose configuration has no newer
    complete run, naming the reason; at most `limit`, then how many more."""
    completed: dict[str, float] = {}
    for run in runs:
        if run.status == "complete":
            completed[run.config_key] = max(completed.get(run.config_key, 0.0),
                                            run.created_at)
    failed = [r for r in runs if r.status == "failed"
              and completed.get(r.config_key, 0.0) <= r.created_at]
    notes = [f"Run {r.run_id} ({r.config.label}) failed: {r.error or 'no reason recorded'}. "
             "It is not ranked; launching it again resumes it." for r in failed[:limit]]
    if len(failed) > limit:
        notes.append(f"{len(failed) - limit} more failed runs: see the status column.")
    return notes


def fallback_notes(runs: Sequence[RunRecord], limit: int = 5) -> list[str]:
    """One sentence per LLM step of a complete run (newest first) whose failed calls fell
    back within the failure policy's tolerance (retrievers.llm_calls words it), and per
    run whose lists held repeats or more than k tables, counted as TARGET counts them
    (metrics.capped.returned_notes); at most `limit` runs, then how many more."""
    from target_core.metrics.capped import returned_notes

    noted = [(r, notes) for r in runs if r.status == "complete"
             and (notes := llm_call_notes(r.index_info) + returned_notes(r.index_info))]
    lines = [f"Run {r.run_id} ({r.config.label}): {note}"
             for r, notes in noted[:limit] for note in notes]
    if len(noted) > limit:
        lines.append(f"{len(noted) - limit} more runs had LLM calls fall back: "
                     "see `show RUN_ID`.")
    return lines


def dataset_runs(store: RunStore, dataset: str | None, settings: Settings
                 ) -> list[RunRecord]:
    """The runs `runs --dataset` lists, newest first: every run on the content of
    `dataset` (a name, or a registered folder's path), whichever name or path it was
    made with; all runs for None. A registry that does not load keeps the text as
    given."""
    from target_core.datasets import registered_name

    if dataset:
        with contextlib.suppress(TargetError):
            dataset = registered_name(dataset, settings)
    return store.list_runs(dataset=dataset)


def query_answer(task: str, generation: dict[str, Any] | None, metrics: dict[str, float]
                 ) -> dict[str, Any]:
    """What `show --queries --json` says of one query's generated answer: the answer
    (for text-to-SQL, the SQL written and the database it was run on), why the
    generation failed (error class and the error, whole), and the task's per-query
    answer score; all None for a query without a generation."""
    from target_core.llm.error_classes import error_class_of

    generation = generation or {}
    metric = task_rules(task).score_metric if generation else None
    sql = task_rules(task).answers_sql and bool(generation)
    return {"answer": generation.get("answer"),
            "sql": generation.get("answer") if sql else None,
            "database_id": (generation.get("sql") or {}).get("database_id") if sql else None,
            "error_class": error_class_of(generation), "error": generation.get("error"),
            "answer_metric": metric,
            "answer_score": metrics.get(metric) if metric else None}


def query_rows(store: RunStore, run: RunRecord, k: int) -> list[dict[str, Any]]:
    """Each stored query of `run`, in query order, as `show --queries --json` prints it:
    id, retrieval ms, per-query metrics, gold tables and their ranks, the last gold rank,
    `failed` at k (tasks.failure.FAILURE_RULE), the ranking and the generated answer."""
    return [{"query_id": r.query_id, "ms": r.ms, "metrics": r.metrics,
             "gold": [list(g) for g in r.gold],
             "gold_ranks": [[list(g), v] for g, v in r.gold_ranks.items()],
             "last_gold_rank": r.last_rank, "failed": r.failed_at(k),
             "ranked": [[g[0], g[1], s] for g, s in r.ranked],
             **query_answer(run.task, r.generation, r.metrics)}
            for r in store.iter_results(run.run_id)]


def queries_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """query_rows as a DataFrame: one row per query, each per-query metric a column of
    its own (after the other fields)."""
    return pd.DataFrame([{key: value for key, value in row.items() if key != "metrics"}
                         | row["metrics"] for row in rows])


def runs_with_results(store: RunStore) -> list[RunRecord]:
    """Runs with at least one stored query (what the Query and Failures pages open)."""
    return [r for r in store.list_runs() if r.n_done]


def run_label(run: RunRecord) -> str:
    """A run as a picker shows it, most telling first (a narrow sidebar cuts the end):
    dataset, retriever (→ generator), the view and k where they are not the defaults
    ("default", 10), when it was made, then its id."""
    config = run.config
    parts = [config.dataset, config.label]
    if (view := config.view.label) != "default":
        parts.append(view)
    if config.top_k != 10:
        parts.append(f"k={config.top_k}")
    return " · ".join([*parts, made_at(run.created_at), run.run_id])


def made_at(when: float, now: float | None = None) -> str:
    """A time for labels, short when it is today's: "15:14", else "Nov 22 15:14"."""
    local, today = time.localtime(when), time.localtime(now)
    same_day = (local.tm_year, local.tm_yday) == (today.tm_year, today.tm_yday)
    return time.strftime("%H:%M" if same_day else "%b %d %H:%M", local)


def billed(retriever: str, generation: GenerationConfig | None) -> bool:
    """Whether an API bills a run of `retriever` (and `generation`): only then has its
    cost estimate lines, which count every table's tokens. UnknownNameError for an
    unknown retriever or generator."""
    return bool(paid_parts(Part("retriever", retriever))
                or (generation is not None and chat_model(generation.generator)))

