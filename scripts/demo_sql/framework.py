"""The query machinery every domain's templates share.

The failure-mode tags and their descriptions, `Spec` (one generated question) and `Ctx`
(what a template samples from), helpers that turn values into SQL literals and question
text, and the loop that instantiates templates and keeps a sample only when its gold SQL
returns something and its failure mode really holds.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from target_core.sql.structure import spider_hardness

from .values import Row, Rows

DEEP_ROW = 20
"""Rows shown by a "first rows" table view; deep-row evidence sits at this index or later."""

SIB, PARA, DEEP, TITLE = "sibling", "paraphrase", "deep-row", "title-only"
FAILURE_MODES: dict[str, str] = {
    SIB: "the gold table's name also exists in other databases (departments, employees, "
         "customers, members); only domain words in the question, such as 'nurses' or "
         "'ward', tell which database is meant. Field `siblings` lists the other databases "
         "with a table of that name.",
    PARA: "the question shares no word with the gold tables' names or column names (e.g. "
          "'How many people work in the Pediatrics ward?' over employees and departments), "
          "so lexical matching on the schema fails.",
    DEEP: "the value the question filters on, or asks for, sits in a data row at index 20 or "
          "later of a long table, and nowhere in the first 20 rows of that column, so "
          "header-only or first-20-rows table views miss it. Field `evidence` gives "
          "[{table_id, row, column}] with the 0-based data-row index.",
    TITLE: "the decisive word of the question (field `decisive`, e.g. 'prescriptions') occurs "
           "only in the gold table's name, in none of its column names or cells, so a view "
           "without the table name or title loses it.",
}
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "is",
                        "are", "and", "or", "id", "with", "from"})
_TABLE_REF = re.compile(r"\b(?:FROM|JOIN)\s+([A-Za-z_]\w*)", re.IGNORECASE)
_CTE = re.compile(r"(?:\bWITH|,)\s+([A-Za-z_]\w*)\s+AS\s*\(", re.IGNORECASE)


@dataclass(frozen=True)
class Spec:
    """One generated question: text, gold SQL, difficulty, failure mode and its extras
    (`siblings` is added later; `evidence` and `decisive` come from the template)."""

    question: str
    sql: str
    difficulty: str
    mode: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass
class Ctx:
    """What a template sees: the database's rows and connection, and a seeded Random."""

    database_id: str
    rows: Rows
    conn: sqlite3.Connection
    rng: random.Random

    def say(self, *phrasings: str, **values: Any) -> str:
        """One of several phrasings, so a template does not always read the same."""
        return self.rng.choice(phrasings).format(**values)

    def pick(self, table: str, *, head: bool = False,
             where: Callable[[Row], bool] | None = None) -> Row:
        """A random row; head=True keeps to the first rows so ordinary and paraphrase
        questions do not turn into deep-row ones by accident."""
        rows = self.rows[table][:DEEP_ROW] if head else self.rows[table]
        return self.rng.choice([r for r in rows if where is None or where(r)])

    def deep(self, table: str, column: str) -> tuple[Row, list[dict[str, Any]]]:
        """A row at index >= DEEP_ROW whose `column` value is absent from the first rows,
        and the evidence record that points at it."""
        rows = self.rows[table]
        if len(rows) <= 40:
            raise ValueError(f"{table} is too short for a deep-row question")
        early = {r[column] for r in rows[:DEEP_ROW]}
        index = self.rng.choice([i for i in range(DEEP_ROW, len(rows))
                                 if rows[i][column] not in early])
        return rows[index], [{"table_id": table, "row": index, "column": column}]


Template = Callable[[Ctx], Spec]


def lit(value: Any) -> str:
    """A SQL literal; strings single-quoted with quotes doubled."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def full_name(row: Row) -> str:
    return f"{row['first_name']} {row['last_name']}"


def who(row: Row, alias: str = "") -> str:
    """WHERE condition selecting a person by full name."""
    prefix = f"{alias}." if alias else ""
    return (f"{prefix}first_name = {lit(row['first_name'])} AND "
            f"{prefix}last_name = {lit(row['last_name'])}")


def with_article(word: str) -> str:
    """The word with its indefinite article: 'an Economy', 'a Senior'."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def country_phrase(name: str) -> str:
    """Country names that take 'the' in running text."""
    return f"the {name}" if name.startswith(("United ", "Netherlands")) else name


def usd(amount: float) -> str:
    return f"${amount:,.0f}" if float(amount).is_integer() else f"${amount:,.2f}"


def threshold(values: Iterable[float], rng: random.Random, top: tuple[int, int]) -> float:
    """A cut-off that a few values (between top[0] and top[1] of them) exceed."""
    ordered = sorted(values, reverse=True)
    return ordered[rng.randint(*top)]


