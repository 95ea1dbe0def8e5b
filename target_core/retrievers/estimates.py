"""How each retriever family uses its paid parts, as cost estimators its registry entry
carries (Entry.cost, target_core.registry.CostEstimator): one CostLine per paid part of
a spec, counted and priced by target_core/pricing.py. costs.estimate_run_cost asks the
entry, so a new family's cost is declared in its own entry, and a family with no
estimator is free.

Light on purpose (the registry imports it): the registries of parts and what a family
needs to write its prompts are imported when an estimate is made.
"""

from __future__ import annotations

from collections.abc import Sequence

from target_core.pricing import (
    ChatCostEstimate,
    count_phrase,
    embedding_cost,
    embedding_usd,
    prompt_cost,
    run_embedding_cost,
)
from target_core.registry import CostLine, Part, split_options
from target_core.table_view import TableView
from target_core.types import Dataset

SUMMARY_TOKENS = 80
"""Assumed length of one table's summary reply (a name and a paragraph, as JSON), and so
of the "name\\nsummary" text the summary retriever embeds for it."""


def _tables_and_queries(dataset: Dataset, queries: list[str]) -> str:

    return (f"{count_phrase(len(dataset.tables), 'table', 'tables')} + "
            f"{count_phrase(len(queries), 'query', 'queries')}")


def table_embeddings(dataset: Dataset, parts: Sequence[Part], view: TableView,
                     queries: list[str], arg: str = "") -> list[CostLine]:
    """dense, hybrid: every table as the view renders it, and the queries."""
    from target_core.embeddings import EMBEDDERS

    lines = []
    for part in parts:
        if part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            cost = run_embedding_cost(dataset, view, model, queries)
            lines.append(CostLine(part, model, _tables_and_queries(dataset, queries),
                                  cost.tokens, 0, cost.usd, cost.exact))
    return lines


def summary_cost(dataset: Dataset, model: str) -> ChatCostEstimate:
    """Tokens and price of the summary retriever's chat calls: per table, the tokens of
    the messages that ask for its summary (system and user content: the instructions,
    the header and the first rows) plus an assumed SUMMARY_TOKENS reply. `queries` of
    the result counts tables here, one call each."""
    from target_core.generators.openai_chat import table_summary_messages
    from target_core.retrievers.summary import SUMMARY_ROWS

    prompts = [m["content"] for t in dataset.tables
               for m in table_summary_messages(t, SUMMARY_ROWS)]
    return prompt_cost(prompts, len(dataset.tables), SUMMARY_TOKENS, model)


def summaries(dataset: Dataset, parts: Sequence[Part], view: TableView,
              queries: list[str], arg: str = "") -> list[CostLine]:
    """summary: a chat call per table, then the summaries (SUMMARY_TOKENS each, the view
    does not apply) and the queries embedded."""
    from target_core.embeddings import EMBEDDERS
    from target_core.generators import GENERATORS

    lines = []
    n = len(dataset.tables)
    for part in sorted(parts, key=lambda p: p.kind != "generator"):  # summaries come first
        if part.kind == "generator" and (model := GENERATORS.paid_model(part.spec)):
            chat = summary_cost(dataset, model)
            lines.append(CostLine(part, model,
                                  count_phrase(n, "table summary", "table summaries"),
                                  chat.tokens_in, chat.tokens_out, chat.usd, chat.exact))
        elif part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            cost = embedding_cost([], queries, model)
            tokens = cost.tokens + SUMMARY_TOKENS * n
            what = (f"{count_phrase(n, 'table summary', 'table summaries')} + "
                    f"{count_phrase(len(queries), 'query', 'queries')}")
            lines.append(CostLine(part, model, what, tokens, 0, embedding_usd(model, tokens),
                                  False))
    return lines


def row_embeddings(dataset: Dataset, parts: Sequence[Part], view: TableView,
                   queries: list[str], arg: str = "") -> list[CostLine]:
    """rows: every row text the view lets through (retrievers/rows.py), and the queries."""
    from target_core.embeddings import EMBEDDERS
    from target_core.retrievers.rows import row_texts

    lines = []
    for part in parts:
        if part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            texts = [text for t in dataset.tables for text in row_texts(t, view)]
            cost = embedding_cost(texts, queries, model)
            what = (f"{count_phrase(len(texts), 'row', 'rows')} of "
                    f"{_tables_and_queries(dataset, queries)}")
            lines.append(CostLine(part, model, what, cost.tokens, 0, cost.usd, cost.exact))
    return lines


def hypothetical(dataset: Dataset, parts: Sequence[Part], view: TableView,
                 queries: list[str], arg: str = "") -> list[CostLine]:
    """hyse: per query one chat call asking for N tables (its messages, and a reply of at
    most the hyse max_tokens), then the tables and queries embedded, and per query its
    tables (at most the reply's length) and itself."""
    from target_core.config import MAX_TOKENS
    from target_core.embeddings import EMBEDDERS
    from target_core.generators import GENERATORS
    from target_core.generators.hypothetical import hyse_messages
    from target_core.retrievers.hyse import parse_hyse_options

    options = parse_hyse_options(split_options(arg)[1])  # as RETRIEVERS' hyse_options
    reply = MAX_TOKENS["hyse"]
    lines = []
    for part in sorted(parts, key=lambda p: p.kind != "generator"):  # writing comes first
        if part.kind == "generator" and (model := GENERATORS.paid_model(part.spec)):
            prompts = [m["content"] for q in queries
                       for m in hyse_messages(q, options.n, options.rows)]
            chat = prompt_cost(prompts, len(queries), reply, model)
            lines.append(CostLine(part, model, count_phrase(len(queries), "query's tables",
                                                            "queries' tables"),
                                  chat.tokens_in, chat.tokens_out, chat.usd, False))
        elif part.kind == "embedder" and (model := EMBEDDERS.paid_model(part.spec)):
            cost = run_embedding_cost(dataset, view, model, queries)
            tokens = cost.tokens + reply * len(queries)
            what = (f"{_tables_and_queries(dataset, queries)} with "
                    f"{options.n} hypothetical tables each")
            lines.append(CostLine(part, model, what, tokens, 0, embedding_usd(model, tokens),
                                  False))
    return lines
