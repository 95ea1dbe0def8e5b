"""Lexical retrievers: BM25 equals rank-bm25, TF-IDF equals scikit-learn's cosine,
no-context retrieves nothing; the shared contract (ties, errors, progress, determinism)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from target_core.datasets.folder import load_folder
from target_core.errors import TargetError
from target_core.retrievers.base import IndexInfo, Retriever
from target_core.retrievers.bm25 import BM25Retriever, NotIndexedError
from target_core.retrievers.no_context import NoContextRetriever
from target_core.retrievers.tfidf import TfidfRetriever
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.textproc import tokenize

DEMO_QA = Path(__file__).parent.parent / "data" / "demo" / "demo-qa"
CLASSES = (BM25Retriever, TfidfRetriever, NoContextRetriever)
RANKERS = (BM25Retriever, TfidfRetriever)

# Ten documents: "lake" is in all of them, "river" in seven (more than half: a negative
# idf, floored), "delta" in exactly five (idf 0), one document is empty and one has only
# stop words; several terms repeat within a document.
EDGE_DOCS = [
    "lake river delta fjord fjord fjord",
    "lake river delta glacier",
    "Lake RIVER delta moraine moraine",
    "lake river delta",
    "lake river delta marsh marsh marsh marsh marsh marsh marsh",
    "lake river",
    "lake river tarn tarn",
    "lake",
    "",
    "lake of the and",
]
EDGE_QUERIES = [
    "lake",                        # in every document
    "river",                       # in most documents: negative idf, floored
    "delta",                       # in exactly half: idf 0
    "fjord",
    "fjord fjord marsh",           # repeated query term counts twice
    "zeppelin",                    # unknown term
    "zeppelin glacier",            # unknown + known
    "",                            # empty query
    "the of and",                  # only stop words
    "Tarn? TARN! moraine, lake.",  # case and punctuation
]


@pytest.fixture(scope="module")
def demo_texts() -> tuple[list[str], list[str]]:
    dataset = load_folder(DEMO_QA)
    return ([table_text(t, TableView()) for t in dataset.tables],
            [q.query for q in dataset.queries])


def reference_scores(texts: list[str], queries: list[str]) -> list[np.ndarray]:
    bm25 = BM25Okapi([tokenize(t) for t in texts])
    return [bm25.get_scores(tokenize(q)) for q in queries]


def indexed(cls: type, texts: list[str]) -> Retriever:
    retriever = cls()
    retriever.index(texts, corpus_key="test")
    return retriever


# -- BM25 against rank-bm25 -------------------------------------------------------------

def test_bm25_equals_rank_bm25_on_the_demo_corpus(demo_texts) -> None:
    texts, queries = demo_texts
    retriever = indexed(BM25Retriever, texts)
    for query, expected in zip(queries, reference_scores(texts, queries), strict=True):
        np.testing.assert_allclose(retriever.scores(query), expected, rtol=0, atol=1e-6)


def test_bm25_equals_rank_bm25_on_edge_cases() -> None:
    retriever = indexed(BM25Retriever, EDGE_DOCS)
    for query, expected in zip(EDGE_QUERIES, reference_scores(EDGE_DOCS, EDGE_QUERIES),
                               strict=True):
        np.testing.assert_allclose(retriever.scores(query), expected, rtol=0, atol=1e-6,
                                   err_msg=query)


def test_edge_cases_exercise_the_idf_floor() -> None:
    reference = BM25Okapi([tokenize(t) for t in EDGE_DOCS])
    floor = reference.epsilon * reference.average_idf
    assert reference.idf["lake"] == reference.idf["river"] == floor
    assert floor > 0
    assert reference.idf["delta"] == 0
    scores = indexed(BM25Retriever, EDGE_DOCS).scores("river")
    assert scores[0] > 0 and scores[7] == 0  # floored, not negative; absent is zero


def test_bm25_repeated_query_terms_add_up() -> None:
    retriever = indexed(BM25Retriever, EDGE_DOCS)
    np.testing.assert_allclose(retriever.scores("fjord fjord"),
                               2 * retriever.scores("fjord"))


def test_bm25_unknown_and_empty_queries_score_zero() -> None:
    retriever = indexed(BM25Retriever, EDGE_DOCS)
    for query in ("zeppelin", "", "the of and"):
        assert not retriever.scores(query).any()
    np.testing.assert_allclose(retriever.scores("zeppelin glacier"),
                               retriever.scores("glacier"))


def test_bm25_index_info() -> None:
    info = BM25Retriever().index(EDGE_DOCS, corpus_key="edge")
    assert isinstance(info, IndexInfo)
    assert info.n_texts == len(EDGE_DOCS)
    assert info.details["vocabulary_size"] == len({t for d in EDGE_DOCS for t in tokenize(d)})
    assert info.seconds >= 0


# -- TF-IDF -----------------------------------------------------------------------------

def test_tfidf_equals_scikit_learn_cosine(demo_texts) -> None:
    texts, queries = demo_texts
    vectorizer = TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None,
                                 ngram_range=(1, 2), sublinear_tf=True)
    documents = vectorizer.fit_transform(texts)
    expected = cosine_similarity(vectorizer.transform(queries[:20]), documents)
    retriever = indexed(TfidfRetriever, texts)
    for query, row in zip(queries[:20], expected, strict=True):
        np.testing.assert_allclose(retriever.scores(query), row, rtol=0, atol=1e-9)


def test_tfidf_finds_a_table_by_its_exact_title(handmade_dir) -> None:
    dataset = load_folder(handmade_dir)
    texts = [table_text(t, TableView()) for t in dataset.tables]
    retriever = indexed(TfidfRetriever, texts)
    for position, table in enumerate(dataset.tables):
        if table.title:
            assert retriever.search([table.title], top_k=1)[0][0][0] == position, table.title


def test_tfidf_bigrams_separate_tables_with_the_same_words() -> None:
    retriever = indexed(TfidfRetriever, ["new york city population", "york new population city"])
    assert retriever.search(["new york"], top_k=2)[0][0][0] == 0


def test_tfidf_scores_are_cosines() -> None:
    retriever = indexed(TfidfRetriever, EDGE_DOCS)
    assert retriever.scores("lake river delta")[3] == pytest.approx(1.0)
    assert (retriever.scores("fjord glacier") <= 1 + 1e-12).all()


# -- shared contract --------------------------------------------------------------------

@pytest.mark.parametrize("cls", CLASSES)
def test_follows_the_protocol(cls: type) -> None:
    retriever = cls()
    assert isinstance(retriever, Retriever)
    assert retriever.spec in ("bm25", "tfidf", "no-context")
    assert retriever.description and "\n" not in retriever.description


@pytest.mark.parametrize("cls", CLASSES)
def test_search_before_index_raises(cls: type) -> None:
    retriever = cls()
    with pytest.raises(TargetError, match="index") as caught:
        retriever.search(["lake"], top_k=3)
    assert isinstance(caught.value, NotIndexedError)
    with pytest.raises(NotIndexedError):
        retriever.score_all("lake")


@pytest.mark.parametrize("cls", RANKERS)
def test_top_k_is_best_first_and_ties_go_to_the_lower_index(cls: type) -> None:
    # rare enough terms: in 3 of 6 documents BM25's idf would be 0
    texts = ["alpha beta", "gamma", "alpha beta", "alpha", "alpha beta", "delta", "epsilon",
             "zeta", "eta", "theta", "iota", "kappa"]
    retriever = indexed(cls, texts)
    hits = retriever.search(["alpha beta"], top_k=4)[0]
    assert [i for i, _ in hits] == [0, 2, 4, 3]
    assert hits[0][1] == hits[1][1] == hits[2][1] > hits[3][1] > 0
    scores = retriever.score_all("alpha beta")
    assert [s for _, s in hits] == [scores[i] for i, _ in hits]


@pytest.mark.parametrize("cls", RANKERS)
def test_top_k_larger_than_the_corpus_returns_every_matching_text(cls: type) -> None:
    retriever = indexed(cls, EDGE_DOCS)
    hits = retriever.search(["fjord", "zeppelin"], top_k=50)
    matching = int((retriever.scores("fjord") != 0).sum())
    assert 0 < matching < len(EDGE_DOCS)
    assert [len(h) for h in hits] == [matching, 0]  # no shared term: no chance hits
    assert hits[0][0][0] == 0
    assert retriever.search(["fjord"], top_k=0) == [[]]


@pytest.mark.parametrize("cls", RANKERS)
def test_search_matches_score_all(cls: type, demo_texts) -> None:
    texts, queries = demo_texts
    retriever = indexed(cls, texts)
    for query, hits in zip(queries[:10], retriever.search(queries[:10], top_k=10), strict=True):
        scores = retriever.score_all(query)
        assert scores.shape == (len(texts),)
        order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:10]
        assert [i for i, _ in hits] == [i for i in order if np.isfinite(scores[i])]


@pytest.mark.parametrize("cls", CLASSES)
def test_progress_ends_with_done_equal_to_total(cls: type) -> None:
    texts = [f"word{i % 97} shared row {i}" for i in range(2_500)]
    calls: list[tuple[int, int, str]] = []
    cls().index(texts, corpus_key="progress", progress=lambda d, t, w: calls.append((d, t, w)))
    assert calls and calls[-1][:2] == (2_500, 2_500)
    assert all(t == 2_500 and 0 <= d <= t for d, t, _ in calls)
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls)
    if cls is not NoContextRetriever:
        assert [d for d, _, _ in calls[:2]] == [1_000, 2_000]


@pytest.mark.parametrize("cls", RANKERS)
def test_indexing_twice_gives_identical_results(cls: type, demo_texts) -> None:
    texts, queries = demo_texts
    retriever = indexed(cls, texts)
    first = retriever.search(queries, top_k=10)
    retriever.index(list(reversed(texts)), corpus_key="other")  # a different index first
    retriever.index(texts, corpus_key="test")
    assert retriever.search(queries, top_k=10) == first
    assert indexed(cls, texts).search(queries, top_k=10) == first


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("texts", [[], [""], ["", "the of"]], ids=["none", "empty", "stop"])
def test_corpora_without_terms_match_nothing(cls: type, texts: list[str]) -> None:
    retriever = cls()
    info = retriever.index(texts, corpus_key="empty")
    assert info.n_texts == len(texts)
    assert info.details["vocabulary_size"] == 0
    assert not retriever.scores("lake").any()
    assert retriever.search(["lake"], top_k=5) == [[]]


def test_no_context_returns_empty_hits() -> None:
    retriever = NoContextRetriever()
    info = retriever.index(EDGE_DOCS, corpus_key="edge")
    assert info.n_texts == len(EDGE_DOCS)
    assert retriever.search(["lake", "", "river delta"], top_k=10) == [[], [], []]
    assert retriever.score_all("lake") is None
