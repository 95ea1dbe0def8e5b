"""Reading the question against the schema: word matching and WHERE-condition links.

Split from `heuristic_sql` so that the rules that turn question text into
`table.column op value` candidates (`Link`) can be read on their own; the writer then
picks among them. Everything here is word-level and per span: no query shape, no joins.

- Words: `stem` (crude singular), `same_word` (also used by the QA rules in
  `heuristic`), `matches` (a question word naming a schema word, through `SYNONYMS`),
  and `mention_score` / `mentioned` for column names.
- Tables (`table_score`): how strongly the question names a table, by name, synonym,
  linked value or column; the writer picks the database and subject table from it.
- Values (`link_values`): a sampled column value found in the question as a whole word
  (case-insensitive, a plural "s" allowed; values of up to 2 characters and short
  all-caps codes case-sensitive) becomes `col = 'value'`; the longest match wins.
  Codes such as W2LEA5 missing from the sample go to a column of same-length
  upper-case codes (`link_codes`).
- Numbers (`link_numbers`): "above/over/more than/after X" -> `col > X`, "below/under/
  fewer than/before X" -> `col < X`, "at least/at most/X or more" -> >=, <=, on the
  numeric column whose name best matches the words around X ("6 minutes" on a *_sec
  column -> 360); a year becomes a date bound ("after 2017" -> > '2017-12-31') or
  LIKE '2018-%' ("in 2018", "in March 2018" -> '2018-03-%'); "N <column>" or
  "<key column> N" -> `col = N`.
- `best_column`: the column whose name best matches the words near a position, shared
  by the number rules and the writer's aggregates and superlatives.

`SYNONYMS` holds common English words only; it was written while reading the bundled
demo questions, so demo accuracy overstates what it does on unseen schemas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from target_core.generators.base import Column, SchemaTable
from target_core.generators.sql_schema import Ref, is_date, is_key, is_numeric
from target_core.textproc import STOPWORDS

SYNONYMS: dict[str, tuple[str, ...]] = {
    # question word -> schema words it can stand for: common English, no database's names
    "staff": ("employee", "instructor"), "people": ("employee",), "worker": ("employee",),
    "personnel": ("employee",), "person": ("employee",), "faculty": ("instructor",),
    "teacher": ("instructor",), "professor": ("instructor",), "lecturer": ("instructor",),
    "undergraduate": ("student",), "pupil": ("student",), "class": ("course",),
    "patron": ("member",), "subscriber": ("member",), "user": ("member",),
    "shopper": ("customer",), "traveller": ("customer",), "traveler": ("customer",),
    "passenger": ("customer",), "client": ("customer",), "song": ("track",),
    "novel": ("book",), "game": ("match",), "club": ("team",), "item": ("product",),
    "plane": ("aircraft",), "vendor": ("supplier",), "reservation": ("booking",),
    "medication": ("prescription",), "cost": ("price", "cost"), "costs": ("price", "cost"),
    "expensive": ("price", "cost"), "priciest": ("price", "cost"),
    "cheapest": ("price", "cost"), "cheap": ("price", "cost"), "paid": ("salary", "wage"),
    "earn": ("salary", "wage"), "pay": ("salary", "wage"), "compensated": ("salary", "wage"),
    "long": ("duration", "length"), "longest": ("duration", "length"),
    "shortest": ("duration", "length"), "minute": ("duration", "minute"),
    "born": ("birth",), "seat": ("capacity", "seat"), "crowd": ("attendance",),
    "spectator": ("attendance",), "units": ("stock", "quantity"),
    "oldest": ("year", "date"), "newest": ("year", "date"), "built": ("built", "year"),
}
MONTHS = ("january february march april may june july august september october "
          "november december").split()
_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"(?<![\w-])\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w-])")
_CMP = re.compile(r"\b(more than|greater than|higher than|larger than|longer than|later than|"
                  r"over|above|exceeds?|exceeding|after|at least|below|under|less than|"
                  r"fewer than|lower than|smaller than|shorter than|earlier than|before|"
                  r"at most)\s+(?:the\s+)?(?:[a-z]+\s+)?\$?$")
_OPS = {"at least": ">=", "at most": "<=", "below": "<", "under": "<", "before": "<"}


@dataclass(frozen=True)
class Link:
    """A condition found in the question: `table.column op value` from text span start:end."""

    table: str
    column: str
    op: str
    value: Any
    start: int
    end: int


def stem(word: str) -> str:
    """A crude singular: 'countries' -> 'country', 'matches' -> 'match', 'seats' -> 'seat'."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def same_word(a: str, b: str) -> bool:
    """Equal after `stem`, or one a short inflection of the other ('hire'/'hired')."""
    a, b = stem(a), stem(b)
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3


