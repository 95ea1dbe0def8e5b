"""Compare a predicted SQL result with the gold one, and name the failure.

The Text-to-SQL metrics of DESIGN.md come from here: `execution_accuracy` is
`Comparison.set_equal` (on `row_set`), `execution_accuracy_strict` is `strict_equal`;
seed 002's alternative interpretations build on `row_set` in `interpretations`.
`classify` gives each prediction one of ERROR_CLASSES for the failure taxonomy.
Everything is pure: results come from `target_core.sql.execute`, which re-exports this
module's public names.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

from sqlglot import exp

from target_core.sql.execute import SqlResult, json_safe_rows
from target_core.sql.structure import SqlParseError, parse_sql

logger = logging.getLogger(__name__)

ERROR_CLASSES: tuple[str, ...] = (
    "correct", "syntax_error", "unknown_table_or_column", "wrong_database",
    "database_not_in_prompt", "refused", "timeout", "empty_result", "wrong_result", "no_sql",
    "execution_error", "not_comparable",
)
RETRIEVAL_ERROR_CLASSES: frozenset[str] = frozenset({"wrong_database"})
"""The classes blamed on retrieval: the SQL went to a database the retrieved context
offered instead of the gold one (or none was retrieved). Every other class but "correct"
is the generator's, `database_not_in_prompt` included: it named a database its prompt
never showed (an invented id such as '12345')."""
DIFF_ROW_CAP = 50  # rows listed per side of an ExecutionDiff; the counts stay exact
_MAX_PERMUTED_COLUMNS = 6  # 6! = 720 column orders; beyond that only the given order


def _canonical(value: Any) -> Any:
    """Floats rounded to 6 decimals; 1 == 1.0 already holds for Python's == and hash."""
    if isinstance(value, float) and math.isfinite(value):
        return round(value, 6)
    return value


def _canonical_rows(rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [tuple(_canonical(v) for v in row) for row in rows]


def row_set(result: SqlResult) -> frozenset[tuple[Any, ...]]:
    """The result's rows as a set after `_canonical`: what execution accuracy compares."""
    return frozenset(_canonical_rows(result.rows))


def _rows_from(data: Any) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(row) for row in data or ())


@dataclass(frozen=True)
class ExecutionDiff:
    """Rows only in gold, only in the prediction, and shared, as multisets (row order
    ignored, columns in the order each query gives them). Each list holds at most
    DIFF_ROW_CAP rows, in the order they came; the n_* counts are exact."""

    only_gold: tuple[tuple[Any, ...], ...]
    only_pred: tuple[tuple[Any, ...], ...]
    shared: tuple[tuple[Any, ...], ...]
    n_only_gold: int
    n_only_pred: int
    n_shared: int
    column_mismatch: bool  # different column counts (names are aliases, never compared)
    order_only: bool  # same rows, different order, and the gold query orders
    column_order_only: bool  # equal once the prediction's columns are reordered

    def to_dict(self) -> dict[str, Any]:
        return {"only_gold": json_safe_rows(self.only_gold),
                "only_pred": json_safe_rows(self.only_pred),
                "shared": json_safe_rows(self.shared), "n_only_gold": self.n_only_gold,
                "n_only_pred": self.n_only_pred, "n_shared": self.n_shared,
                "column_mismatch": self.column_mismatch, "order_only": self.order_only,
                "column_order_only": self.column_order_only}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecutionDiff:
        return cls(only_gold=_rows_from(data.get("only_gold")),
                   only_pred=_rows_from(data.get("only_pred")),
                   shared=_rows_from(data.get("shared")),
                   n_only_gold=int(data.get("n_only_gold", 0)),
                   n_only_pred=int(data.get("n_only_pred", 0)),
                   n_shared=int(data.get("n_shared", 0)),
                   column_mismatch=bool(data.get("column_mismatch")),
                   order_only=bool(data.get("order_only")),
                   column_order_only=bool(data.get("column_order_only")))


