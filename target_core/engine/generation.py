"""The downstream half of a run: context -> prompt -> generator -> evaluation, per query.

`DownstreamStep(query, ranked)` builds the query's context (retrieved, oracle or none,
within the token budget), asks the generator, and evaluates the answer against the
dataset's reference: text-to-SQL answers are executed read-only and compared with the
gold query's result, then judged by seed 002's hierarchical rule against the query's
readings (`target_core.sql.interpretations`); an execution-correct prediction is timed
against the gold query for VES (`target_core.metrics.ves`). It returns what is stored on the query
(the generation record) and its per-query metrics. `downstream_outcome` turns a stored
record back into what the aggregate metrics need, so a resumed run scores exactly like a
fresh one. A run's prompt options (seed 002's toggles, generators/sql_prompt_options.py)
add few-shot pairs and annotations to its prompts, and `answer` a phrased answer
(generators/sql_answer.py) stored as `nl_answer`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from target_core.generators import Generator
from target_core.generators.base import Context, Generation, GenerationRequest
from target_core.generators.context import ContextBuilder
from target_core.generators.prompts import build_messages, prompt_set
from target_core.generators.sql_prompt_options import (
    SEED002_SET,
    Example,
    FewShotPool,
    parse_prompt_options,
)
from target_core.llm.error_classes import classify_error
from target_core.metrics.downstream import DownstreamOutcome, per_query_downstream
from target_core.metrics.facts import FACT_LABELS, gold_label, map_prediction
from target_core.metrics.gtr import gtr_query_metrics
from target_core.metrics.ves import VesTiming, ves_of_timing
from target_core.run_config import GenerationConfig
from target_core.sql.execute import SqlLimits
from target_core.table_view import TableView
from target_core.tasks import task_rules
from target_core.tasks.judging import reference_of
from target_core.tokens import TokenCounter
from target_core.types import Dataset, Query, TableKey

log = logging.getLogger(__name__)

SHOWN_ROWS = 50
"""Rows of each SQL result kept on the query for the Query page (counts are exact)."""


class DownstreamStep:
    """Generates and evaluates one query at a time; safe to call from worker threads."""

    def __init__(self, dataset: Dataset, generation: GenerationConfig, generator: Generator,
                 view: TableView, counter: TokenCounter, *, top_k: int,
                 limits: SqlLimits | None = None, ves_repeats: int | None = None,
                 workspace: str | Path | None = None) -> None:
        self.generator = generator
        prompt_set(generation.prompt_set)  # an unknown set stops the run before a query
        self.prompts = generation.prompt_set
        self.options = parse_prompt_options(generation.prompt_options, generation.prompt_set)
        self.shots = (FewShotPool.build(dataset, workspace) if self.options.few_shot
                      else None)  # the benchmark builder's drafts live in the workspace
        # a generator with a context window (prompt_limit) lowers the budget to fit it
        self.contexts = ContextBuilder(dataset, generation, view, counter, top_k=top_k,
                                       limit=getattr(generator, "prompt_limit", None),
                                       annotations=self.options.annotations,
                                       messages=self.messages)
        self.evaluator = Evaluator(dataset, limits, ves_repeats=ves_repeats)
        self._lock = threading.Lock()

    def context(self, query: Query, ranked: Sequence[TableKey]) -> Context:
        with self._lock:  # the schema cache is shared
            return self.contexts.build(query, ranked)

    def examples(self, query: Query) -> list[Example]:
        """The query's few-shot pairs (none without the fewshot option)."""
        return self.shots.pick(query, self.options.few_shot) if self.shots else []

    def messages(self, query: Query, text: str, *, no_context: bool = False
                 ) -> tuple[dict[str, str], ...]:
        """The query's chat messages around `text` (its tables or schema)."""
        return build_messages(self.evaluator.dataset.task, query.query, text,
                              no_context=no_context, today=query.meta.get("reference_date"),
                              prompts=self.prompts, options=self.options,
                              examples=self.examples(query))

    def _generate(self, query: Query, context: Context) -> Generation:
        """The generator's answer, or, when the window holds none of the query's tables,
        the failure that says so, without a request (a prompt is never sent without
        them)."""
        if no_room := context.cut.get("no_room"):
            return Generation(answer="", error=str(no_room), error_class="window")
        task = self.evaluator.dataset.task
        messages = self.messages(query, context.text, no_context=context.mode == "none")
        reply = ("text" if task_rules(task).answers_sql and self.prompts == SEED002_SET
                 else "json")
        return self.generator.generate(GenerationRequest(task, query.query, context,
                                                         messages, sql_reply=reply))

    def __call__(self, query: Query, ranked: Sequence[TableKey]
                 ) -> tuple[dict[str, Any], dict[str, float]]:
        context = self.context(query, ranked)
        generation = self._generate(query, context)
        if _server_refused_prompt(generation, context) and self.contexts.limit is not None:
            # the refusal taught the window and the server's count: fitted again, once
            context = self.context(query, ranked)
            generation = self._generate(query, context)
        record, metrics = self.evaluator.evaluate(query, generation, context,
                                                  generator=self.generator.spec,
                                                  label=self.generator.label)
        if self.shots is not None:
            record["few_shot"] = [e.source for e in self.examples(query)]
        if self.options.answer and record.get("sql") is not None:
            from target_core.generators.sql_answer import phrase_answer

            record["nl_answer"] = phrase_answer(self.generator, query, record["sql"],
                                                generation.answer)
        return record, metrics


