"""Spider's reading of a query: the form its official exact set match compares.

Spider's evaluator (github.com/taoyds/test-suite-sql-eval, `process_sql.py`) reads a
query into a small fixed grammar: SELECT items of (aggregate, column [op column]),
FROM tables joined by JOIN ... ON, flat AND/OR condition lists, GROUP BY columns,
HAVING, ORDER BY with one direction, LIMIT, and one INTERSECT / UNION / EXCEPT tail.
Every column is resolved against the database (`table.column`, `*` for a star). This
module builds that same form (`SpiderSql`) from sqlglot's tree and a `SqlSchema`, and
raises `OutsideSpiderGrammar` for what Spider's parser cannot read: LEFT/INNER/CROSS
and comma joins, USING, column aliases, IS [NOT] NULL, IN with a list of several values,
EXISTS, CASE, other functions, parenthesized conditions, a literal on the left of a
comparison, ORDER BY a position, UNION ALL, WITH, aliased FROM subqueries, an alias
spelled like a table.

Spider's own reading rules are kept where they change a verdict:

- Table aliases are one map for the whole query, the last `AS` of a name winning, so a
  subquery that reuses the outer alias `T1` for another table re-points the outer `T1`.
- An unqualified column belongs to the first table of its own SELECT's FROM (ON: the
  tables joined so far) that has it.
- `ORDER BY a DESC, b ASC` has one direction, the last one written (default asc).
- A trailing ORDER BY / LIMIT of a set operation belongs to its last SELECT; a top-level
  OFFSET is ignored, a nested one is not readable.
- Values: strings keep their case, numbers are floats; a column as a value (`a = b`)
  is that column, and Spider's value reader then runs on to the next AND, so the
  OR-joined conditions after it are not read.
- `SELECT (MAX(a))` is not `SELECT MAX(a)`: the aggregate sits in the column, not the item.
- What only the spelling shows is checked on sqlglot's tokens: `<>`, `==`, a NOT before
  a condition, identifiers quoted with ` or [], a table alias without AS.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from target_core.sql.schema import SqlSchema
from target_core.sql.spider_form import (
    ColUnit,
    Condition,
    CondUnit,
    SpiderSql,
    TableUnit,
    Value,
    ValUnit,
    check_spelling,
    outside,
    table_aliases,
)
from target_core.sql.structure import parse_sql, spider_conditions

_AGGREGATES: dict[type[exp.Expr], str] = {exp.Max: "max", exp.Min: "min", exp.Count: "count",
                                          exp.Sum: "sum", exp.Avg: "avg"}
_ARITHMETIC: dict[type[exp.Expr], str] = {exp.Sub: "-", exp.Add: "+", exp.Mul: "*",
                                          exp.Div: "/"}
_OPERATORS: dict[type[exp.Expr], str] = {
    exp.EQ: "=", exp.GT: ">", exp.LT: "<", exp.GTE: ">=", exp.LTE: "<=", exp.NEQ: "!=",
    exp.In: "in", exp.Like: "like", exp.Between: "between"}
_NEGATABLE = (exp.In, exp.Like, exp.Between)
_SET_OPERATIONS: dict[type[exp.Expr], str] = {exp.Union: "union", exp.Intersect: "intersect",
                                              exp.Except: "except_"}
_SELECT_ARGS = frozenset({"expressions", "distinct", "from_", "joins", "where", "group",
                          "having", "order", "limit", "offset"})


def spider_parse(sql: str, schema: SqlSchema) -> SpiderSql:
    """Spider's reading of `sql` against `schema`.

    Raises SqlParseError if sqlglot cannot parse it, OutsideSpiderGrammar (a subclass)
    if Spider's parser could not read it or it names a table or column `schema` lacks.
    """
    tree = parse_sql(sql)
    check_spelling(sql, tree)
    return _Reader(schema, table_aliases(tree, schema)).query(tree, top=True)


def _strip(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


class _Reader:
    def __init__(self, schema: SqlSchema, aliases: dict[str, str]) -> None:
        self.schema = schema
        self.aliases = aliases

    # --- queries ---------------------------------------------------------------------

    def query(self, node: exp.Expr, *, top: bool = False) -> SpiderSql:
        if isinstance(node, exp.Subquery) and not node.alias and top:
            node = node.this  # a whole query in parentheses
        if isinstance(node, exp.Select):
            return self._select(node, node, top=top)
        if type(node) not in _SET_OPERATIONS:
            raise outside(f"a {node.key.upper()} query")
        if node.args.get("with_") is not None:
            raise outside("WITH")
        branches: list[exp.Select] = []
        operations: list[str] = []
        self._chain(node, node, branches, operations)
        result: SpiderSql | None = None
        for index in reversed(range(len(branches))):
            last = index == len(branches) - 1
            modifiers = node if last and not isinstance(branches[index].parent, exp.Subquery) \
                else branches[index]
            if last and modifiers is not node and _has_modifiers(node):
                raise outside("ORDER BY / LIMIT after a parenthesized SELECT")
            current = self._select(branches[index], modifiers, top=top and last)
            if result is not None:
                current = _attach(current, operations[index], result)
            result = current
        assert result is not None  # a set operation has two sides
        return result

    def _chain(self, node: exp.Expr, root: exp.Expr, branches: list[exp.Select],
               operations: list[str]) -> None:
        """A set operation's SELECTs and operators in written order (Spider nests them
        to the right whatever sqlglot's grouping)."""
        if type(node) in _SET_OPERATIONS:
            if not node.args.get("distinct"):
                raise outside(f"{node.key.upper()} ALL")
            if node is not root and _has_modifiers(node):
                raise outside("ORDER BY / LIMIT inside a set operation")
            self._chain(node.this, root, branches, operations)
            operations.append(_SET_OPERATIONS[type(node)])
            self._chain(node.expression, root, branches, operations)
            return
        inner = node.this if isinstance(node, exp.Subquery) and not node.alias else node
        if type(inner) in _SET_OPERATIONS:  # sqlglot's grouping by precedence (INTERSECT
            self._chain(inner, root, branches, operations)  # first); written ones are
            return  # refused by check_spelling
        if not isinstance(inner, exp.Select):
            raise outside(f"a {inner.key.upper()} in a set operation")
        branches.append(inner)

    def _select(self, node: exp.Select, modifiers: exp.Expr, *, top: bool) -> SpiderSql:
        for key, value in node.args.items():
            if key not in _SELECT_ARGS and value not in (None, False, []):
                raise outside(f"{key.rstrip('_').upper()} in a SELECT")
        if modifiers.args.get("offset") is not None and not top:
            raise outside("OFFSET in a subquery")
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            raise outside("DISTINCT ON")
        tables, join, default = self._from(node)
        group = node.args.get("group")
        if group is not None and any(v for k, v in group.args.items() if k != "expressions"):
            raise outside("GROUPING SETS / ROLLUP / CUBE")
        order_direction, order_by = self._order(modifiers.args.get("order"), default)
        return SpiderSql(
            distinct=distinct is not None,
            select=tuple(self._select_item(item, default) for item in node.expressions),
            tables=tables, join=join,
            where=self._clause(node.args.get("where"), default),
            group_by=tuple(self._col_unit(g, default) for g in group.expressions)
            if group is not None else (),
            having=self._clause(node.args.get("having"), default),
            order=order_direction, order_by=order_by,
            limit=modifiers.args.get("limit") is not None)

    def _from(self, node: exp.Select) -> tuple[tuple[TableUnit, ...], Condition, list[str]]:
        from_ = node.args.get("from_")
        if from_ is None:
            raise outside("a SELECT without FROM")
        joins = node.args.get("joins") or []
        units: list[TableUnit] = []
        join: Condition = ()
        default: list[str] = []  # Spider's "default tables": this FROM's tables so far
        for index, source in enumerate([from_.this] + [j.this for j in joins]):
            if isinstance(source, exp.Table):
                name = self._table(source)
                units.append(("table", name))
                default.append(name)
            elif isinstance(source, exp.Subquery) and not source.alias:
                units.append(("sql", self.query(source.this)))
            else:
                raise outside("this FROM item (a function, or an aliased subquery)")
            if index == 0:
                continue
            spec = joins[index - 1]
            if any(v for k, v in spec.args.items() if k not in ("this", "on")):
                raise outside("LEFT / INNER / CROSS / comma joins and USING")
            on = spec.args.get("on")
            if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
                join = join + (("and",) if join else ()) + self._condition(on, list(default))
        return tuple(units), join, default

    def _table(self, table: exp.Table) -> str:
        if not isinstance(table.this, exp.Identifier) or table.this.quoted or table.args.get("db"):
            raise outside("a quoted, schema-qualified or computed table name")
        name = table.name.lower()
        if name not in self.schema.tables:
            raise outside(f"no table {name!r} in the database")
        alias = table.args.get("alias")
        if alias is not None and alias.args.get("columns"):
            raise outside("a table alias with column names")
        return name

    # --- clauses ---------------------------------------------------------------------

    def _select_item(self, item: exp.Expr, default: list[str]) -> tuple[str, ValUnit]:
        if isinstance(item, exp.Alias):
            raise outside("a column alias (AS) in SELECT")
        aggregate = _AGGREGATES.get(type(item))
        if aggregate is None:
            operator = _ARITHMETIC.get(type(item))
            if operator is not None and type(_strip(item.this)) in _AGGREGATES:
                raise outside("arithmetic on an aggregate in SELECT")
            return "", self._val_unit(item, default)
        inner, distinct = _aggregated(item)
        op, left, right = self._val_unit(inner, default)
        return aggregate, (op, (left[0], left[1], distinct or left[2]), right)

    def _order(self, order: exp.Expr | None, default: list[str]
               ) -> tuple[str, tuple[ValUnit, ...]]:
        if order is None:
            return "", ()
        direction, units = "asc", []
        for item in order.expressions:
            units.append(self._val_unit(item.this if isinstance(item, exp.Ordered) else item,
                                        default))
            desc = item.args.get("desc")
            if desc is not None:  # written: ASC is False, DESC True; unwritten keeps the last
                direction = "desc" if desc else "asc"
        return direction, tuple(units)

    def _clause(self, clause: exp.Expr | None, default: list[str]) -> Condition:
        return () if clause is None else self._condition(clause.this, default)

    def _condition(self, node: exp.Expr, default: list[str]) -> Condition:
        """A boolean tree as Spider's flat list, in written order (`spider_conditions`)."""
        pending = [node]
        while pending:
            current = pending.pop()
            if isinstance(current, exp.Paren):
                raise outside("parentheses around conditions")
            if isinstance(current, (exp.And, exp.Or)):
                pending += [current.this, current.expression]
        units, connectors, swallowed = spider_conditions(node)
        for unit in swallowed:
            if unit.find(exp.Query, exp.Between, exp.Paren, exp.In) is not None:
                raise outside("a condition after `column = column OR` that Spider misreads")
        result: list[CondUnit | str] = [self._cond_unit(units[0], default)]
        for connector, unit in zip(connectors, units[1:], strict=True):
            result += [connector, self._cond_unit(unit, default)]
        return tuple(result)

    def _cond_unit(self, node: exp.Expr, default: list[str]) -> CondUnit:
        negated = isinstance(node, exp.Not)
        if negated:
            node = node.this
            if not isinstance(node, _NEGATABLE):
                raise outside("NOT before a condition (only NOT IN / LIKE / BETWEEN)")
        if node.args.get("negate"):  # sqlglot's spelling of `a NOT LIKE b`
            if negated:
                raise outside("NOT twice")
            negated = True
        operator = _OPERATORS.get(type(node))
        if operator is None:
            raise outside(f"the condition {node.key.upper()}")
        left = self._val_unit(node.this, default)
        second: Value = None
        if operator == "between":
            first = self._value(node.args["low"], default)
            second = self._value(node.args["high"], default)
        elif operator == "in":
            query, values = node.args.get("query"), node.expressions
            if query is not None and not values:
                first = self._value(query, default)
            elif query is None and len(values) == 1 and isinstance(values[0], exp.Literal):
                first = self._value(values[0], default)
            else:
                raise outside("IN with a list of values")
        else:
            first = self._value(node.expression, default)
        return negated, operator, left, first, second

    # --- values, columns -------------------------------------------------------------

    def _value(self, node: exp.Expr, default: list[str]) -> Value:
        if isinstance(node, exp.Subquery) and not node.alias:
            return self.query(node.this)
        if isinstance(node, exp.Paren) and isinstance(node.this, exp.Literal):
            node = node.this
        number = node.this if isinstance(node, exp.Neg) else node
        if isinstance(number, exp.Literal):
            if number.is_string:
                if node is not number:
                    raise outside("a negated string")
                return f'"{number.this}"'
            try:
                value = float(number.this)
            except ValueError:
                raise outside(f"the number {number.this!r}") from None
            return -value if node is not number else value
        if isinstance(node, exp.Column) and node.this.quoted and not node.table:
            return f'"{node.name}"'  # "Oslo": a string to Spider, an identifier to sqlglot
        while type(node) in _ARITHMETIC:  # Spider reads the first column and skips the rest
            node = node.this
        if isinstance(node, exp.Column):
            return self._col_unit(node, default)
        raise outside(f"the value {node.sql(dialect='sqlite')!r}")

    def _val_unit(self, node: exp.Expr, default: list[str]) -> ValUnit:
        node = _strip(node)
        operator = _ARITHMETIC.get(type(node))
        if operator is None:
            return "", self._col_unit(node, default), None
        return operator, self._col_unit(node.this, default), self._col_unit(node.expression,
                                                                              default)

    def _col_unit(self, node: exp.Expr, default: list[str]) -> ColUnit:
        node = _strip(node)
        aggregate = _AGGREGATES.get(type(node))
        if aggregate is None:
            return "", self._column(node, default), False
        inner, distinct = _aggregated(node)
        return aggregate, self._column(_strip(inner), default), distinct

    def _column(self, node: exp.Expr, default: list[str]) -> str:
        if isinstance(node, exp.Star):
            return "*"
        if not isinstance(node, exp.Column):
            raise outside(f"{node.sql(dialect='sqlite')!r} where a column belongs")
        if isinstance(node.this, exp.Star):
            if node.table:
                raise outside("table.*")
            return "*"
        qualifier = node.args.get("table")
        if node.this.quoted or (qualifier is not None and qualifier.quoted) \
                or node.args.get("db"):
            raise outside("a quoted or schema-qualified column")
        name = node.name.lower()
        if qualifier is not None:
            table = self.aliases.get(node.table.lower())
            if table is None or name not in self.schema.tables.get(table, ()):
                raise outside(f"no column {node.table}.{node.name}")
            return f"{table}.{name}"
        for table in default:
            if name in self.schema.tables[table]:
                return f"{table}.{name}"
        raise outside(f"no column {node.name!r} in {', '.join(default) or 'no table'}")


def _aggregated(node: exp.Expr) -> tuple[exp.Expr, bool]:
    """An aggregate's argument and whether it is DISTINCT."""
    if node.args.get("expressions"):
        raise outside(f"{node.key.upper()} with several arguments")
    inner = node.this
    if inner is None:
        raise outside(f"{node.key.upper()}()")
    if isinstance(inner, exp.Distinct):
        if len(inner.expressions) != 1:
            raise outside("DISTINCT over several columns")
        return inner.expressions[0], True
    return inner, False


def _attach(query: SpiderSql, operation: str, tail: SpiderSql) -> SpiderSql:
    if operation == "union":
        return replace(query, union=tail)
    if operation == "intersect":
        return replace(query, intersect=tail)
    return replace(query, except_=tail)


def _has_modifiers(node: exp.Expr) -> bool:
    return any(node.args.get(key) is not None for key in ("order", "limit", "offset"))