def matches(question_word: str, schema_word: str) -> bool:
    """`question_word` names `schema_word`: the same word or a generic synonym of it."""
    synonyms = SYNONYMS.get(question_word.lower(), ()) or SYNONYMS.get(stem(question_word), ())
    return same_word(question_word, schema_word) or any(same_word(schema_word, s)
                                                        for s in synonyms)


def number(text: str) -> int | float:
    value = float(text.replace(",", "").replace("$", ""))
    return int(value) if value.is_integer() else value


def words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]


def column_words(name: str) -> list[str]:
    return [w for w in re.split(r"[_\W]+", name.lower()) if w and w not in ("id", "qty")] or [
        name.lower()]


def mention_score(column: str, context: list[str]) -> int:
    """How many of `column`'s name words are matched by a word of `context`."""
    return sum(any(matches(c, w) for c in context) for w in column_words(column))


GENERIC = frozenset("date year name number type first last code time on".split())


def mentioned(column: str, context: list[str]) -> bool:
    """Every word of the column name is in `context`, or one that is not generic."""
    names = column_words(column)
    return (mention_score(column, context) == len(names)
            or any(w not in GENERIC and mention_score(w, context) for w in names))


def table_mention(table: SchemaTable, qwords: list[tuple[str, int, int]],
                  values: list[Link]) -> int | None:
    """Start of the first question word naming `table` (its last name word) outside the
    matched values, or None."""
    head = column_words(table.name)[-1]
    for w, start, _ in qwords:
        if w not in STOPWORDS and matches(w, head) and not _taken(start, values):
            return start
    return None


@dataclass(frozen=True)
class TableLinks:
    """What of the question names one table, as `table_score` counts it: 3 for the
    table's name (`mention`, a word's start), 2 per linked value span, 1 per named
    non-key column (with the question words naming it)."""

    table: str
    mention: int | None
    values: tuple[Link, ...]
    columns: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def score(self) -> float:
        return ((3.0 if self.mention is not None else 0.0)
                + 2.0 * len({link.start for link in self.values}) + len(self.columns))


def table_links(table: SchemaTable, qwords: list[tuple[str, int, int]], links: list[Link]
                ) -> TableLinks:
    """The name mention, value links and named columns of `table` in the question."""
    content = [w for w, _, _ in qwords if w not in STOPWORDS]
    named = tuple((c.name, tuple(dict.fromkeys(w for w in content if mention_score(c.name, [w]))))
                  for c in table.columns
                  if not is_key(table, c) and mentioned(c.name, content))
    return TableLinks(table.name, table_mention(table, qwords, links),
                      tuple(link for link in links if link.table == table.name), named)


def table_score(table: SchemaTable, qwords: list[tuple[str, int, int]], links: list[Link]
                ) -> tuple[float, int]:
    """(score, position of the first mention) of `table` in the question."""
    found = table_links(table, qwords, links)
    first = min([p for p in [found.mention, *(link.start for link in found.values)]
                 if p is not None], default=10**6)
    return found.score, first


def database_links(question: str, qwords: list[tuple[str, int, int]],
                   tables: tuple[SchemaTable, ...]) -> list[TableLinks]:
    """`table_links` of every table of one database, values linked within it: the
    writer picks the database whose best table scores highest."""
    links = link_values(question, tables)
    return [table_links(t, qwords, links) for t in tables]


def link_values(question: str, tables: tuple[SchemaTable, ...]) -> list[Link]:
    """Every sampled text value found in the question, as `col = value` candidates."""
    lower = question.lower()
    found: list[Link] = []
    for table in tables:
        for column in table.columns:
            for value in column.values:
                if not isinstance(value, str) or not value.strip():
                    continue
                text = value.strip()
                if text.lower() in STOPWORDS or text.lower() not in lower:
                    continue
                strict = len(text) <= 2 or (text.isupper() and len(text) <= 4)
                pattern = r"(?<!\w)" + re.escape(text) + r"(?:e?s)?(?!\w)"
                hit = re.search(pattern, question, 0 if strict else re.IGNORECASE)
                if hit:
                    found.append(Link(table.name, column.name, "=", value, hit.start(),
                                      hit.end()))
    # keep the longest: drop a match that lies inside a longer match of another value
    return [link for link in found if not any(
        o.start <= link.start and link.end <= o.end and (o.end - o.start) > (link.end - link.start)
        for o in found)]