def tokens(text: str) -> set[str]:
    """Lower-case words with a plural 's' stripped and stopwords dropped; column names
    split on '_'. Used for the paraphrase and title-only checks (tests use their own)."""
    words = {w[:-1] if len(w) > 3 and w.endswith("s") else w
             for w in _WORD.findall(text.lower())}
    return words - _STOPWORDS


def tables_read(sql: str) -> list[str]:
    """Tables named after FROM/JOIN, in order of first appearance, minus CTE names."""
    ctes = {m.lower() for m in _CTE.findall(sql)}
    names = [m for m in _TABLE_REF.findall(sql) if m.lower() not in ctes]
    return list(dict.fromkeys(names))

# --- sampling and checks ---------------------------------------------------------------

ATTEMPTS_PER_QUERY = 40


def _schema_words(c: Ctx, tables: list[str]) -> set[str]:
    """Words of the tables' names and column names."""
    words: set[str] = set()
    for table in tables:
        words |= tokens(table) | tokens(" ".join(c.rows[table][0]))
    return words


def _content_words(c: Ctx, tables: list[str]) -> set[str]:
    """Words of the tables' column names and cells (not their names)."""
    words: set[str] = set()
    for table in tables:
        words |= tokens(" ".join(c.rows[table][0]))
        for row in c.rows[table]:
            words |= tokens(" ".join(str(v) for v in row.values() if v is not None))
    return words


def _check_mode(c: Ctx, spec: Spec, result: list[tuple], repeated: dict[str, list[str]]) -> bool:
    """Whether the spec really shows its failure mode. False asks for another sample;
    a template that can never satisfy its mode raises instead (a bug, not bad luck)."""
    tables = tables_read(spec.sql)
    question = tokens(spec.question)
    if spec.mode == PARA:
        return not question & _schema_words(c, tables)
    if spec.mode == SIB:
        if not any(t in repeated for t in tables):
            raise ValueError(f"sibling query over unrepeated tables: {spec.sql}")
        return not question & tokens(c.database_id.replace("_", " "))
    if spec.mode == TITLE:
        word = spec.extra["decisive"]
        if word not in spec.question or not tokens(word) & set().union(*map(tokens, tables)):
            raise ValueError(f"decisive word {word!r} not in question and table name: {spec}")
        if tokens(word) & _content_words(c, tables):
            raise ValueError(f"decisive word {word!r} occurs in columns or cells of {tables}")
    if spec.mode == DEEP:
        for ev in spec.extra["evidence"]:
            value = c.rows[ev["table_id"]][ev["row"]][ev["column"]]
            shown = {str(v) for row in result for v in row}
            if str(value) not in spec.sql and str(value) not in shown:
                raise ValueError(f"evidence {ev} not in SQL or result: {spec.sql}")
    return True


def _meaningful(result: list[tuple]) -> bool:
    """At least one row, and not only zeros and NULLs (a COUNT of 0 proves nothing)."""
    return any(v not in (None, 0) for row in result for v in row)


def make_queries(c: Ctx, templates: Sequence[tuple[Template, int]],
                 repeated: dict[str, list[str]]) -> list[Spec]:
    """Instantiate every template of the database the given number of times, resampling
    values until the gold SQL returns something and the failure mode holds."""
    specs: list[Spec] = []
    seen: set[str] = set()
    for template, wanted in templates:
        made = 0
        for _ in range(ATTEMPTS_PER_QUERY * wanted):
            spec = template(c)
            if spec.sql in seen or spec.question in seen:
                continue
            result = c.conn.execute(spec.sql).fetchall()
            if not _meaningful(result) or not _check_mode(c, spec, result, repeated):
                continue
            seen |= {spec.sql, spec.question}
            specs.append(spec)
            made += 1
            if made == wanted:
                break
        if made < wanted:
            raise RuntimeError(f"{c.database_id}: {template.__name__} gave {made} of {wanted} "
                               "usable queries")
    return specs


def query_record(database_id: str, spec: Spec, repeated: dict[str, list[str]]) -> Row:
    """The queries.jsonl record: TARGET's fields first, then this dataset's metadata.
    `difficulty` is Spider's hardness of the gold SQL (Spider's official rules, as
    target_core.sql.structure computes them), so it reads as Spider's levels."""
    tables = tables_read(spec.sql)
    record: Row = {"query_id": "", "query": spec.question, "answer": spec.sql,
                   "table_id": tables, "database_id": database_id, "sql": spec.sql,
                   "difficulty": spider_hardness(spec.sql), "failure_mode": spec.mode}
    if spec.mode == SIB:
        name = next(t for t in tables if t in repeated)
        record["siblings"] = [d for d in repeated[name] if d != database_id]
    record.update(spec.extra)
    return record
