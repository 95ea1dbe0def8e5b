"""Evaluation by error source for a text-to-SQL run (seed 002, section 3.3 and Table 1).

Execution accuracy says how often the generated SQL was right, not why the rest was
wrong. The paper's ambiguity-aware evaluation goes further: a result that differs from
the gold one can still be a valid reading of an ambiguous question ("last month" as the
last 30 days), and among the real errors it tells time handling from broken SQL. This
module gives every query of a run exactly one source, the first of SOURCES that applies,
so the counts add up to the number of queries and the Table 1 columns to 100 % (the
sources, their definitions and Table 1's layout: `error_source_report`):

1. exact: the stored `execution_match` flag (through `downstream_outcome`), i.e. the
   rule behind the run's `execution_accuracy`: equal row sets (TARGET's rule, whatever
   database the SQL ran on). Not recomputed, so EA here is the run's own number.
2. alternative: seed 002's second level, the one rule of `target_core.sql.interpretations`
   that also sets the run's `alt_interpretation` flag: the generated result stands in a
   subset relation (either direction, same columns, both non-empty) with the result of
   one reading of the question, the gold query or one of its `alternatives` (benchmark
   export metadata), each run read-only on the gold database. The verdict stored with
   the query is used, so Alt is the run's `alt_interpretation_rate`; for runs stored
   before verdicts were, it is recomputed (the generated SQL is run again, because the
   stored record keeps only its first rows).
3. retrieval: the generator queried another database than the gold one, one its
   prompt showed (`sql.database_class`, the one rule of whose fault a database is). Not
   in the paper; this product is about retrieval, so it is kept apart from SQL errors.
4. sql: no SQL, a failed generation call, SQL that did not execute (as stored), or SQL
   for a database the prompt never showed (an invented id: the generator's error).
5. time: with every WHERE/HAVING conjunct that references the query's `time_column`
   removed from both the gold and the generated SQL (`without_time_filter`), the two
   results match: everything but the time handling was right.
6. other.

Queries without the benchmark metadata (the demo datasets) have no alternatives and no
time column: their only reading is the gold query, so alternative means a subset relation
with the gold result, and time never applies.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from target_core.benchgen.error_source_report import ErrorSourceReport, SourceRow
from target_core.engine.generation import downstream_outcome
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import ConfigError, DatasetError
from target_core.metrics.downstream import per_query_downstream
from target_core.sql import SqlResult, compare_results, database_class, error_blame
from target_core.sql.interpretations import ExpandedTruth, Interpretation, stored_interpretation
from target_core.sql.structure import SqlParseError
from target_core.sql.time_filter import without_time_filter
from target_core.tasks import task_rules
from target_core.types import Dataset, Query

__all__ = ["error_sources"]

logger = logging.getLogger(__name__)

# --- query metadata ------------------------------------------------------------------------


def _meta_error(dataset: Dataset, query: Query, field: str, reason: str) -> DatasetError:
    return DatasetError(f"query {query.query_id!r}: {reason}", path=dataset.source or None,
                        field=field)


def _time_column(dataset: Dataset, query: Query) -> str | None:
    column = query.meta.get("time_column")
    if column is not None and (not isinstance(column, str) or not column.strip()):
        raise _meta_error(dataset, query, "time_column",
                          "must be a \"table.column\" string or null")
    return column or None


# --- one query -----------------------------------------------------------------------------


def _retrieval_detail(record: Mapping[str, Any], chosen: str | None, gold: str) -> str:
    if chosen is None:
        return "no database was retrieved, so the SQL was not run"
    given = list(record.get("databases") or [])
    where = (f"the gold database was in the context (rank {given.index(gold) + 1}) but "
             f"another was chosen" if gold in given else
             "the gold database was not in the context")
    return f"queried database '{chosen}', not '{gold}': {where}"


def _other_detail(sql_record: Mapping[str, Any]) -> str:
    gold_error = (sql_record.get("gold") or {}).get("error")
    if gold_error:
        return f"the gold SQL failed ({gold_error}): nothing to compare with"
    if sql_record.get("error_class") == "empty_result":
        return "no rows where the gold query has some"
    comparison = sql_record.get("comparison") or {}
    diff = comparison.get("diff") or {}
    if diff.get("column_mismatch"):
        return "different columns from the gold query"
    return (f"different result: {diff.get('n_only_gold', 0)} gold rows missing, "
            f"{diff.get('n_only_pred', 0)} extra rows")


class _Judge:
    """Gives one query its source; caches every SQL execution of the analysis."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.truth = ExpandedTruth(dataset)
        self.run = self.truth.run

    def row(self, query: Query, record: Mapping[str, Any] | None) -> SourceRow:
        source, detail, kind = self._judge(query, record)
        return SourceRow(query.query_id, query.difficulty, source, detail, kind)

    def _judge(self, query: Query, record: Mapping[str, Any] | None
               ) -> tuple[str, str, str | None]:
        if record is None:
            return "sql", "no generation record for this query", None
        sql_record = record.get("sql") or {}
        chosen = sql_record.get("database_id")
        gold_db = query.database_id
        flags = per_query_downstream(downstream_outcome(query, dict(record), "sql"))
        if flags["execution_match"]:
            where = "" if chosen in (None, gold_db) else f" (run on database '{chosen}')"
            return "exact", f"same result as the gold query{where}", None
        answer = str(record.get("answer") or "")
        pred = self._prediction(record, answer, chosen)
        verdict = self._interpretation(query, record, sql_record, pred)
        if verdict.alternative:
            return "alternative", verdict.detail(), verdict.kind
        shown = record.get("databases")  # what the prompt showed (None: not recorded)
        database_error = database_class(chosen, gold_db, shown)
        if database_error is not None and error_blame(database_error) == "retrieval":
            return "retrieval", _retrieval_detail(record, chosen, gold_db), None
        if database_error is not None:
            return "sql", (f"the generator named database '{chosen}', which its prompt did "
                           f"not show ({', '.join(shown or []) or 'none'}): a generation "
                           "error, not retrieval's"), None
        if record.get("error"):
            return "sql", f"generation failed: {record['error']}", None
        if not answer.strip() or pred is None:
            return "sql", "no SQL was generated", None
        if not pred.ok:
            return "sql", f"SQL error: {pred.error}", None
        time_detail = self._time_only(query, answer)
        if time_detail is not None:
            return "time", time_detail, None
        return "other", _other_detail(sql_record), None

    def _prediction(self, record: Mapping[str, Any], answer: str, chosen: str | None
                    ) -> SqlResult | None:
        """The generated SQL's result: the stored one when it failed (that is what the run
        saw), else a fresh run; None when it was never run."""
        if (record.get("error") or not answer.strip() or chosen is None
                or chosen not in self.dataset.databases):
            return None
        stored = (record.get("sql") or {}).get("pred")
        if stored and (stored.get("error") or stored.get("error_class")):
            return SqlResult.from_dict(stored)
        return self.run(chosen, answer)

    def _interpretation(self, query: Query, record: Mapping[str, Any],
                        sql_record: Mapping[str, Any], pred: SqlResult | None
                        ) -> Interpretation:
        """The run's own verdict when stored, else the same rule recomputed. Metadata is
        checked either way, so malformed alternatives never pass silently."""
        readings = self.truth.readings(query)
        stored = stored_interpretation(sql_record)
        if record.get("error"):
            return Interpretation("wrong", n_readings=len(readings))
        if stored is not None:
            return stored
        return self.truth.interpret(query, pred)

    def _time_only(self, query: Query, answer: str) -> str | None:
        """The detail when the two queries agree once their time filters are gone."""
        column = _time_column(self.dataset, query)
        if column is None:
            return None
        gold_sql = query.sql or str(query.answer)
        try:
            gold_sql, n_gold = without_time_filter(gold_sql, column)
            pred_sql, n_pred = without_time_filter(answer, column)
        except SqlParseError:
            return None
        if n_gold == 0 and n_pred == 0:
            return None  # nothing removed: the results already differ
        gold = self.run(query.database_id, gold_sql)
        pred = self.run(query.database_id, pred_sql)
        if not (gold.ok and pred.ok and compare_results(gold, pred, gold_sql=gold_sql).set_equal):
            return None
        if n_pred == 0:
            return f"differs only in the time filter: the generated SQL has none on {column}"
        if n_gold == 0:
            return f"differs only in the time filter: the gold SQL has none on {column}"
        return "differs only in the time filter"


