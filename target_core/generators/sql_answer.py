"""The final natural-language answer of a text-to-SQL run (seed 002's "response
formulation": after the SQL runs, an LLM phrases its result for the asker).

The step runs when a run's prompt options include `answer` (sql_prompt_options.py; off
by default, so earlier runs are unchanged). Seed 002 prints no prompt for it; the one
here is ours: the question, the SQL and the first ANSWER_ROWS rows of its result,
asking for one or two sentences that state the result and nothing else. The
heuristic generator calls no model: its sentence is a template over the result
(`template_answer`), labelled so. The sentence is stored on the query's generation
record under `nl_answer` and, when the query has a reference answer (the
`reference_answer` field of queries.jsonl: text-to-SQL answers are SQL, so a sentence
to compare with exists only where a dataset writes one), scored with sentence BLEU
(sacreBLEU, 0-100) and ROUGE-L F (0-1) from metrics/answers.py.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from target_core.generators.base import Context, GenerationRequest, Generator
from target_core.types import Query

ANSWER_ROWS = 20
"""Result rows shown to the model (the count of all rows is stated)."""
REFERENCE_FIELD = "reference_answer"
TEMPLATE_LABEL = "template sentence (heuristic, no model)"

ANSWER_SYSTEM = "You are a data analyst who explains query results to the person who asked."
ANSWER_INSTRUCTION = (
    "A question was answered by running an SQL query on a database. Write the answer to "
    "the question in one or two sentences, using only the result below. State the values; "
    "do not explain the SQL. If the result is empty, say that no data matches.\n"
    "Question: {question}\nSQL: {sql}\nResult ({n_rows} rows; columns: {columns}):\n{rows}")


def _cell(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "NULL" if value is None else str(value)


def result_lines(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return "\n".join(" | ".join(_cell(c) for c in row) for row in rows[:ANSWER_ROWS])


def answer_messages(question: str, sql: str, result: Mapping[str, Any]
                    ) -> tuple[dict[str, str], ...]:
    """The chat messages asking for the sentence (`result`: SqlResult.to_dict())."""
    columns = list(result.get("columns") or [])
    rows = result.get("rows") or []
    user = ANSWER_INSTRUCTION.format(question=question, sql=sql,
                                     n_rows=result.get("n_rows", len(rows)),
                                     columns=", ".join(columns) or "none",
                                     rows=result_lines(columns, rows) or "(no rows)")
    return ({"role": "system", "content": ANSWER_SYSTEM}, {"role": "user", "content": user})


def template_answer(result: Mapping[str, Any]) -> str:
    """The heuristic's sentence: "No rows match." / "The answer is 12." (one value) /
    "The result has 7 rows: a, b, c, d, e and 2 more." (the first column's values)."""
    rows = result.get("rows") or []
    n_rows = int(result.get("n_rows", len(rows)))
    if not rows:
        return "No rows match."
    if n_rows == 1 and len(rows[0]) == 1:
        return f"The answer is {_cell(rows[0][0])}."
    if n_rows == 1:
        columns = list(result.get("columns") or [])
        pairs = ", ".join(f"{c} {_cell(v)}" for c, v in zip(columns, rows[0], strict=False))
        return f"The answer is {pairs}."
    shown = ", ".join(_cell(r[0]) for r in rows[:5])
    more = f" and {n_rows - 5} more" if n_rows > 5 else ""
    return f"The result has {n_rows} rows: {shown}{more}."


def phrase_answer(generator: Generator, query: Query, sql_record: Mapping[str, Any],
                  sql: str) -> dict[str, Any]:
    """The `nl_answer` record of one query: {text, by, ms, tokens_in, tokens_out, error,
    reference, bleu, rouge_l} (scores None without a reference answer). A query whose
    SQL did not run gets no sentence (error says why)."""
    started = time.perf_counter()
    pred = sql_record.get("pred")
    record: dict[str, Any] = {"text": "", "by": generator.spec, "ms": 0.0, "tokens_in": None,
                              "tokens_out": None, "error": None}
    if not pred or pred.get("error"):
        record["error"] = "the generated SQL did not run: nothing to phrase"
    elif generator.spec == "heuristic":
        record.update(text=template_answer(pred), by=TEMPLATE_LABEL)
    else:
        reply = generator.generate(GenerationRequest(
            "qa", query.query, Context(mode="none"), answer_messages(query.query, sql, pred)))
        record.update(text=reply.answer.strip(), tokens_in=reply.tokens_in,
                      tokens_out=reply.tokens_out, error=reply.error)
    record["ms"] = round((time.perf_counter() - started) * 1000, 3)
    return record | score_answer(record["text"], query.meta.get(REFERENCE_FIELD))


def score_answer(text: str, reference: Any) -> dict[str, Any]:
    """{reference, bleu, rouge_l}: sentence BLEU (0-100) and ROUGE-L F (0-1) of the
    sentence against the reference answer; None scores without a reference."""
    from target_core.metrics.answers import answer_text, rouge_l, sentence_bleu

    ref = answer_text(reference).strip() if reference is not None else ""
    if not ref:
        return {"reference": None, "bleu": None, "rouge_l": None}
    return {"reference": ref, "bleu": sentence_bleu(text, ref), "rouge_l": rouge_l(text, ref)}
