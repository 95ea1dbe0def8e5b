"""Structure of a SQL query: which tables it reads, and how hard Spider says it is.

Gold tables for text-to-SQL datasets come from the gold SQL (DESIGN.md: "gold tables
come from the gold SQL's FROM/JOIN clauses"), so every loader and every analysis that
needs them calls `gold_tables` here instead of re-parsing SQL its own way. All functions
are pure and parse with sqlglot's SQLite dialect, the dialect of Spider and BIRD.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from target_core.errors import TargetError

DIALECT = "sqlite"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TOKEN = re.compile(r"<Token token_type: [^>]*?, text: (.*?), line: [^>]*>")


class SqlParseError(TargetError):
    """SQL that sqlglot cannot parse, or that names a table the database lacks."""


def parse_sql(sql: str) -> exp.Query:
    """Parse one SELECT-like statement (a trailing semicolon is fine).

    Raises SqlParseError with sqlglot's message reduced to one line, so a loader can
    put it into a DatasetError without a multi-line, colour-coded excerpt.
    """
    if not isinstance(sql, str) or not sql.strip():
        raise SqlParseError("the SQL is empty")
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except sqlglot.errors.ParseError as error:
        first = error.errors[0] if error.errors else {}
        reason = first.get("description") or _ANSI.sub("", str(error)).splitlines()[0]
        reason = _TOKEN.sub(lambda m: repr(m.group(1)), reason)
        where = f" (line {first['line']}, col {first['col']})" if "line" in first else ""
        raise SqlParseError(f"cannot parse SQL: {reason}{where}") from None
    except sqlglot.errors.SqlglotError as error:  # tokenizer errors, e.g. an open quote
        raise SqlParseError(f"cannot parse SQL: {_ANSI.sub('', str(error)).splitlines()[0]}") \
            from None
    if len(statements) != 1:
        raise SqlParseError(f"expected one SQL statement, found {len(statements)}")
    statement = statements[0]
    if not isinstance(statement, exp.Query):
        raise SqlParseError(f"expected a SELECT query, got {statement.key.upper()}")
    return statement


def _start(table: exp.Table) -> int:
    """Where the table's name starts in the SQL text (sqlglot keeps token positions)."""
    return int(table.this.meta.get("start", 0))


def referenced_tables(sql: str) -> list[str]:
    """Names of the tables a query reads, in order of first appearance in the text.

    Covers FROM, JOIN, subqueries anywhere and every branch of UNION/INTERSECT/EXCEPT.
    CTE names are not tables and are left out; table-valued functions (json_each) too.
    Duplicates are removed case-insensitively (SQLite names are), keeping the first
    spelling as written.
    """
    query = parse_sql(sql)
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    found = [t for t in query.find_all(exp.Table)
             if isinstance(t.this, exp.Identifier) and not (t.name.lower() in ctes and not t.db)]
    names: dict[str, str] = {}
    for table in sorted(found, key=_start):
        names.setdefault(table.name.lower(), table.name)
    return list(names.values())


def gold_tables(sql: str, known: Iterable[str]) -> list[str]:
    """The database's own spelling of each table `sql` reads, in order of appearance.

    Raises SqlParseError if the SQL does not parse or reads a table not in `known`.
    """
    by_lower: dict[str, str] = {}
    for name in known:
        by_lower.setdefault(name.lower(), name)
    result = []
    for name in referenced_tables(sql):
        if name.lower() not in by_lower:
            raise SqlParseError(f"table {name!r} is not in the database "
                                f"(tables: {', '.join(sorted(by_lower.values())) or 'none'})")
        result.append(by_lower[name.lower()])
    return result


# --- Spider hardness ---------------------------------------------------------------


@dataclass(frozen=True)
class HardnessCounts:
    """The three counts Spider's eval_hardness thresholds (see `spider_hardness`)."""

    component1: int
    component2: int
    others: int


