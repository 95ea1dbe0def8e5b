"""The heuristic generator's lexical fact checker (`verify_statement`): comparisons,
counts, superlatives, then numbers and names of the best-matching row."""

from __future__ import annotations

import re
from collections.abc import Sequence

from target_core.generators.heuristic_text import (
    best_rows,
    cell_numbers,
    content,
    extreme_row,
    numbers,
    numeric_column,
    row_tokens,
    to_float,
)
from target_core.generators.sql_linking import same_word, stem
from target_core.types import Cell, Table

NEI = "Not Enough Information"
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
NUMBER_WORDS.update(once=1, twice=2, thrice=3)
_MORE = re.compile(r"\b(more|larger|higher|longer|later|slower|heavier|bigger|older|greater)\b")
_LESS = re.compile(r"\b(fewer|less|smaller|lower|shorter|earlier|faster|lighter|younger)\b")


def verify_statement(statement: str, tables: Sequence[Table]) -> tuple[str, str]:
    """A lexical fact checker; returns ("True" | "False" | "Not Enough Information", why).

    1. Comparisons ("A has a larger X than B"): the best row for each side of "than",
       compared on the numeric column the statement names (`_compare`).
    2. The best row across the tables (`best_rows`). Under 2 points, or under 40% of
       the statement's non-number content tokens -> Not Enough Information.
    3. Counts ("won the Cup four times", "Two of the runners ..."): rows of that table
       whose cell equals an entity the statement names, and/or passing its "above X" /
       "under X" on the numeric column it names, counted against the claimed number.
    4. Superlatives ("the largest drainage basin"): the best row must be the extreme row
       of the numeric column the statement names.
    5. Otherwise every number of the statement must be in the row (or the title, section
       or header), and every capitalised word in the row, title or header -> True, else
       False.
    """
    ranked = best_rows(statement, tables)
    if not ranked:
        return NEI, "no table in the context"
    compared = _compare(statement, tables)
    if compared is not None:
        return compared
    score, table, index = ranked[0]
    words_only = {t for t in content(statement) if not t[0].isdigit() and t not in NUMBER_WORDS}
    if score < 2 or score < 0.4 * len(words_only):
        return NEI, f"best row overlaps {score:g} of {len(words_only)} content words"
    counted = _count(statement, table)
    if counted is not None:
        return counted
    row = table.rows[index]
    extreme = extreme_row(statement, table)
    if extreme is not None:
        return ("True" if extreme == index else "False"), f"superlative: row {extreme}"
    around = f"{table.title} {table.section_title} {' '.join(table.header)}"
    have = set().union(*(cell_numbers(c) for c in row)) if row else set()
    missing = [n for n in numbers(statement) if n not in have and n not in numbers(around)]
    if missing:
        return "False", f"row {index} of {table.table_id} lacks {', '.join(missing)}"
    known = row_tokens(row) | content(around)
    names = [w for w in re.findall(r"(?<=\w )[A-Z][a-z]{3,}\w*", statement)
             if not any(same_word(w, k) or k.startswith(stem(w)) for k in known)]
    if names:
        return "False", f"row {index} of {table.table_id} lacks {', '.join(names)}"
    return "True", f"row {index} of {table.table_id} has every number and name"


def _count(statement: str, table: Table) -> tuple[str, str] | None:
    """Check "<N> ..." / "... N times" statements by counting rows; None if not one."""
    low = statement.lower()
    spelled = re.search(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", low)
    times = re.search(r"\b(\d+) times\b", low)
    if spelled:
        claimed = NUMBER_WORDS[spelled.group(1)]
    elif times:
        claimed = int(times.group(1))
    else:
        return None
    rows: list[Sequence[Cell]] = list(table.rows)
    entity = _entity(low, table)
    if entity is not None:
        rows = [r for r in rows if entity[0] < len(r) and str(r[entity[0]]).lower() == entity[1]]
    bound = re.search(r"\b(above|over|more than|longer than|larger than|under|below|less than|"
                      r"fewer than|before|after|inside the top)\s+([\d:,.]+)", low)
    if bound:
        column = numeric_column(statement, table, None)
        limit = to_float(bound.group(2))
        if column is None or limit is None:
            return None
        kind = bound.group(1)
        above = kind in ("above", "over", "more than", "longer than", "larger than", "after")
        values = [to_float(r[column]) if column < len(r) else None for r in rows]
        rows = [r for r, v in zip(rows, values, strict=True) if v is not None and (
            v > limit if above else v <= limit if kind == "inside the top" else v < limit)]
    elif entity is None:
        return None
    found = len(rows)
    if times and not spelled and found != claimed:
        return None  # "scored 24 times" is more often a cell than a count of rows
    verdict = "True" if found == claimed else "False"
    return verdict, f"count: {found} matching rows, statement says {claimed}"


def _entity(low: str, table: Table) -> tuple[int, str] | None:
    """(column, value) of the longest text cell quoted in the statement, if any."""
    best: tuple[int, str] | None = None
    for row in table.rows:
        for j, cell in enumerate(row):
            text = str(cell).lower() if isinstance(cell, str) else ""
            if (len(text) >= 4 and to_float(text) is None
                    and re.search(r"(?<!\w)" + re.escape(text) + r"(?!\w)", low)
                    and (best is None or len(text) > len(best[1]))):
                best = (j, text)
    return best


def _compare(statement: str, tables: Sequence[Table]) -> tuple[str, str] | None:
    """"A has a larger X than B": the best row for each side, compared on the numeric
    column the statement names; None when the statement is not such a comparison."""
    low = statement.lower()
    than = re.search(r"\bthan\b", low)
    word = _MORE.search(low[:than.start()]) if than else None
    word = word or (_LESS.search(low[:than.start()]) if than else None)
    if not than or not word:
        return None
    left = best_rows(statement[:than.start()], tables)
    right = best_rows(statement[than.end():], tables)
    if not left or not right or left[0][0] < 1 or right[0][0] < 1:
        return None
    (_, t1, i1), (_, t2, i2) = left[0], right[0]
    if (t1.key, i1) == (t2.key, i2) or not (
            content(statement[:than.start()]) & row_tokens(t1.rows[i1])
            and content(statement[than.end():]) & row_tokens(t2.rows[i2])):
        return None  # one row for both sides, or a side named by no row
    c1 = numeric_column(statement, t1, word.group(1))
    c2 = numeric_column(statement, t2, word.group(1))
    if c1 is None or c2 is None:
        return None
    a, b = to_float(t1.rows[i1][c1]), to_float(t2.rows[i2][c2])
    if a is None or b is None:
        return None
    more = bool(_MORE.fullmatch(word.group(1)))
    if re.search(r"\b(position|rank|place|pos)\b", t1.header[c1].lower()):
        more = not more  # a higher position is a smaller number
    holds = a > b if more else a < b
    return ("True" if holds else "False"), f"comparison: {a:g} vs {b:g} ({t1.header[c1]})"
