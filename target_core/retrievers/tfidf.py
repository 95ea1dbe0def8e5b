"""TF-IDF with cosine similarity, close to the OTT-QA retriever TARGET evaluates.

OTT-QA's retriever is DrQA's: unigram and bigram counts hashed into 2**24 bins,
tf = log(1 + count), idf = ln((N - df + 0.5) / (df + 0.5)) clipped at 0, and a sparse
dot product between query and table vectors. We keep what decides the ranking and
use scikit-learn's `TfidfVectorizer` for the rest:

- unigrams and bigrams (`ngram_range=(1, 2)`) over `textproc.tokenize`'s tokens;
  DrQA drops every n-gram that contains a stop word, here stop words are removed
  first, so a bigram may span one ("population of paris" gives "population paris");
- sublinear tf, 1 + ln(count), DrQA's log(1 + count) up to a constant;
- an exact vocabulary instead of hashing (no collisions, and terms can be shown);
- scikit-learn's smoothed idf, ln((1 + N) / (1 + df)) + 1, instead of the BM25-style
  idf: a term in most tables keeps a small positive weight instead of zero;
- L2-normalized rows, so the dot product is the cosine similarity (DrQA does not
  normalize; with normalization long tables are not favoured for their length).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from target_core.retrievers.base import (
    Hits,
    IndexInfo,
    LexicalScoring,
    NotIndexedError,
    Progress,
    TermScore,
    no_progress,
)
from target_core.retrievers.bm25 import PROGRESS_EVERY, stored_entry, weighted_row_sum
from target_core.retrievers.postings import Postings, TopScorer
from target_core.textproc import tokenize


def _reporting(texts: Sequence[str], progress: Progress) -> Iterator[str]:
    """Yield `texts`, reporting progress as the vectorizer consumes them."""
    total = len(texts)
    for i, text in enumerate(texts, start=1):
        yield text
        if i % PROGRESS_EVERY == 0 and i < total:
            progress(i, total, "tokenized")


class TfidfRetriever(LexicalScoring):
    """TF-IDF (unigrams + bigrams, sublinear tf) with cosine similarity."""

    spec = "tfidf"
    description = "TF-IDF unigrams+bigrams, sublinear tf, cosine (as OTT-QA's retriever)"
    formula = ("score = Σ over query n-grams of q_t · d_t, each vector's weight "
               "(1 + ln tf) · idf / its L2 norm, idf = ln((1 + N) / (1 + df)) + 1 "
               "(scikit-learn), unigrams and bigrams")

    def __init__(self, *, ngram_range: tuple[int, int] = (1, 2),
                 sublinear_tf: bool = True) -> None:
        self.ngram_range = ngram_range
        self.sublinear_tf = sublinear_tf
        self._vectorizer: TfidfVectorizer | None = None
        self._term_docs: sparse.csr_matrix | None = None  # terms x documents
        self._scorer: TopScorer | None = None  # over _term_docs' arrays
        self._n_docs = 0

    def _new_vectorizer(self) -> TfidfVectorizer:
        return TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None,
                               ngram_range=self.ngram_range, sublinear_tf=self.sublinear_tf,
                               norm="l2", dtype=np.float64)

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        """Fit the vocabulary and idf on `texts` and keep their normalized vectors."""
        started = time.perf_counter()
        total = len(texts)
        vectorizer = self._new_vectorizer()
        try:
            doc_terms = vectorizer.fit_transform(_reporting(texts, progress))
        except ValueError as exc:
            # scikit-learn refuses a corpus with no terms at all; it simply matches nothing
            if "empty vocabulary" not in str(exc):
                raise
            vectorizer = None
            doc_terms = sparse.csr_matrix((total, 0))
        self._vectorizer = vectorizer
        self._term_docs = sparse.csr_matrix(doc_terms.T)
        self._term_docs.sort_indices()
        matrix = self._term_docs
        # every weight is positive: a row's largest bounds what the term can add
        row_max = (np.maximum.reduceat(matrix.data, matrix.indptr[:-1]) if matrix.nnz
                   else None)
        self._scorer = TopScorer(Postings(matrix.indptr.astype(np.int64),
                                          matrix.indices.astype(np.intp), matrix.data,
                                          total, row_max))
        self._n_docs = total
        progress(total, total, "indexed")
        return IndexInfo(n_texts=total, seconds=time.perf_counter() - started,
                         details={"vocabulary_size": int(doc_terms.shape[1]),
                                  "nonzeros": int(doc_terms.nnz),
                                  "ngram_range": list(self.ngram_range),
                                  "sublinear_tf": self.sublinear_tf})

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query's TF-IDF vector with every indexed text."""
        if self._term_docs is None:
            raise NotIndexedError(self.spec)
        if self._vectorizer is None:
            return np.zeros(self._n_docs)
        vector = self._vectorizer.transform([query])
        return weighted_row_sum(self._term_docs, vector.indices.tolist(),
                                vector.data.tolist())

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        """The best `top_k` texts for each query (texts sharing no n-gram are never
        hits), as `top_k_hits(score_all(query))` but looking only at the texts its
        n-grams touch (postings.py)."""
        if self._scorer is None:
            raise NotIndexedError(self.spec)
        if self._vectorizer is None:
            return [[] for _ in queries]
        vectors = self._vectorizer.transform(queries)
        return [self._scorer.top(vectors.indices[start:end].tolist(),
                                 vectors.data[start:end].tolist(), top_k)
                for start, end in zip(vectors.indptr[:-1].tolist(),
                                      vectors.indptr[1:].tolist(), strict=True)]

    def term_contributions(self, query: str, index: int, text: str | None = None
                           ) -> list[TermScore]:
        """Each distinct query n-gram's share of `scores(query)[index]`: q_t * d_t, the
        query's and the text's L2-normalised weights (1 + ln tf) * idf / norm; `text`
        adds the n-gram's count in the text."""
        if self._term_docs is None:
            raise NotIndexedError(self.spec)
        vectorizer = self._vectorizer or self._new_vectorizer()
        analyze = vectorizer.build_analyzer()
        in_text = Counter(analyze(text)) if text is not None else None
        if self._vectorizer is None:  # an empty corpus: nothing matches
            return [TermScore(g, 0.0, {"query_count": c, "q_weight": 0.0, "d_weight": 0.0})
                    for g, c in Counter(analyze(query)).items()]
        vector = self._vectorizer.transform([query])
        q_weights = dict(zip(vector.indices.tolist(), vector.data.tolist(), strict=True))
        vocabulary = self._vectorizer.vocabulary_
        out = []
        for gram, count in Counter(analyze(query)).items():
            parts: dict[str, object] = {"query_count": count}
            if in_text is not None:
                parts["tf"] = in_text[gram]
            column = vocabulary.get(gram)
            if column is None:  # in no text: the vectorizer drops it
                out.append(TermScore(gram, 0.0, parts | {"idf": None, "q_weight": 0.0,
                                                         "d_weight": 0.0}))
                continue
            at = stored_entry(self._term_docs, column, index)
            d_weight = 0.0 if at is None else float(self._term_docs.data[at])
            q_weight = q_weights.get(column, 0.0)
            out.append(TermScore(gram, q_weight * d_weight, parts | {
                "idf": float(self._vectorizer.idf_[column]), "q_weight": q_weight,
                "d_weight": d_weight}))
        return out
