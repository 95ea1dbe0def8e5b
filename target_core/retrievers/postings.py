"""Query-time scoring over precomputed term weights (BM25, TF-IDF): rows of a terms x
documents CSR matrix are added up, and the top k is chosen among the documents the
query's terms touch, never over the whole corpus.

A query's score for document d is Σ weights[i] * W[rows[i], d]; documents no row touches
score 0, which the lexical retrievers treat as no match (base.LexicalScoring), so they
can never be hits and need not be looked at. Per query the work is proportional to the
postings of its terms: they are added into a score buffer kept between queries (reset
only where it was written), read back, and the best k are picked by partial selection.
Sums are made in the same order, from 0, as a dense `np.zeros(N)` accumulation, so
scores are bit-identical to it, and ties go to the lower document index as in
`base.top_k_hits`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from target_core.retrievers.base import Hits


@dataclass(frozen=True)
class Postings:
    """A terms x documents CSR matrix as plain arrays (they may be memory-mapped):
    row t's documents are indices[indptr[t]:indptr[t + 1]], sorted, with their weights."""

    indptr: np.ndarray   # int64, n_terms + 1
    indices: np.ndarray  # intp, nnz
    data: np.ndarray     # float64, nnz
    n_docs: int
    row_max: np.ndarray | None = None
    """Each row's largest weight, when no weight is negative: lets a query skip its
    commonest terms (TopScorer); None scans every posting."""

    @property
    def n_terms(self) -> int:
        return int(self.indptr.size) - 1

    def doc_freq(self, row: int) -> int:
        return int(self.indptr[row + 1] - self.indptr[row])

    def entry(self, row: int, doc: int) -> int | None:
        """Position in `data` of (row, doc), None when it is not stored."""
        start, end = int(self.indptr[row]), int(self.indptr[row + 1])
        at = start + int(np.searchsorted(self.indices[start:end], doc))
        return at if at < end and self.indices[at] == doc else None


PRUNE_FROM = 20_000
"""Postings a query's terms must have before it tries to skip its commonest terms."""
BOUND_SLACK = 1e-9
"""Relative margin on the bound of the rows not read: it is a float sum, and an outside
document's own sum may round above it; with the margin, skipping stays exact."""


