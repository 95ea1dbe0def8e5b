"""The view that turns a table into text: which identifying text, how many rows, which
format, which context keys; and the named presets of views."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from target_core.errors import ConfigError, UnknownNameError

TEXT_FORMATS: tuple[str, ...] = ("markdown", "csv", "json")
"""The formats of table text for any use: retrieval, prompts, ablations."""

FORMATS: tuple[str, ...] = (*TEXT_FORMATS, "ottqa", "target-markdown")
"""How a table's text is laid out (serialize.table_text). Two reproduce TARGET's code:
"ottqa" is its OTT-QA retriever's text, `table id | section title | header` (no cells,
no page title), and "target-markdown" its embedding retrievers' `markdown_table_str`
(header line, then a separator and the rows only when rows > 0)."""


@dataclass(frozen=True)
class TableView:
    """How a table becomes text: which identifying text, how many rows, which format.

    `rows=None` keeps every row, `rows=0` is header only, `rows=N` the first N rows.
    `context` names keys of each table's context to add to its text, in this order
    (schema-aware views: "primary_key", "foreign_keys", "column_descriptions" or any other
    key; a table without the key adds nothing). The same view is shared by every
    retriever and every prompt, so a run records exactly which text it indexed.
    """

    title: bool = True
    section_title: bool = True
    table_id: bool = False
    rows: int | None = None
    format: str = "markdown"
    context: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise UnknownNameError("format", self.format, FORMATS)
        if self.rows is not None and (not isinstance(self.rows, int) or self.rows < 0):
            raise ConfigError(f"rows must be a non-negative integer or None, got {self.rows!r}")
        if self.format == "ottqa" and (self.title or self.rows != 0 or self.context):
            raise ConfigError("the ottqa format is TARGET's OTT-QA text, `table id | section "
                              "title | header`: it has no page title, rows or context "
                              "(use title=False, rows=0, no context)")
        if isinstance(self.context, str) or not isinstance(self.context, tuple | list):
            raise ConfigError(f"context must be a list of context keys, got {self.context!r}")
        object.__setattr__(self, "context", tuple(self.context))  # a list from JSON
        for name in self.context:
            if not isinstance(name, str) or not name.strip() or "," in name or name != \
                    name.strip():
                raise ConfigError(f"context key {name!r} must be a non-blank name without "
                                  "commas or surrounding spaces")
        if len(set(self.context)) != len(self.context):
            raise ConfigError(f"context keys repeat: {', '.join(self.context)}")

    @property
    def key(self) -> str:
        """A stable, human-readable identifier (used in fingerprints and run records)."""
        parts = [
            "title" if self.title else "no-title",
            "section" if self.section_title else "no-section",
            "table-id" if self.table_id else "no-table-id",
            "rows:all" if self.rows is None else ("header-only" if self.rows == 0
                                                 else f"rows:{self.rows}"),
            self.format,
        ]
        if self.context:  # absent without context: keys of earlier views are unchanged
            parts.append("context:" + ",".join(self.context))
        return "+".join(parts)

    @property
    def label(self) -> str:
        """Short label for tables and plots, e.g. 'markdown, title, 100 rows'."""
        for name, preset in VIEW_PRESETS.items():
            if preset == self:
                return name
        rows = "all rows" if self.rows is None else (
            "header only" if self.rows == 0 else f"{self.rows} rows")
        ident = [n for n, on in (("title", self.title), ("section", self.section_title),
                                 ("table id", self.table_id)) if on]
        context = f", with {'+'.join(self.context)}" if self.context else ""
        return f"{self.format}, {'+'.join(ident) or 'no title'}, {rows}{context}"

    def with_(self, **changes: Any) -> TableView:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"title": self.title, "section_title": self.section_title,
                                "table_id": self.table_id, "rows": self.rows,
                                "format": self.format}
        if self.context:  # absent when empty, so run keys of earlier views stay stable
            data["context"] = list(self.context)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableView:
        return cls(**{k: data[k] for k in ("title", "section_title", "table_id", "rows",
                                           "format", "context") if k in data})

    @classmethod
    def preset(cls, name: str) -> TableView:
        try:
            return VIEW_PRESETS[name]
        except KeyError:
            raise UnknownNameError("table view preset", name, VIEW_PRESETS) from None


SCHEMA_CONTEXT: tuple[str, ...] = ("primary_key", "foreign_keys", "column_descriptions")
"""The context keys of the "schema" view: keys and column descriptions (BIRD's
database_description, Spider's and the demo's keys)."""


def parse_view_context(text: str) -> tuple[str, ...]:
    """The context keys of a comma-separated list ("primary_key, foreign_keys"); "schema"
    stands for SCHEMA_CONTEXT, "" and "none" for no context. The CLI and the pages parse
    a typed list here only."""
    names: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part or part.lower() == "none":
            continue
        names.extend(SCHEMA_CONTEXT if part.lower() == "schema" else [part])
    return tuple(dict.fromkeys(names))


VIEW_PRESETS: dict[str, TableView] = {
    "default": TableView(),
    "no-title": TableView(title=False, section_title=False),
    "header-only": TableView(rows=0),
    "rows-100": TableView(rows=100),
    # TARGET's OTT-QA BM25/TF-IDF baselines: table_id as the title, the section title
    # and the header names, no cells.
    "target-ottqa": TableView(title=False, section_title=True, table_id=True, rows=0,
                              format="csv"),
    # TARGET's code (retrievers/ottqa/utils.py): OTTQARetriever(withtitle=True) indexes
    # `table_id | section title | header`; withtitle=False (its default) leaves the id out.
    "ottqa-withtitle": TableView(title=False, section_title=True, table_id=True, rows=0,
                                 format="ottqa"),
    "ottqa-notitle": TableView(title=False, section_title=True, table_id=False, rows=0,
                               format="ottqa"),
    # GTR-T: tables serialized as CSV with their rows.
    "gtr-csv": TableView(title=True, section_title=False, rows=None, format="csv"),
    # Schema-aware: the default view with each table's keys and column descriptions.
    "schema": TableView(context=SCHEMA_CONTEXT),
}
