"""Every registered retriever through the same contract (STYLE: BEIR's base class had a
retriever that could not be instantiated and no test noticed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from target_core.config import load_settings
from target_core.datasets.folder import load_folder
from target_core.engine.runner import run_retrieval
from target_core.errors import ConfigError, UnknownNameError
from target_core.retrievers import RETRIEVERS, build_retriever, split_spec
from target_core.retrievers.base import NotIndexedError, Retriever, rank_in, top_k_hits
from target_core.serialize import table_text
from target_core.types import RunConfig, TableView

SPECS = ["bm25", "tfidf", "no-context", "dense:minilm", "hybrid", "dense:openai",
         "hybrid:openai", "summary:minilm", "summary:openai@openai"]


@pytest.fixture
def settings(tmp_path: Path, fake_openai):
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "OPENAI_API_KEY": "sk-test-contract",
                                  "OPENAI_BASE_URL": fake_openai.base_url})


@pytest.fixture(scope="module")
def corpus(handmade_dir_module: Path) -> tuple[list[str], list[str]]:
    dataset = load_folder(handmade_dir_module)
    return ([table_text(t, TableView()) for t in dataset.tables],
            [q.query for q in dataset.queries])


@pytest.fixture(scope="module")
def handmade_dir_module() -> Path:
    return Path(__file__).parent / "fixtures" / "handmade-qa"


def test_every_family_is_covered_by_the_contract() -> None:
    assert {split_spec(spec)[0].name for spec in SPECS} == set(RETRIEVERS)


@pytest.mark.parametrize("spec", SPECS)
def test_contract(spec: str, settings, corpus) -> None:
    texts, queries = corpus
    retriever = build_retriever(spec, settings)
    assert isinstance(retriever, Retriever)
    assert retriever.spec.split(":")[0] == spec.split(":")[0]
    with pytest.raises(NotIndexedError):
        retriever.search(queries[:1], top_k=2)
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