@dataclass(frozen=True)
class Comparison:
    """How a predicted result relates to the gold result (DESIGN.md, Text-to-SQL metrics).

    - set_equal (execution_accuracy): set(pred rows) == set(gold rows), BIRD/TARGET's
      rule, so duplicates and order do not matter and two empty results are equal.
    - strict_equal (execution_accuracy_strict): equal as multisets, and in the same order
      when the gold query has a top-level ORDER BY.
    - column_order_ignored_equal: set_equal for some order of the prediction's columns.
    - comparable: False when a result was cut by the row cap: a prefix is never compared
      as if it were the whole result, so every flag is then False.
    A failed execution on either side is never equal to anything. Seed 002's alternative
    interpretations need the query's other readings: `target_core.sql.interpretations`.
    """

    set_equal: bool
    strict_equal: bool
    column_order_ignored_equal: bool
    diff: ExecutionDiff
    comparable: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"set_equal": self.set_equal, "strict_equal": self.strict_equal,
                "column_order_ignored_equal": self.column_order_ignored_equal,
                "comparable": self.comparable, "diff": self.diff.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Comparison:
        return cls(set_equal=bool(data.get("set_equal")),
                   strict_equal=bool(data.get("strict_equal")),
                   column_order_ignored_equal=bool(data.get("column_order_ignored_equal")),
                   diff=ExecutionDiff.from_dict(data.get("diff") or {}),
                   comparable=bool(data.get("comparable", True)))


def has_top_level_order(sql: str) -> bool:
    """Whether the outermost query (or set operation) has ORDER BY; unparsable -> False."""
    try:
        node: exp.Expr = parse_sql(sql)
    except SqlParseError:
        return False
    while isinstance(node, exp.Subquery) and node.args.get("order") is None:
        node = node.this
    return node.args.get("order") is not None


def compare_results(gold: SqlResult, pred: SqlResult, *, gold_sql: str | None = None
                    ) -> Comparison:
    """Compare the predicted result with the gold one (see Comparison for each flag).

    Values compare after `_canonical`: floats rounded to 6 decimals, 1 equal to 1.0,
    strings and blobs exact, NULL equal to NULL. Column names are never compared (they
    are aliases). `gold_sql` (default gold.sql) decides whether order matters. A result
    cut by the row cap is not comparable: every flag is False and `comparable` says why.
    """
    if gold.truncated or pred.truncated:
        empty = _diff((), [], (), [], column_mismatch=False, order_only=False,
                      column_order_only=False)
        return Comparison(set_equal=False, strict_equal=False,
                          column_order_ignored_equal=False, diff=empty, comparable=False)
    both_ok = gold.ok and pred.ok
    gold_rows, pred_rows = _canonical_rows(gold.rows), _canonical_rows(pred.rows)
    gold_set, pred_set = row_set(gold), row_set(pred)
    width = len(gold.columns)
    same_width = both_ok and width == len(pred.columns)
    ordered = has_top_level_order(gold.sql if gold_sql is None else gold_sql)

    set_equal = both_ok and gold_set == pred_set
    multiset_equal = both_ok and Counter(gold_rows) == Counter(pred_rows)
    permuted = same_width and not set_equal and _equal_when_permuted(gold_set, pred_set, width)
    diff = _diff(gold.rows, gold_rows, pred.rows, pred_rows,
                 column_mismatch=both_ok and width != len(pred.columns),
                 order_only=multiset_equal and ordered and gold_rows != pred_rows,
                 column_order_only=permuted)
    return Comparison(set_equal=set_equal,
                      strict_equal=multiset_equal and (not ordered or gold_rows == pred_rows),
                      column_order_ignored_equal=set_equal or permuted,
                      diff=diff)


def _equal_when_permuted(gold: frozenset[tuple[Any, ...]],
                         pred: frozenset[tuple[Any, ...]], width: int) -> bool:
    """Whether some non-identity order of pred's columns makes the row sets equal.

    A permutation can only work if it maps each gold column onto a prediction column
    with the same set of values, so most are rejected before any row is rebuilt.
    """
    if not 2 <= width <= _MAX_PERMUTED_COLUMNS or len(gold) != len(pred):
        return False
    gold_values = [{row[i] for row in gold} for i in range(width)]
    pred_values = [{row[j] for row in pred} for j in range(width)]
    identity = tuple(range(width))
    for order in permutations(range(width)):
        if order == identity or any(gold_values[i] != pred_values[j]
                                    for i, j in enumerate(order)):
            continue
        if {tuple(row[j] for j in order) for row in pred} == gold:
            return True
    return False


