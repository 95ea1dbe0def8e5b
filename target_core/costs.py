"""Token and cost estimates before a paid run, so nobody is surprised by a bill.

Embeddings: prices are USD per million input tokens as OpenAI lists them for its models
(as of this writing; a model not listed here gets no price, and a model on any server
but OpenAI's (OPENAI_BASE_URL) is not priced at all, whatever its name:
llm.servers.billed_by_openai). Embeddings already in Chroma are not charged again, so the
estimate is an upper bound for a repeated run. Generation: prompt tokens from the
tables (or schemas) a query's context would hold, capped by the token budget, plus an
assumed reply length per task; cached replies are free, so again an upper bound.

Which parts of a run are paid comes from the registries (target_core.registry): the
retriever's parts (dense's, hybrid's and rows' embedder; summary's embedder and the
generator that writes a summary of every table; HySE's embedder and the generator that
writes hypothetical tables for every query) and the run's generator. `estimate_run_cost`
prices each paid part as one line item:

    estimate = estimate_run_cost(dataset, "summary:openai@openai:gpt-4o-mini", None,
                                 top_k=10, n_queries=100)
    [line.describe() for line in estimate.lines]   # table summaries, their embeddings
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from target_core.embeddings import EMBEDDERS
from target_core.embeddings.openai_embedder import MODEL_MAX_TOKENS
from target_core.generators import GENERATORS
from target_core.registry import Part, Registry
from target_core.retrievers import RETRIEVERS
from target_core.run_config import GenerationConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import TokenCounter, get_counter
from target_core.types import Dataset

EMBEDDING_PRICE_PER_MILLION = {"text-embedding-3-small": 0.02,
                               "text-embedding-3-large": 0.13,
                               "text-embedding-ada-002": 0.10}


@dataclass(frozen=True)
class CostEstimate:
    model: str
    tokens: int
    usd: float | None
    """None when the model has no known price (a local or unknown model)."""
    exact: bool
    """False when tokens are a tiktoken-free estimate."""


def embedding_cost(texts: list[str], queries: list[str], model: str) -> CostEstimate:
    """Tokens (each text capped at the model's limit) and price of embedding everything."""
    counter = get_counter("cl100k_base")
    limit = MODEL_MAX_TOKENS.get(model, 8191)
    tokens = sum(min(n, limit) for n in counter.count_many(texts + queries))
    return CostEstimate(model, tokens, _embedding_usd(model, tokens), counter.exact)


def _embedding_usd(model: str, tokens: int) -> float | None:
    price = EMBEDDING_PRICE_PER_MILLION.get(model)
    return None if price is None else tokens * price / 1e6


def run_embedding_cost(dataset: Dataset, view: TableView, model: str,
                       queries: list[str] | None = None) -> CostEstimate:
    """The estimate for a dense run on `dataset` under `view`: every table text (as the
    view renders it) plus `queries` (default: every query of the dataset)."""
    if queries is None:
        queries = [q.query for q in dataset.queries]
    return embedding_cost([table_text(t, view) for t in dataset.tables], queries, model)


CHAT_PRICE_PER_MILLION = {"gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00),
                          "gpt-4.1-mini": (0.40, 1.60), "gpt-4.1": (2.00, 8.00)}
"""USD per million (input, output) tokens as OpenAI lists them (as of this writing)."""
OUTPUT_TOKENS = {"qa": 60, "fact": 5, "sql": 250}
"""Assumed reply length per task: a short answer, a label, reasoning plus SQL."""
PROMPT_OVERHEAD = 250
"""System message, instructions and the question, in tokens (the prompts are ~150-230)."""


@dataclass(frozen=True)
class ChatCostEstimate:
    model: str
    queries: int
    tokens_in: int
    tokens_out: int
    usd: float | None
    exact: bool
    """False when table tokens are a tiktoken-free estimate (replies are always assumed)."""


def chat_model(generator: str) -> str | None:
    """The chat model a generator spec is billed for, or None (heuristic); an unknown
    generator raises UnknownNameError."""
    return GENERATORS.paid_model(generator)


def generation_cost(dataset: Dataset, generation: GenerationConfig, *, top_k: int,
                    n_queries: int, model: str, window: int | None = None
                    ) -> ChatCostEstimate:
    """Tokens and price of answering `n_queries` queries: per query the prompt overhead
    plus the context (mean table tokens × context k for retrieved tables, the gold
    tables' own tokens for the oracle, nothing for none), capped at the token budget and
    at what the model's context window leaves after the reply's max tokens (`window`:
    default OpenAI's known window for `model`, else TARGET_CONTEXT_WINDOW; the server
    is not asked before a run), plus an assumed reply. Text-to-SQL counts schemas
    instead of tables."""
    from target_core.config import load_settings
    from target_core.generators.context import prompt_view
    from target_core.llm.servers import known_window

    counter = get_counter()
    k = generation.context_k or top_k
    oracle = generation.context == "oracle"
    gold_tables = sum(len(q.gold) for q in dataset.queries) / max(1, len(dataset.queries))
    if dataset.task == "sql":
        per_table = _schema_tokens(dataset, counter)
        mean_table = sum(per_table.values()) / max(1, len(per_table))
        per_database = sum(per_table.values()) / max(1, len(dataset.databases))
        if generation.sql_schema == "database":
            context = per_database * (1 if oracle else min(k, len(dataset.databases)))
        else:
            context = mean_table * (gold_tables if oracle else k)
    else:
        view = prompt_view(TableView())
        tokens = dict(zip((t.key for t in dataset.tables),
                          counter.count_many([table_text(t, view) for t in dataset.tables]),
                          strict=True))
        if oracle:
            context = sum(sum(tokens.get(g, 0) for g in q.gold) for q in dataset.queries) / max(
                1, len(dataset.queries))
        else:
            context = k * sum(tokens.values()) / max(1, len(tokens))
    if generation.context == "none":
        context = 0
    settings = load_settings()
    window = window or known_window(model) or settings.context_window
    reply_limit = settings.max_tokens.get(dataset.task, OUTPUT_TOKENS.get(dataset.task, 60))
    per_query_in = min(PROMPT_OVERHEAD + min(context, generation.token_budget),
                       max(0, window - reply_limit))
    tokens_in = int(per_query_in * n_queries)
    tokens_out = OUTPUT_TOKENS.get(dataset.task, 60) * n_queries
    return ChatCostEstimate(model, n_queries, tokens_in, tokens_out,
                            _chat_usd(model, tokens_in, tokens_out), counter.exact)


def _chat_usd(model: str, tokens_in: int, tokens_out: int) -> float | None:
    price = CHAT_PRICE_PER_MILLION.get(model)
    return None if price is None else (tokens_in * price[0] + tokens_out * price[1]) / 1e6


def _schema_tokens(dataset: Dataset, counter: TokenCounter) -> dict[tuple[str, str], int]:
    """Tokens of each table's CREATE TABLE statement (databases read read-only)."""
    from target_core.generators.context import read_schema

    return {(database, t.name): counter.count(t.create_sql)
            for database, path in dataset.databases.items()
            for t in read_schema(database, path)}


SUMMARY_TOKENS = 80
"""Assumed length of one table's summary reply (a name and a paragraph, as JSON), and so
of the "name\nsummary" text the summary retriever embeds for it."""


def summary_cost(dataset: Dataset, model: str) -> ChatCostEstimate:
    """Tokens and price of the summary retriever's chat calls: per table, the tokens of
    the messages that ask for its summary (system and user content: the instructions,
    the header and the first rows) plus an assumed SUMMARY_TOKENS reply. `queries` of
    the result counts tables here, one call each."""
    from target_core.generators.openai_chat import table_summary_messages
    from target_core.retrievers.summary import SUMMARY_ROWS

    counter = get_counter()
    prompts = [m["content"] for t in dataset.tables
               for m in table_summary_messages(t, SUMMARY_ROWS)]
    tokens_in = sum(counter.count_many(prompts))
    tokens_out = SUMMARY_TOKENS * len(dataset.tables)
    return ChatCostEstimate(model, len(dataset.tables), tokens_in, tokens_out,
                            _chat_usd(model, tokens_in, tokens_out), counter.exact)


@dataclass(frozen=True)
class CostLine:
    """One paid part of a run: which registered component, for what, tokens and price."""

    part: Part
    """The paid component: Part("embedder", "openai/...") or Part("generator", "openai:...")."""
    model: str
    what: str
    """What the tokens buy: "12 tables + 30 queries", "12 table summaries", "30 queries"."""
    tokens_in: int
    tokens_out: int
    """Reply tokens (assumed lengths); 0 for embeddings."""
    usd: float | None
    """None when the model has no known price (a local or unknown model)."""
    exact: bool
    """False when the input tokens are a tiktoken-free estimate."""

    def describe(self) -> str:
        """One line: model, tokens, what for, price, and what is not paid twice."""
        if self.part.kind == "embedder":
            tokens = f"{self.tokens_in:,} tokens to embed {self.what}"
            free = "embeddings already in Chroma are free"
        else:
            tokens = (f"{self.tokens_in:,} prompt + {self.tokens_out:,} reply tokens "
                      f"for {self.what}")
            free = "cached replies are free"
        price = "no known price" if self.usd is None else f"about ${self.usd:,.4f}"
        return f"{self.model}: {tokens} ({price}; {free})"


@dataclass(frozen=True)
class RunCostEstimate:
    """The line items of one run's bill; no lines means nothing in the run is paid."""

    retriever: str
    generator: str | None
    lines: tuple[CostLine, ...]

    @property
    def usd(self) -> float:
        """Total of the lines with a known price (see `unpriced` for the others)."""
        return sum(line.usd for line in self.lines if line.usd is not None)

    @property
    def unpriced(self) -> tuple[str, ...]:
        """Models of lines with no known price."""
        return tuple(line.model for line in self.lines if line.usd is None)

    @property
    def exact(self) -> bool:
        """Every line's token counts are exact (tiktoken, no assumed reply lengths)."""
        return all(line.exact for line in self.lines)


def estimate_run_cost(dataset: Dataset, retriever: str, generation: GenerationConfig | None,
                      *, top_k: int, n_queries: int, view: TableView | None = None
                      ) -> RunCostEstimate:
    """The cost of one run of `retriever` (and `generation`, if any) over `n_queries`
    queries of `dataset`, one line per paid part. `view` is the table view (default
    TableView()); the first `n_queries` queries stand for the run's sample. Unknown
    specs raise UnknownNameError."""
    view = view or TableView()
    queries = [q.query for q in dataset.queries[:n_queries]]
    entry, arg = RETRIEVERS.parse(retriever)
    lines: list[CostLine] = []
    if (priced := RETRIEVER_COSTS.get(entry.name)) is not None:
        lines += priced(dataset, entry.parts(arg), view, queries, arg)
    if generation is not None and (model := chat_model(generation.generator)):
        chat = generation_cost(dataset, generation, top_k=top_k, n_queries=n_queries,
                               model=model)
        lines.append(CostLine(Part("generator", generation.generator), model,
                              _count(n_queries, "query", "queries"), chat.tokens_in,
                              chat.tokens_out, chat.usd, chat.exact))
    return RunCostEstimate(retriever, generation.generator if generation else None,
                           tuple(lines))


def _table_embeddings(dataset: Dataset, parts: Sequence[Part], view: TableView,
                      queries: list[str], arg: str = "") -> list[CostLine]:
    """dense, hybrid: every table as the view renders it, and the queries."""
    lines = []
    for part in parts:
        if part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            cost = run_embedding_cost(dataset, view, model, queries)
            what = (f"{_count(len(dataset.tables), 'table', 'tables')} + "
                    f"{_count(len(queries), 'query', 'queries')}")
            lines.append(CostLine(part, model, what, cost.tokens, 0, cost.usd, cost.exact))
    return lines


def _summaries(dataset: Dataset, parts: Sequence[Part], view: TableView,
               queries: list[str], arg: str = "") -> list[CostLine]:
    """summary: a chat call per table, then the summaries (SUMMARY_TOKENS each, the view
    does not apply) and the queries embedded."""
    lines = []
    n = len(dataset.tables)
    for part in sorted(parts, key=lambda p: p.kind != "generator"):  # summaries come first
        if part.kind == "generator" and (model := GENERATORS.paid_model(part.spec)):
            chat = summary_cost(dataset, model)
            lines.append(CostLine(part, model, _count(n, "table summary", "table summaries"),
                                  chat.tokens_in, chat.tokens_out, chat.usd, chat.exact))
        elif part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            cost = embedding_cost([], queries, model)
            tokens = cost.tokens + SUMMARY_TOKENS * n
            what = (f"{_count(n, 'table summary', 'table summaries')} + "
                    f"{_count(len(queries), 'query', 'queries')}")
            lines.append(CostLine(part, model, what, tokens, 0, _embedding_usd(model, tokens),
                                  False))
    return lines


def _row_embeddings(dataset: Dataset, parts: Sequence[Part], view: TableView,
                    queries: list[str], arg: str = "") -> list[CostLine]:
    """rows: every row text the view lets through (retrievers/rows.py), and the queries."""
    from target_core.retrievers.rows import row_texts

    lines = []
    for part in parts:
        if part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            texts = [text for t in dataset.tables for text in row_texts(t, view)]
            cost = embedding_cost(texts, queries, model)
            what = (f"{_count(len(texts), 'row', 'rows')} of "
                    f"{_count(len(dataset.tables), 'table', 'tables')} + "
                    f"{_count(len(queries), 'query', 'queries')}")
            lines.append(CostLine(part, model, what, cost.tokens, 0, cost.usd, cost.exact))
    return lines


def _hypothetical(dataset: Dataset, parts: Sequence[Part], view: TableView,
                  queries: list[str], arg: str = "") -> list[CostLine]:
    """hyse: per query one chat call asking for N tables (its messages, and a reply of at
    most the hyse max_tokens), then the tables and queries embedded, and per query its
    tables (at most the reply's length) and itself."""
    from target_core.config import MAX_TOKENS
    from target_core.generators.hypothetical import hyse_messages
    from target_core.retrievers import hyse_options

    options = hyse_options(arg)
    reply = MAX_TOKENS["hyse"]
    lines = []
    for part in sorted(parts, key=lambda p: p.kind != "generator"):  # writing comes first
        if part.kind == "generator" and (model := GENERATORS.paid_model(part.spec)):
            counter = get_counter()
            prompts = [m["content"] for q in queries
                       for m in hyse_messages(q, options.n, options.rows)]
            tokens_in, tokens_out = sum(counter.count_many(prompts)), reply * len(queries)
            lines.append(CostLine(part, model, _count(len(queries), "query's tables",
                                                      "queries' tables"),
                                  tokens_in, tokens_out, _chat_usd(model, tokens_in, tokens_out),
                                  False))
        elif part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            cost = run_embedding_cost(dataset, view, model, queries)
            tokens = cost.tokens + reply * len(queries)
            what = (f"{_count(len(dataset.tables), 'table', 'tables')} + "
                    f"{_count(len(queries), 'query', 'queries')} with "
                    f"{options.n} hypothetical tables each")
            lines.append(CostLine(part, model, what, tokens, 0, _embedding_usd(model, tokens),
                                  False))
    return lines


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


RETRIEVER_COSTS: dict[str, Callable[[Dataset, Sequence[Part], TableView, list[str], str],
                                    list[CostLine]]] = {
    "dense": _table_embeddings, "hybrid": _table_embeddings, "summary": _summaries,
    "rows": _row_embeddings, "hyse": _hypothetical}
"""How each retriever family uses its paid parts. A family with paid parts and no entry
here gets no estimate, and tests/test_costs.py fails for its examples."""


def paid_parts(part: Part) -> list[tuple[Part, str]]:
    """`part` and the components it uses, recursively, that an API bills, with the
    billed model: paid_parts(Part("retriever", "hybrid:openai")) ->
    [(Part("embedder", "openai"), "text-embedding-3-small")]."""
    registry = REGISTRIES[part.kind]
    found = [(part, model)] if (model := registry.paid_model(part.spec)) else []
    for used in registry.parts(part.spec):
        found += paid_parts(used)
    return found


REGISTRIES: dict[str, Registry] = {r.kind: r for r in (RETRIEVERS, GENERATORS, EMBEDDERS)}
"""The registries by kind, to follow Part.kind."""