def spider_hardness(sql: str) -> str:
    """Spider's official hardness: "easy", "medium", "hard" or "extra".

    Follows `Evaluator.eval_hardness` and its helpers `count_component1`,
    `count_component2` and `count_others` in Spider's evaluation script
    (github.com/taoyds/spider, evaluation.py; the parse it works on comes from
    process_sql.py), mapped from Spider's own SQL parse onto sqlglot's tree:

    - component1: WHERE, GROUP BY, ORDER BY and LIMIT present (1 each), one per joined
      table beyond the first (`len(table_units) - 1`, a FROM subquery is a table unit),
      one per OR and one per LIKE among the ON, WHERE and HAVING conditions.
    - component2: subqueries used as condition values in ON/WHERE/HAVING, plus one for
      a set operation (UNION/INTERSECT/EXCEPT); FROM subqueries do not count.
    - others: +1 if more than one "aggregation", +1 if more than one SELECT item,
      +1 if more than one WHERE condition, +1 if more than one GROUP BY column.

    Thresholds, as in Spider: easy if c1 <= 1, others == 0, c2 == 0; medium if
    (others <= 2, c1 <= 1, c2 == 0) or (c1 <= 2, others < 2, c2 == 0); hard if
    (others > 2, c1 <= 2, c2 == 0) or (2 < c1 <= 3, others <= 2, c2 == 0) or
    (c1 <= 1, others == 0, c2 <= 1); extra otherwise.

    Spider's quirks are kept so labels match its own: only the top-level query counts
    (set-operation branches and subqueries do not add their clauses); the aggregation
    count takes SELECT items, GROUP BY and ORDER BY aggregates, but for WHERE it counts
    negated conditions (NOT IN, NOT LIKE...), and for HAVING negated conditions plus
    each AND/OR connective, because Spider tests the first field of a condition tuple.
    A trailing ORDER BY/LIMIT after a set operation belongs to the last branch in
    Spider's parse, so it does not count either. Conditions are read as Spider reads
    them (`spider_conditions`: parentheses flattened, the OR-joined conditions after a
    column value not read).
    """
    counts = hardness_counts(sql)
    c1, c2, others = counts.component1, counts.component2, counts.others
    if c1 <= 1 and others == 0 and c2 == 0:
        return "easy"
    if (others <= 2 and c1 <= 1 and c2 == 0) or (c1 <= 2 and others < 2 and c2 == 0):
        return "medium"
    if ((others > 2 and c1 <= 2 and c2 == 0) or (2 < c1 <= 3 and others <= 2 and c2 == 0)
            or (c1 <= 1 and others == 0 and c2 <= 1)):
        return "hard"
    return "extra"


def hardness_counts(sql: str) -> HardnessCounts:
    """Spider's component1 / component2 / others counts for `sql` (see spider_hardness)."""
    node: exp.Expr = parse_sql(sql)
    set_operations = 0
    while True:  # Spider's top query is the leftmost SELECT; the rest is one nested IUEN
        if isinstance(node, exp.SetOperation):
            set_operations = 1
            node = node.this
        elif isinstance(node, exp.Subquery):
            node = node.this
        else:
            break
    if not isinstance(node, exp.Select):
        raise SqlParseError(f"cannot rate the hardness of a {node.key.upper()} query")

    on_units: list[exp.Expr] = []
    on_connectives: list[str] = []
    joins = node.args.get("joins") or []
    for join in joins:
        on = join.args.get("on")
        if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
            units, connectives, _ = spider_conditions(on)
            if on_units:
                on_connectives.append("and")  # Spider joins ON clauses with 'and'
            on_units += units
            on_connectives += connectives
    where_units, where_connectives, _ = spider_conditions(_clause(node, "where"))
    having_units, having_connectives, _ = spider_conditions(_clause(node, "having"))
    group = node.args.get("group")
    group_items = list(group.expressions) if group else []
    order = node.args.get("order")
    order_items = [o.this if isinstance(o, exp.Ordered) else o
                   for o in (order.expressions if order else [])]
    table_units = (1 if node.args.get("from_") else 0) + len(joins)
    conditions = on_units + where_units + having_units

    component1 = sum((bool(where_units), bool(group_items), bool(order_items),
                      node.args.get("limit") is not None))
    component1 += max(table_units - 1, 0)
    component1 += (on_connectives + where_connectives + having_connectives).count("or")
    component1 += sum(1 for unit in conditions if _is_like(unit))

    component2 = set_operations + sum(_count_subqueries(unit) for unit in conditions)

    aggregations = sum(1 for item in node.expressions if _has_aggregate(item))
    aggregations += sum(1 for unit in where_units if _is_negated(unit))
    aggregations += sum(1 for item in group_items if _has_aggregate(item))
    aggregations += sum(_count_aggregates(item) for item in order_items)
    aggregations += sum(1 for unit in having_units if _is_negated(unit))
    aggregations += len(having_connectives)
    others = sum((aggregations > 1, len(node.expressions) > 1, len(where_units) > 1,
                  len(group_items) > 1))
    return HardnessCounts(component1, component2, others)


