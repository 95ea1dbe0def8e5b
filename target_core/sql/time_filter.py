"""A query's time filter taken out: every WHERE/HAVING conjunct that reads a time
column, removed, so two queries can be compared on everything but their time handling
(evaluation by error source, seed 002's "time" errors: `benchgen.error_sources`).
"""

from __future__ import annotations

from sqlglot import exp

from target_core.sql.structure import DIALECT, parse_sql


def _conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    """The AND-ed parts of a condition, looking through parentheses around an AND."""
    if isinstance(condition, exp.Paren) and isinstance(condition.this, exp.And):
        return _conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


def _references(condition: exp.Expression, column: str, qualifiers: set[str] | None) -> bool:
    """Whether `condition` itself (not a nested query) reads `column`: an unqualified
    column of that name, or one qualified by a name in `qualifiers` (None: any)."""
    for node in condition.walk(prune=lambda n: n is not condition and isinstance(n, exp.Query)):
        if (isinstance(node, exp.Column) and node.name.lower() == column
                and (qualifiers is None or not node.table or node.table.lower() in qualifiers)):
            return True
    return False


def without_time_filter(sql: str, time_column: str) -> tuple[str, int]:
    """`sql` without every WHERE/HAVING conjunct that references `time_column`, and how
    many conjuncts were removed (in every SELECT, subqueries included).

    `time_column` is "table.column" or "column". A qualified reference matches when its
    qualifier is the table's name or an alias given to that table; an unqualified one
    matches by name alone. Only top-level AND parts go: `a OR date > x` stays whole.
    Raises SqlParseError when `sql` does not parse.
    """
    tree = parse_sql(sql)
    table, _, column = time_column.lower().rpartition(".")
    qualifiers = None
    if table:
        qualifiers = {table} | {t.alias.lower() for t in tree.find_all(exp.Table)
                                if t.name.lower() == table and t.alias}
    removed = 0
    for select in list(tree.find_all(exp.Select)):
        for clause in ("where", "having"):
            node = select.args.get(clause)
            if node is None:
                continue
            parts = _conjuncts(node.this)
            kept = [p for p in parts if not _references(p, column, qualifiers)]
            if len(kept) < len(parts):
                removed += len(parts) - len(kept)
                select.set(clause, type(node)(this=exp.and_(*kept)) if kept else None)
    return tree.sql(dialect=DIALECT), removed
