"""Token and cost estimates before a paid run, so nobody is surprised by a bill.

Prices are USD per million input tokens as OpenAI lists them for its embedding models
(as of this writing; an OpenAI-compatible local server costs nothing, and a model not
listed here gets no price). Embeddings already in Chroma are not charged again, so the
estimate is an upper bound for a repeated run.
"""

from __future__ import annotations

from dataclasses import dataclass

from target_core.embeddings.openai_embedder import DEFAULT_MODEL, MODEL_MAX_TOKENS
from target_core.serialize import table_text
from target_core.tokens import get_counter
from target_core.types import Dataset, TableView

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


def openai_model(spec: str) -> str | None:
    """The OpenAI embedding model a retriever spec uses, or None if it uses none."""
    family, _, arg = spec.partition(":")
    if family not in ("dense", "hybrid") or not arg.startswith("openai"):
        return None
    return arg.partition("/")[2] or DEFAULT_MODEL


def embedding_cost(texts: list[str], queries: list[str], model: str) -> CostEstimate:
    """Tokens (each text capped at the model's limit) and price of embedding everything."""
    counter = get_counter("cl100k_base")
    limit = MODEL_MAX_TOKENS.get(model, 8191)
    tokens = sum(min(n, limit) for n in counter.count_many(texts + queries))
    price = EMBEDDING_PRICE_PER_MILLION.get(model)
    return CostEstimate(model, tokens, None if price is None else tokens * price / 1e6,
                        counter.exact)


def run_embedding_cost(dataset: Dataset, view: TableView, model: str) -> CostEstimate:
    """The estimate for a dense run on `dataset` under `view`: every table text (as the
    view renders it) plus every query."""
    return embedding_cost([table_text(t, view) for t in dataset.tables],
                          [q.query for q in dataset.queries], model)
