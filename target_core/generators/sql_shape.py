"""The shape of the heuristic writer's SELECT (rules 4 and 5 of `heuristic_sql`): from
the question's aggregate, superlative and grouping words, what it selects (COUNT, AVG,
SUM, the columns a lookup names, the subject's name-like columns), what it groups by
and how it orders ("the 3 longest", "which X has the most Y").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from target_core.generators.base import SchemaTable
from target_core.generators.sql_joins import JoinGraph
from target_core.generators.sql_linking import (
    Link,
    best_column,
    column_words,
    matches,
    mention_score,
    mentioned,
    same_word,
)
from target_core.generators.sql_schema import (
    NAME_COLUMNS,
    PERSON,
    Ref,
    is_date,
    is_key,
    is_numeric,
    name_columns,
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


class QueryShape:
    """Reads one question's shape over the tables of one database; the patterns that
    fire are noted in `fired`, tables the shape needs beyond its items in `needed`."""

    def __init__(self, question: str, qwords: list[tuple[str, int, int]],
                 tables: dict[str, SchemaTable], graph: JoinGraph, fired: list[str]) -> None:
        self.lower, self.qwords, self.tables = question.lower(), qwords, tables
        self.graph, self.fired = graph, fired
        self.needed: set[str] = set()

    def shape(self, subject: str, links: list[Link]
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
            owner = next((self.tables[t] for t in self.graph.neighbours(counted.name)
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
            people = [t for t in self.graph.neighbours(subject)
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
