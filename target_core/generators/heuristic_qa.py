"""Extractive QA for the heuristic generator: the answer is a cell of the top context
table (`answer_question`), or a sentence of the top passage (`answer_from_passage`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from target_core.datasets.chunking import is_passage, passage_text
from target_core.generators.heuristic_text import (
    best_rows,
    content,
    extreme_row,
    row_tokens,
    to_float,
)
from target_core.generators.sql_linking import same_word
from target_core.types import Cell, Table

NAME_HEADERS = ("name", "player", "athlete", "winner", "nation", "country", "team", "club",
                "party", "artist", "title", "album", "film", "town", "city", "river", "peak",
                "park", "episode", "stage", "mission")
_WH_HINTS = {"where": ("venue", "stadium", "location", "city", "place", "ground", "province"),
             "when": ("date", "year", "established", "aired"), "wrote": ("written", "writer"),
             "directed": ("directed", "director"), "won": ("winner",), "led": ("leader",)}


def answer_question(query: str, tables: Sequence[Table], *, bare: bool = False
                    ) -> tuple[str, str]:
    """Extractive QA from the first table; returns (answer, reasoning).

    Row: the row sharing most content tokens with the question (a number equal to a
    whole cell counts extra); when no row shares two tokens and the question has a
    superlative ("smallest prominence"), the extreme row of the column it names.
    Column (`_answer_column`): among the cells the question does not name, the header
    best matching the question's other words and its wh-word ("where" -> venue, city;
    "when" -> date, year); "how many/much/long/far..." keeps numeric cells, "who" text.
    Answer: "The <header> of <row label> in <title> is <cell>." (row label = the row's
    name-like cell), or "<cell> (<title>)" when the asked column is the label itself;
    `bare`: the cell alone (a task whose reply is one value).
    """
    if not tables or not tables[0].rows or not tables[0].header:
        return "", "no table in the context"
    table = tables[0]
    if is_passage(table):
        return answer_from_passage(query, table)
    score, _, row_index = best_rows(query, [table])[0]
    how = "best-matching row"
    extreme = extreme_row(query, table) if score - _title_score(query, table) < 2 else None
    if extreme is not None:
        row_index, how = extreme, "superlative"
    row = table.rows[row_index]
    label_col = _label_column(table)
    column = _answer_column(query, table, row, label_col)
    cell = row[column] if column < len(row) else None
    if cell is None:
        return "", f"{how} {row_index}: empty cell"
    if bare:
        return str(cell), f"{how} {row_index}, column {table.header[column]!r}"
    where = table.title or table.table_id.replace("_", " ")
    label = row[label_col] if label_col < len(row) else None
    if column == label_col or label is None:
        answer = f"{cell} ({where})"
    else:
        answer = f"The {table.header[column].lower()} of {label} in {where} is {cell}."
    return answer, f"{how} {row_index}, column {table.header[column]!r}"


def _title_score(query: str, table: Table) -> int:
    return len(content(query) & content(f"{table.title} {table.section_title}"))


def _label_column(table: Table) -> int:
    heads = [h.lower() for h in table.header]
    for j, head in enumerate(heads):
        if any(n in head for n in NAME_HEADERS):
            return j
    for j in range(len(heads)):
        if any(isinstance(r[j], str) and to_float(r[j]) is None
               for r in table.rows[:5] if j < len(r)):
            return j
    return 0


def _answer_column(query: str, table: Table, row: Sequence[Cell], label_col: int) -> int:
    low = query.lower()
    wanted, in_row = content(query), row_tokens(row)
    hints = set().union(*(_WH_HINTS.get(w, ()) for w in re.findall(r"[a-z]+", low)))
    numeric = re.match(r"\s*(how (many|much|long|far|large|high|tall|big)|what proportion)\b",
                       low)
    options = []
    for j, head in enumerate(table.header):
        cell = row[j] if j < len(row) else None
        if cell is None or content(str(cell)) & wanted:
            continue  # empty, or named by the question: it identifies the row
        is_number = to_float(cell) is not None and not re.search(r"[a-z]{3}", str(cell).lower())
        if (numeric and not is_number) or (low.startswith("who") and is_number):
            continue
        score = sum(any(same_word(h, w) for w in (wanted - in_row) | hints)
                    for h in content(head))
        index_like = head.lower().strip(" .#") in ("pos", "rank", "no", "position", "place")
        options.append((score, j != label_col and not index_like, -j))
    if not options:
        return label_col
    return -max(options)[2]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def answer_from_passage(query: str, passage: Table) -> tuple[str, str]:
    """The sentence of the passage sharing most content tokens with the question (the
    first on a tie): an extractive answer from text, as a cell is from a table. Words of
    the passage's title do not count: they name the document, not the sentence."""
    sentences = [s.strip() for s in _SENTENCE_END.split(passage_text(passage)) if s.strip()]
    if not sentences:
        return "", "empty passage"
    wanted = content(query) - content(passage.title)
    scores = [len(wanted & content(s)) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i))
    return sentences[best], f"passage sentence {best + 1} of {len(sentences)} " \
                            f"({scores[best]} shared words)"
