"""Queries sliced by a metadata field (difficulty, database_id, failure_mode or any other
field of queries.jsonl): the fields a dataset's queries offer, and each run's headline
metrics per slice, as a long frame and a table (the bars: figures.slices;
both together: read_models.slices).

A slice's metric is the run's headline (target_core.tasks) over the slice's queries: Table
2's recall columns as TARGET defines them (R@c: Σ gold tables within c / Σ gold tables of
the slice, from the stored per-query `overlap@c` and `n_gold`; text-to-SQL's R@1 the
share of queries whose top table is in the gold database), and for runs with a generator
the mean of the task's per-query answer score (execution_match and exact_set_match,
fact_correct, sentence BLEU). A run stored without `overlap@c` shows the mean per-query
recall under its own name ("mean recall@c", metrics.labels). For text-to-SQL these
means are exactly the stored `METRIC/LEVEL` run metrics;
for QA the mean sentence BLEU is not the corpus sacreBLEU, which does not average.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from target_core.analysis.memo import run_scores
from target_core.engine.store import RunRecord, RunStore
from target_core.metrics.downstream import difficulty_order
from target_core.metrics.labels import label
from target_core.tasks import task_rules
from target_core.tasks.judging import per_query_metric, table2_recall_columns
from target_core.types import Query

__all__ = ["MAX_FIELD_VALUES", "MISSING", "field_values", "metadata_frame",
           "run_slice_columns", "slice_frame", "slice_order", "slice_table"]

MAX_FIELD_VALUES = 50
"""A field with more distinct values than this (an id, a free text) slices nothing."""

MISSING = "(none)"
"""The slice of queries that lack the field (or hold null in it)."""

_SCALARS = (str, int, float, bool)


def _text(value: object) -> str:
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def metadata_frame(queries: Sequence[Query]) -> pd.DataFrame:
    """One row per query (index query_id), a text column per metadata field that can
    slice them: `difficulty`, `database_id` and every extra field of queries.jsonl whose
    values are scalars, with 2 to MAX_FIELD_VALUES distinct values (MISSING for a query
    without it). Fields in that order, extra fields as they first appear."""
    names = ["difficulty", "database_id"]
    lists = [q.meta for q in queries]
    for meta in lists:
        names += [k for k in meta if k not in names]
    columns: dict[str, list[str]] = {}
    for name in names:
        if name == "difficulty":
            raw: list[object] = [q.difficulty for q in queries]
        elif name == "database_id":
            raw = [q.database_id for q in queries]
        else:
            raw = [meta.get(name) for meta in lists]
        if not all(v is None or isinstance(v, _SCALARS) for v in raw):
            continue  # lists and objects (evidence cells) do not slice
        values = [_text(v) for v in raw]
        if 2 <= len(set(values)) <= MAX_FIELD_VALUES:
            columns[name] = values
    return pd.DataFrame(columns, index=pd.Index([q.query_id for q in queries],
                                                name="query_id"), dtype=object)


def slice_order(values: Sequence[str] | set[str]) -> list[str]:
    """Distinct values in showing order: Spider's levels first (easy, medium, hard,
    extra), then the others sorted, MISSING last."""
    distinct = set(values)
    return difficulty_order(distinct - {MISSING}) + ([MISSING] if MISSING in distinct else [])


def field_values(metadata: pd.DataFrame) -> dict[str, list[str]]:
    """Each field of `metadata_frame` -> its values in slice_order."""
    return {name: slice_order(set(metadata[name])) for name in metadata.columns}


def run_slice_columns(run: RunRecord, present: set[str]) -> list[tuple[str, str]]:
    """(column, per-query metric) shown per slice for `run`: Table 2's recall columns read
    per query, then the task's answer scores the run has (`present`: its per-query
    metric names)."""
    recall = []
    for name, metric in table2_recall_columns(run.task, run.config.top_k):
        if metric not in present and not set(_micro_parts(metric)) <= present:
            metric = per_query_metric(metric)  # stored before overlap@c: the mean
            name = label(metric, run.task)
        recall.append((name, metric))
    answers = [pair for pair in task_rules(run.task).answer_columns if pair[1] in present]
    return [pair for pair in (*recall, *answers)
            if pair[1] in present or set(_micro_parts(pair[1])) <= present]


def _micro_parts(metric: str) -> tuple[str, ...]:
    """The per-query sums behind a micro recall ("recall_micro@c": overlap@c, n_gold);
    () for any other metric."""
    kind, _, k = metric.partition("@")
    return (f"overlap@{k}", "n_gold") if kind == "recall_micro" else ()


def slice_frame(store: RunStore, runs: Sequence[RunRecord], metadata: pd.DataFrame,
                field: str, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Long frame (run_id, run, name, metric, slice, value, queries): per run, column of
    run_slice_columns and value of `field`, the metric over the run's queries in that
    slice (TARGET's recall as a ratio of sums, any other the mean per-query value) and
    how many they are. Queries the metadata does not know
    are left out."""
    rows: list[pd.DataFrame] = []
    for run in runs:
        scores = list(run_scores(store, run).values())
        metrics = pd.DataFrame.from_records([s.metrics for s in scores],
                                            index=[s.query_id for s in scores])
        columns = run_slice_columns(run, set(metrics.columns))
        if not columns or metrics.empty:
            continue
        joined = metrics.join(metadata[field], how="inner")
        grouped = joined.groupby(field, sort=False)
        counts = grouped.size()
        for name, metric in columns:
            if parts := _micro_parts(metric):  # TARGET's recall: a ratio of sums
                sums = grouped[list(parts)].sum()
                means = sums[parts[0]] / sums[parts[1]]
            else:
                means = grouped[metric].mean()
            rows.append(pd.DataFrame({
                "run_id": run.run_id, "run": (names or {}).get(run.run_id, run.config.label),
                "name": name, "metric": metric, "slice": means.index.astype(str),
                "value": means.to_numpy(dtype=float),
                "queries": counts.loc[means.index].to_numpy()}))
    if not rows:
        return pd.DataFrame(columns=["run_id", "run", "name", "metric", "slice", "value",
                                     "queries"])
    return pd.concat(rows, ignore_index=True)


def slice_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per slice (in slice_order) with its number of queries, then a column per
    run and metric ("bm25 · R@10"), runs and metrics in their first order."""
    if frame.empty:
        return pd.DataFrame()
    order = slice_order(set(frame["slice"]))
    labelled = frame.assign(column=frame["run"] + " · " + frame["name"])
    table = labelled.pivot_table(index="slice", columns="column", values="value",
                                 sort=False)
    table = table.reindex(index=order, columns=list(dict.fromkeys(labelled["column"])))
    counts = frame.groupby("slice")["queries"].max().reindex(order)
    table.insert(0, "queries", counts.astype("Int64"))
    return table.reset_index()
