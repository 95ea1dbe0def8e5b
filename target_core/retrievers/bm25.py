"""BM25 (Okapi) over a sparse term-document matrix: rank-bm25's scores, much faster.

`rank_bm25.BM25Okapi` is the reference: same k1, b, epsilon, the same IDF rule and the
same floor for negative IDFs, and queries are scored by summing over their tokens,
repeats included. rank-bm25 loops over every document for every query token (~8 ms a
query at 10,000 tables); here each document's BM25 weight for each of its terms is
computed once at index time, so a query only adds up the rows of its terms:

    idf(t)     = ln(N - df(t) + 0.5) - ln(df(t) + 0.5)
                 (if negative: epsilon * mean of idf over the vocabulary, before flooring)
    w(t, d)    = idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    score(q, d) = sum over query tokens t (with repeats) of w(t, d)

Documents and queries are tokenized with `target_core.textproc.tokenize`, a chunk of
texts at a time (no token outlives its chunk as a Python object). A query adds up only
its terms' postings and picks its top k among the texts they touch (postings.py): at
100,000 tables that is several times faster than summing into a dense vector and
selecting over all of them. With a `cache_dir` (the registry gives workspace/cache/lexical)
the weights are saved there and memory-mapped by the next index() of the same texts
(index_files.py), which then builds nothing.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

from target_core.retrievers.base import (
    Hits,
    IndexInfo,
    LexicalScoring,
    NotIndexedError,
    Progress,
    TermScore,
    no_progress,
)
from target_core.retrievers.index_files import index_folder, load_index, save_index
from target_core.retrievers.postings import Postings, TopScorer
from target_core.serialize import texts_fingerprint
from target_core.textproc import TOKENIZER_VERSION, tokenize

PROGRESS_EVERY = 1000
"""Documents tokenized between two progress reports (and per chunk of an index build)."""


WEIGHT_BLOCK = 1 << 22
"""Stored weights computed together (a block of whole terms): bounds the temporaries."""


def _drain(chunks: list[np.ndarray]) -> np.ndarray:
    """The chunks concatenated, each freed (removed from `chunks`) once copied."""
    out = np.empty(sum(c.size for c in chunks), dtype=chunks[0].dtype if chunks
                   else np.int32)
    at = 0
    chunks.reverse()
    while chunks:
        chunk = chunks.pop()
        out[at:at + chunk.size] = chunk
        at += chunk.size
    return out


def _blocks(indptr: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Runs of whole rows [low, high) of a CSR `indptr`, about `size` entries each."""
    n_rows = indptr.size - 1
    cuts = np.searchsorted(indptr, np.arange(0, int(indptr[-1]), size), side="right") - 1
    bounds = sorted(set(np.clip(cuts, 0, n_rows).tolist()) | {0, n_rows})
    return [(low, high) for low, high in itertools.pairwise(bounds) if high > low]

def tokenize_all(texts: Sequence[str], progress: Progress, what: str) -> list[list[str]]:
    """Tokenize every text, reporting progress every PROGRESS_EVERY texts."""
    total = len(texts)
    tokens = []
    for i, text in enumerate(texts, start=1):
        tokens.append(tokenize(text))
        if i % PROGRESS_EVERY == 0 and i < total:
            progress(i, total, what)
    return tokens


def weighted_row_sum(matrix: sparse.csr_matrix, rows: Sequence[int],
                     weights: Sequence[float]) -> np.ndarray:
    """Σ weights[i] * matrix[rows[i]] as a dense vector, `rows` distinct.

    Slicing a few CSR rows directly is several times faster than a sparse product
    for the handful of terms a query has.
    """
    scores = np.zeros(matrix.shape[1])
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    for row, weight in zip(rows, weights, strict=True):
        start, end = indptr[row], indptr[row + 1]
        if weight == 1:
            scores[indices[start:end]] += data[start:end]
        else:
            scores[indices[start:end]] += weight * data[start:end]
    return scores


