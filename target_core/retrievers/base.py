"""The Retriever protocol: index table texts once, then search with query texts.

In the manner of MTEB's protocols: keyword-only options, one return type. Every
registered retriever is run through the same contract test (tests/test_registry.py,
contract in tests/test_retrievers.py). Retrievers see texts, never gold data (the one
exception is `tune_on_gold`, cross-fitted): the TableView decides the text of each
table, unless the retriever writes its own (`prepare_texts`, e.g. LLM table summaries).

The retrievers subclass Retriever explicitly: they inherit the default
`prepare_texts`, and one that misses index, search or score_all cannot be built.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from target_core.errors import TargetError
from target_core.progress import Progress, no_progress
from target_core.retrievers.llm_calls import LLMCalls
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.types import Query, Table, TableKey

Hits = list[tuple[int, float]]
"""One query's result: (index into the indexed texts, score), best first."""


NO_MATCH = -np.inf
"""Score of a text that does not match at all (a lexical query sharing no term with it):
never returned as a hit, and it has no rank."""


class NotIndexedError(TargetError):
    """A retriever was searched before index() was called."""

    def __init__(self, spec: str) -> None:
        super().__init__(f"retriever '{spec}' has no index: call index(texts) before search")




@dataclass(frozen=True)
class IndexInfo:
    """What indexing did, recorded with the run (e.g. embedded 0 of 440: all cached)."""

    n_texts: int
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Retriever(Protocol):
    """A table retriever over one corpus of texts."""

    spec: str
    """The name it was built from, e.g. "bm25" or "dense:minilm"."""

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """The text to index for each table, in corpus order. By default the view's
        serialization; a retriever that writes its own texts (LLM table summaries)
        overrides this, and the view may then not apply."""
        return [table_text(t, view) for t in tables]

    def tune_on_gold(self, queries: Sequence[Query], position: Mapping[TableKey, int]
                     ) -> dict[str, Any]:
        """The one place a retriever may learn from gold: the runner calls it after
        index() with the run's queries and each table key's index in the corpus. A
        retriever that tunes (hybrid's tune=recall@K) must cross-fit: each query is
        later retrieved with what was learned on other queries only. Returns what the
        run records in its index info; by default nothing is learned ({})."""
        return {}

    def prepare_queries(self, queries: Sequence[str], *,
                        progress: Progress = no_progress) -> dict[str, Any]:
        """Work per query that may be done ahead of searching (HySE writes its
        hypothetical tables, in parallel): the runner calls it after index() with the
        texts of the queries it is about to search, so a query's retrieval time is its
        search alone. Returns what the run records in its index info; by default
        nothing is done ({})."""
        return {}

    def llm_calls(self) -> list[LLMCalls]:
        """The LLM calls made so far by prepare_texts and prepare_queries, one entry per
        step (retrievers/llm_calls.py): the runner judges them by the failure policy and
        records them with the run. A retriever without LLM calls has none ([])."""
        return []

    @abstractmethod
    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        """Index `texts` (one per table, in corpus order).

        `corpus_key` identifies the texts (a fingerprint of corpus content and view), so
        a retriever with a persistent index can reuse work across runs and restarts.
        """
        ...

    @abstractmethod
    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        """For each query, up to `top_k` (index, score) pairs, best first; ties broken
        by the lower index so results are deterministic."""
        ...

    @abstractmethod
    def score_all(self, query: str) -> np.ndarray | None:
        """Scores of every indexed text for one query (higher is better), or None when
        the retriever cannot tell; used to find a gold table's rank beyond top_k."""
        ...


def top_k_hits(scores: np.ndarray, top_k: int) -> Hits:
    """The best `top_k` of a score vector, ties broken by the lower index; texts scored
    NO_MATCH (or NaN) are never hits, so a query that matches nothing retrieves nothing."""
    matching = np.isfinite(scores)
    if not matching.all():
        hits = top_k_hits(np.where(matching, scores, np.finfo(np.float64).min), top_k)
        return [(i, s) for i, s in hits if matching[i]]
    if top_k <= 0 or scores.size == 0:
        return []
    k = min(top_k, scores.size)
    # argpartition then a stable sort on (-score, index) keeps ties deterministic
    candidates = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(k)
    threshold = scores[candidates].min()
    pool = np.flatnonzero(scores >= threshold)
    order = pool[np.lexsort((pool, -scores[pool]))][:k]
    return [(int(i), float(scores[i])) for i in order]


def rank_in(scores: np.ndarray, index: int) -> int | None:
    """1-based rank of `index` under `scores`, ties broken by the lower index; None when
    the text does not match at all (NO_MATCH)."""
    score = scores[index]
    if not np.isfinite(score):
        return None
    return int((scores > score).sum() + (scores[:index] == score).sum() + 1)


@dataclass(frozen=True)
class TermScore:
    """One query term's share of a lexical score (analysis/explain_lexical.py)."""

    term: str
    """The query's term: a token, an n-gram, or for hashed n-grams the query's n-grams
    that share one bucket, joined by " / "."""
    contribution: float
    """What it adds to the text's score; a text's shares sum to its score."""
    parts: dict[str, Any]
    """The formula's factors for this term and text, named as in the retriever's
    docstring (tf, idf, document length, query weight, ...)."""


class LexicalScoring(Retriever):
    """search() and score_all() for retrievers that score every text with `scores()`,
    where 0 means no shared term (BM25, TF-IDF). `term_contributions(query, index)`
    splits one text's score into its query terms' shares, next to the formula."""

    def scores(self, query: str) -> np.ndarray:
        raise NotImplementedError

    def term_contributions(self, query: str, index: int, text: str | None = None
                           ) -> list[TermScore]:
        """Each query term's share of `scores(query)[index]`, in query order, terms the
        text lacks included (0); `text` (the indexed text) adds what the index does not
        keep (e.g. a hashed n-gram's table n-grams)."""
        raise NotImplementedError

    def score_all(self, query: str) -> np.ndarray:
        """scores(), with the texts that share no term with the query marked NO_MATCH:
        they are never hits and have no rank (no chance recall for unmatched queries)."""
        scores = self.scores(query)
        return np.where(scores != 0, scores, NO_MATCH)

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        """The best `top_k` texts for each query; ties go to the lower index."""
        return [top_k_hits(self.score_all(query), top_k) for query in queries]
