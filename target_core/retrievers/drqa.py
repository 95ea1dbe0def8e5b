"""TARGET's OTT-QA retriever (DrQA's hashed TF-IDF and BM25), re-implemented from its
description: the paper's "OTT-QA BM25" and "OTT-QA TF-IDF" rows.

What TARGET 0.1.3 does (target_benchmark/retrievers/ottqa/: OTTQARetriever.py, utils.py
`TFIDFBuilder`, drqa/retriever/{utils,tfidf_doc_ranker,BM25_doc_ranker}.py,
drqa/drqa_tokenizers/simple_tokenizer.py), which this module follows step by step:

- **Text**: `"{title} | {section title} | {header names joined by spaces}"`, where the
  title is the table id with `withtitle=True` and "" without (the view format `ottqa`,
  serialize.py, writes exactly this). No cells.
- **Tokens**: the text in Unicode NFD, split by DrQA's SimpleTokenizer (runs of letters,
  digits and marks, else any single character that is not a separator or control),
  lower-cased.
- **N-grams**: unigrams and bigrams; one is dropped when any of its words is
  punctuation only (Unicode class P; "|" is a symbol and stays) or a DrQA stop word.
- **Hashing**: murmurhash3_32 (scikit-learn's, unsigned) of the n-gram modulo 2**24.
- **idf** = ln((N - df + 0.5) / (df + 0.5)), negative values set to 0.
- **Table weights**: TF-IDF: ln(1 + count) * idf. BM25 (k1 1.5, b 0.75):
  idf * count * (1 + k1) / (count + L), L = k1 * (1 - b + b * |d| / avg |d|) with |d| a
  table's number of kept n-grams, but not the table's own: TARGET adds the `.data` of
  two sparse matrices whose entries come in opposite orders (scipy's product lists a
  row's columns last first), so within each n-gram's row the i-th table (in TARGET's
  table order, the sorted `str((database_id, table_id))`) gets the length of the i-th
  from the end. `ottqa:bm25` does exactly that, so its rankings are TARGET's;
  `ottqa:bm25-own-length` gives each table its own length, the formula as written.
- **Query weights**: TF-IDF: ln(1 + count) * idf; BM25: idf (each n-gram once).
- **Score**: the dot product; tables scoring 0 are never returned (DrQA's sparse product
  keeps no zeros), so a list may be shorter than k.

Where we differ, on purpose: ties go to the lower corpus index (the project's rule; in
TARGET their order follows numpy's partition and sort, an arbitrary but fixed order), and
a query with no n-gram left retrieves nothing where DrQA raises an error and stops the
run. tests/test_drqa.py checks every ranking against TARGET's own on the demo sets.
"""

from __future__ import annotations

import time
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np
import regex
from scipy import sparse
from sklearn.utils import murmurhash3_32

from target_core.errors import ConfigError
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import IndexInfo, LexicalScoring, NotIndexedError, TermScore
from target_core.retrievers.bm25 import PROGRESS_EVERY, stored_entry, weighted_row_sum
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.types import Table

ENCODINGS = ("bm25", "tfidf", "bm25-own-length")
HASH_SIZE = 2 ** 24
NGRAM = 2
K1, B = 1.5, 0.75

_TOKEN = regex.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
                       flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)
_PUNCTUATION = regex.compile(r"^\p{P}+$")

STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did
doing a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more
most other some such no nor not only own same so than too very s t can will just don
should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn
mustn needn shan shouldn wasn weren won wouldn 'll 're 've n't 's 'd 'm '' ``
""".split())
"""DrQA's stop words (NLTK's English list of 2017 and a few contraction pieces)."""


def words(text: str) -> list[str]:
    """DrQA's SimpleTokenizer tokens of `text` (after NFD), lower-cased."""
    return [m.group().lower() for m in _TOKEN.finditer(unicodedata.normalize("NFD", text))]


def _dropped(word: str) -> bool:
    return bool(_PUNCTUATION.match(unicodedata.normalize("NFD", word))) or word in STOP_WORDS


def ngrams(text: str) -> list[str]:
    """The unigrams and bigrams DrQA keeps from `text`, in text order."""
    tokens = words(text)
    dropped = [_dropped(w) for w in tokens]
    grams = []
    for start in range(len(tokens)):
        for end in range(start, min(start + NGRAM, len(tokens))):
            if not any(dropped[start:end + 1]):
                grams.append(" ".join(tokens[start:end + 1]))
    return grams


def hashed(text: str) -> Counter[int]:
    """Counts of the hashed n-grams of `text`."""
    return Counter(murmurhash3_32(g, positive=True) % HASH_SIZE for g in ngrams(text))