class BM25Retriever(LexicalScoring):
    """BM25 Okapi (k1=1.5, b=0.75, epsilon=0.25) with rank-bm25's exact scores."""

    spec = "bm25"
    description = "BM25 Okapi (rank-bm25's scores) on a sparse index; whole table text"
    formula = ("score = Σ over query tokens (repeats counted) of idf · tf · (k1 + 1) / "
               "(tf + k1 · (1 − b + b · |d| / avgdl)), idf = ln((N − df + 0.5) / "
               "(df + 0.5)), a negative idf replaced by epsilon · the mean idf (rank-bm25)")

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 cache_dir: Path | None = None) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.cache_dir = cache_dir
        """Where indexes are saved and loaded from; None keeps them in memory only."""
        self._vocabulary: dict[str, int] | None = None
        self._postings: Postings | None = None  # terms x documents BM25 weights
        self._scorer: TopScorer | None = None
        # kept for term_contributions: tf per stored weight, idf per term, |d| per text
        self._tf = np.zeros(0, dtype=np.int32)
        self._term_idf = np.zeros(0)
        self._lengths = np.zeros(0, dtype=np.int64)
        self._avgdl = 0.0

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        """Precompute every (term, document) BM25 weight of `texts`, or load them from the
        cache when these texts were indexed with these parameters before."""
        started = time.perf_counter()
        total = len(texts)
        # the texts' own fingerprint too (0.15 s at 100,000 tables): a caller's corpus_key
        # that does not change with its texts can never load another corpus's index
        key = {"corpus_key": corpus_key, "texts": texts_fingerprint(texts), "n_docs": total,
               "k1": self.k1, "b": self.b, "epsilon": self.epsilon,
               "tokenizer": TOKENIZER_VERSION}
        folder = None if self.cache_dir is None else index_folder(self.cache_dir, "bm25", key)
        loaded = None if folder is None else load_index(folder, key)
        if loaded is not None:
            arrays, terms, meta = loaded
            vocabulary = dict(zip(terms, range(len(terms)), strict=True))
            cache = "loaded from cache"
        else:
            arrays, vocabulary, meta = self._build(texts, progress)
            saved = folder is not None and save_index(folder, arrays, list(vocabulary),
                                                      key | meta)
            cache = "built, saved to cache" if saved else "built"
        postings = Postings(arrays["indptr"], arrays["indices"], arrays["weights"], total,
                            arrays.get("row_max"))
        self._vocabulary = vocabulary
        self._postings, self._scorer = postings, TopScorer(postings)
        self._tf, self._term_idf, self._lengths = arrays["tf"], arrays["idf"], arrays["lengths"]
        self._avgdl = float(meta["avgdl"])
        progress(total, total, "indexed")
        return IndexInfo(n_texts=total, seconds=time.perf_counter() - started,
                         details={"vocabulary_size": len(vocabulary),
                                  "nonzeros": int(postings.data.size),
                                  "avg_doc_tokens": self._avgdl, "k1": self.k1,
                                  "b": self.b, "epsilon": self.epsilon, "index_cache": cache})

    def _build(self, texts: Sequence[str], progress: Progress
               ) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, float]]:
        """The weight matrix's arrays, the vocabulary (term -> row) and avgdl.

        Memory stays near 8 bytes per stored (term, text) pair plus the weights' 8: each
        chunk of texts keeps only its distinct terms and their counts (int32), the chunks
        are copied into one text-major matrix (each freed as it is copied), turned
        term-major by scipy in C, and the weights are computed a block of terms at a time."""
        total = len(texts)
        # a new term gets the next row as it is first looked up (the fastest way to map
        # tokens to ids in CPython: one C-level lookup per token)
        vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        lookup = vocabulary.__getitem__
        lengths = np.zeros(total, dtype=np.int64)
        per_text = np.zeros(total + 1, dtype=np.int64)  # distinct terms of each text
        chunk_terms, chunk_tf = [], []
        for first in range(0, total, PROGRESS_EVERY):
            ids: list[int] = []
            for at, text in enumerate(texts[first:first + PROGRESS_EVERY], start=first):
                tokens = tokenize(text)
                lengths[at] = len(tokens)
                ids.extend(map(lookup, tokens))
            chunk = lengths[first:first + PROGRESS_EVERY]
            docs = np.repeat(np.arange(chunk.size, dtype=np.int64), chunk)
            # one entry per (text, term) with its count, text-major, terms ascending
            pairs, tf = np.unique((docs << 32) | np.array(ids, dtype=np.int64),
                                  return_counts=True)
            per_text[first + 1:first + 1 + chunk.size] = np.bincount(pairs >> 32,
                                                                     minlength=chunk.size)
            chunk_terms.append((pairs & 0xFFFFFFFF).astype(np.int32))
            chunk_tf.append(tf.astype(np.int32))
            if first + PROGRESS_EVERY < total:
                progress(first + PROGRESS_EVERY, total, "tokenized")
        vocabulary.default_factory = None  # from now on an unknown term is just unknown
        n_terms = len(vocabulary)
        np.cumsum(per_text, out=per_text)
        by_text = sparse.csr_matrix((_drain(chunk_tf), _drain(chunk_terms), per_text),
                                    shape=(total, n_terms))
        counts = by_text.tocsc()  # term-major: texts ascending within each term
        del by_text
        indptr = counts.indptr.astype(np.int64)
        indices = counts.indices.astype(np.int32, copy=False)
        tf_counts = counts.data
        del counts
        doc_freq = np.diff(indptr)
        idf = self._idf(doc_freq, total)
        avgdl = lengths.sum() / total if total else 0.0
        weights = np.empty(tf_counts.size)
        for low, high in _blocks(indptr, WEIGHT_BLOCK):
            start, end = indptr[low], indptr[high]
            tf = tf_counts[start:end].astype(np.float64)
            doc_len = lengths[indices[start:end]].astype(np.float64)
            # the same expression, in the same order, as rank-bm25's get_scores
            weights[start:end] = np.repeat(idf[low:high], doc_freq[low:high]) * (
                tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * doc_len / avgdl)))
        arrays: dict[str, np.ndarray] = {"indptr": indptr, "indices": indices,
                                         "weights": weights, "tf": tf_counts,
                                         "idf": idf, "lengths": lengths}
        if weights.size and weights.min() >= 0:  # rank-bm25's floor can be negative
            arrays["row_max"] = np.maximum.reduceat(weights, indptr[:-1])
        return arrays, vocabulary, {"avgdl": float(avgdl)}

    def _idf(self, doc_freq: np.ndarray, n_docs: int) -> np.ndarray:
        """rank-bm25's BM25Okapi._calc_idf, vectorized."""
        if doc_freq.size == 0:
            return np.zeros(0)
        idf = np.log(n_docs - doc_freq + 0.5) - np.log(doc_freq + 0.5)
        # the floor is epsilon times the mean of the raw idfs (negative ones included)
        floor = self.epsilon * float(idf.mean())
        idf[idf < 0] = floor
        return idf

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every indexed text; equals BM25Okapi.get_scores(tokenize(query))."""
        return self._indexed().scores(*self._query_rows(query))

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        """The best `top_k` texts for each query (texts sharing no term are never hits),
        as `top_k_hits(score_all(query))` but looking only at the texts its terms touch."""
        scorer = self._indexed()
        return [scorer.top(*self._query_rows(query), top_k) for query in queries]

    def _indexed(self) -> TopScorer:
        if self._scorer is None:
            raise NotIndexedError(self.spec)
        return self._scorer

    def _query_rows(self, query: str) -> tuple[list[int], list[int]]:
        """The rows of the query's known terms and their counts in the query (rank-bm25
        sums over query tokens with repeats: a term counted c times adds c * w)."""
        known = [row for row in map((self._vocabulary or {}).get, tokenize(query))
                 if row is not None]
        if len(set(known)) == len(known):  # the usual case: no repeated term
            return known, [1] * len(known)
        counts = Counter(known)  # rows in order of first occurrence, as the tokens
        return list(counts), list(counts.values())

    def term_contributions(self, query: str, index: int, text: str | None = None
                           ) -> list[TermScore]:
        """Each distinct query token's share of `scores(query)[index]`: its count in the
        query times its stored weight w(t, d), with the factors of w (tf, |d|, avgdl,
        idf, whether rank-bm25's floor replaced a negative idf)."""
        postings = self._indexed().postings
        vocabulary = self._vocabulary or {}
        shared = {"doc_len": int(self._lengths[index]), "avgdl": self._avgdl,
                  "k1": self.k1, "b": self.b}
        out = []
        for term, count in Counter(tokenize(query)).items():
            row = vocabulary.get(term)
            if row is None:  # in no text: rank-bm25 finds it nowhere and adds 0
                out.append(TermScore(term, 0.0, {"query_count": count, "tf": 0, "df": 0,
                                                 "idf": None, "weight": 0.0} | shared))
                continue
            at = postings.entry(row, index)
            weight = 0.0 if at is None else float(postings.data[at])
            df = postings.doc_freq(row)
            raw_idf = float(np.log(postings.n_docs - df + 0.5) - np.log(df + 0.5))
            out.append(TermScore(term, count * weight, {
                "query_count": count, "tf": 0 if at is None else int(self._tf[at]),
                "df": df, "idf": float(self._term_idf[row]), "idf_floored": raw_idf < 0,
                "weight": weight} | shared))
        return out


def stored_entry(matrix: sparse.csr_matrix, row: int, column: int) -> int | None:
    """Position in `matrix.data` of (row, column), None when it is not stored (sorted
    indices)."""
    start, end = int(matrix.indptr[row]), int(matrix.indptr[row + 1])
    at = start + int(np.searchsorted(matrix.indices[start:end], column))
    return at if at < end and matrix.indices[at] == column else None
