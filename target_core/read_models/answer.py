"""One query's generated answer, for the Query page: the answer beside the reference,
the fact label against gold, or the SQL diff, plus what the generator was shown.

Everything here is data (strings, numbers, DataFrames); the page renders it as inert
text. Word differences come from target_core.metrics.answers.differing_words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from target_core.engine.store import QueryResult
from target_core.metrics.answers import answer_text, differing_words
from target_core.metrics.facts import FACT_LABELS, gold_label
from target_core.metrics.gtr import GTR_COLUMNS, SAS_LABEL
from target_core.read_models.cells import display_column
from target_core.sql.interpretations import stored_interpretation
from target_core.tasks import task_rules
from target_core.tasks.judging import reference_of
from target_core.types import Query, TableLookup, table_ref
from target_core.wording import counted

ERROR_CLASS_HELP: dict[str, str] = {
    "correct": "the result rows equal the gold result's as sets (execution accuracy)",
    "syntax_error": "SQLite could not parse the generated query",
    "unknown_table_or_column": "the query names a table or column the database lacks",
    "wrong_database": "the query was written for another database than the gold one, one "
                      "the retrieved context offered: a retrieval failure",
    "database_not_in_prompt": "the generator named a database its prompt did not show (an "
                              "invented id): a generation error, not retrieval's",
    "refused": "the query tried to write or to change the connection, and was refused",
    "timeout": "the query ran past the time limit and was stopped",
    "empty_result": "the query ran but returned no rows where the gold query returns some",
    "wrong_result": "the query ran but its rows differ from the gold result",
    "no_sql": "the generator wrote no SQL",
    "execution_error": "the query failed for another reason (see the message)",
    "generation_failed": "the call to the generator failed (see the error)",
    "not_comparable": "a result has more rows than the row cap (TARGET_SQL_ROW_CAP): it "
                      "is not compared by its first rows, so the query counts as wrong",
}

COMPARISON_RULE = ("How results are compared: as sets of rows (order and duplicates "
                   "ignored, as BIRD and TARGET), floats rounded to 6 decimals, 1 equal to "
                   "1.0, strings and blobs exact, NULL equal to NULL, column names never "
                   "compared; each query runs read-only within TARGET_SQL_TIMEOUT seconds "
                   "and results are compared whole up to TARGET_SQL_ROW_CAP rows.")
"""Shown beside every SQL diff: the normalisations execution accuracy applies."""


@dataclass(frozen=True)
class SqlView:
    gold_sql: str
    pred_sql: str
    error_class: str
    gold_database: str
    pred_database: str | None
    gold: pd.DataFrame
    pred: pd.DataFrame | None
    gold_note: str
    pred_note: str
    only_gold: pd.DataFrame | None = None
    only_pred: pd.DataFrame | None = None
    counts: dict[str, int] = field(default_factory=dict)
    findings: tuple[str, ...] = ()
    """Plain sentences: column mismatch, order-only difference, and so on."""
    alternative: bool = False
    """Seed 002's verdict: an alternative interpretation (the query's
    `alt_interpretation` flag, Table 1's Alt)."""
    interpretation: str = ""
    """That verdict in one sentence (target_core.sql.interpretations), "" when none is
    known (a record stored before verdicts were, and not an alternative)."""
    efficiency: str = ""
    """The query's VES in one sentence: R, both mean times and the repeats; "" for a
    record stored before VES was timed."""

    @property
    def diff_counts(self) -> str:
        """"1 shared row, 0 only in gold, 2 only in the prediction"."""
        return (f"{counted(self.counts.get('n_shared', 0), 'shared row')}, "
                f"{self.counts.get('n_only_gold', 0)} only in gold, "
                f"{self.counts.get('n_only_pred', 0)} only in the prediction")


@dataclass(frozen=True)
class AnswerView:
    task: str
    reply: str
    """What the generator replied (the task entry's `reply`): text, label or sql."""
    heading: str
    """What the page calls the generation (the task entry's `heading`)."""
    judged: bool
    """A judge can rate the answer's truthfulness (the task has GTR's metrics)."""
    generator: str
    context_mode: str
    answer: str
    reference: str
    error: str | None
    facts: dict[str, Any]
    """ms, tokens, cached, reasoning: shown as small print."""
    context: pd.DataFrame
    dropped: tuple[str, ...]
    budget_note: str
    scores: dict[str, float]
    answer_marks: list[tuple[str, bool]] = field(default_factory=list)
    reference_marks: list[tuple[str, bool]] = field(default_factory=list)
    predicted_label: str | None = None
    gold_label: str | None = None
    correct: bool | None = None
    sql: SqlView | None = None
    gtr: str = ""
    """GTR's metrics of the answer in one line (`gtr_note`); "" when it has none."""
    truthfulness: str = ""
    """The newest truthfulness judgement in words (experiments.judge), "" before `judge`."""