class DrQARetriever(LexicalScoring):
    """TARGET's OTT-QA retriever: DrQA's hashed uni+bigram BM25 or TF-IDF."""

    description = ("TARGET's OTT-QA retriever: DrQA's hashed unigram+bigram BM25 or TF-IDF "
                   "(k1 1.5, b 0.75); use it with the ottqa view format")

    def __init__(self, encoding: str = "bm25") -> None:
        if encoding not in ENCODINGS:
            raise ConfigError(f"ottqa encoding must be one of {', '.join(ENCODINGS)}, "
                              f"got {encoding!r}")
        self.encoding = encoding
        self.spec = f"ottqa:{encoding}"
        idf = "idf = max(0, ln((N − df + 0.5) / (df + 0.5)))"
        self.formula = (
            "score = Σ over the query's hashed n-gram buckets of ln(1 + count) · idf · "
            f"ln(1 + tf) · idf, {idf}" if encoding == "tfidf" else
            "score = Σ over the query's hashed n-gram buckets (each once) of idf · idf · "
            "tf · (1 + k1) / (tf + k1 · (1 − b + b · |d| / avg |d|)), " + idf
            + ("" if encoding == "bm25-own-length" else
               "; |d| is the length TARGET's pairing gives the table (paired_len)"))
        self._rows: np.ndarray | None = None  # hash bucket -> row of _weights, or -1
        self._weights: sparse.csr_matrix | None = None  # used buckets x tables
        self._n_docs = 0
        self._order: list[str] | None = None
        # kept for term_contributions: count per stored weight, |d| per table, and the
        # table whose |d| each stored weight used (TARGET's pairing)
        self._counts = np.zeros(0)
        self._lengths = np.zeros(0)
        self._partner: np.ndarray | None = None

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """The view's texts; keeps TARGET's name of each table, whose sorted order
        decides which length `ottqa:bm25` pairs with which table."""
        self._order = [str((t.database_id, t.table_id)) for t in tables]
        return [table_text(t, view) for t in tables]

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        started = time.perf_counter()
        total = len(texts)
        buckets: list[int] = []
        counts: list[int] = []
        columns: list[int] = []
        lengths = np.zeros(total)
        for doc, text in enumerate(texts):
            grams = hashed(text)
            buckets.extend(grams)
            counts.extend(grams.values())
            columns.extend([doc] * len(grams))
            lengths[doc] = sum(grams.values())
            if (doc + 1) % PROGRESS_EVERY == 0 and doc + 1 < total:
                progress(doc + 1, total, "tokenized")
        used, rows = np.unique(np.asarray(buckets, dtype=np.int64), return_inverse=True)
        matrix = sparse.csr_matrix(
            (np.asarray(counts, dtype=np.float64), (rows, np.asarray(columns))),
            shape=(used.size, total))
        matrix.sort_indices()
        doc_freq = np.diff(matrix.indptr)
        idf = np.maximum(np.log((total - doc_freq + 0.5) / (doc_freq + 0.5)), 0.0)
        tf = matrix.data
        self._counts, self._lengths, self._partner = tf, lengths, None
        if self.encoding == "tfidf":
            weight = np.log1p(tf)
        else:
            ratio = K1 * (1 - B + B * lengths / lengths.mean()) if total else lengths
            partner = (matrix.indices if self.encoding == "bm25-own-length" else
                       _mirrored(matrix, self._table_positions(total)))
            weight = tf * (1 + K1) / (tf + ratio[partner])
            self._partner = partner
        matrix.data = np.repeat(idf, doc_freq) * weight
        self._rows = np.full(HASH_SIZE, -1, dtype=np.int32)
        self._rows[used] = np.arange(used.size, dtype=np.int32)
        self._weights = matrix
        self._n_docs = total
        progress(total, total, "indexed")
        return IndexInfo(n_texts=total, seconds=time.perf_counter() - started,
                         details={"encoding": self.encoding, "hash_size": HASH_SIZE,
                                  "ngram": NGRAM, "buckets_used": int(used.size),
                                  "nonzeros": int(matrix.nnz),
                                  **({"k1": K1, "b": B} if self.encoding != "tfidf" else {})})

    def _table_positions(self, total: int) -> np.ndarray:
        """Each table's position in TARGET's table order (corpus order when the tables'
        names are unknown: texts indexed without prepare_texts)."""
        if self._order is None or len(self._order) != total:
            return np.arange(total)
        positions = np.empty(total, dtype=np.int64)
        positions[sorted(range(total), key=self._order.__getitem__)] = np.arange(total)
        return positions

    def scores(self, query: str) -> np.ndarray:
        """The DrQA score of every indexed table for `query` (0: no shared n-gram)."""
        if self._rows is None or self._weights is None:
            raise NotIndexedError(self.spec)
        grams = hashed(query)
        rows, weights = [], []
        for bucket, count in grams.items():
            row = int(self._rows[bucket])
            if row < 0:  # in no table: its idf is positive but it adds nothing
                continue
            rows.append(row)
            weights.append(np.log1p(count) if self.encoding == "tfidf" else 1.0)
        if not rows:
            return np.zeros(self._n_docs)
        return weighted_row_sum(self._weights, rows,
                                list(np.asarray(weights) * self._row_idf(rows)))

    def _row_idf(self, rows: Sequence[int]) -> np.ndarray:
        """idf of the n-grams of `rows` of the index (DrQA's, floored at 0)."""
        if self._weights is None:
            raise NotIndexedError(self.spec)
        doc_freq = np.diff(self._weights.indptr)[rows]
        return np.maximum(np.log((self._n_docs - doc_freq + 0.5) / (doc_freq + 0.5)), 0.0)

    def term_contributions(self, query: str, index: int, text: str | None = None
                           ) -> list[TermScore]:
        """Each hash bucket of the query's n-grams, named by those n-grams: its share of
        `scores(query)[index]`, the query weight (TF-IDF: ln(1 + count) * idf; BM25: idf)
        times the table's stored weight. Query n-grams that share a bucket are one term
        (a collision); `text` names the table's n-grams in the bucket, so a match through
        another n-gram shows. For ottqa:bm25, `paired_len` is the length TARGET's pairing
        gave this table's weight (`paired_with`: whose), beside its own `doc_len`."""
        if self._rows is None or self._weights is None:
            raise NotIndexedError(self.spec)
        names: dict[int, list[str]] = {}
        counts: Counter[int] = Counter()
        for gram in ngrams(query):
            bucket = murmurhash3_32(gram, positive=True) % HASH_SIZE
            counts[bucket] += 1
            if gram not in names.setdefault(bucket, []):
                names[bucket].append(gram)
        table_grams: dict[int, list[str]] = {}
        for gram in dict.fromkeys(ngrams(text) if text is not None else []):
            table_grams.setdefault(murmurhash3_32(gram, positive=True) % HASH_SIZE,
                                   []).append(gram)
        out = []
        for bucket, count in counts.items():
            parts: dict[str, object] = {"bucket": bucket, "ngrams": names[bucket],
                                        "query_count": count,
                                        "doc_len": float(self._lengths[index])}
            if text is not None:
                parts["table_ngrams"] = table_grams.get(bucket, [])
            row = int(self._rows[bucket])
            if row < 0:
                out.append(TermScore(" / ".join(names[bucket]), 0.0,
                                     parts | {"df": 0, "tf": 0, "table_weight": 0.0}))
                continue
            idf = self._row_idf([row])
            q_weight = float(((np.log1p([count]) if self.encoding == "tfidf"
                               else np.ones(1)) * idf)[0])
            at = stored_entry(self._weights, row, index)
            table_weight = 0.0 if at is None else float(self._weights.data[at])
            parts |= {"df": int(self._weights.indptr[row + 1] - self._weights.indptr[row]),
                      "idf": float(idf[0]), "q_weight": q_weight,
                      "tf": 0 if at is None else int(self._counts[at]),
                      "table_weight": table_weight}
            if at is not None and self._partner is not None:
                partner = int(self._partner[at])
                parts |= {"paired_len": float(self._lengths[partner]), "paired_with": partner}
            out.append(TermScore(" / ".join(names[bucket]), q_weight * table_weight, parts))
        return out


def _mirrored(matrix: sparse.csr_matrix, positions: np.ndarray) -> np.ndarray:
    """For each stored entry, the table whose length TARGET pairs with it: within the
    entry's row, tables ordered by `positions`, the i-th entry gets the i-th table
    from the end."""
    starts, ends = matrix.indptr[:-1], matrix.indptr[1:]
    row = np.repeat(np.arange(starts.size), ends - starts)
    order = np.lexsort((positions[matrix.indices], row))  # entries by row, then position
    place = np.arange(order.size)
    mirror = starts[row] + ends[row] - 1 - place  # rows stay grouped in `order`
    partner = np.empty_like(matrix.indices)
    partner[order] = matrix.indices[order[mirror]]
    return partner
