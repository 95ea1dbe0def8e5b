"""The data model: `Measure` and `Attr` (a column and how to talk about it), `Topic` (a kind
of table and its phrasing) and `Tab` (one generated table plus what the question generator
needs to know about it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .text import tokens
from .values import Cell, cell_text

DATABASE_ID = "wiki"
DEEP_ROW = 20
"""Rows a "first rows" view shows; deep-row evidence sits at this data-row index or later."""


@dataclass(frozen=True)
class Measure:
    """A numeric column and how to talk about it.

    Templates see {e} (the row's key cell), {E} (the key as a name, e.g. "the 1987 final"),
    {v} (the cell as written), {ctx} and the table's other phrases (Tab.ph). `more`/`less`
    go with the larger/smaller value, `most`/`least` with the maximum/minimum. `style` says
    how the column writes numbers ("int", "big" = "12,345", "f1"/"f2" decimals, "year",
    "time" = "2:08:15"), so perturbed values look like real cells. `para` is the same
    column worded with as few of the table's own words as possible (the paraphrase mode).
    """

    col: str
    q: str
    s: str
    more: str
    less: str
    most: str
    least: str
    style: str = "int"
    unit: str = ""
    count: str | None = None
    count_op: str = "gt"
    total: tuple[str, str] | None = None
    avg: tuple[str, str] | None = None
    q_max: str = "Which {ent} {ctx} {most}?"
    s_max: str = "{E} {most} {ctx}"
    q_cmp: str = "Which {ent} {ctx} {more}, {A} or {B}?"
    s_cmp: str = "{A} {more} than {B} {ctx}"
    with_: str = "with {v}{unit}"
    para: Measure | None = None


@dataclass(frozen=True)
class Attr:
    """One or more text columns looked up together for a row ({0}, {1}... in the templates).

    `a` is the QA answer template (defaults to `s`); `only` restricts rows by their key cell;
    `swap` makes the false statement swap the first two columns (winner <-> runner-up);
    `count` holds (question, statement) templates for "how many rows have {x} in column 0".
    """

    cols: tuple[str, ...]
    q: str
    s: str
    a: str | None = None
    key: str | None = None
    only: tuple[str, ...] = ()
    swap: bool = False
    count: tuple[str, str] | None = None
    para: Attr | None = None


@dataclass(frozen=True)
class Topic:
    """A kind of table: its key column (the entity a row is about) and its phrasing.

    `name_tpl` turns a key cell into a name for sentences ("the {e} final"); the paraphrase
    wording uses `para_name_tpl`, where {s} is the key without `short_suffix` and {o} the key
    as an ordinal word. `cross` allows two-table questions across sibling tables.
    """

    name: str
    key: str
    ent: tuple[str, str]
    measures: tuple[Measure, ...] = ()
    attrs: tuple[Attr, ...] = ()
    para_attrs: tuple[Attr, ...] = ()
    name_tpl: str = "{e}"
    para_name_tpl: str = "{e}"
    short_suffix: str = ""
    cross: bool = False


@dataclass(eq=False)
class Tab:
    """A generated table plus what the question generator needs to know about it.

    `ph` holds the phrases templates use: {ctx} names the table in a query ("in the Karsk
    Mountains"); ctx_para/ent_para/ents_para are the paraphrase wording, and "para_unique"
    says whether that wording alone still singles out the table (needed for superlatives).
    `family` groups sibling tables (identical header, titles differing by `facet`);
    `decisive` lists title words that may be the only clue to the table (title-only mode).
    """

    topic: Topic
    title: str
    section: str
    header: list[str]
    rows: list[list[Cell]]
    ph: dict[str, str]
    family: str | None = None
    facet: str | None = None
    decisive: tuple[str, ...] = ()
    table_id: str = ""

    def col(self, name: str) -> int:
        return self.header.index(name)

    def cell(self, row: int, col: str) -> Cell:
        return self.rows[row][self.col(col)]

    def column(self, col: str) -> list[Cell]:
        i = self.col(col)
        return [r[i] for r in self.rows]

    @property
    def label_text(self) -> str:
        return " ".join([self.title, self.section, *self.header])

    @property
    def cell_tokens(self) -> set[str]:
        words: set[str] = set()
        for text in [*self.header, *(cell_text(c) for r in self.rows for c in r)]:
            words.update(tokens(text))
        return words

    @property
    def long(self) -> bool:
        return len(self.rows) > DEEP_ROW + 5

    def record(self) -> dict[str, Any]:
        return {"database_id": DATABASE_ID, "table_id": self.table_id,
                "table": [list(self.header), *[list(r) for r in self.rows]],
                "context": {"title": self.title, "section_title": self.section}}


def measure(col: str, q: str, s: str, more: str = "", less: str = "", most: str = "",
            least: str = "", **kw: Any) -> Measure:
    """A Measure with its five phrases positional (the topic modules import it as `_m`)."""
    return Measure(col, q, s, more, less, most, least, **kw)
