"""The context of one query's prompt: which tables (or database schemas) enter, and how much.

Modes: "retrieved" takes the top `context_k` retrieved tables in rank order, "oracle"
the gold tables (the upper bound that separates retrieval failures from generation
failures), "none" nothing (TARGET's no-context prompt).

The token budget is filled in rank order, deterministically (TARGET fills the prompt
in whatever order its threads finish): each table enters with as many of its first
rows as fit in what is left, counted with tiktoken (a labelled estimate offline); a
table whose header alone does not fit is dropped. A passage (a document's chunk) is
shown as text (serialize.passage_view_text) and enters whole or is dropped. Every cut is
recorded on the query.

Text-to-SQL follows TARGET (Appendix C): the generator gets the schema (`CREATE TABLE`
statements) of every table of each retrieved table's database, databases in rank
order; the budget drops whole tables. Schemas are read read-only, once per database.
Under a schema-aware view (TableView.context) each CREATE statement is followed by the
same context lines the retrievers indexed, as SQL comments (serialize.context_lines).

A generator with a context window (`prompt_limit(task)`, e.g. the OpenAI-compatible one)
lowers the budget to what the window leaves: the window minus the reply's max tokens,
a margin, and the tokens of the prompt without its tables, all counted with the
generator's own counter (llama.cpp's tokenizer where the server has one). The cut
records the window (`window`, `reply_tokens`) beside the budget actually used. When the
window leaves no room for even one table (or one table of the schema) that the run's
own budget would have held, the cut says why under `no_room` (the window, the prompt's
size, the setting that would help), and the query fails without a request: a prompt
without its tables is never sent in their place.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from target_core.datasets.chunking import is_passage
from target_core.errors import TargetError
from target_core.generators.base import Column, Context, SchemaTable
from target_core.llm.window import PromptLimit
from target_core.run_config import GenerationConfig
from target_core.serialize import context_lines, table_text
from target_core.table_view import TEXT_FORMATS, TableView
from target_core.tasks import task_rules
from target_core.tokens import TokenCounter
from target_core.types import Dataset, Query, Table, TableKey

log = logging.getLogger(__name__)

VALUES_PER_COLUMN = 200
"""Distinct values read per text column (value linking, as CHESS does; not in the prompt)."""


PromptLimiter = Callable[[str], "PromptLimit | None"]
"""A generator's `prompt_limit`: task -> its limit, or None for no window."""


def prompt_view(view: TableView) -> TableView:
    """The view tables are shown to a generator with: the run's format and context keys,
    titles on, every row (the budget cuts rows, not the retrieval view: a header-only
    index still gives the generator the table's rows, as in TARGET). A retrieval-only
    format (TARGET's `ottqa` text, its `target-markdown`) shows tables as markdown."""
    prompt_format = view.format if view.format in TEXT_FORMATS else "markdown"
    return TableView(title=True, section_title=True, table_id=False, rows=None,
                     format=prompt_format, context=view.context)


def _with_rows(table: Table, n: int) -> Table:
    return Table(table.database_id, table.table_id, table.header, table.rows[:n],
                 table.context)


def fit_table(table: Table, view: TableView, budget: int, counter: TokenCounter
              ) -> tuple[Table, str, int] | None:
    """`table` with as many first rows as fit in `budget` tokens: (table, text, tokens),
    or None when not even the header fits. Binary search over the row count."""
    full = table_text(table, view)
    tokens = counter.count(full)
    if tokens <= budget:
        return table, full, tokens
    if is_passage(table):  # a passage has no rows to cut: it enters whole or not at all
        return None
    low, high = 0, min(len(table.rows), budget)  # every row costs at least one token
    best: tuple[Table, str, int] | None = None
    while low <= high:
        middle = (low + high) // 2
        candidate = _with_rows(table, middle)
        text = table_text(candidate, view)
        cost = counter.count(text)
        if cost <= budget:
            best, low = (candidate, text, cost), middle + 1
        else:
            high = middle - 1
    return best


