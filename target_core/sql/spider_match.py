"""Spider's official exact set match over two `SpiderSql` readings of the same database.

The rules of `Evaluator.eval_exact_match` in test-suite-sql-eval's `evaluation.py`, run
as its script runs them for `--etype match` (values and DISTINCT disabled, foreign keys
folded), restated on this package's own types. `tests/test_spider_exact_match.py`
checks that every verdict equals the official script's on the committed pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from target_core.sql.schema import SqlSchema
from target_core.sql.spider_form import (
    ColUnit,
    Condition,
    CondUnit,
    SpiderSql,
    Value,
    ValUnit,
)

_SET_OPERATIONS = ("intersect", "except_", "union")


def spider_exact_match(gold: SpiderSql, pred: SpiderSql, schema: SqlSchema) -> bool:
    """Spider's exact set match of `pred` against `gold`.

    Both are first normalized as the official script does: condition values are
    dropped (except subqueries, whose own values are dropped the same way), DISTINCT is
    dropped, and a column at either end of a foreign key becomes its group's stand-in
    (`schema.key_map`) when it belongs to a table of the query's top-level FROM.
    Subqueries inside conditions and in FROM are not normalized any further, so they
    must agree in DISTINCT, order of items and (FROM subqueries) values too.
    Then `pred` matches when, comparing with `gold`:

    - SELECT: the same (aggregate, value) items, as a multiset;
    - WHERE: the same condition units as a multiset, and the same set of AND/OR;
    - GROUP BY: both or neither have one; if both, the same columns in the same order
      (aggregates aside) and the same HAVING list, in order;
    - ORDER BY: if gold orders, the same direction and items in order, and both or
      neither have a LIMIT (its value never counts); if gold does not order, neither does
      pred;
    - INTERSECT / EXCEPT / UNION: the same one, its query matched by these rules;
    - the same keywords: where, group, having, order, asc/desc, limit, the set operation,
      and any or / not / in / like in the ON, WHERE and HAVING conditions;
    - FROM: the same tables and FROM subqueries as a multiset (join conditions count
      only through those keywords).
    """
    return _match(_normalize(gold, schema), _normalize(pred, schema))


def _normalize(query: SpiderSql, schema: SqlSchema) -> SpiderSql:
    tables = [unit[1] for unit in query.tables if unit[0] == "table" and isinstance(unit[1], str)]
    in_from = frozenset(f"{table}.{column}" for table in tables
                        for column in schema.tables.get(table, ()))
    keys = {column: first for column, first in schema.key_map.items() if column in in_from}
    return _fold(_without_values(query), keys)


def _without_values(query: SpiderSql) -> SpiderSql:
    """Condition values -> None; subqueries kept with their own values dropped."""
    def value(v: Value) -> Value:
        return _without_values(v) if isinstance(v, SpiderSql) else None

    def condition(units: Condition) -> Condition:
        return tuple(u if isinstance(u, str) else (u[0], u[1], u[2], value(u[3]), value(u[4]))
                     for u in units)

    return replace(query, join=condition(query.join), where=condition(query.where),
                   having=condition(query.having),
                   intersect=_tail(query.intersect, _without_values),
                   union=_tail(query.union, _without_values),
                   except_=_tail(query.except_, _without_values))


def _fold(query: SpiderSql, keys: dict[str, str]) -> SpiderSql:
    """DISTINCT dropped and foreign keys folded, here and in the set operation's query."""
    def column(unit: ColUnit) -> ColUnit:
        return unit[0], keys.get(unit[1], unit[1]), None

    def value_unit(unit: ValUnit) -> ValUnit:
        return unit[0], column(unit[1]), None if unit[2] is None else column(unit[2])

    def condition(units: Condition) -> Condition:
        return tuple(u if isinstance(u, str) else (u[0], u[1], value_unit(u[2]), u[3], u[4])
                     for u in units)

    return replace(query, distinct=None,
                   select=tuple((agg, value_unit(unit)) for agg, unit in query.select),
                   where=condition(query.where), having=condition(query.having),
                   group_by=tuple(column(unit) for unit in query.group_by),
                   order_by=tuple(value_unit(unit) for unit in query.order_by),
                   intersect=_tail(query.intersect, lambda tail: _fold(tail, keys)),
                   union=_tail(query.union, lambda tail: _fold(tail, keys)),
                   except_=_tail(query.except_, lambda tail: _fold(tail, keys)))


def _tail(query: SpiderSql | None, change: Callable[[SpiderSql], SpiderSql]
          ) -> SpiderSql | None:
    return None if query is None else change(query)


def _units(condition: Condition) -> list[CondUnit]:
    return [unit for unit in condition if not isinstance(unit, str)]


def _connectors(condition: Condition) -> list[str]:
    return [unit for unit in condition if isinstance(unit, str)]


def _match(gold: SpiderSql, pred: SpiderSql) -> bool:
    return (Counter(pred.select) == Counter(gold.select)
            and Counter(_units(pred.where)) == Counter(_units(gold.where))
            and set(_connectors(pred.where)) == set(_connectors(gold.where))
            and _group_match(gold, pred) and _order_match(gold, pred)
            and all(_nested_match(getattr(gold, op), getattr(pred, op))
                    for op in _SET_OPERATIONS)
            and _keywords(pred) == _keywords(gold)
            and (not gold.tables or Counter(gold.tables) == Counter(pred.tables)))


def _group_match(gold: SpiderSql, pred: SpiderSql) -> bool:
    if bool(gold.group_by) != bool(pred.group_by):
        return False
    return not gold.group_by or (
        [unit[1] for unit in gold.group_by] == [unit[1] for unit in pred.group_by]
        and gold.having == pred.having)


def _order_match(gold: SpiderSql, pred: SpiderSql) -> bool:
    if not gold.order_by:
        return not pred.order_by
    return ((gold.order, gold.order_by) == (pred.order, pred.order_by)
            and gold.limit == pred.limit)


def _nested_match(gold: SpiderSql | None, pred: SpiderSql | None) -> bool:
    if gold is None or pred is None:
        return gold is None and pred is None
    return _match(gold, pred)


def _keywords(query: SpiderSql) -> set[str]:
    """Spider's `get_keywords`: the clauses present, ORDER BY's direction, and or / not /
    in / like anywhere in the ON, WHERE and HAVING conditions."""
    words = {word for word, present in (
        ("where", query.where), ("group", query.group_by), ("having", query.having),
        ("order", query.order_by), (query.order, query.order_by), ("limit", query.limit),
        ("intersect", query.intersect), ("except", query.except_), ("union", query.union))
        if present}
    conditions = query.join + query.where + query.having
    units = _units(conditions)
    if "or" in _connectors(conditions):
        words.add("or")
    if any(unit[0] for unit in units):
        words.add("not")
    words.update(unit[1] for unit in units if unit[1] in ("in", "like"))
    return words
