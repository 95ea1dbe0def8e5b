"""Pattern-based text-to-SQL for the offline heuristic generator: no model, no gold.

The writer sees the question and the schema (columns, a sample of distinct text values,
primary and foreign keys) and nothing else. Rules, in order:

1. Value linking: sampled values and codes found in the question (`sql_linking`)
   become `col = 'value'`; a lower-case match ("day") only counts for the subject
   table. Adjacent values ("Ben" "Okafor") are kept in one table; two values matching
   the same columns ("from BOS to SFO") take them in schema order.
2. Table choice (`sql_linking.table_score`): a table scores 3 when its name (or a
   synonym) is in the question, 2 per linked value and 1 per column it names. The
   database is that of the best table (the first database in rank order on ties); the
   subject table is the one mentioned first, by name or by value.
3. Numbers: comparisons, year and date bounds and `col = N` (`sql_linking`);
   "no <column> yet" / "still ..." -> IS NULL on a nullable column.
4. Shape: "how many/count/number of" -> COUNT(*); "average/mean" -> AVG(col), "total/
   sum" -> SUM(col); a superlative -> ORDER BY col DESC/ASC LIMIT N ("the 3 longest");
   "which X has the most Y" -> GROUP BY X ORDER BY COUNT(*) DESC LIMIT 1; "for each/per/
   by <column>" -> GROUP BY col.
5. Projection: the columns a lookup names ("What is X's email?", "When was X hired?"),
   else the subject's name-like columns (first_name + last_name, name, title...; for
   "who" a person table one foreign key away), plus a compared column the question
   names word for word.
6. Joins: every table used is joined to the subject table over a declared foreign key,
   directly or through one bridge table; values in unreachable tables are dropped.

This module is the writer: it chooses the database, the subject table and one link per
question span, and builds the query (IS NULL); the SELECT's shape (rules 4 and 5) is in
`sql_shape`, the joins (rule 6) in `sql_joins`. Reading the question against the schema
is in `sql_linking` (with the caveat on its synonym list); schema facts and SQLite
spelling are in `sql_schema`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from target_core.generators.base import SchemaTable
from target_core.generators.sql_joins import JoinGraph
from target_core.generators.sql_linking import (
    Link,
    database_links,
    link_codes,
    link_numbers,
    link_values,
    mention_score,
    table_score,
    words,
)
from target_core.generators.sql_schema import ident, sql_literal
from target_core.generators.sql_shape import QueryShape


@dataclass(frozen=True)
class SqlGuess:
    """The SQL written for one question ("" when none), its database and the rules used."""

    sql: str
    database_id: str | None
    reasoning: str


def write_sql(question: str, schema: tuple[SchemaTable, ...],
              databases: tuple[str, ...] = ()) -> SqlGuess:
    """One SELECT (SQLite) for `question` over `schema`, the database it runs on, and
    which patterns fired; SqlGuess("", None, ...) when there is no schema."""
    if not schema or not question.strip():
        return SqlGuess("", None, "no schema given: no SQL")
    qwords = words(question)
    order = list(dict.fromkeys([*databases, *(t.database_id for t in schema)]))
    best: tuple[float, int, str] | None = None
    for rank, database in enumerate(order):
        tables = tuple(t for t in schema if t.database_id == database)
        if not tables:
            continue
        top = max(found.score for found in database_links(question, qwords, tables))
        if best is None or (top, -rank) > (best[0], best[1]):
            best = (top, -rank, database)
    if best is None:
        return SqlGuess("", None, "no table in the schema")
    database = best[2]
    tables = tuple(t for t in schema if t.database_id == database)
    return _Writer(question, qwords, tables).write(database)


class _Writer:
    """Builds the SELECT for one question over the tables of one database."""

    def __init__(self, question: str, qwords: list[tuple[str, int, int]],
                 tables: tuple[SchemaTable, ...]) -> None:
        self.q, self.lower, self.qwords = question, question.lower(), qwords
        self.tables = {t.name: t for t in tables}
        self.graph = JoinGraph(self.tables)
        self.fired: list[str] = []

    def write(self, database: str) -> SqlGuess:
        tables = list(self.tables.values())
        values = link_values(self.q, tuple(tables))
        values += link_codes(self.q, tuple(tables), values)
        scores = {t.name: table_score(t, self.qwords, values) for t in tables}
        subject = min(tables, key=lambda t: (scores[t.name][1], -scores[t.name][0])).name
        links = self._resolve(values, subject)
        limit_span, limit = self._limit()
        near = [self.tables[subject]] + [self.tables[n] for n in dict.fromkeys(
            link.table for link in links) if n != subject]
        pseudo = [Link("", "", "", None, *limit_span)] if limit_span else []
        links += link_numbers(self.q, near, links + pseudo)
        links += self._nulls(self.tables[subject])
        for link in links:
            self.fired.append(f"{link.table}.{link.column} {link.op} {sql_literal(link.value)}")
        shape = QueryShape(self.q, self.qwords, self.tables, self.graph, self.fired)
        select, group, order = shape.shape(subject, links)
        needed = [lk.table for lk in links] + [t for t, _, _ in select if t] + list(shape.needed)
        needed += [group[0]] if group else []
        needed += [order[0]] if order and order[0] else []
        joined = self.graph.from_clause(subject, needed, self.fired)
        if joined is None:
            return SqlGuess("", database, "no join path between the linked tables")
        from_clause, alias = joined
        ref = ((lambda t, c: f"{alias[t]}.{ident(c)}") if len(alias) > 1
               else (lambda t, c: ident(c)))
        shown = ", ".join(w.format(c if t is None else ref(t, c)) for t, c, w in select)
        parts = [f"SELECT {shown}", f"FROM {from_clause}"]
        conditions = self._conditions(links, ref)
        if conditions:
            parts.append("WHERE " + " AND ".join(conditions))
        if group:
            parts.append("GROUP BY " + ref(*group))
        if order:
            parts.append("ORDER BY " + (order[1] if order[0] is None else ref(*order[:2]))
                         + (" DESC" if order[2] else "") + f" LIMIT {limit}")
        reasoning = "; ".join([f"database {database}, subject table {subject}", *self.fired])
        return SqlGuess(" ".join(parts), database, reasoning)

    def _resolve(self, values: list[Link], subject: str) -> list[Link]:
        """One (table, column) per matched span: the subject table first, then tables a
        foreign key away; spans sharing several columns take them in column order."""
        spans: dict[tuple[int, int], list[Link]] = {}
        for link in values:
            spans.setdefault((link.start, link.end), []).append(link)
        keys = sorted(spans)
        for a, b in zip(keys, keys[1:], strict=False):
            # adjacent values ("Jonas" "Osei") belong to one row: keep a common table
            common = {o.table for o in spans[a]} & {o.table for o in spans[b]}
            if b[0] - a[1] <= 1 and common:
                spans[a] = [o for o in spans[a] if o.table in common]
                spans[b] = [o for o in spans[b] if o.table in common]
        chosen: list[list[Link]] = []
        for options in spans.values():
            # a lower-case word ("day") only stands for a value of the subject table
            if self.q[options[0].start:options[0].end].islower():
                options = [o for o in options if o.table == subject]
            if not options:
                continue
            reach = sorted(options, key=lambda o: (o.table != subject,
                                                   self.graph.path(subject, o.table) is None))
            if self.graph.path(subject, reach[0].table) is None:
                continue
            chosen.append([o for o in reach if o.table == reach[0].table])
        out: list[Link] = []
        for options in sorted(chosen, key=lambda o: o[0].start):
            used = {(lk.table, lk.column) for lk in out}
            out.append(next((o for o in options if (o.table, o.column) not in used), options[0]))
        return out

    def _limit(self) -> tuple[tuple[int, int] | None, int]:
        hit = re.search(r"\b(?:top\s+)?(\d+)\s+(?:most|least|highest|lowest|largest|smallest|"
                        r"longest|shortest|biggest|cheapest|best|oldest|newest)\b|\btop\s+(\d+)",
                        self.lower)
        if not hit:
            return None, 1
        group = 1 if hit.group(1) else 2
        return (hit.start(group), hit.end(group)), int(hit.group(group))

    def _nulls(self, table: SchemaTable) -> list[Link]:
        nullable = [c for c in table.columns if c.name not in table.primary_key
                    and not re.search(rf"\b{re.escape(c.name)}\b[^,\n]*NOT NULL", table.create_sql)]
        hit = re.search(r"\bno ((?:\w+ ){1,2})(yet|so far)\b", self.lower)
        if hit:
            named = [c for c in nullable if mention_score(c.name, hit.group(1).split())]
            if named:
                self.fired.append("'no ... yet' -> IS NULL")
                return [Link(table.name, named[0].name, "IS NULL", None, hit.start(), hit.end())]
        if len(nullable) == 1 and re.search(r"\b(still|outstanding|not yet|unreturned)\b",
                                            self.lower):
            self.fired.append("'still/outstanding' -> IS NULL")
            return [Link(table.name, nullable[0].name, "IS NULL", None, 0, 0)]
        return []

    def _conditions(self, links: list[Link], ref: Any) -> list[str]:
        by_column: dict[tuple[str, str, str], list[Any]] = {}
        for lk in links:
            by_column.setdefault((lk.table, lk.column, lk.op), []).append(lk.value)
        out = []
        for (table, column, op), values in by_column.items():
            values = list(dict.fromkeys(values))
            if op == "IS NULL":
                out.append(f"{ref(table, column)} IS NULL")
            elif op == "=" and len(values) > 1:
                out.append(f"{ref(table, column)} IN ({', '.join(map(sql_literal, values))})")
            else:
                out.extend(f"{ref(table, column)} {op} {sql_literal(v)}" for v in values)
        return out