class ContextBuilder:
    """Builds each query's Context for one run (caches database schemas)."""

    def __init__(self, dataset: Dataset, generation: GenerationConfig, view: TableView,
                 counter: TokenCounter, *, top_k: int, limit: PromptLimiter | None = None,
                 annotations: bool = False,
                 messages: Callable[[Query, str], Sequence[Mapping[str, str]]] | None = None
                 ) -> None:
        """`annotations` (seed 002's toggle): schemas carry the tables' column
        descriptions; `messages(query, text)`: the query's prompt around `text`, whose
        words the window must also hold (few-shot pairs included)."""
        self.dataset = dataset
        self.generation = generation
        self.view = prompt_view(view)
        if annotations and "column_descriptions" not in self.view.context:
            self.view = self.view.with_(context=(*self.view.context, "column_descriptions"))
        self.messages = messages
        self.counter = counter
        self.k = generation.context_k or top_k
        self.limit = limit
        self._budget = generation.token_budget
        self._window: dict[str, Any] = {}
        self._limit: PromptLimit | None = None
        self._overhead = 0
        self._schemas: dict[str, tuple[SchemaTable, ...]] = {}

    def keys_for(self, query: Query, ranked: Sequence[TableKey]) -> list[TableKey]:
        mode = self.generation.context
        if mode == "none":
            return []
        if mode == "oracle":
            return list(query.gold)
        return list(ranked[: self.k])

    def build(self, query: Query, ranked: Sequence[TableKey]) -> Context:
        keys = self.keys_for(query, ranked)
        self._fit_to_window(query)
        if self.generation.context == "none":
            return Context(mode="none", cut={"budget": self._budget, "tokens": 0,
                                             "exact": self.counter.exact, "tables": [],
                                             "dropped": [], **self._window})
        if task_rules(self.dataset.task).answers_sql:
            return self._sql_context(keys)
        return self._table_context(keys)

    def _fit_to_window(self, query: Query) -> None:
        """Sets this query's budget (and counter) from the generator's window, if any."""
        from target_core.generators.prompts import build_messages

        limit = self.limit(self.dataset.task) if self.limit is not None else None
        if limit is None:
            return
        self.counter = limit.counter
        self._limit = limit
        bare = self.messages(query, "") if self.messages is not None else build_messages(
            self.dataset.task, query.query, "", no_context=self.generation.context == "none",
            today=query.meta.get("reference_date"), prompts=self.generation.prompt_set)
        overhead = self._overhead = sum(self.counter.count(m["content"]) for m in bare)
        self._budget = max(0, min(self.generation.token_budget, limit.tokens - overhead))
        self._window = {"window": limit.window, "reply_tokens": limit.reply_tokens,
                        "window_source": limit.source}

    # --- QA and fact verification -----------------------------------------------------------

    def _table_context(self, keys: list[TableKey]) -> Context:
        budget = self._budget
        left, tables, texts, cuts, dropped = budget, [], [], [], []
        for key in keys:
            table = self.dataset.table_index.get(tuple(key))  # type: ignore[arg-type]
            if table is None:
                continue
            fitted = fit_table(table, self.view, left, self.counter) if left > 0 else None
            if fitted is None:
                dropped.append(list(key))
                continue
            shown, text, cost = fitted
            tables.append(shown)
            texts.append(text)
            left -= cost
            cuts.append({"key": list(key), "rows_kept": shown.n_rows,
                         "rows_total": table.n_rows})
        cut = {"budget": budget, "tokens": budget - left, "exact": self.counter.exact,
               "tables": cuts, "dropped": dropped, **self._window}
        if not tables and dropped:
            first = self.dataset.table_index[tuple(dropped[0])]  # type: ignore[index]
            self._no_room(cut, self.counter.count(table_text(_with_rows(first, 0),
                                                             self.view)))
        return Context(mode=self.generation.context, tables=tuple(tables),
                       text="\n\n".join(texts), cut=cut)

    # --- text-to-SQL --------------------------------------------------------------------------

    def _sql_context(self, keys: list[TableKey]) -> Context:
        databases = list(dict.fromkeys(k[0] for k in keys if k[0] in self.dataset.databases))
        budget = self._budget
        left, shown, parts, dropped = budget, [], [], []
        only = {tuple(k) for k in keys} if self.generation.sql_schema == "tables" else None
        for database_id in databases:
            header = f"\nDatabase Name: {database_id}\nSchema:"
            kept: list[SchemaTable] = []
            statements: list[str] = []
            for table in self.schema(database_id):
                if only is not None and (database_id, table.name) not in only:
                    continue
                statement = self._statement(table)
                cost = self.counter.count(statement) + 2
                if cost + (self.counter.count(header) if not kept else 0) > left:
                    dropped.append([database_id, table.name])
                    continue
                if not kept:
                    left -= self.counter.count(header)
                kept.append(table)
                statements.append(statement)
                left -= cost
            if kept:
                shown.extend(kept)
                parts.append(header + "".join(f"\n\n{s}" for s in statements)
                             + "\n\n---\n")
        used = [d for d in databases if any(t.database_id == d for t in shown)]
        cut = {"budget": budget, "tokens": budget - left, "exact": self.counter.exact,
               "tables": [{"key": [t.database_id, t.name]} for t in shown],
               "dropped": dropped, **self._window}
        if not shown and dropped:
            database_id, name = dropped[0]
            table = next(t for t in self.schema(database_id) if t.name == name)
            header = f"\nDatabase Name: {database_id}\nSchema:"
            self._no_room(cut, self.counter.count(header)
                          + self.counter.count(self._statement(table)) + 2)
        return Context(mode=self.generation.context, schema=tuple(shown),
                       databases=tuple(used), text="".join(parts), cut=cut)

    def _no_room(self, cut: dict[str, Any], first: int) -> None:
        """Records why no table entered when the window, not the run's own token budget,
        left too little for the first one (`first` tokens)."""
        if self._limit is None or first > self.generation.token_budget:
            return  # no window, or the run's own budget holds no table: its choice
        cut["no_room"] = self._limit.too_small(self._overhead + first, self._overhead)

    def _statement(self, table: SchemaTable) -> str:
        """The table's CREATE statement, then its view context lines as SQL comments."""
        corpus = self.dataset.table_index.get((table.database_id, table.name))
        if not self.view.context or corpus is None:
            return table.create_sql
        return "\n".join([table.create_sql,
                          *(f"-- {line}" for line in context_lines(corpus, self.view))])

    def schema(self, database_id: str) -> tuple[SchemaTable, ...]:
        if database_id not in self._schemas:
            self._schemas[database_id] = read_schema(database_id,
                                                     self.dataset.databases[database_id])
        return self._schemas[database_id]


