"""The retriever contract, which tests/test_registry.py runs on every example spec of
every registered retriever (STYLE: BEIR's base class had a retriever that could not be
instantiated and no test noticed), and retriever-specific checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from target_core.config import Settings, load_settings
from target_core.datasets.folder import load_folder
from target_core.engine.runner import run_retrieval
from target_core.errors import ConfigError, UnknownNameError
from target_core.retrievers import build_retriever
from target_core.retrievers.base import NotIndexedError, Retriever, rank_in, top_k_hits
from target_core.run_config import RunConfig
from target_core.table_view import TableView

HANDMADE = Path(__file__).parent / "fixtures" / "handmade-qa"


@pytest.fixture
def settings(tmp_path: Path, fake_openai):
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "OPENAI_API_KEY": "sk-test-contract",
                                  "OPENAI_BASE_URL": fake_openai.base_url})


def retriever_contract(spec: str, settings: Settings) -> None:
    """Build `spec`, then index the hand-made corpus and search it through the protocol."""
    dataset = load_folder(HANDMADE)
    queries = [q.query for q in dataset.queries]
    retriever = build_retriever(spec, settings)
    assert isinstance(retriever, Retriever)
    assert retriever.spec.split(":")[0] == spec.split(":")[0]
    with pytest.raises(NotIndexedError):
        retriever.search(queries[:1], top_k=2)
    texts = retriever.prepare_texts(dataset.tables, TableView())
    assert len(texts) == len(dataset.tables) and all(isinstance(t, str) and t for t in texts)
    info = retriever.index(texts, corpus_key=f"contract-{spec}")
    assert info.n_texts == len(texts) and info.seconds >= 0
    results = retriever.search(queries, top_k=2)
    assert len(results) == len(queries)
    for query, hits in zip(queries, results, strict=True):
        assert len(hits) <= 2
        assert all(isinstance(i, int) and 0 <= i < len(texts) for i, _ in hits)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        scores = retriever.score_all(query)
        if scores is not None:
            assert scores.shape == (len(texts),)
            assert all(np.isfinite(scores[i]) for i, _ in hits)
    if spec != "no-context":
        assert any(results), spec


def test_prepare_texts_is_the_view_unless_a_retriever_writes_its_own(tmp_path: Path) -> None:
    from target_core.retrievers.bm25 import BM25Retriever
    from target_core.serialize import table_text

    dataset = load_folder(HANDMADE)
    view = TableView(rows=0)
    rendered = [table_text(t, view) for t in dataset.tables]
    assert BM25Retriever().prepare_texts(dataset.tables, view) == rendered
    summary = build_retriever("summary:minilm",
                              load_settings(environ={"TARGET_WORKSPACE": str(tmp_path)}))
    texts = summary.prepare_texts(dataset.tables, view)
    assert len(texts) == len(rendered) and all(texts) and texts != rendered


def test_a_retriever_missing_a_protocol_method_cannot_be_built() -> None:
    class IndexOnly(Retriever):
        spec = "index-only"

        def index(self, texts, *, corpus_key, progress=None):  # noqa: ANN001, ANN201
            return None

    with pytest.raises(TypeError, match="abstract"):
        IndexOnly()


def test_unknown_and_misconfigured_specs(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'tfidf'"):
        build_retriever("tf-idf", load_settings(environ={}))
    no_key = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path)})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_retriever("dense:openai", no_key)
    with pytest.raises(UnknownNameError):
        build_retriever("dense:word2vec", no_key)


def test_dense_openai_run_end_to_end(settings, fake_openai) -> None:
    run = run_retrieval(RunConfig("demo-qa", "dense:openai", limit=15), settings=settings).run
    assert run.status == "complete" and run.n_done == 15
    assert run.index_info["embedder"].startswith("openai")
    assert fake_openai.embedding_requests()
    assert 0 <= run.metrics["recall@10"] <= 1


def test_top_k_hits_and_rank_with_no_match() -> None:
    scores = np.array([0.5, -np.inf, 0.5, 0.9])
    assert top_k_hits(scores, 10) == [(3, 0.9), (0, 0.5), (2, 0.5)]
    assert rank_in(scores, 2) == 3 and rank_in(scores, 1) is None
    assert top_k_hits(np.full(3, -np.inf), 2) == []