class Evaluator:
    """Scores a generation against the dataset's reference (executing SQL read-only);
    thread-safe. Also used for answers imported from the TARGET library."""

    def __init__(self, dataset: Dataset, limits: SqlLimits | None = None, *,
                 ves_repeats: int | None = None) -> None:
        """`ves_repeats`: timings per correct prediction for VES (None: the
        TARGET_VES_REPEATS setting)."""
        from target_core.sql.interpretations import ExpandedTruth

        self.dataset = dataset
        self.limits = limits or SqlLimits()
        if ves_repeats is None:
            from target_core.config import load_settings

            ves_repeats = load_settings().ves_repeats
        self.ves_repeats = ves_repeats
        self.truth = ExpandedTruth(dataset, self.limits)

    def evaluate(self, query: Query, generation: Generation, context: Context, *,
                 generator: str, label: str) -> tuple[dict[str, Any], dict[str, float]]:
        """(the record stored on the query, its per-query metrics)."""
        task = self.dataset.task
        rules = task_rules(task)
        record: dict[str, Any] = {
            "generator": generator, "label": label,
            "context": context.mode, "context_keys": [list(k) for k in context.keys],
            "databases": list(context.databases), "cut": dict(context.cut),
            **generation.to_dict()}
        if rules.reply == "label":
            pred = map_prediction(generation.answer)
            record["fact"] = {"pred": pred, "pred_label": FACT_LABELS[pred],
                              "gold": gold_label(reference_of(query, task))}
        elif rules.answers_sql:
            record["sql"] = self._evaluate_sql(query, generation, context)
        outcome = downstream_outcome(query, record, task)
        metrics = per_query_downstream(outcome)
        if rules.gtr:  # GTR's ROUGE P/R/F, reply tokens, response time (metrics.gtr)
            metrics |= gtr_query_metrics(outcome.prediction, outcome.reference,
                                         failed=outcome.failed, ms=outcome.ms)
        return record, metrics

    # --- text-to-SQL --------------------------------------------------------------------------

    def _evaluate_sql(self, query: Query, generation: Generation, context: Context
                      ) -> dict[str, Any]:
        from target_core.sql import (
            classify,
            compare_results,
            database_class,
            exact_set_match,
            execute,
        )
        from target_core.sql.schema import read_schema

        gold_sql = query.sql or str(query.answer)
        gold = self.truth.gold(query)
        chosen = generation.database_id or (context.databases[0] if context.databases
                                            else None)
        written = bool(generation.answer.strip())
        pred, comparison = None, None
        if written and chosen is not None and chosen in self.dataset.databases:
            pred = execute(self.dataset.databases[chosen], generation.answer,
                           timeout_s=self.limits.timeout_s, row_cap=self.limits.row_cap)
            comparison = compare_results(gold, pred, gold_sql=gold_sql) if pred.ok else None
        error_class = classify(gold, pred, comparison, predicted_database=chosen,
                               gold_database=query.database_id,
                               shown_databases=context.databases)
        if written and pred is None:  # no database to run it on: none retrieved, or one
            # the prompt never showed (an invented id is the generator's error)
            error_class = database_class(chosen, query.database_id,
                                         context.databases) or "wrong_database"
        if comparison is not None and comparison.set_equal:
            error_class = "correct"  # TARGET's rule: equal result sets, whatever the database
        if generation.error:
            error_class = "generation_failed"
        interpretation = self.truth.interpret(query, pred)
        flags = {
            "execution_match": bool(comparison and comparison.set_equal),
            "execution_match_strict": bool(comparison and comparison.strict_equal),
            "alt_interpretation": interpretation.alternative,
            "exact_set_match": written and exact_set_match(
                gold_sql, generation.answer,
                schema=read_schema(self.dataset.databases[query.database_id])),
        }
        record = {"database_id": chosen, "gold_database_id": query.database_id,
                  "error_class": error_class, "flags": flags,
                  "gold": gold.to_dict(max_rows=SHOWN_ROWS),
                  "pred": None if pred is None else pred.to_dict(max_rows=SHOWN_ROWS),
                  "comparison": None if comparison is None else comparison.to_dict(),
                  "interpretation": interpretation.to_dict(),
                  "ves": self._ves(query, gold_sql, generation, chosen,
                                   correct=flags["execution_match"]).to_dict()}
        if written and chosen not in self.dataset.databases:
            record["pred_error"] = (f"database '{chosen}' is not part of this dataset (the "
                                    "prompt did not show it)" if chosen
                                    else "no database was chosen or retrieved")
        return record

    def _ves(self, query: Query, gold_sql: str, generation: Generation, chosen: str | None,
             *, correct: bool) -> VesTiming:
        """Time an execution-correct prediction against its gold query (BIRD's VES);
        anything else scores 0 untimed, and so does a correct one whose timing fails."""
        from functools import partial

        from target_core.sql.timing import SqlTimingError, query_seconds, time_pair

        if not correct or generation.error or chosen is None:
            return VesTiming(score=0.0, reward=0.0)
        databases = self.dataset.databases
        try:
            timing = time_pair(
                partial(query_seconds, databases[query.database_id], gold_sql,
                        limits=self.limits),
                partial(query_seconds, databases[chosen], generation.answer,
                        limits=self.limits),
                repeats=self.ves_repeats)
        except SqlTimingError as error:
            return VesTiming(score=0.0, reward=0.0, repeats=self.ves_repeats,
                             error=f"timing failed: {error}")
        return ves_of_timing(timing.gold_s, timing.pred_s)


def _server_refused_prompt(generation: Generation, context: Context) -> bool:
    """The server refused the prompt as longer than its context (error class window)."""
    return bool(generation.error and not context.cut.get("no_room")
                and classify_error(generation.error) == "window")


def downstream_outcome(query: Query, record: dict[str, Any], task: str) -> DownstreamOutcome:
    """The metrics' view of a stored generation record."""
    sql = record.get("sql") or {}
    return DownstreamOutcome(
        query_id=query.query_id, task=task, difficulty=query.difficulty,
        prediction=str(record.get("answer") or ""), reference=reference_of(query, task),
        sql_flags=sql.get("flags"), ves=(sql.get("ves") or {}).get("score"),
        ms=record.get("ms"), failed=bool(record.get("error")),
        cached=bool(record.get("cached")))
