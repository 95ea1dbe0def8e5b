"""Exact set match (the `exact_set_match` metric): Spider's official rules where they apply.

Spider's exact set match compares two queries clause by clause, values ignored, after
reading both against the database's schema. With the schema (`SqlSchema`, from
`read_schema(path)`), this follows test-suite-sql-eval's `evaluation.py` exactly
(`spider_parse` reads a query as Spider's parser does, `spider_match` applies its rules);
without one, or for a gold query outside Spider's grammar, where the official script has
no verdict, it falls back to `structural_match`.
"""

from __future__ import annotations

from target_core.sql.schema import SqlSchema
from target_core.sql.spider_match import spider_exact_match
from target_core.sql.spider_parse import spider_parse
from target_core.sql.structural_match import structural_match
from target_core.sql.structure import SqlParseError


def exact_set_match(gold_sql: str, pred_sql: str, *, schema: SqlSchema | None = None) -> bool:
    """Whether `pred_sql` exact-set-matches `gold_sql`.

    - With `schema`, and a gold query Spider's parser can read: Spider's official verdict
      (rules in `spider_exact_match`; what Spider cannot read in `spider_parse`). A
      prediction it cannot read is not a match, as in the official script, which scores
      it against an empty query.
    - Without `schema`, or when Spider cannot read the gold query (the official script
      stops there): `structural_match`, the same idea on sqlglot's tree, with its rules
      in its docstring.

    Never raises for bad SQL: SQL that does not parse is not a match.
    """
    if schema is not None:
        try:
            gold = spider_parse(gold_sql, schema)
        except SqlParseError:
            pass
        else:
            try:
                pred = spider_parse(pred_sql, schema)
            except SqlParseError:
                return False
            return spider_exact_match(gold, pred, schema)
    return structural_match(gold_sql, pred_sql)
