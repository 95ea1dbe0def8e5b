"""The offline `heuristic` generator: a lexical, model-free baseline, labelled as such.

It reads only the request's task, query text and context (the tables or schema that
entered the prompt); it never sees gold data, calls no model and is deterministic.

- QA: an extractive answer from the top context table (`heuristic_qa.answer_question`).
- Fact verification: a lexical checker over the context tables
  (`heuristic_fact.verify_statement`).
- Text-to-SQL: pattern rules over the schema (`heuristic_sql.write_sql`).
- Table summaries: a template over the header and first rows (`summarize`).

Its numbers are a floor that any model should beat, not an estimate of one. The lexical
helpers the QA and fact rules share are in `heuristic_text`.
"""

from __future__ import annotations

import logging
import time

from target_core.generators.base import (
    Generation,
    GenerationRequest,
    TableSummary,
    first_rows,
)
from target_core.generators.heuristic_fact import NEI, verify_statement
from target_core.generators.heuristic_qa import answer_question
from target_core.generators.heuristic_sql import write_sql
from target_core.tasks import task_rules
from target_core.types import Table

__all__ = ["NEI", "HeuristicGenerator", "answer_question", "verify_statement"]

logger = logging.getLogger(__name__)


class HeuristicGenerator:
    """Answers from the context by token overlap and patterns; no model, no gold."""

    spec = "heuristic"
    label = "heuristic (offline baseline, no model)"
    concurrency = 1

    def generate(self, request: GenerationRequest) -> Generation:
        """Answer one request; an internal failure becomes Generation.error, never raises."""
        started = time.perf_counter()
        try:
            answer, database, reasoning = self._answer(request)
        except Exception as exc:  # a baseline must not stop a run: report and go on
            logger.warning("heuristic generator failed on %r: %s", request.query, exc)
            return Generation(answer="", error=f"heuristic: {type(exc).__name__}: {exc}",
                              ms=(time.perf_counter() - started) * 1000)
        return Generation(answer=answer, database_id=database, reasoning=reasoning,
                          ms=(time.perf_counter() - started) * 1000)

    def _answer(self, request: GenerationRequest) -> tuple[str, str | None, str]:
        context = request.context
        reply = task_rules(request.task).reply
        if reply in ("text", "value"):
            answer, why = answer_question(request.query, context.tables[:1],
                                          bare=reply == "value")
            return answer, None, why
        if reply == "label":
            label, why = verify_statement(request.query, context.tables)
            return label, None, why
        if reply == "sql":
            guess = write_sql(request.query, context.schema, context.databases)
            return guess.sql, guess.database_id, guess.reasoning
        raise ValueError(f"task {request.task!r} has no answers to generate")

    def summarize(self, table: Table, *, rows: int = 3) -> TableSummary:
        """A template, not a model: "Table about <title> with columns <header>, e.g.
        <first row>", from the header and the first `rows` rows only."""
        try:
            shown = first_rows(table, max(rows, 0))
            name = table.title or table.table_id.replace("_", " ").strip()
            summary = f"Table about {name} with columns {', '.join(map(str, shown.header))}"
            if shown.rows:
                summary += ", e.g. " + ", ".join(str(c) for c in shown.rows[0] if c is not None)
            return TableSummary(name=name, summary=summary)
        except Exception as exc:  # same contract as generate: report, do not raise
            return TableSummary(name=str(getattr(table, "table_id", "")), summary="",
                                error=f"heuristic: {type(exc).__name__}: {exc}")
