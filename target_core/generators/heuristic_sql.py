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
question span, and builds the query (IS NULL, rules 4 to 6). Reading the question
against the schema is in `sql_linking` (with the caveat on its synonym list); schema
facts and SQLite spelling are in `sql_schema`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from target_core.generators.base import SchemaTable
from target_core.generators.sql_linking import (
    Link,
    best_column,
    column_words,
    database_links,
    link_codes,
    link_numbers,
    link_values,
    matches,
    mention_score,
    mentioned,
    same_word,
    table_score,
    words,
)
from target_core.generators.sql_schema import (
    NAME_COLUMNS,
    PERSON,
    Ref,
    ident,
    is_date,
    is_key,
    is_numeric,
    name_columns,
    sql_literal,
)
from target_core.textproc import STOPWORDS

_DESC = re.compile(r"\b(highest|most|largest|longest|biggest|greatest|top|best|priciest|"
                   r"latest|newest|most expensive|most recent)\b")
_ASC = re.compile(r"\b(lowest|least|smallest|shortest|cheapest|fewest|earliest|oldest|"
                  r"first)\b")
Item = tuple[str | None, str, str]
"""A select item: (table or None, column or expression, format such as "AVG({})")."""
Order = tuple[str | None, str, bool]
"""(table or None, column or alias, descending)."""


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
        self.edges = [(t.name, c, r, rc or (self.tables[r].primary_key or ("",))[0])
                      for t in tables for c, r, rc in t.foreign_keys if r in self.tables]
        self.fired: list[str] = []
        self.needed: set[str] = set()

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
        select, group, order = self._shape(subject, links)
        joined = self._joins(subject, links, select, group, order)
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
                                                   self._path(subject, o.table) is None))
            if self._path(subject, reach[0].table) is None:
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

    def _shape(self, subject: str, links: list[Link]
               ) -> tuple[list[Item], Ref | None, Order | None]:
        """(select items, group by, order by) from the aggregate and superlative words."""
        low, table = self.lower, self.tables[subject]
        used = {(link.table, link.column) for link in links}
        spans = [(link.start, link.end) for link in links]
        free = re.sub(r"\bat (least|most)\b", " ", "".join(
            " " if any(s <= i < e for s, e in spans) else ch for i, ch in enumerate(low)))
        most = re.search(r"\b(most|fewest|least)\s+(?:\w+\s+){0,2}?(\w+)", free)
        counted = next((t for t in self.tables.values() if most and t.name != subject
                        and matches(most.group(2), column_words(t.name)[-1])), None)
        if most and counted is None and matches(most.group(2), column_words(subject)[-1]):
            counted = table
        if most and counted is not None and re.match(r"\s*(which|what|who)\b", low):
            return self._most(subject, counted, used, most.group(1) == "most")
        group = self._group(table, used)
        if re.search(r"\b(how many|count|number of|headcount)\b", low):
            self.fired.append("count")
            return [*self._plain([group]), (None, "COUNT(*)", "{}")], group, None
        measure = self._measure(subject, links)
        for pattern, fn in ((r"\b(average|mean)\b", "AVG"), (r"\b(total|sum|combined)\b", "SUM")):
            if re.search(pattern, free) and measure:
                self.fired.append(fn.lower())
                return [*self._plain([group]), (*measure, fn + "({})")], group, None
        names = self._names(subject)
        desc, asc = _DESC.search(free), _ASC.search(free)
        hit = desc if desc and (not asc or desc.start() <= asc.start()) else asc
        if hit:
            dated = hit.group(1) in ("latest", "newest", "most recent", "earliest", "oldest",
                                     "first")
            col = best_column([table], self.qwords, hit.start(), lambda c: (
                is_date(c) or "year" in c.name.lower()) if dated else is_numeric(c),
                need_match=not dated, itself=True)
            if col:
                self.fired.append(f"superlative '{hit.group(1)}' -> ORDER BY {col[1]}")
                return self._plain([*names, col]), None, (col[0], col[1], hit is desc)
        attrs = self._attributes(subject, links, used)
        if attrs:
            self.fired.append("lookup of the mentioned column")
            return self._plain(attrs), None, None
        shown = [(lk.table, lk.column) for lk in links if lk.op in ("<", ">", "<=", ">=")
                 and any(same_word(w, c) for w, _, _ in self.qwords
                         for c in column_words(lk.column))]
        return self._plain([*names, *(s for s in shown if s not in names)]), group, None

    @staticmethod
    def _plain(items: Sequence[Ref | None]) -> list[Item]:
        return [(t, c, "{}") for t, c in (i for i in items if i)]

    def _most(self, subject: str, counted: SchemaTable, used: set[Ref],
              desc: bool) -> tuple[list[Item], Ref, Order]:
        """"Which X has the most Y": count Y rows per X (a column of Y, or a table X)."""
        content = [w for w, _, _ in self.qwords if w not in STOPWORDS]
        for c in counted.columns:
            if (not is_key(counted, c) and not is_numeric(c) and (counted.name, c.name) not in
                    used and mentioned(c.name, content)):
                self.fired.append(f"'the most {counted.name}' per {c.name}")
                return ([(counted.name, c.name, "{}"), (None, "COUNT(*) AS n", "{}")],
                        (counted.name, c.name), (None, "n", desc))
        owner = self.tables[subject]
        if owner is counted or re.match(r"\s*who\b", self.lower):
            owner = next((self.tables[t] for t in self._neighbours(counted.name)
                          if all(p in [c.name for c in self.tables[t].columns] for p in PERSON)),
                         owner)
        self.fired.append(f"'the most {counted.name}' per {owner.name}")
        self.needed.add(counted.name)
        key = owner.primary_key[0] if owner.primary_key else owner.columns[0].name
        return ([(owner.name, c, "{}") for c in name_columns(owner)]
                + [(None, "COUNT(*) AS n", "{}")],
                (owner.name, key), (None, "n", desc))

    def _group(self, table: SchemaTable, used: set[Ref]) -> Ref | None:
        hit = re.search(r"\b(?:each|every|per|by)\s+((?:[a-z]+\s*){1,3})", self.lower)
        if not hit:
            return None
        near = hit.group(1).split()
        for c in table.columns:
            if ((table.name, c.name) not in used and not is_key(table, c)
                    and mention_score(c.name, near) and (not is_numeric(c) or "year" in c.name)):
                self.fired.append(f"group by {c.name}")
                return table.name, c.name
        return None

    def _measure(self, subject: str, links: list[Link]) -> Ref | None:
        tables = [self.tables[subject]] + [self.tables[t] for t in dict.fromkeys(
            lk.table for lk in links) if t != subject]
        position = re.search(r"\b(average|mean|total|sum|combined)\b", self.lower)
        return best_column(tables, self.qwords, position.end() if position else 0,
                            lambda c: is_numeric(c) and "year" not in c.name)

    def _names(self, subject: str) -> list[Ref]:
        """The name-like columns to show; for "who" a person table next to the subject."""
        table = self.tables[subject]
        if re.match(r"\s*who\b", self.lower) and not all(
                p in [c.name for c in table.columns] for p in PERSON):
            people = [t for t in self._neighbours(subject)
                      if all(p in [c.name for c in self.tables[t].columns] for p in PERSON)]
            if people:
                table = self.tables[people[0]]
                self.needed.add(table.name)
        return [(table.name, c) for c in name_columns(table)]

    def _attributes(self, subject: str, links: list[Link], used: set[Ref]) -> list[Ref]:
        """Columns the question asks for by name ("What is X's email?"), when an entity
        is identified by an equality link."""
        if not any(lk.op == "=" for lk in links):
            return []
        content = [w for w, _, _ in self.qwords if w not in STOPWORDS]
        names = [subject] + [lk.table for lk in links if lk.table != subject]
        found = [(t, c.name) for t in dict.fromkeys(names) for c in self.tables[t].columns
                 if (t, c.name) not in used and not is_key(self.tables[t], c)
                 and mentioned(c.name, content)]
        if not found and re.match(r"\s*(when|on what date|in what year|what year)\b",
                                  self.lower):
            col = best_column([self.tables[subject]], self.qwords, 0, lambda c: is_date(c) or (
                is_numeric(c) and "year" in c.name.lower()))
            found = [col] if col else []
        return [f for f in found if f[1] not in NAME_COLUMNS or len(found) == 1]

    def _neighbours(self, table: str) -> list[str]:
        return list(dict.fromkeys([b for a, _, b, _ in self.edges if a == table]
                                  + [a for a, _, b, _ in self.edges if b == table]))

    def _path(self, start: str, goal: str) -> list[tuple[str, str, str, str]] | None:
        """Foreign-key edges from `start` to `goal`: none, one, or two via a bridge."""
        if start == goal:
            return []
        direct = [e for e in self.edges if {e[0], e[2]} == {start, goal}]
        if direct:
            return direct[:1]
        for bridge in self._neighbours(start):
            second = [e for e in self.edges if {e[0], e[2]} == {bridge, goal}]
            if second:
                return [next(e for e in self.edges if {e[0], e[2]} == {start, bridge}),
                        second[0]]
        return None

    def _joins(self, subject: str, links: list[Link], select: list[Item], group: Ref | None,
               order: Order | None) -> tuple[str, dict[str, str]] | None:
        """The FROM clause joining every table used to `subject`, and the table aliases."""
        needed = [lk.table for lk in links] + [t for t, _, _ in select if t] + list(self.needed)
        needed += [group[0]] if group else []
        needed += [order[0]] if order and order[0] else []
        alias, joins = {subject: "t1"}, ""
        for goal in dict.fromkeys(needed):
            path = self._path(subject, goal)
            if path is None:
                return None
            for a, a_col, b, b_col in path:
                new = b if a in alias else a
                if new in alias:
                    continue
                alias[new] = f"t{len(alias) + 1}"
                joins += (f" JOIN {ident(new)} AS {alias[new]} ON {alias[a]}.{ident(a_col)} = "
                          f"{alias[b]}.{ident(b_col)}")
                self.fired.append(f"join {new} on {a}.{a_col} = {b}.{b_col}")
        return (f"{ident(subject)} AS t1{joins}" if joins else ident(subject)), alias

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
