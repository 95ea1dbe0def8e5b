"""Hybrid retrieval: fusion of BM25 and a dense retriever (target_core.retrievers.fusion).

Each side contributes its top `depth` candidates (depth = max(100, k)); a text absent
from one side's list gets nothing from it. Spec: hybrid[:EMBEDDER][:OPTIONS], options
method, norm, w (the lexical weight of wsum), k (rrf), tune=recall@K, folds, seed
(fusion.parse_options). Plain `hybrid` is DEFAULT_FUSION; docs/retrievers/index.md
("Hybrid fusion") gives the figures behind that choice (benchmarks/fusion_choice.py).

Tuning (tune=recall@K) is cross-fitted: the run's queries are split into `folds` seeded
folds, and each query is retrieved with the wsum weight that maximised recall@K on the
other folds, so no query's own gold picks the weight it is retrieved with, and the run's
metrics stay comparable with other runs over the same queries. The runner calls
`tune_on_gold` after indexing; the split and the weights go into the run's index_info.
"""

from __future__ import annotations

import random
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.errors import ConfigError
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import NO_MATCH, Hits, IndexInfo, Retriever, top_k_hits
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.fusion import (
    RRF_K,
    Fusion,
    HybridOptions,
    fuse,
    fused_scores,
    fusion_parts,
    parse_options,
)
from target_core.types import Query, TableKey

DEPTH = 100
DEFAULT_FUSION = Fusion("combmnz", "z-score")
WEIGHT_GRID = tuple(round(0.1 * i, 1) for i in range(11))


def rrf(rankings: Sequence[Hits], top_k: int, k: int = RRF_K) -> Hits:
    """Fuse rankings of (index, score) by reciprocal rank; ties go to the lower index."""
    return fuse(rankings, Fusion("rrf", k=k), top_k)


