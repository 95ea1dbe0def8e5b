"""Hypothetical tables for a query: what the HySE retriever embeds beside the query.

TARGET's HySE (hypothetical schema embedding) asks an LLM for N tables "with different
semantics and at least 5 columns, but exactly R rows that could answer or verify" the
query (its defaults: N = 2 schemas, R = 2 rows, gpt-4o-mini at temperature 0), parsed
from a nested list `schemas: [[header, row, ...], ...]`. Two writers:

- `LLMWriter`: an OpenAI-compatible generator (`openai:`, `local:`) asked with TARGET's
  system message and prompt (with rows) word for word, plus one sentence naming the JSON
  object to return (`{"schemas": ...}`, the shape TARGET's instructor model had), with
  the structured output, retries and response cache every chat request gets
  (`OpenAIGenerator.chat_json`, task "hyse": TARGET_MAX_TOKENS_HYSE). A rerun costs
  nothing.
- `HeuristicWriter`: no model, deterministic, labelled as such. From the query's words:

      content words (not stop words, numbers or names)  -> columns, title-cased
      capitalised runs (names), numbers                  -> a "Name" and a "Year"
                                                            (four-digit 1000-2100) or
                                                            "Value" column, one per row
      table k of N                                       -> word columns rotated by k,
                                                            names and numbers from the
                                                            k-th on

  "Did Ada Berg run faster in 2020 than in 2019?", N = 2, R = 2 gives
  | Run | Faster | Name | Year | with rows (Ada Berg, 2020), (Ada Berg, 2019), and
  | Faster | Run | Name | Year | with rows (Ada Berg, 2019), (Ada Berg, 2020).

A write never raises: a failed call or a reply without a usable table is a
`HypotheticalTables` with `error` set, and the retriever falls back to the query alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from target_core.errors import ConfigError
from target_core.textproc import STOPWORDS
from target_core.types import Cell, Table

HYSE_SYSTEM = "You are an assistant skilled in generating real-world database schemas and tables."
HYSE_INSTRUCTION = (
    "Generate exactly {n} tables with different semantics and at least 5 columns, but "
    "exactly {rows} rows that could answer or verify the following query: {query}.\n"
    "Return a nested list of size {n} in which each list contains a nested list "
    "representing a table.\n"
    "Each nested table list starts with a list column names, followed by lists "
    "representing the rows.\n"
    "Rows cannot contain 'None' values. Only generate tables, do not provide surrounding "
    "numbers or text.\n"
    "For example, for 2 tables with 1 row to answer queries about the business "
    "performance of an energy company, you could generate:\n"
    "[[['Quarter', 'Total Revenue (USD)', 'Net Profit (USD)', 'EBITDA (USD)', "
    "'Total Energy Sold (MWh)', 'Customer Growth Rate (%)'], ['Q1 2024', '300M', '45M', "
    "'80M', '2.5M', 3]],\n"
    "[['Quarter', 'Product', 'Sales Volume', 'Revenue', 'Market Share'],['Q1', 2024, "
    "'Electricity', 1200000, 150000000, 25]]]\n"
    "Answer with a JSON object whose only key \"schemas\" holds that nested list.")
"""TARGET's HySE prompt with rows (target_benchmark/retrievers/hyse/HySERetriever.py),
indentation removed; the last sentence is ours: TARGET got the object from instructor."""

MAX_COLUMNS = 10
"""Cells per row a reply may hold (TARGET asks for at least 5 columns)."""


CELL_CHARS = 40
"""Characters of a cell on a server that enforces string lengths (llama.cpp's grammar)."""


def hyse_schema(n: int, rows: int, *, cell_chars: int | None = None) -> dict[str, Any]:
    """The structured output for `n` tables of a header and `rows` rows. The bounds
    (maxItems, which OpenAI's strict mode accepts) are what the prompt asks for: a server
    that turns the schema into a grammar (llama.cpp) then cannot write a list forever,
    which a small model at temperature 0 otherwise does until max_tokens. `cell_chars`
    bounds each text cell too (maxLength, which OpenAI's strict mode does not list, so
    only for such a server): SmolLM2 otherwise wrote one cell "45M, 2.5M, 3, 2024, ..."
    until its max tokens."""
    text = {"type": "string", **({"maxLength": cell_chars} if cell_chars else {})}
    cell = {"anyOf": [text, {"type": "number"}]}
    row = {"type": "array", "items": cell, "maxItems": MAX_COLUMNS}
    table = {"type": "array", "items": row, "maxItems": rows + 1}
    return {"name": "hypothetical_schemas", "strict": True,
            "schema": {"type": "object", "additionalProperties": False,
                       "required": ["schemas"],
                       "properties": {"schemas": {"type": "array", "items": table,
                                                  "maxItems": n}}}}


def hyse_messages(query: str, n: int, rows: int) -> tuple[dict[str, str], ...]:
    """The chat messages asking for `n` hypothetical tables of `rows` rows for `query`."""
    return ({"role": "system", "content": HYSE_SYSTEM},
            {"role": "user", "content": HYSE_INSTRUCTION.format(n=n, rows=rows, query=query)})


@dataclass(frozen=True)
class HypotheticalTables:
    """The tables written for one query, or why there are none (`error`)."""

    tables: tuple[Table, ...]
    error: str | None = None
    cached: bool = False
    """The reply came from the response cache (it cost nothing)."""
    error_class: str | None = None
    """The error's class (llm.error_classes) when the writer knows it; else read from
    the message."""


class TableWriter(Protocol):
    """Writes hypothetical tables for a query; never raises for a failed write."""

    spec: str
    """The generator spec it writes with ("heuristic", "openai:gpt-4o-mini")."""
    label: str

    @property
    def concurrency(self) -> int:
        """Writes the run may have in flight at once."""
        ...

    def write(self, query: str) -> HypotheticalTables:
        ...


def _table(index: int, header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> Table:
    return Table("", f"hypothetical_{index}", tuple(str(h) for h in header),
                 tuple(tuple(_cell(c) for c in row) for row in rows))


def _cell(value: Any) -> Cell:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def tables_from_reply(data: Mapping[str, Any], n: int, rows: int) -> tuple[Table, ...]:
    """The usable tables of a reply {"schemas": [[header, row, ...], ...]}: at most `n`,
    each with a non-empty header (a list) and its first `rows` rows that are lists."""
    schemas = data.get("schemas")
    found: list[Table] = []
    for schema in schemas if isinstance(schemas, list) else ():
        if not isinstance(schema, list) or not schema or not isinstance(schema[0], list) \
                or not schema[0]:
            continue
        body = [row for row in schema[1:] if isinstance(row, list)][:rows]
        found.append(_table(len(found), schema[0], body))
        if len(found) == n:
            break
    return tuple(found)


class LLMWriter:
    """TARGET's prompt on an OpenAI-compatible generator (see the module docstring)."""

    def __init__(self, generator: Any, n: int, rows: int) -> None:
        self.generator = generator
        self.n, self.rows = n, rows
        self.spec: str = generator.spec
        self.label: str = generator.label

    @property
    def concurrency(self) -> int:
        return int(self.generator.concurrency)

    def write(self, query: str) -> HypotheticalTables:
        try:
            bounded = getattr(self.generator, "enforces_schema_bounds", None)
            chars = CELL_CHARS if callable(bounded) and bounded() else None
            reply = self.generator.chat_json(hyse_messages(query, self.n, self.rows),
                                             schema=hyse_schema(self.n, self.rows,
                                                                cell_chars=chars),
                                             task="hyse")
        except Exception as exc:  # noqa: BLE001 (a rejected key raises ConfigError: keep it)
            if isinstance(exc, ConfigError):
                raise
            return HypotheticalTables((), f"{type(exc).__name__}: {exc}")
        if reply.data is None:
            return HypotheticalTables((), reply.error, reply.cached)
        tables = tables_from_reply(reply.data, self.n, self.rows)
        if tables:
            return HypotheticalTables(tables, None, reply.cached)
        return HypotheticalTables((), "the reply has no table under 'schemas'", reply.cached,
                                  "truncated" if reply.truncated else "malformed")


_NUMERIC = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD = re.compile(r"\d+(?:[.,:]\d+)*(?![^\W_])|[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
"""Numbers whole ("87.5", "2:09:58", "1,000"), then words ("O'Neil", "2nd")."""


def query_parts(query: str) -> tuple[list[str], list[str], list[str]]:
    """(content words, names, numbers) of `query`, each in query order without repeats.
    A name is a run of capitalised words that are not stop words ("Ada Berg"); the
    query's first word counts only when it is not a stop word ("Which" is one)."""
    words: list[str] = []
    names: list[str] = []
    numbers: list[str] = []
    run: list[str] = []

    def close() -> None:
        if run and (name := " ".join(run)) not in names:
            names.append(name)
        run.clear()

    for token in _WORD.findall(query):
        lower = token.lower()
        if _NUMERIC.fullmatch(token):
            close()
            if token not in numbers:
                numbers.append(token)
        elif lower in STOPWORDS:
            close()
        elif token[0].isupper():
            run.append(token)
        else:
            close()
            if len(lower) > 1 and lower not in words:
                words.append(lower)
    close()
    return words, names, numbers


def _is_year(number: str) -> bool:
    return len(number) == 4 and number.isdigit() and 1000 <= int(number) <= 2100


class HeuristicWriter:
    """Hypothetical tables from the query's own words; no model (module docstring)."""

    spec = "heuristic"
    label = "heuristic (query words as a table, no model)"
    concurrency = 1

    def __init__(self, n: int, rows: int) -> None:
        self.n, self.rows = n, rows

    def write(self, query: str) -> HypotheticalTables:
        words, names, numbers = query_parts(query)
        if not (words or names or numbers):
            return HypotheticalTables((), "the query has no words to write a table from")
        value_column = ("Year" if numbers and all(map(_is_year, numbers)) else "Value")
        header_tail = (["Name"] if names else []) + ([value_column] if numbers else [])
        n_rows = min(self.rows, max(len(names), len(numbers), 1))
        tables = []
        for k in range(self.n):
            shift = k % len(words) if words else 0
            header = [w.title() for w in words[shift:] + words[:shift]] + header_tail
            body = []
            for i in range(n_rows):
                row: list[Cell] = [""] * len(words)
                row += [names[(k + i) % len(names)]] if names else []
                row += [numbers[(k + i) % len(numbers)]] if numbers else []
                body.append(row)
            tables.append(_table(k, header, body))
        return HypotheticalTables(tuple(tables))


def table_writer(generator: Any, n: int, rows: int) -> TableWriter:
    """The writer for a built generator: the heuristic template for `heuristic`, TARGET's
    prompt for any generator that answers JSON (`openai:`, `local:`); other generators
    (py: plug-ins) raise ConfigError naming the spec."""
    if getattr(generator, "spec", None) == "heuristic":
        return HeuristicWriter(n, rows)
    if callable(getattr(generator, "chat_json", None)):
        return LLMWriter(generator, n, rows)
    raise ConfigError(f"hyse cannot write hypothetical tables with generator "
                      f"'{getattr(generator, 'spec', generator)}': use heuristic, "
                      "openai[:MODEL] or local:MODEL")