def link_codes(question: str, tables: tuple[SchemaTable, ...], taken: list[Link]) -> list[Link]:
    """Codes (W2LEA5, TA178) missing from the samples -> a column whose values look alike."""
    out: list[Link] = []
    for hit in re.finditer(r"(?<![\w-])(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{3,}(?!\w)",
                           question):
        if any(o.start <= hit.start() < o.end for o in taken):
            continue
        for table in tables:
            for column in table.columns:
                sample = [str(v) for v in column.values[:50] if isinstance(v, str)]
                if sample and all(len(v) == len(hit.group()) and v.isalnum() and v.isupper()
                                  and any(ch.isdigit() for ch in v) for v in sample):
                    out.append(Link(table.name, column.name, "=", hit.group(), hit.start(),
                                    hit.end()))
    return out


def link_numbers(question: str, tables: list[SchemaTable], taken: list[Link]) -> list[Link]:
    """Comparisons, dates and `col = N` from the numbers in the question."""
    qwords = words(question)
    lower = question.lower()
    out: list[Link] = []
    for hit in re.finditer(r"\b(\d{4})-(\d\d)-(\d\d)\b", question):
        col = best_column(tables, qwords, hit.start(), is_date)
        if col and not _taken(hit.start(), taken):
            out.append(Link(*col, "=", hit.group(), hit.start(), hit.end()))
    for hit in _NUMBER.finditer(question):
        if _taken(hit.start(), taken + out):
            continue
        value = number(hit.group(1) + (hit.group(2) or ""))
        before = lower[max(0, hit.start() - 30):hit.start()]
        after = lower[hit.end():hit.end() + 12]
        cmp = _CMP.search(before)
        op = None
        if cmp:
            op = _OPS.get(cmp.group(1), ">" if not re.search(r"less|fewer|lower|smaller|shorter"
                                                             r"|earlier", cmp.group(1)) else "<")
        elif re.match(r"\s+or (more|above|higher)\b", after):
            op = ">="
        year = isinstance(value, int) and 1800 <= value <= 2100
        month = re.search(r"(\w+)\s+$", before)
        if year and (op or re.search(r"\b(in|during)\s+(\w+\s+)?$", before)):
            col = best_column(tables, qwords, hit.start(), lambda c: is_date(c) or (
                is_numeric(c) and "year" in c.name.lower()))
            if col is None:
                continue
            column = _column(tables, col)
            if is_date(column):
                if op:
                    bound = f"{value}-12-31" if op in (">", "<=") else f"{value}-01-01"
                    out.append(Link(*col, op, bound, hit.start(), hit.end()))
                else:
                    mm = (f"{MONTHS.index(month.group(1)) + 1:02d}-"
                          if month and month.group(1) in MONTHS else "")
                    out.append(Link(*col, "LIKE", f"{value}-{mm}%", hit.start(), hit.end()))
                continue
            out.append(Link(*col, op or "=", value, hit.start(), hit.end()))
            continue
        col = best_column(tables, qwords, hit.start(), is_numeric, need_match=op is None,
                           keys=op is None)
        if col is None:
            continue
        if re.match(r"\s+minutes?\b", after) and "sec" in col[1].lower():
            value = value * 60
        elif re.match(r"\s+hours?\b", after) and "sec" in col[1].lower():
            value = value * 3600
        out.append(Link(*col, op or "=", value, hit.start(), hit.end()))
    return out


def _taken(position: int, links: list[Link]) -> bool:
    return any(o.start <= position < o.end for o in links)


def _column(tables: list[SchemaTable], ref: Ref) -> Column:
    table = next(t for t in tables if t.name == ref[0])
    return next(c for c in table.columns if c.name == ref[1])


def best_column(tables: list[SchemaTable], qwords: list[tuple[str, int, int]], position: int,
                 accept: Any, *, need_match: bool = False, keys: bool = False,
                 itself: bool = False) -> Ref | None:
    """The accepted column whose name best matches the words near `position` (closer
    words count more; the word at `position` itself only when `itself`); a key column
    only by the word just before; without a match the first table's first accepted
    column, or None when `need_match`."""
    index = min(range(len(qwords)), key=lambda i: abs(qwords[i][1] - position)) if qwords else 0
    best, best_score = None, 0.0
    for rank, table in enumerate(tables):
        for column in table.columns:
            if not accept(column) or (is_key(table, column) and not keys):
                continue
            score, key = 0.0, is_key(table, column)
            for i, (w, _, _) in enumerate(qwords):
                if (w in STOPWORDS or (i == index and not itself) or w.isdigit()
                        or (key and i != index - 1)):
                    continue
                hits = mention_score(column.name, [w])
                if hits:
                    score += hits * (2.0 if abs(i - index) <= 3 else 0.5) * (0.5 if key else 1)
            score -= 0.01 * rank
            if score > best_score or (best is None and not need_match and score > -1):
                best, best_score = (table.name, column.name), max(score, 0.0)
    return best
