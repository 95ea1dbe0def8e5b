"""Cost estimates for paid embedding runs."""

from __future__ import annotations

import pytest

from target_core.costs import embedding_cost, openai_model
from target_core.tokens import estimate_tokens


def test_openai_model_from_spec() -> None:
    assert openai_model("dense:openai") == "text-embedding-3-small"
    assert openai_model("hybrid:openai/text-embedding-3-large") == "text-embedding-3-large"
    assert openai_model("dense:minilm") is None and openai_model("bm25") is None


def test_estimate_adds_texts_and_queries_and_prices_known_models() -> None:
    texts, queries = ["| Lake | Depth |", "a b c"], ["which lake?"]
    expected = sum(estimate_tokens(t) for t in texts + queries)
    estimate = embedding_cost(texts, queries, "text-embedding-3-small")
    if not estimate.exact:  # offline: the labelled estimate
        assert estimate.tokens == expected
    assert estimate.usd == pytest.approx(estimate.tokens * 0.02 / 1e6)
    assert embedding_cost(texts, queries, "my-local-model").usd is None


def test_run_estimate_counts_the_view(handmade_dir) -> None:
    from target_core.costs import run_embedding_cost
    from target_core.datasets.folder import load_folder
    from target_core.types import TableView

    dataset = load_folder(handmade_dir)
    full = run_embedding_cost(dataset, TableView(), "text-embedding-3-small")
    header = run_embedding_cost(dataset, TableView(rows=0), "text-embedding-3-small")
    assert 0 < header.tokens < full.tokens
