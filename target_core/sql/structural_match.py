"""Structural exact set match: the comparison used where Spider's rules cannot run.

`exact_set_match` (exact_match.py) follows Spider's official rules when it has the
database's schema and the gold query is within Spider's grammar; otherwise (no schema,
or a gold query with LEFT JOIN, CASE, IS NULL...) it calls `structural_match` here. It
works from sqlglot's tree alone: both queries are reduced to a *signature*, a nested
tuple in which every order-free clause is sorted, and they match when the signatures are
equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from target_core.sql.structure import SqlParseError, parse_sql

VALUE = "?"  # what every literal becomes: values are not part of the match

# `1 < a` and `a > 1` are the same condition: flip comparisons so the column comes first.
_FLIPPED: dict[type[exp.Expr], str] = {exp.GT: "lt", exp.GTE: "lte", exp.LT: "gt", exp.LTE: "gte"}
_SYMMETRIC = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ)


def structural_match(gold_sql: str, pred_sql: str) -> bool:
    """True when both queries have the same clauses, compared as sets, values ignored.

    Rules (everything is case-insensitive):

    - Every literal (number, string, boolean, `?`, negative number) is the same value,
      so `a > 1` matches `a > 5`; an `IN (...)` list of literals is one value however
      long it is. `LIMIT n` and `OFFSET n` count by presence only.
    - DISTINCT is ignored, in SELECT and inside aggregates (Spider ignores it too).
    - Table aliases are resolved: `T1.name` becomes `teams.name`, and when a query
      reads a single table the qualifier is dropped, so `SELECT t.name FROM teams AS t`
      matches `SELECT name FROM teams`. Column aliases in SELECT are dropped, and an
      ORDER BY / GROUP BY / HAVING that names a SELECT alias or position (`ORDER BY 1`)
      means that SELECT expression.
    - SELECT expressions: a multiset (order free, but `SELECT a, a` has two columns).
      FROM: the multiset of tables and FROM-subqueries, joined ones included; the join
      type is not compared. Join conditions: the set of ON conjuncts and USING columns.
      WHERE and HAVING: the set of their top-level AND conjuncts (`a > 1 AND b = 'x'`
      matches `b = 'y' AND a > 5`). GROUP BY: a set. ORDER BY: the list of (expression,
      direction). WITH: the set of named CTE signatures.
    - Inside an expression, AND/OR operands are order free, `=`/`!=` are symmetric and
      `1 < a` equals `a > 1`; anything else must have the same shape (function, CASE...).
    - UNION / INTERSECT / EXCEPT: the operator (UNION ALL differs from UNION) and both
      sides matched recursively; UNION and INTERSECT sides may be swapped, EXCEPT's not.
      Subqueries anywhere (FROM, IN, EXISTS, scalar) are matched recursively.

    Without a schema, unqualified columns are not resolved: in a query that joins
    tables, `name` and `T1.name` differ. Self-joins map both aliases to the same table
    name. Either SQL failing to parse (or not being a query) gives False.
    """
    try:
        gold, pred = parse_sql(gold_sql), parse_sql(pred_sql)
    except SqlParseError:
        return False
    return _signature(gold, None) == _signature(pred, None)


@dataclass(frozen=True)
class _Scope:
    """Names visible to one SELECT: alias -> canonical source, and its outer scope."""

    aliases: dict[str, str] = field(default_factory=dict)
    single: bool = True  # one source: qualifiers carry no information
    parent: _Scope | None = None


_TOP = _Scope()


def _signature(node: exp.Expr, parent: _Scope | None) -> tuple[Any, ...]:
    """The comparable form of a query node (SELECT, set operation or subquery)."""
    if isinstance(node, exp.Subquery):
        return _signature(node.this, parent)
    if isinstance(node, exp.SetOperation):
        sides: tuple[tuple[Any, ...], ...] = (_signature(node.this, parent),
                                              _signature(node.expression, parent))
        if not isinstance(node, exp.Except):
            sides = tuple(sorted(sides, key=repr))
        order = _order(node, _TOP, {}, [])
        return ("setop", node.key, bool(node.args.get("distinct")), sides, order,
                node.args.get("limit") is not None, node.args.get("offset") is not None,
                _ctes(node, parent))
    if isinstance(node, exp.Select):
        return _select_signature(node, parent)
    return ("other", _expr(node, parent or _TOP))


def _select_signature(node: exp.Select, parent: _Scope | None) -> tuple[Any, ...]:
    sources: list[str] = []
    aliases: dict[str, str] = {}
    from_ = node.args.get("from_")
    joins = node.args.get("joins") or []
    for source in ([from_.this] if from_ is not None else []) + [j.this for j in joins]:
        canonical = _source(source, parent)
        sources.append(canonical)
        if isinstance(source, exp.Table) and source.name:
            aliases[source.name.lower()] = canonical
        if source.alias:
            aliases[source.alias.lower()] = canonical
    scope = _Scope(aliases, len(sources) <= 1, parent)

    items = list(node.expressions)
    outputs = {item.alias.lower(): item.this for item in items if isinstance(item, exp.Alias)}
    join_conditions: set[str] = set()
    for join in joins:
        if join.args.get("on") is not None:
            join_conditions |= {_expr(c, scope) for c in _conjuncts(join.args["on"])}
        join_conditions |= {f"using:{_expr(c, scope)}" for c in join.args.get("using") or []}
    group = node.args.get("group")
    return (
        "select",
        tuple(sorted(_expr(item, scope) for item in items)),
        tuple(sorted(sources)),
        tuple(sorted(join_conditions)),
        _condition_set(node.args.get("where"), scope, {}),
        tuple(sorted({_output(g, scope, outputs, items) for g in group.expressions}))
        if group is not None else (),
        _condition_set(node.args.get("having"), scope, outputs),
        _order(node, scope, outputs, items),
        node.args.get("limit") is not None,
        node.args.get("offset") is not None,
        _ctes(node, parent),
    )


def _source(source: exp.Expr, parent: _Scope | None) -> str:
    """A FROM item's canonical name: the table's name, or a subquery's signature."""
    if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
        return source.name.lower()
    if isinstance(source, exp.Subquery):
        return repr(_signature(source.this, parent))
    return _expr(source.this if isinstance(source, exp.Table) else source, parent or _TOP)


