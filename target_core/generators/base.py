"""The Generator protocol: a question, the context it may use, and the answer it gives.

A generator gets a `GenerationRequest`: the task, the query text, the `Context` (the
tables or database schema that entered the prompt, after the token budget cut rows)
and the chat messages built from TARGET's Appendix D prompts. It returns one
`Generation`. A failed model call is not an exception: it is a Generation with
`error` set, recorded on its query, and the run goes on. Generators never see gold
data: the context is whatever the context mode chose (retrieved, oracle, none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from target_core.llm.error_classes import classify_error

# Defined beside GenerationConfig, which checks it; re-exported for `generators`.
from target_core.run_config import CONTEXT_MODES as CONTEXT_MODES
from target_core.types import Table, TableKey


@dataclass(frozen=True)
class Column:
    """One column of a database table, with a few of its distinct values (text columns)."""

    name: str
    type: str = ""
    values: tuple[Any, ...] = ()
    """Up to a few hundred distinct non-null values, read from the database read-only."""


@dataclass(frozen=True)
class SchemaTable:
    """A table of a database whose schema entered a text-to-SQL prompt."""

    database_id: str
    name: str
    columns: tuple[Column, ...]
    create_sql: str
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[tuple[str, str, str], ...] = ()
    """(column, referenced table, referenced column)."""


@dataclass(frozen=True)
class Context:
    """What the generator may use for one query, exactly as it entered the prompt."""

    mode: str
    """retrieved | oracle | none."""
    tables: tuple[Table, ...] = ()
    """QA and fact: the tables in prompt order, rows cut to the token budget."""
    schema: tuple[SchemaTable, ...] = ()
    """Text-to-SQL: every table of the databases given, databases in rank order."""
    databases: tuple[str, ...] = ()
    """Text-to-SQL: the database ids whose schema was given, in rank order."""
    text: str = ""
    """What fills {table_contents} (QA, fact) or {database_schema} (SQL)."""
    cut: Mapping[str, Any] = field(default_factory=dict)
    """What the budget removed: {"budget", "tokens", "exact", "tables": [{"key", "rows_kept",
    "rows_total"}], "dropped": [[database_id, table_id], ...]}."""

    @property
    def keys(self) -> tuple[TableKey, ...]:
        if self.schema:
            return tuple((s.database_id, s.name) for s in self.schema)
        return tuple(t.key for t in self.tables)


@dataclass(frozen=True)
class GenerationRequest:
    task: str
    """qa | fact | sql."""
    query: str
    context: Context
    messages: tuple[Mapping[str, str], ...]
    """Chat messages ({"role", "content"}) built by target_core.generators.prompts."""
    sql_reply: str = "json"
    """Text-to-SQL: "json" (the three fields, as structured output where the server has
    it) or "text" (prose with the SQL in a ```sql block: seed 002's prompt, read by
    sql_prompt_options.extract_sql)."""


@dataclass(frozen=True)
class Generation:
    """A generator's answer to one request."""

    answer: str
    """QA: the answer text; fact: the raw label text; SQL: the query ("" when none)."""
    database_id: str | None = None
    """Text-to-SQL: the database the generator chose to run its query on."""
    reasoning: str | None = None
    error: str | None = None
    """Why the call failed (the query counts as wrong); None on success."""
    error_class: str | None = None
    """The kind of failure, one of generators.error_classes.ERROR_CLASSES; left None, it
    is read from `error` (error_classes.classify_error)."""
    tokens_in: int | None = None
    tokens_out: int | None = None
    cached: bool = False
    """True when the answer came from the response cache (it cost nothing)."""
    ms: float = 0.0
    truncated: bool = False
    """The model was stopped at its max tokens (finish_reason "length"): the answer is cut."""
    served_model: str | None = None
    """The model id the server says answered (it may differ from the one asked for)."""

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "database_id": self.database_id,
                "reasoning": self.reasoning, "error": self.error,
                "error_class": self.error_class or (classify_error(self.error) if self.error
                                                    else None),
                "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "cached": self.cached, "ms": self.ms,
                "truncated": self.truncated, "served_model": self.served_model}


@dataclass(frozen=True)
class TableSummary:
    """A generated name and summary of one table (the LlamaIndex baseline's index text)."""

    name: str
    summary: str
    error: str | None = None
    error_class: str | None = None
    """The error's class (llm.error_classes) when the generator knows it; else read from
    the message."""


@runtime_checkable
class Generator(Protocol):
    """Answers questions, labels statements and writes SQL from a context."""

    spec: str
    """The name it was built from, e.g. "heuristic" or "openai:gpt-4o-mini"."""
    label: str
    """How it is shown everywhere, e.g. "heuristic (offline baseline, no model)"."""
    concurrency: int
    """How many requests the runner may have in flight at once."""

    def generate(self, request: GenerationRequest) -> Generation:
        """Answer one request. Never raises for a failed call: sets Generation.error."""
        ...

    def summarize(self, table: Table, *, rows: int = 3) -> TableSummary:
        """A short name and a one-paragraph summary of `table` from its header and first
        `rows` rows (nothing else)."""
        ...


def first_rows(table: Table, rows: int) -> Table:
    """`table` with only its first `rows` rows (what a summary may look at)."""
    return Table(table.database_id, table.table_id, table.header, table.rows[:rows],
                 dict(table.context))