def gtr_note(scores: dict[str, float]) -> str:
    """GTR's per-query metrics in one line, e.g. "ROUGE-1 P/R/F 1.000/0.667/0.800 · ...
    · SAS (MiniLM cosine) 0.874 · 4 reply tokens · 12 ms"; "" without them."""
    if "rouge1_p" not in scores:
        return ""
    parts = [f"ROUGE-{n} P/R/F " + "/".join(f"{scores.get(k, 0.0):.3f}" for k in keys)
             for n, keys in (("1", ("rouge1_p", "rouge1_r", "rouge1_f")),
                             ("2", ("rouge2_p", "rouge2_r", "rouge2_f")),
                             ("L", ("rougeL_p", "rougeL_r", "rouge_l")))]
    if "sas" in scores:
        parts.append(f"{SAS_LABEL} {scores['sas']:.3f}")
    if "reply_tokens" in scores:
        parts.append(f"{scores['reply_tokens']:.0f} reply tokens")
    if "response_ms" in scores:
        parts.append(f"{scores['response_ms']:.0f} ms")
    return " · ".join(parts)


def _frame(data: dict[str, Any] | None, columns: list[str] | None = None) -> pd.DataFrame:
    if not data:
        return pd.DataFrame()
    cols = columns if columns is not None else list(data.get("columns") or [])
    rows = data.get("rows") or []
    width = max([len(cols)] + [len(r) for r in rows])
    names = _unique(cols + [f"col{i + 1}" for i in range(len(cols), width)])
    padded = [list(r) + [None] * (width - len(r)) for r in rows]
    frame = pd.DataFrame(padded, columns=names)
    for i in range(width):  # a NULL is drawn as "None": such a column is text, NULL blank
        if frame.iloc[:, i].isna().any():
            column = pd.Series([r[i] for r in padded], dtype=object)
            frame.isetitem(i, display_column(column).tolist())
    return frame


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _note(data: dict[str, Any] | None) -> str:
    if not data:
        return "not executed"
    if data.get("error"):
        return f"{data.get('error_class')}: {data['error']}"
    shown = len(data.get("rows") or [])
    total = int(data.get("n_rows", shown))
    more = " (more were cut by the row cap)" if data.get("truncated") and shown == total else ""
    return (counted(total, "row") + (f", first {shown} shown" if shown < total else "") + more
            + f" · {data.get('ms', 0):.1f} ms")


def _sql_view(query: Query, record: dict[str, Any]) -> SqlView:
    sql = record.get("sql") or {}
    gold, pred = sql.get("gold"), sql.get("pred")
    comparison = sql.get("comparison") or {}
    diff = comparison.get("diff") or {}
    findings = []
    if diff.get("column_mismatch"):
        findings.append("The results have different numbers of columns.")
    if diff.get("order_only"):
        findings.append("Same rows, different order (the gold query orders its rows).")
    if diff.get("column_order_only"):
        findings.append("Same rows once the prediction's columns are reordered.")
    if sql.get("pred_error"):
        findings.append(str(sql["pred_error"]))
    gold_columns = list((gold or {}).get("columns") or [])
    pred_columns = list((pred or {}).get("columns") or [])
    return SqlView(
        gold_sql=query.sql or answer_text(query.answer), pred_sql=str(record.get("answer") or ""),
        error_class=str(sql.get("error_class") or "generation_failed"),
        gold_database=query.database_id, pred_database=sql.get("database_id"),
        gold=_frame(gold), pred=_frame(pred) if pred else None, gold_note=_note(gold),
        pred_note=_note(pred) if pred else "not executed",
        only_gold=_frame({"rows": diff.get("only_gold")}, gold_columns) if diff else None,
        only_pred=_frame({"rows": diff.get("only_pred")}, pred_columns) if diff else None,
        counts={k: int(diff.get(k, 0)) for k in ("n_only_gold", "n_only_pred", "n_shared")},
        findings=tuple(findings), efficiency=efficiency_note(sql.get("ves")),
        **_interpretation(sql))


def efficiency_note(ves: dict[str, Any] | None) -> str:
    """One query's VES (target_core.metrics.ves) in words, from its stored timing."""
    if not ves:
        return ""
    if ves.get("error"):
        return f"VES 0: the prediction is right, but {ves['error']}."
    if not ves.get("repeats"):
        return "VES 0: only an execution-correct prediction is timed (BIRD's VES)."
    return (f"VES {ves.get('score', 0):.1f} (R = √(t_gold / t_pred) = "
            f"{ves.get('reward', 0):.3f}): gold {ves.get('gold_ms', 0):.3f} ms, predicted "
            f"{ves.get('pred_ms', 0):.3f} ms, mean of {ves['repeats']} timings each; "
            f"{ves.get('kept', 0)} of {ves['repeats']} ratios within mean ± 3σ averaged.")