class TopScorer:
    """Sums of weighted rows over a Postings and their best k, one query at a time.

    The score buffer (one float64 per document) is shared between queries and guarded by
    a lock, so one retriever may be searched from several threads (the dashboard's)."""

    def __init__(self, postings: Postings) -> None:
        self.postings = postings
        self._buffer = np.zeros(postings.n_docs)
        self._lock = threading.Lock()

    def scores(self, rows: Sequence[int], weights: Sequence[float]) -> np.ndarray:
        """Σ weights[i] * row rows[i] as a dense vector of every document's score."""
        out = np.zeros(self.postings.n_docs)
        self._add(out, rows, weights)
        return out

    def _add(self, into: np.ndarray, rows: Sequence[int], weights: Sequence[float]
             ) -> list[np.ndarray]:
        indptr, indices, data = self.postings.indptr, self.postings.indices, self.postings.data
        bounds = indptr[np.asarray(rows, dtype=np.intp)].tolist()
        ends = indptr[np.asarray(rows, dtype=np.intp) + 1].tolist()
        touched = []
        for start, end, weight in zip(bounds, ends, weights, strict=True):
            docs = indices[start:end]
            # documents within a row are distinct: add.at adds each once, as += would
            np.add.at(into, docs, data[start:end] if weight == 1
                      else weight * data[start:end])
            touched.append(docs)
        return touched

    def top(self, rows: Sequence[int], weights: Sequence[float], top_k: int) -> Hits:
        """The best `top_k` (document, score) pairs, best first, ties to the lower index;
        documents scoring 0 are left out. `rows` must be distinct."""
        if top_k <= 0 or not rows:
            return []
        if len(rows) == 1:  # one row: its documents are distinct, no buffer needed
            (row,), (weight,) = rows, weights
            start, end = self.postings.indptr[row], self.postings.indptr[row + 1]
            docs = self.postings.indices[start:end]
            values = self.postings.data[start:end]
            if weight != 1:
                values = weight * values
            return select(docs, values, top_k, repeats=1)
        if self.postings.row_max is not None:
            pruned = self._top_pruned(rows, weights, top_k)
            if pruned is not None:
                return pruned
        with self._lock:
            touched = self._add(self._buffer, rows, weights)
            docs = np.concatenate(touched)
            values = self._buffer[docs]
            self._buffer[docs] = 0.0
        return select(docs, values, top_k, repeats=len(rows))

    def _top_pruned(self, rows: Sequence[int], weights: Sequence[float], top_k: int
                    ) -> Hits | None:
        """The top k without reading the postings of the query's commonest terms, or
        None when that cannot be shown exact (MaxScore, Turtle and Flood 1995).

        Rows are taken in order of their largest possible contribution (row_max times
        the query weight), best first; the documents of the rows taken so far are the
        candidates, scored exactly (each row's weight found by binary search, added in
        query order from 0, so bit-identical to the full sum). A document outside them
        scores at most the sum of the bounds of the rows not taken; once that sum is
        below the k-th best candidate's score (strictly, with BOUND_SLACK: a tie could go
        to a lower index), no outside document can enter the top k."""
        postings = self.postings
        assert postings.row_max is not None
        at = np.asarray(rows, dtype=np.intp)
        starts, ends = postings.indptr[at], postings.indptr[at + 1]
        total = int((ends - starts).sum())
        if total < PRUNE_FROM:
            return None
        bounds = postings.row_max[at] * np.asarray(weights, dtype=np.float64)
        spans = list(zip(starts.tolist(), ends.tolist(), weights, strict=True))
        rest = float(bounds.sum())
        candidates = np.zeros(0, dtype=postings.indices.dtype)
        for row in np.argsort(-bounds, kind="stable").tolist()[:-1]:
            rest -= float(bounds[row])
            start, end, _ = spans[row]
            candidates = np.union1d(candidates, postings.indices[start:end])
            if candidates.size * len(rows) > total // 4:  # reading everything is cheaper
                return None
            if candidates.size < top_k:
                continue
            scores = self._exact(candidates, spans)
            kth = np.partition(scores, scores.size - top_k)[scores.size - top_k]
            if rest * (1 + BOUND_SLACK) < kth:
                return select(candidates, scores, top_k, repeats=1)
        return None

    def _exact(self, docs: np.ndarray, spans: Sequence[tuple[int, int, float]]
               ) -> np.ndarray:
        """The scores of `docs` (sorted, distinct), summed in the order of `spans`."""
        indices, data = self.postings.indices, self.postings.data
        scores = np.zeros(docs.size)
        for start, end, weight in spans:
            row = indices[start:end]
            at = np.minimum(np.searchsorted(row, docs), end - start - 1)
            values = data[start:end][at]
            if weight != 1:
                values = weight * values
            scores += np.where(row[at] == docs, values, 0.0)
        return scores


def select(docs: np.ndarray, values: np.ndarray, top_k: int, *, repeats: int) -> Hits:
    """The best `top_k` of (docs, values) pairs, where a document may be listed up to
    `repeats` times (always with its one score); zero scores are no match.

    The (top_k * repeats)-th largest listed value is at most the k-th best document's
    score (the entries above it belong to fewer than k documents), so every document at
    or above it is a candidate; candidates are sorted by (-score, document) and a
    document's repeats, now side by side, are dropped."""
    zero = values == 0
    if zero.any():
        keep = ~zero
        docs, values = docs[keep], values[keep]
    cut = top_k * repeats
    if values.size > cut:
        threshold = np.partition(values, values.size - cut)[values.size - cut]
        keep = values >= threshold
        docs, values = docs[keep], values[keep]
    order = np.lexsort((docs, -values))
    docs, values = docs[order], values[order]
    if repeats > 1 and docs.size > 1:
        first = np.empty(docs.size, dtype=bool)
        first[0] = True
        np.not_equal(docs[1:], docs[:-1], out=first[1:])
        docs, values = docs[first], values[first]
    return list(zip(docs[:top_k].tolist(), values[:top_k].tolist(), strict=True))