def read_schema(database_id: str, path: Path) -> tuple[SchemaTable, ...]:
    """Every table of a SQLite database: CREATE statement, columns with types and (text
    columns) distinct values, primary and foreign keys; read through a read-only
    connection. An unreadable database is a TargetError naming it."""
    from target_core.sql import connect_readonly

    connection = connect_readonly(path)
    try:
        names = [(r[0], r[1]) for r in connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
            "'sqlite_%' ORDER BY rowid")]
        return tuple(_schema_table(connection, database_id, name, sql or "")
                     for name, sql in names)
    except sqlite3.DatabaseError as exc:
        raise TargetError(f"database '{database_id}' ({path}): cannot read its schema: "
                          f"{exc}") from None
    finally:
        connection.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _schema_table(connection: sqlite3.Connection, database_id: str, name: str,
                  create_sql: str) -> SchemaTable:
    info = list(connection.execute(f"PRAGMA table_info({_quote(name)})"))
    columns, primary = [], []
    for _, column, kind, _, _, pk in info:
        values: tuple[Any, ...] = ()
        if "CHAR" in kind.upper() or "TEXT" in kind.upper() or not kind:
            values = tuple(r[0] for r in connection.execute(
                f"SELECT DISTINCT {_quote(column)} FROM {_quote(name)} WHERE {_quote(column)} "
                f"IS NOT NULL LIMIT {VALUES_PER_COLUMN}"))
        columns.append(Column(column, kind, values))
        if pk:
            primary.append((pk, column))
    foreign = tuple((r[3], r[2], r[4] or "") for r in connection.execute(
        f"PRAGMA foreign_key_list({_quote(name)})"))
    return SchemaTable(database_id=database_id, name=name, columns=tuple(columns),
                       create_sql=create_sql.strip(),
                       primary_key=tuple(c for _, c in sorted(primary)), foreign_keys=foreign)