def _pick(raw: Sequence[tuple[Any, ...]], canonical: list[tuple[Any, ...]],
          wanted: Counter[tuple[Any, ...]]) -> tuple[tuple[Any, ...], ...]:
    """Up to DIFF_ROW_CAP raw rows whose canonical forms make up `wanted`, in order."""
    remaining = Counter(wanted)
    picked: list[tuple[Any, ...]] = []
    for row, key in zip(raw, canonical, strict=True):
        if len(picked) == DIFF_ROW_CAP:
            break
        if remaining[key] > 0:
            remaining[key] -= 1
            picked.append(tuple(row))
    return tuple(picked)


def _diff(gold_raw: Sequence[tuple[Any, ...]], gold_rows: list[tuple[Any, ...]],
          pred_raw: Sequence[tuple[Any, ...]], pred_rows: list[tuple[Any, ...]], *,
          column_mismatch: bool, order_only: bool, column_order_only: bool) -> ExecutionDiff:
    gold_count, pred_count = Counter(gold_rows), Counter(pred_rows)
    only_gold, only_pred = gold_count - pred_count, pred_count - gold_count
    shared = gold_count & pred_count
    return ExecutionDiff(
        only_gold=_pick(gold_raw, gold_rows, only_gold),
        only_pred=_pick(pred_raw, pred_rows, only_pred),
        shared=_pick(gold_raw, gold_rows, shared),
        n_only_gold=sum(only_gold.values()), n_only_pred=sum(only_pred.values()),
        n_shared=sum(shared.values()), column_mismatch=column_mismatch,
        order_only=order_only, column_order_only=column_order_only)


def error_blame(error_class: str) -> str | None:
    """Whose fault a class is: "retrieval" (RETRIEVAL_ERROR_CLASSES), "generation" (every
    other wrong class), None for "correct"."""
    if error_class == "correct":
        return None
    return "retrieval" if error_class in RETRIEVAL_ERROR_CLASSES else "generation"


def database_class(chosen: str | None, gold_database: str,
                   shown: Sequence[str] | None) -> str | None:
    """What the chosen database alone says about a prediction, before its SQL runs:
    None when it is the gold one; database_not_in_prompt when it is another one that is
    not among the databases the prompt showed (`shown`; None when not recorded, then not
    checked): the generator named it on its own (an invented id such as '12345'), whatever
    retrieval did; else wrong_database (another database the context offered, or none
    chosen or retrieved): retrieval's failure.
    """
    if chosen == gold_database:
        return None
    if chosen is not None and shown is not None and chosen not in shown:
        return "database_not_in_prompt"
    return "wrong_database"


def classify(gold: SqlResult, pred: SqlResult | None, comparison: Comparison | None, *,
             predicted_database: str | None, gold_database: str,
             shown_databases: Sequence[str] | None = None) -> str:
    """One of ERROR_CLASSES for a prediction, checked in this order:

    no_sql (no prediction or empty SQL), database_not_in_prompt / wrong_database
    (`database_class`: the SQL was written for a database the prompt did not show, a
    generation error; or for another database, a retrieval failure), the prediction's
    own execution error (syntax_error, unknown_table_or_column, refused, timeout,
    execution_error), not_comparable (a result over the row cap), correct (set_equal),
    empty_result (no rows where gold has some), wrong_result.
    `comparison` is computed when not given. If the gold SQL itself failed nothing can
    be judged: the answer is execution_error and a warning is logged.
    """
    if pred is None or pred.error_class == "no_sql":
        return "no_sql"
    if predicted_database is not None and (kind := database_class(
            predicted_database, gold_database, shown_databases)) is not None:
        return kind
    if not pred.ok:
        return pred.error_class if pred.error_class in ERROR_CLASSES else "execution_error"
    if not gold.ok:
        logger.warning("gold SQL failed on %s (%s): cannot judge the prediction",
                       gold_database, gold.error)
        return "execution_error"
    if comparison is None:
        comparison = compare_results(gold, pred)
    if not comparison.comparable:
        return "not_comparable"
    if comparison.set_equal:
        return "correct"
    if not pred.rows and gold.rows:
        return "empty_result"
    return "wrong_result"
