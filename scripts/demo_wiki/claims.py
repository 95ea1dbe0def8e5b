"""What a query asserts and rests on: `Claim` (an assertion re-checked against the table's
cells, so every answer and label is computed rather than trusted) and `Item` (one question or
statement with its claim, its false variants and its evidence cells)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Tab
from .values import cell_text, num


@dataclass(frozen=True, eq=False)
class Claim:
    """An assertion about table cells; `holds()` re-reads the cells to decide it.

    kind: "cells" (every (row, column, text) matches), "extreme" (row holds the unique max or
    min), "compare" ((tab, row) pairs in `rows` compare with `op`), "count" (number of cells
    passing `op` against `arg` equals `value`), "sum"/"avg" (column aggregate equals `value`).
    """

    kind: str
    tab: Tab
    col: str = ""
    rows: tuple[tuple[Tab, int], ...] = ()
    cells: tuple[tuple[int, str, str], ...] = ()
    op: str = ""
    arg: Any = None
    value: Any = None

    def holds(self) -> bool:
        return getattr(self, f"_{self.kind}")()

    def _cells(self) -> bool:
        return all(cell_text(self.tab.cell(r, c)) == text for r, c, text in self.cells)

    def _extreme(self) -> bool:
        values = [num(c) for c in self.tab.column(self.col)]
        row = self.rows[0][1]
        mine = values[row]
        others = [v for i, v in enumerate(values) if i != row and v is not None]
        if mine is None or not others:
            return False
        return all(mine > o for o in others) if self.op == "max" else all(mine < o for o in others)

    def _compare(self) -> bool:
        (ta, ra), (tb, rb) = self.rows
        a, b = num(ta.cell(ra, self.col)), num(tb.cell(rb, self.col))
        if a is None or b is None:
            return False
        return a > b if self.op == ">" else a < b

    def _count(self) -> bool:
        cells = self.tab.column(self.col)
        if self.op == "eq":
            n = sum(1 for c in cells if cell_text(c) == self.arg)
        else:
            values = [v for v in (num(c) for c in cells) if v is not None]
            n = sum(1 for v in values if passes(v, self.op, self.arg))
        return n == self.value

    def _aggregate(self, mean: bool) -> bool:
        values = [num(c) for c in self.tab.column(self.col)]
        if not values or any(v is None for v in values):
            return False
        total = sum(v for v in values if v is not None)
        got = total / len(values) if mean else total
        return round(got, self.arg) == round(self.value, self.arg)

    def _sum(self) -> bool:
        return self._aggregate(mean=False)

    def _avg(self) -> bool:
        return self._aggregate(mean=True)


def passes(value: float, op: str, threshold: float) -> bool:
    return {"gt": value > threshold, "lt": value < threshold, "le": value <= threshold}[op]


Evidence = list[tuple[Tab, int, str]]


@dataclass
class Item:
    kind: str
    tabs: list[Tab]
    question: str
    answer: str
    statement: str
    claim: Claim
    falsifiers: list[tuple[str, Claim, Evidence | None]]
    """False statements with the claim that refutes them and, when they talk about other
    rows than the true statement does, their own evidence (None: same as the item's)."""
    evidence: Evidence
    difficulty: str

    @property
    def rows(self) -> list[int]:
        return [r for _, r, _ in self.evidence]
