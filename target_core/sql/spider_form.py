"""The form of Spider's reading of a query, and what is read off its tokens.

`spider_parse` builds a `SpiderSql` from sqlglot's tree; this module holds that form
(the shapes of test-suite-sql-eval's `process_sql.py`, as tuples and a frozen
dataclass, so readings compare with ==), `OutsideSpiderGrammar`, and the two things
taken from the SQL text rather than the tree: what Spider's tokenizer cannot read
(`check_spelling`) and its one alias map for the whole query (`table_aliases`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from target_core.sql.schema import SqlSchema
from target_core.sql.structure import DIALECT, SqlParseError

ColUnit = tuple[str, str, bool | None]  # (aggregate or "", "table.column" or "*", DISTINCT)
ValUnit = tuple[str, ColUnit, ColUnit | None]  # (arithmetic operator or "", left, right)
Value = Union[None, float, str, ColUnit, "SpiderSql"]  # a string keeps its quotes: '"Oslo"'
CondUnit = tuple[bool, str, ValUnit, Value, Value]  # (NOT, operator, left side, value, value 2)
Condition = tuple[CondUnit | str, ...]  # units alternating with "and" / "or"
TableUnit = tuple[str, Union[str, "SpiderSql"]]  # ("table", name) or ("sql", subquery)


class OutsideSpiderGrammar(SqlParseError):
    """SQL that Spider's parser cannot read (`spider_parse`'s docstring lists what)."""


@dataclass(frozen=True)
class SpiderSql:
    """One SELECT as Spider reads it; a set operation hangs off its first SELECT."""

    distinct: bool | None
    select: tuple[tuple[str, ValUnit], ...]  # (aggregate or "", value)
    tables: tuple[TableUnit, ...]
    join: Condition  # the ON conditions, joined by "and"
    where: Condition
    group_by: tuple[ColUnit, ...]
    having: Condition
    order: str  # "asc" / "desc"; "" without ORDER BY
    order_by: tuple[ValUnit, ...]
    limit: bool
    intersect: SpiderSql | None = None
    union: SpiderSql | None = None
    except_: SpiderSql | None = None


def outside(what: str) -> OutsideSpiderGrammar:
    return OutsideSpiderGrammar(f"outside Spider's SQL grammar: {what}")


_SET_OPERATION_TOKENS = frozenset({TokenType.UNION, TokenType.INTERSECT, TokenType.EXCEPT})
_BEFORE_PREFIX_NOT = frozenset({TokenType.WHERE, TokenType.AND, TokenType.OR, TokenType.ON,
                                TokenType.HAVING, TokenType.L_PAREN})


def check_spelling(sql: str, tree: exp.Expr) -> None:
    """What Spider's tokenizer cannot read but sqlglot's tree does not show: `<>` and
    `==`, NOT before a condition (`NOT a IN ...`), identifiers quoted with ` or [],
    a table alias without AS, and a set operation in parentheses where Spider expects
    one SELECT: `(A UNION B) ...` at the start, `... UNION (B EXCEPT C)` after one."""
    tokens = sqlglot.tokenize(sql, read=DIALECT)
    for index, token in enumerate(tokens):
        if token.text in ("<>", "=="):
            raise outside(f"{token.text} (Spider reads = and !=)")
        if token.token_type is TokenType.NOT and (
                index == 0 or tokens[index - 1].token_type in _BEFORE_PREFIX_NOT):
            raise outside("NOT before a condition (only NOT IN / LIKE / BETWEEN)")
        if token.token_type is TokenType.IDENTIFIER and sql[token.start] != '"':
            raise outside("an identifier quoted with ` or []")
        if token.token_type is TokenType.L_PAREN and (
                index == 0 or tokens[index - 1].token_type in _SET_OPERATION_TOKENS) \
                and _holds_set_operation(tokens, index):
            raise outside("a set operation inside parentheses")
    after_as = {token.start for before, token in zip(tokens, tokens[1:], strict=False)
                if before.token_type is TokenType.ALIAS}
    for table in tree.find_all(exp.Table):
        alias = table.args.get("alias")
        if alias is not None and alias.name and alias.this.meta.get("start") not in after_as:
            raise outside("a table alias without AS")


def _holds_set_operation(tokens: list[Token], opening: int) -> bool:
    """Whether the parentheses opened at `opening` hold UNION / INTERSECT / EXCEPT at
    their own level (Spider reads a parenthesized query there as a single SELECT)."""
    depth = 0
    for token in tokens[opening:]:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return False
        elif depth == 1 and token.token_type in _SET_OPERATION_TOKENS:
            return True
    return False


def table_aliases(tree: exp.Expr, schema: SqlSchema) -> dict[str, str]:
    """Alias -> table for the whole query, in the order written (Spider's `scan_alias`)."""
    found: list[tuple[int, str, str]] = []
    for node in tree.find_all(exp.Table):
        alias = node.args.get("alias")
        if alias is not None and alias.name:
            found.append((int(alias.this.meta.get("start", 0)), alias.name.lower(),
                          node.name.lower()))
    names: dict[str, str] = {}
    for _, name, table in sorted(found):
        if name in schema.tables:
            raise outside(f"the alias {name!r} is also a table's name")
        names[name] = table
    names.update({table: table for table in schema.tables})
    return names