def _clause(node: exp.Select, name: str) -> exp.Expr | None:
    clause = node.args.get(name)
    return clause.this if clause is not None else None


def spider_conditions(condition: exp.Expr | None
                      ) -> tuple[list[exp.Expr], list[str], list[exp.Expr]]:
    """A boolean tree as Spider's parser reads it: (condition units, their 'and'/'or'
    connectors, the units it does not read).

    Units come in written order, through parentheses (Spider cannot read those at all).
    Spider's value reader takes a column value (`a = b`, `a > b + 1`) as the tokens up
    to the next AND, comma, closing parenthesis or clause keyword, so the OR-joined
    conditions after it are swallowed: `a = b OR c > 1 AND d = 2` reads as `a = b AND
    d = 2`. Those swallowed units are the third list.
    """
    units: list[exp.Expr] = []
    connectors: list[str] = []
    swallowed: list[exp.Expr] = []
    reading_on = False
    for connector, unit in _written(condition, None):
        if reading_on and connector == "or":
            swallowed.append(unit)
            continue
        if units:
            connectors.append(connector or "and")
        units.append(unit)
        reading_on = _value_is_column(unit)
    return units, connectors, swallowed


def _written(condition: exp.Expr | None, connector: str | None
             ) -> list[tuple[str | None, exp.Expr]]:
    """(connector before it, unit) pairs in written order."""
    if condition is None:
        return []
    if isinstance(condition, exp.Paren):
        return _written(condition.this, connector)
    if isinstance(condition, (exp.And, exp.Or)):
        op = "and" if isinstance(condition, exp.And) else "or"
        return _written(condition.this, connector) + _written(condition.expression, op)
    return [(connector, condition)]


def _value_is_column(unit: exp.Expr) -> bool:
    """Whether a condition's (last) value is a column, which Spider reads on past."""
    if isinstance(unit, exp.Not):
        unit = unit.this
    if isinstance(unit, exp.In):
        return False
    value = unit.args.get("high" if isinstance(unit, exp.Between) else "expression")
    while isinstance(value, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        value = value.this
    return (isinstance(value, exp.Column) and isinstance(value.this, exp.Identifier)
            and not (value.this.quoted and not value.table))  # "x" is a string to Spider


def _is_negated(unit: exp.Expr) -> bool:
    return isinstance(unit, exp.Not) or bool(unit.args.get("negate"))


def _is_like(unit: exp.Expr) -> bool:
    inner = unit.this if isinstance(unit, exp.Not) else unit
    return isinstance(inner, exp.Like)


def _outside_subqueries(node: exp.Expr) -> Iterable[exp.Expr]:
    """Nodes of `node` that are not inside a nested query."""
    return node.walk(prune=lambda n: n is not node and isinstance(n, exp.Query))


def _count_subqueries(node: exp.Expr) -> int:
    return sum(1 for n in _outside_subqueries(node) if n is not node and isinstance(n, exp.Query))


def _count_aggregates(node: exp.Expr) -> int:
    return sum(1 for n in _outside_subqueries(node) if isinstance(n, exp.AggFunc))


def _has_aggregate(node: exp.Expr) -> bool:
    return _count_aggregates(node) > 0
