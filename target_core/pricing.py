"""Token counts and prices of paid models, below the retrievers: what a retriever
family's cost estimator (its registry entry's `cost`, retrievers/estimates.py) and
costs.py (a whole run's bill) count and price with.

Prices are USD per million tokens as OpenAI lists them (as of this writing); a model not
listed gets no price (None). Token counts come from `get_counter` (tiktoken when it
loads, else a labelled estimate: `exact` False); tests swap it for a word counter here,
the one place every estimate counts through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import get_counter
from target_core.types import Dataset

EMBEDDING_PRICE_PER_MILLION = {"text-embedding-3-small": 0.02,
                               "text-embedding-3-large": 0.13,
                               "text-embedding-ada-002": 0.10}
CHAT_PRICE_PER_MILLION = {"gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00),
                          "gpt-4.1-mini": (0.40, 1.60), "gpt-4.1": (2.00, 8.00)}
"""USD per million (input, output) tokens as OpenAI lists them (as of this writing)."""


@dataclass(frozen=True)
class CostEstimate:
    model: str
    tokens: int
    usd: float | None
    """None when the model has no known price (a local or unknown model)."""
    exact: bool
    """False when tokens are a tiktoken-free estimate."""


@dataclass(frozen=True)
class ChatCostEstimate:
    model: str
    queries: int
    tokens_in: int
    tokens_out: int
    usd: float | None
    exact: bool
    """False when table tokens are a tiktoken-free estimate (replies are always assumed)."""


def embedding_cost(texts: list[str], queries: list[str], model: str) -> CostEstimate:
    """Tokens (each text capped at the model's limit) and price of embedding everything."""
    from target_core.embeddings.openai_embedder import MODEL_MAX_TOKENS

    counter = get_counter("cl100k_base")
    limit = MODEL_MAX_TOKENS.get(model, 8191)
    tokens = sum(min(n, limit) for n in counter.count_many(texts + queries))
    return CostEstimate(model, tokens, embedding_usd(model, tokens), counter.exact)


def embedding_usd(model: str, tokens: int) -> float | None:
    price = EMBEDDING_PRICE_PER_MILLION.get(model)
    return None if price is None else tokens * price / 1e6


def run_embedding_cost(dataset: Dataset, view: TableView, model: str,
                       queries: list[str] | None = None) -> CostEstimate:
    """The estimate for a dense run on `dataset` under `view`: every table text (as the
    view renders it) plus `queries` (default: every query of the dataset)."""
    if queries is None:
        queries = [q.query for q in dataset.queries]
    return embedding_cost([table_text(t, view) for t in dataset.tables], queries, model)


def chat_usd(model: str, tokens_in: int, tokens_out: int) -> float | None:
    price = CHAT_PRICE_PER_MILLION.get(model)
    return None if price is None else (tokens_in * price[0] + tokens_out * price[1]) / 1e6


def prompt_cost(prompts: Sequence[str], calls: int, reply_tokens: int, model: str
                ) -> ChatCostEstimate:
    """`calls` chat calls whose messages' contents are `prompts` (all calls together),
    each with an assumed reply of `reply_tokens`."""
    counter = get_counter()
    tokens_in = sum(counter.count_many(list(prompts)))
    tokens_out = reply_tokens * calls
    return ChatCostEstimate(model, calls, tokens_in, tokens_out,
                            chat_usd(model, tokens_in, tokens_out), counter.exact)


def count_phrase(n: int, one: str, many: str) -> str:
    """"1 table", "1,204 tables": what a cost line's tokens buy."""
    return f"{n:,} {one if n == 1 else many}"