class HybridRetriever(Retriever):
    """Fusion of a lexical and a dense retriever; `spec` is "hybrid:<embedder spec>"
    plus ":<options>" when any are given."""

    description = "fusion of bm25 and a dense retriever"

    def __init__(self, lexical: Retriever, dense: DenseRetriever, depth: int = DEPTH,
                 options: HybridOptions | None = None, options_text: str = "") -> None:
        self.lexical = lexical
        self.dense = dense
        self.depth = depth
        self.options = options or HybridOptions(DEFAULT_FUSION)
        self.spec = f"hybrid:{dense.embedder.spec}" + (f":{options_text}" if options_text
                                                        else "")
        self._fold_of: dict[str, int] = {}
        self._fold_fusion: list[Fusion] = []
        self._all_fusion: Fusion | None = None

    @classmethod
    def from_spec(cls, embedder_spec: str, settings: Settings,
                  options_text: str = "") -> HybridRetriever:
        from target_core.retrievers.bm25 import BM25Retriever

        options = parse_options(options_text, DEFAULT_FUSION)
        return cls(BM25Retriever(), DenseRetriever.from_spec(embedder_spec, settings),
                   options=options, options_text=options_text)

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        started = time.perf_counter()
        lexical = self.lexical.index(texts, corpus_key=corpus_key, progress=progress)
        dense = self.dense.index(texts, corpus_key=corpus_key, progress=progress)
        details = {f"bm25_{k}": v for k, v in lexical.details.items()}
        details.update(dense.details)
        details["fusion"] = self.options.fusion.label
        return IndexInfo(len(texts), time.perf_counter() - started, details)

    def fusion_for(self, query: str) -> Fusion:
        """The fusion `query` is retrieved with: the spec's; when tuned, its fold's (a
        query outside the tuned ones: the weight tuned on all of them)."""
        if self.options.tune is None:
            return self.options.fusion
        if self._all_fusion is None:
            raise ConfigError(f"retriever '{self.spec}' tunes its weights on a run's gold "
                              "queries and has not been tuned (tune_on_gold is called by "
                              "the runner after indexing)")
        fold = self._fold_of.get(query)
        return self._all_fusion if fold is None else self._fold_fusion[fold]

    def _lists(self, queries: Sequence[str], depth: int) -> list[tuple[Hits, Hits]]:
        lexical = self.lexical.search(queries, top_k=depth)
        dense = self.dense.search(queries, top_k=depth)
        return list(zip(lexical, dense, strict=True))

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        lists = self._lists(queries, max(self.depth, top_k))
        return [fuse(pair, self.fusion_for(q), top_k)
                for q, pair in zip(queries, lists, strict=True)]

    def fusion_parts(self, query: str, index: int, *, top_k: int,
                     fusion: Fusion | None = None) -> dict[str, Any]:
        """How text `index`'s fused score for `query` is made (fusion.fusion_parts), from
        the lists search() fuses at `top_k`, lexical first; `fusion`: the one the query
        was retrieved with when it is not this retriever's own (a tuned run's fold)."""
        pair = self._lists([query], max(self.depth, top_k))[0]
        return fusion_parts(pair, fusion or self.fusion_for(query), index)

    def score_all(self, query: str) -> np.ndarray | None:
        """Fused scores of the texts in either side's top `depth` (as search fuses them);
        texts in neither list are NO_MATCH (no rank)."""
        lexical = self.lexical.score_all(query)
        dense = self.dense.score_all(query)
        if lexical is None or dense is None:
            return None
        pair = [top_k_hits(lexical, self.depth), top_k_hits(dense, self.depth)]
        scores = np.full(lexical.size, NO_MATCH)
        for index, value in fused_scores(pair, self.fusion_for(query)).items():
            scores[index] = value
        return scores

    def tune_on_gold(self, queries: Sequence[Query], position: Mapping[TableKey, int]
                     ) -> dict[str, Any]:
        """The runner's hook, called after index() with the run's queries and each table
        key's index in the corpus: tune when the spec asks (tune=recall@K), and return
        what the run stores in its index_info ({} when untuned)."""
        return self.tune([q.query for q in queries],
                         [{position[g] for g in q.gold if g in position} for q in queries])

    def tune(self, queries: Sequence[str], relevant: Sequence[Collection[int]]
             ) -> dict[str, Any]:
        """Cross-fitted wsum weights for recall@K (the spec's tune=recall@K): returns the
        details a run stores (split, per-fold weights, held-out recall)."""
        cutoff = self.options.tune
        if cutoff is None:
            return {}
        texts = list(dict.fromkeys(queries))
        random.Random(self.options.seed).shuffle(texts)
        folds = min(self.options.folds, max(len(texts), 1))
        self._fold_of = {text: i % folds for i, text in enumerate(texts)}
        lists = self._lists(queries, max(self.depth, cutoff))
        fold = [self._fold_of[q] for q in queries]
        self._fold_fusion = []
        for held in range(folds):
            train = [i for i, f in enumerate(fold) if f != held]
            self._fold_fusion.append(best_weight(
                self.options.fusion, [lists[i] for i in train],
                [relevant[i] for i in train], cutoff))
        self._all_fusion = best_weight(self.options.fusion, lists, relevant, cutoff)
        held_out = recall_at([fuse(lists[i], self._fold_fusion[fold[i]], cutoff)
                              for i in range(len(queries))], relevant, cutoff)
        return {"fusion": f"{self.options.fusion.method} {self.options.fusion.norm} "
                          f"tuned for recall@{cutoff}, {folds}-fold cross-fitted",
                "cv_seed": self.options.seed, "cv_folds": folds, "cv_fold_of_query": fold,
                "cv_fold_weights": [list(f.weights) for f in self._fold_fusion],
                "weights_on_all_queries": list(self._all_fusion.weights),
                f"cv_heldout_recall@{cutoff}": round(held_out, 4)}


def recall_at(ranked: Sequence[Hits], relevant: Sequence[Collection[int]],
              cutoff: int) -> float:
    """Micro recall@cutoff: Σ relevant texts in the top `cutoff` / Σ relevant texts."""
    found = sum(len({i for i, _ in hits[:cutoff]} & set(rel))
                for hits, rel in zip(ranked, relevant, strict=True))
    return found / max(sum(len(rel) for rel in relevant), 1)


def best_weight(base: Fusion, lists: Sequence[tuple[Hits, Hits]],
                relevant: Sequence[Collection[int]], cutoff: int) -> Fusion:
    """The WEIGHT_GRID weight of `base` with the best recall@cutoff on these queries;
    ties go to the weight nearest 0.5 (then the lower)."""
    def recall(weight: float) -> float:
        fusion = base.with_weight(weight)
        return recall_at([fuse(pair, fusion, cutoff) for pair in lists], relevant, cutoff)

    ordered = sorted(WEIGHT_GRID, key=lambda w: (abs(w - 0.5), w))
    return base.with_weight(max(ordered, key=recall))