def _ctes(node: exp.Expr, parent: _Scope | None) -> tuple[tuple[str, str], ...]:
    with_ = node.args.get("with_")
    if with_ is None:
        return ()
    return tuple(sorted((cte.alias.lower(), repr(_signature(cte.this, parent)))
                        for cte in with_.expressions))


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """Top-level AND operands, through parentheses: `(a AND b) AND c` -> [a, b, c]."""
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


def _condition_set(clause: exp.Expr | None, scope: _Scope,
                   outputs: dict[str, exp.Expr]) -> tuple[str, ...]:
    if clause is None:
        return ()
    return tuple(sorted({_expr(c, scope, outputs) for c in _conjuncts(clause.this)}))


def _order(node: exp.Expr, scope: _Scope, outputs: dict[str, exp.Expr],
           items: list[exp.Expr]) -> tuple[tuple[str, bool], ...]:
    order = node.args.get("order")
    if order is None:
        return ()
    result = []
    for item in order.expressions:
        inner = item.this if isinstance(item, exp.Ordered) else item
        result.append((_output(inner, scope, outputs, items), bool(item.args.get("desc"))))
    return tuple(result)


def _output(node: exp.Expr, scope: _Scope, outputs: dict[str, exp.Expr],
            items: list[exp.Expr]) -> str:
    """An ORDER BY / GROUP BY item; a position (`ORDER BY 2`) means that SELECT item."""
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        position = int(node.name)
        if 1 <= position <= len(items):
            return _expr(items[position - 1], scope)
    return _expr(node, scope, outputs)


def _is_value(node: exp.Expr) -> bool:
    if isinstance(node, (exp.Paren, exp.Neg)):
        return _is_value(node.this)
    return isinstance(node, (exp.Literal, exp.Boolean, exp.Placeholder))


def _column(column: exp.Column, scope: _Scope) -> str:
    name = "*" if isinstance(column.this, exp.Star) else column.name.lower()
    qualifier = column.table.lower()
    if not qualifier:
        return name
    current: _Scope | None = scope
    while current is not None:
        if qualifier in current.aliases:
            if current is scope and scope.single:
                return name
            return f"{current.aliases[qualifier]}.{name}"
        current = current.parent
    return f"{qualifier}.{name}"


def _expr(node: exp.Expr, scope: _Scope,
          outputs: dict[str, exp.Expr] | None = None) -> str:
    """A canonical string for an expression: values masked, names resolved, order-free
    operators sorted. `outputs` maps SELECT aliases, for ORDER BY / GROUP BY / HAVING."""
    def sub(child: exp.Expr) -> str:
        return _expr(child, scope, outputs)

    if isinstance(node, (exp.Paren, exp.Alias)):
        return sub(node.this)
    if isinstance(node, exp.Distinct) and len(node.expressions) == 1:  # COUNT(DISTINCT a)
        return sub(node.expressions[0])
    if _is_value(node):
        return VALUE
    if isinstance(node, exp.Column):
        if outputs and not node.table and node.name.lower() in outputs:
            return _expr(outputs[node.name.lower()], scope)
        return _column(node, scope)
    if isinstance(node, exp.Identifier):
        return node.name.lower()
    if isinstance(node, exp.Star):
        return "*"
    if isinstance(node, exp.Query):
        return repr(_signature(node, scope))
    if isinstance(node, exp.Connector):  # AND / OR: flatten the chain, operands as a set
        kind = type(node)
        operands: list[exp.Expr] = []
        pending = [node]
        while pending:
            current = pending.pop()
            while isinstance(current, exp.Paren):
                current = current.this
            if isinstance(current, kind):
                pending += [current.this, current.expression]
            else:
                operands.append(current)
        return f"{node.key}({','.join(sorted({sub(o) for o in operands}))})"
    if isinstance(node, _SYMMETRIC):
        left, right = sorted((sub(node.this), sub(node.expression)))
        return f"{node.key}({left},{right})"
    if type(node) in _FLIPPED:
        if _is_value(node.this) and not _is_value(node.expression):
            return f"{_FLIPPED[type(node)]}({sub(node.expression)},{VALUE})"
        return f"{node.key}({sub(node.this)},{sub(node.expression)})"
    if isinstance(node, exp.In) and node.expressions and all(map(_is_value, node.expressions)):
        return f"in({sub(node.this)},{VALUE})"
    parts = []
    for key in node.arg_types:
        value = node.args.get(key)
        if value is None or value is False or value == []:
            continue
        parts.append(f"{key}={_arg(value, sub)}")
    return f"{node.key}({';'.join(parts)})"


def _arg(value: Any, sub: Any) -> str:
    if isinstance(value, list):
        return "[" + ",".join(_arg(v, sub) for v in value) + "]"
    if isinstance(value, exp.Expression):
        return sub(value)
    return str(value).lower()
