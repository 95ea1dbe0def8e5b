"""Lexical helpers shared by the heuristic QA and fact checker: content tokens,
numbers as they appear in text and cells, row scoring and superlatives.

No model and no gold: everything here reads the query and the context tables only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from target_core.generators.sql_linking import same_word, stem
from target_core.textproc import tokenize
from target_core.types import Cell, Table

_NUM = re.compile(r"\d+(?:[:–-]\d+)+|\d[\d,]*(?:\.\d+)?")
_MAX = re.compile(r"\b(most recently|largest|highest|longest|most|greatest|biggest|tallest|"
                  r"latest|newest|slowest|best|top)\b")
_MIN = re.compile(r"\b(smallest|lowest|shortest|least|fewest|earliest|oldest|fastest|"
                  r"first(?!\s+(?:\w+ed|broadcast|run|held|built|won)\b))\b")
_HINTS = {"largest": ("area", "population", "basin", "size"), "longest": ("length", "km"),
          "shortest": ("length", "km"), "highest": ("elevation", "height", "peak"),
          "lowest": ("elevation", "height", "peak"), "tallest": ("elevation", "height"),
          "smallest": ("area", "population", "basin", "size"), "fastest": ("time",),
          "slowest": ("time",), "oldest": ("established", "founded", "year"),
          "newest": ("established", "founded", "year"), "latest": ("year", "date"),
          "first": ("year", "date"), "recently": ("year", "date", "released"),
          "crowd": ("attendance",), "audience": ("viewers", "attendance"),
          "ballots": ("votes",), "heavier": ("mass", "weight"), "lighter": ("mass", "weight"),
          "earlier": ("year", "date", "released"), "later": ("year", "date", "released"),
          "longer": ("length", "km"), "larger": ("area", "population", "basin", "size"),
          "smaller": ("area", "population", "basin", "size"), "higher": ("elevation", "height"),
          "lower": ("elevation", "height"), "faster": ("time",), "slower": ("time",),
          "shorter": ("length", "km")}
"""Superlatives, comparatives and nouns -> header words they usually refer to."""


def content(text: str) -> set[str]:
    """Stemmed content tokens (textproc.tokenize, then a crude singular)."""
    return {stem(t) for t in tokenize(text)}


def norm_number(text: str) -> str:
    """'1,234' -> '1234', '10.60' -> '10.6', '24.3%' -> '24.3'; times and scores kept."""
    text = text.replace(",", "").rstrip("%").replace("-", "–")
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() else repr(value)


def numbers(text: str) -> list[str]:
    return [norm_number(m.group()) for m in _NUM.finditer(text)]


def cell_numbers(cell: Cell) -> set[str]:
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return {norm_number(str(cell))}
    return set(numbers(str(cell or "")))


def to_float(cell: Cell) -> float | None:
    """A cell as a number: 1,234 -> 1234.0, 2:08:50 -> 7730.0 (seconds), else None."""
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return float(cell)
    text = str(cell or "").replace(",", "").strip()
    if re.fullmatch(r"\d+(?::\d\d)+", text):
        total = 0.0
        for part in text.split(":"):
            total = total * 60 + int(part)
        return total
    match = re.match(r"-?\d+(?:\.\d+)?", text)
    return float(match.group()) if match else None


def row_tokens(row: Sequence[Cell]) -> set[str]:
    return set().union(*(content(str(c)) for c in row if c is not None)) if row else set()


def best_rows(query: str, tables: Sequence[Table]) -> list[tuple[float, Table, int]]:
    """(score, table, row index), best first: a point per query token found in the row or
    the table's title and section title, half a point per token found only in the header."""
    wanted, asked = content(query), set(numbers(query))
    scored = []
    for table in tables:
        titled = wanted & content(f"{table.title} {table.section_title}")
        header = content(" ".join(table.header))
        for i, row in enumerate(table.rows):
            own = (wanted & row_tokens(row)) | titled
            exact = sum(1 for c in row if c is not None and norm_number(str(c)) in asked)
            scored.append((len(own) + 0.5 * len((wanted - own) & header) + 0.5 * exact,
                           table, i))
    return sorted(scored, key=lambda s: -s[0])


def numeric_column(query: str, table: Table, word: str | None) -> int | None:
    """The numeric column whose header best matches the query (or the superlative's hint)."""
    wanted = content(query) | set(_HINTS.get(word or "", ()))
    for w in list(wanted):
        wanted |= set(_HINTS.get(w, ()))
    best, best_score = None, 0
    for j, head in enumerate(table.header):
        values = [to_float(r[j]) for r in table.rows if j < len(r)]
        if not values or sum(v is not None for v in values) < len(values) / 2:
            continue
        score = sum(any(same_word(h, w) for w in wanted) for h in content(head))
        if score > best_score:
            best, best_score = j, score
    return best


def extreme_row(query: str, table: Table) -> int | None:
    """The row index a superlative in `query` points at, or None."""
    hit_max, hit_min = _MAX.search(query.lower()), _MIN.search(query.lower())
    if hit_max and (not hit_min or hit_max.start() < hit_min.start()):
        hit = hit_max
    elif hit_min:
        hit = hit_min
    else:
        return None
    word = hit.group(1).split()[-1]
    column = numeric_column(query, table, word)
    if column is None:
        return None
    values = [(to_float(r[column]), i) for i, r in enumerate(table.rows) if column < len(r)]
    values = [(v, i) for v, i in values if v is not None]
    if not values:
        return None
    return (max(values) if hit is hit_max else min(values))[1]


