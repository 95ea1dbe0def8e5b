"""The join graph of the heuristic SQL writer (rule 6 of `heuristic_sql`): the declared
foreign keys among one database's tables, the path from the subject table to another
(directly or through one bridge table), and the FROM clause that joins every table a
query uses to its subject.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from target_core.generators.base import SchemaTable
from target_core.generators.sql_schema import ident

Edge = tuple[str, str, str, str]
"""A foreign key: (table, column, referenced table, referenced column)."""


class JoinGraph:
    """The foreign keys among `tables` (name -> table) that stay inside them."""

    def __init__(self, tables: Mapping[str, SchemaTable]) -> None:
        self.edges: list[Edge] = [
            (t.name, c, r, rc or (tables[r].primary_key or ("",))[0])
            for t in tables.values() for c, r, rc in t.foreign_keys if r in tables]

    def neighbours(self, table: str) -> list[str]:
        """The tables one foreign key away from `table`, in schema order."""
        return list(dict.fromkeys([b for a, _, b, _ in self.edges if a == table]
                                  + [a for a, _, b, _ in self.edges if b == table]))

    def path(self, start: str, goal: str) -> list[Edge] | None:
        """Foreign-key edges from `start` to `goal`: none, one, or two via a bridge."""
        if start == goal:
            return []
        direct = [e for e in self.edges if {e[0], e[2]} == {start, goal}]
        if direct:
            return direct[:1]
        for bridge in self.neighbours(start):
            second = [e for e in self.edges if {e[0], e[2]} == {bridge, goal}]
            if second:
                return [next(e for e in self.edges if {e[0], e[2]} == {start, bridge}),
                        second[0]]
        return None

    def from_clause(self, subject: str, needed: Iterable[str], fired: list[str]
                    ) -> tuple[str, dict[str, str]] | None:
        """The FROM clause joining every `needed` table to `subject`, and the table
        aliases; each join is noted in `fired`. None when a table cannot be reached."""
        alias, joins = {subject: "t1"}, ""
        for goal in dict.fromkeys(needed):
            path = self.path(subject, goal)
            if path is None:
                return None
            for a, a_col, b, b_col in path:
                new = b if a in alias else a
                if new in alias:
                    continue
                alias[new] = f"t{len(alias) + 1}"
                joins += (f" JOIN {ident(new)} AS {alias[new]} ON {alias[a]}.{ident(a_col)} = "
                          f"{alias[b]}.{ident(b_col)}")
                fired.append(f"join {new} on {a}.{a_col} = {b}.{b_col}")
        return (f"{ident(subject)} AS t1{joins}" if joins else ident(subject)), alias
