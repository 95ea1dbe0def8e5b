"""Token and cost estimates before a paid run, so nobody is surprised by a bill.

Embeddings: prices are USD per million input tokens as OpenAI lists them for its models
(as of this writing, target_core/pricing.py; a model not listed there gets no price,
and a model on any server but OpenAI's (OPENAI_BASE_URL) is not priced at all, whatever
its name: llm.servers.billed_by_openai). Embeddings already in Chroma are not charged again, so the
estimate is an upper bound for a repeated run. Generation: prompt tokens from the
tables (or schemas) a query's context would hold, capped by the token budget, plus an
assumed reply length per task; cached replies are free, so again an upper bound.

Which parts of a run are paid comes from the registries (target_core.registry): the
retriever's parts (dense's, hybrid's and rows' embedder; summary's embedder and the
generator that writes a summary of every table; HySE's embedder and the generator that
writes hypothetical tables for every query) and the run's generator. How a retriever
family uses its paid parts is its entry's `cost` (retrievers/estimates.py); counting
and prices are target_core/pricing.py's. `estimate_run_cost` prices each paid part as
one line item:

    estimate = estimate_run_cost(dataset, "summary:openai@openai:gpt-4o-mini", None,
                                 top_k=10, n_queries=100)
    [line.describe() for line in estimate.lines]   # table summaries, their embeddings
"""

from __future__ import annotations

from dataclasses import dataclass

from target_core.embeddings import EMBEDDERS
from target_core.generators import GENERATORS
from target_core.pricing import (
    CHAT_PRICE_PER_MILLION,
    EMBEDDING_PRICE_PER_MILLION,
    ChatCostEstimate,
    CostEstimate,
    chat_usd,
    count_phrase,
    embedding_cost,
    run_embedding_cost,
)
from target_core.registry import CostLine, Part, Registry
from target_core.retrievers import RETRIEVERS
from target_core.run_config import GenerationConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import TokenCounter, get_counter
from target_core.types import Dataset

__all__ = ["CHAT_PRICE_PER_MILLION", "EMBEDDING_PRICE_PER_MILLION", "ChatCostEstimate",
           "CostEstimate", "CostLine", "RunCostEstimate", "chat_model", "embedding_cost",
           "estimate_run_cost", "generation_cost", "paid_parts", "run_embedding_cost"]

PROMPT_OVERHEAD = 250
"""System message, instructions and the question, in tokens (the prompts are ~150-230)."""


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
    from target_core.tasks import task_rules

    counter = get_counter()
    k = generation.context_k or top_k
    oracle = generation.context == "oracle"
    gold_tables = sum(len(q.gold) for q in dataset.queries) / max(1, len(dataset.queries))
    if task_rules(dataset.task).answers_sql:  # the prompt holds database schemas
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
    expected = task_rules(dataset.task).expected_reply_tokens  # the task's entry
    reply_limit = settings.max_tokens.get(dataset.task, expected)
    per_query_in = min(PROMPT_OVERHEAD + min(context, generation.token_budget),
                       max(0, window - reply_limit))
    tokens_in = int(per_query_in * n_queries)
    tokens_out = expected * n_queries
    return ChatCostEstimate(model, n_queries, tokens_in, tokens_out,
                            chat_usd(model, tokens_in, tokens_out), counter.exact)


def _schema_tokens(dataset: Dataset, counter: TokenCounter) -> dict[tuple[str, str], int]:
    """Tokens of each table's CREATE TABLE statement (databases read read-only)."""
    from target_core.generators.context import read_schema

    return {(database, t.name): counter.count(t.create_sql)
            for database, path in dataset.databases.items()
            for t in read_schema(database, path)}


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
    if entry.cost is not None:  # the family's own estimator (Entry.cost)
        lines += entry.cost(dataset, entry.parts(arg), view, queries, arg)
    if generation is not None and (model := chat_model(generation.generator)):
        chat = generation_cost(dataset, generation, top_k=top_k, n_queries=n_queries,
                               model=model)
        lines.append(CostLine(Part("generator", generation.generator), model,
                              count_phrase(n_queries, "query", "queries"), chat.tokens_in,
                              chat.tokens_out, chat.usd, chat.exact))
    return RunCostEstimate(retriever, generation.generator if generation else None,
                           tuple(lines))


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