def _interpretation(sql: dict[str, Any]) -> dict[str, Any]:
    """The stored verdict; a record stored before verdicts were has only its flag, which
    then compared with the gold result alone."""
    stored = stored_interpretation(sql)
    if stored is not None:
        return {"alternative": stored.alternative, "interpretation": stored.sentence()}
    if (sql.get("flags") or {}).get("alt_interpretation"):
        return {"alternative": True,
                "interpretation": "An alternative interpretation (level 2): one result "
                                  "contains the other (judged against the gold result "
                                  "only, before alternative readings were compared)."}
    return {}


def _context(dataset: TableLookup, record: dict[str, Any]) -> tuple[pd.DataFrame, tuple[str, ...],
                                                                 str]:
    cut = record.get("cut") or {}
    rows = []
    for item in cut.get("tables") or []:
        key = tuple(item.get("key") or ("", ""))
        table = dataset.table_index.get(key)
        kept, total = item.get("rows_kept"), item.get("rows_total")
        rows.append({"table": table_ref(key), "title": table.title if table else "",
                     "rows": "schema" if kept is None else
                     (f"{kept} of {total}" if kept != total else f"all {total}")})
    dropped = tuple(table_ref(tuple(k)) for k in cut.get("dropped") or [])
    note = ""
    if cut:
        kind = "" if cut.get("exact") else " (estimated: no exact tokenizer for this model)"
        note = f"{cut.get('tokens', 0):,} of {cut.get('budget', 0):,} tokens used{kind}"
    return pd.DataFrame(rows, columns=["table", "title", "rows"]), dropped, note


def judgement_note(rows: Sequence[dict[str, Any]], query_id: str) -> str:
    """One query's newest judgement (experiments/judge.py) in words, for the Query page;
    "" when none."""
    mine = [r for r in rows if r["query_id"] == query_id]
    if not mine:
        return ""
    row = mine[0]
    if row["rating"] is None:
        return f"Truthfulness: the judgement failed ({row['label']}): {row['error']}"
    verdict = "1, relevant" if row["rating"] else "0, irrelevant"
    reason = f": {row['reason']}" if row["reason"] else ""
    return f"Truthfulness {verdict} ({row['label']}){reason}"


def answer_view(dataset: TableLookup, result: QueryResult,
                judgements: Sequence[dict[str, Any]] = ()) -> AnswerView | None:
    """The generated answer of `result`, or None for a retrieval-only result;
    `judgements`: the run's stored truthfulness judgements (RunStore.judgements)."""
    record = result.generation
    if record is None:
        return None
    query = dataset.query(result.query_id)
    task = dataset.task
    rules = task_rules(task)
    context, dropped, note = _context(dataset, record)
    facts = {k: record.get(k) for k in ("ms", "tokens_in", "tokens_out", "cached", "reasoning")}
    common: dict[str, Any] = {
        "task": task, "reply": rules.reply, "heading": rules.heading, "judged": rules.gtr,
        "generator": str(record.get("label") or record.get("generator") or ""),
        "context_mode": str(record.get("context") or ""), "answer": str(record.get("answer")
                                                                        or ""),
        "error": record.get("error"), "facts": facts, "context": context, "dropped": dropped,
        "budget_note": note,
        "scores": {k: v for k, v in result.metrics.items()
                   if k in ("sentence_bleu", "rouge_l", "fact_correct", "execution_match",
                            "execution_match_strict", "alt_interpretation",
                            "exact_set_match", "ves", "truthfulness", *GTR_COLUMNS,
                            *(metric for _, metric in rules.answer_columns))},
        "truthfulness": judgement_note(judgements, result.query_id)}
    if rules.reply in ("text", "value"):
        reference = answer_text(reference_of(query, task))
        marks = differing_words(common["answer"], reference)
        return AnswerView(reference=reference, answer_marks=marks[0], reference_marks=marks[1],
                          gtr=gtr_note(common["scores"]) if rules.gtr else "", **common)
    if rules.reply == "label":
        fact = record.get("fact") or {}
        gold = fact.get("gold", gold_label(reference_of(query, task)))
        pred = fact.get("pred", -1)
        return AnswerView(reference=FACT_LABELS[gold], predicted_label=FACT_LABELS[pred],
                          gold_label=FACT_LABELS[gold], correct=pred == gold, **common)
    return AnswerView(reference=answer_text(reference_of(query, task)),
                      sql=_sql_view(query, record), **common)
