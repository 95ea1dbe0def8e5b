"""The lexical retrievers' fast search and BM25's index on disk: search over the touched
texts only (with MaxScore skipping common terms) ranks exactly as top_k_hits over every
score; a saved index is memory-mapped by the next retriever, and a damaged one is built
again, never trusted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.synthetic import make_corpus
from target_core.config import load_settings
from target_core.retrievers import build_retriever, lexical_cache, postings
from target_core.retrievers.base import top_k_hits
from target_core.retrievers.bm25 import BM25Retriever
from target_core.retrievers.tfidf import TfidfRetriever
from target_core.serialize import table_text
from target_core.table_view import TableView


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str]]:
    tables, queries = make_corpus(1_500, 60, seed=3)
    return [table_text(t, TableView()) for t in tables], [q.query for q in queries]


@pytest.fixture
def pruning(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Lets every query try MaxScore, and records whether it could skip terms."""
    outcomes: list[bool] = []
    original = postings.TopScorer._top_pruned

    def recording(self, rows, weights, top_k):  # type: ignore[no-untyped-def]
        hits = original(self, rows, weights, top_k)
        outcomes.append(hits is not None)
        return hits

    monkeypatch.setattr(postings, "PRUNE_FROM", 0)
    monkeypatch.setattr(postings.TopScorer, "_top_pruned", recording)
    return outcomes


@pytest.mark.parametrize("cls", [BM25Retriever, TfidfRetriever])
@pytest.mark.parametrize("top_k", [1, 10, 40])
def test_search_equals_top_k_over_every_score(cls: type, top_k: int, corpus,
                                              pruning: list[bool]) -> None:
    texts, queries = corpus
    retriever = cls()
    retriever.index(texts, corpus_key="fast")
    for query, hits in zip(queries, retriever.search(queries, top_k=top_k), strict=True):
        assert hits == top_k_hits(retriever.score_all(query), top_k), query
    assert any(pruning) and not all(pruning)  # both paths were taken


def test_identical_texts_tie_to_the_lower_index_when_pruned(pruning: list[bool]) -> None:
    # six identical texts with both terms, scattered among 60 with the common one only
    texts = [f"lake number{i}" for i in range(140)]
    texts[1:120:2] = ["river bank"] * 60
    texts[7:120:20] = ["river delta mud"] * 6
    retriever = BM25Retriever()
    retriever.index(texts, corpus_key="ties")
    hits = retriever.search(["river delta"], top_k=5)[0]
    assert [i for i, _ in hits] == [7, 27, 47, 67, 87]
    assert hits == top_k_hits(retriever.score_all("river delta"), 5)
    assert pruning == [True]


def _cached(cache: Path, texts: list[str], **options: float) -> tuple[BM25Retriever, str]:
    retriever = BM25Retriever(cache_dir=cache, **options)  # type: ignore[arg-type]
    info = retriever.index(texts, corpus_key="corpus-1")
    return retriever, info.details["index_cache"]


def test_a_saved_index_is_loaded_by_a_new_retriever(tmp_path: Path, corpus) -> None:
    texts, queries = corpus
    first, how = _cached(tmp_path, texts)
    assert how == "built, saved to cache"
    second, how = _cached(tmp_path, texts)
    assert how == "loaded from cache"
    assert isinstance(second._postings.data.base, np.memmap)  # type: ignore[union-attr]
    assert second.search(queries, top_k=10) == first.search(queries, top_k=10)
    for query in queries[:10]:
        np.testing.assert_array_equal(second.scores(query), first.scores(query))
        hit = first.search([query], top_k=1)[0][0][0]
        assert second.term_contributions(query, hit) == first.term_contributions(query, hit)
    # other parameters or other texts are another index
    assert _cached(tmp_path, texts, k1=1.2)[1] == "built, saved to cache"
    assert BM25Retriever(cache_dir=tmp_path).index(
        texts[:-1], corpus_key="corpus-2").details["index_cache"] == "built, saved to cache"
    assert len(list(tmp_path.iterdir())) == 3  # no temporary folder left behind


@pytest.mark.parametrize("damage", ["truncate", "meta", "terms", "missing"])
def test_a_damaged_index_is_built_again(tmp_path: Path, corpus, damage: str) -> None:
    texts, queries = corpus
    first, _ = _cached(tmp_path, texts)
    expected = first.search(queries, top_k=10)
    (folder,) = tmp_path.iterdir()
    if damage == "truncate":
        path = folder / "indices.npy"
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "meta":
        (folder / "meta.json").write_text("{not json")
    elif damage == "terms":
        terms = folder / "terms.txt"
        terms.write_text(terms.read_text().rsplit("\n", 1)[0])
    else:
        (folder / "weights.npy").unlink()
    again, how = _cached(tmp_path, texts)
    assert how == "built, saved to cache"
    assert again.search(queries, top_k=10) == expected
    assert _cached(tmp_path, texts)[1] == "loaded from cache"


def test_the_registry_keeps_bm25_indexes_in_the_workspace(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    retriever = build_retriever("bm25", settings)
    info = retriever.index(["lake river", "river delta", "delta"], corpus_key="tiny")
    assert info.details["index_cache"] == "built, saved to cache"
    assert lexical_cache(settings) == tmp_path / "cache" / "lexical"
    assert len(list(lexical_cache(settings).iterdir())) == 1


def test_a_reused_corpus_key_never_loads_other_texts(tmp_path) -> None:
    """The cache is named by the texts' fingerprint too: a caller that passes the same
    corpus_key for other texts of the same count gets their own index."""
    from target_core.retrievers.bm25 import BM25Retriever

    first = ["alpha beta", "gamma delta", "eta theta", "iota kappa"]
    second = ["alpha alpha", "epsilon zeta", "eta theta", "iota kappa"]
    BM25Retriever(cache_dir=tmp_path).index(first, corpus_key="same")
    again = BM25Retriever(cache_dir=tmp_path)
    info = again.index(second, corpus_key="same")
    assert info.details["index_cache"] != "loaded from cache"
    assert again.search(["epsilon"], top_k=2)[0][0][0] == 1


def test_a_build_in_small_chunks_and_blocks_gives_rank_bm25s_scores(
        corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streaming build (texts a chunk at a time, weights a block of terms at a time,
    int32 document ids) stores the same weights, bit for bit, however the work is cut:
    rank-bm25's scores (to its math.log's last bit)."""
    from rank_bm25 import BM25Okapi

    from target_core.retrievers import bm25
    from target_core.textproc import tokenize

    texts, queries = corpus
    texts = [*texts[:300], "", "the of and", *texts[300:400]]  # texts with no term too
    whole = BM25Retriever()
    whole.index(texts, corpus_key="whole")
    monkeypatch.setattr(bm25, "PROGRESS_EVERY", 7)
    monkeypatch.setattr(bm25, "WEIGHT_BLOCK", 5)
    cut = BM25Retriever()
    cut.index(texts, corpus_key="cut")
    assert cut._postings is not None and whole._postings is not None
    assert cut._postings.indices.dtype == np.int32
    for name in ("indptr", "indices", "data", "row_max"):
        np.testing.assert_array_equal(getattr(cut._postings, name),
                                      getattr(whole._postings, name))
    reference = BM25Okapi([tokenize(t) for t in texts])
    for query in queries[:15]:
        np.testing.assert_allclose(cut.scores(query), reference.get_scores(tokenize(query)),
                                   rtol=1e-12, atol=0, err_msg=query)