# --- a run ---------------------------------------------------------------------------------


def _sql_generation_run(store: RunStore, dataset: Dataset, run_id: str) -> RunRecord:
    run = store.get_run(run_id)
    run_sql = task_rules(run.task).answers_sql
    if not run_sql or run.config.generation is None:
        what = f"a {run.task} run" if not run_sql else "a retrieval-only run"
        raise ConfigError(f"run {run_id} is {what}: error sources need a text-to-SQL run "
                          f"with a generator (run it with --generator)")
    if not task_rules(dataset.task).answers_sql:
        raise ConfigError(f"dataset '{dataset.name}' is a {dataset.task} dataset, not "
                          f"text-to-SQL")
    if run.dataset_fingerprint != dataset.fingerprint:
        raise ConfigError(f"run {run_id} was made on another version of dataset "
                          f"'{run.config.dataset}' than the one loaded")
    return run


def error_sources(store: RunStore, dataset: Dataset, run_id: str) -> ErrorSourceReport:
    """Every query of text-to-SQL run `run_id` with its error source (see the module
    docstring for the checks, SOURCES for their order).

    `dataset` is the run's dataset, loaded (it holds the gold SQL, the databases and
    the benchmark metadata). Raises ConfigError when the run has no generator, is not
    text-to-SQL, was made on another version of the dataset or has no results yet;
    DatasetError for malformed `alternatives` or `time_column` metadata.
    """
    run = _sql_generation_run(store, dataset, run_id)
    results = list(store.iter_results(run_id))
    if not results:
        raise ConfigError(f"run {run_id} has no query results yet")
    judge = _Judge(dataset)
    rows = tuple(judge.row(dataset.query(r.query_id), r.generation) for r in results)
    return ErrorSourceReport(run_id=run_id, dataset=run.config.dataset,
                             label=run.config.label, rows=rows)
