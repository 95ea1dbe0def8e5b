"""Which fusion should plain `hybrid` be? Component and fused recall on the demo sets and
on sets where one component is weak (prints a table; not a test).

    .venv/bin/python -m benchmarks.fusion_choice [--limit N] [--depth 100]

Each query's top `depth` lists from bm25 and dense:minilm (default view) are fused by
every candidate exactly as HybridRetriever.search does. The figure is the Table 2
recall: recall_micro@10 (Σ gold tables in the top 10 / Σ gold tables), and for
text-to-SQL the database-level hit at 1 (db_hit@1). Weak-component sets: demo-sql's
schema only (header-only view), demo-qa without titles (no-title view), and demo-qa with
the dense side replaced by seeded random scores ("dense=random"), and with the bm25 side
replaced ("bm25=random"); tests/test_fusion.py asserts the default on the demo sets.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.retrievers.base import Hits
from target_core.retrievers.bm25 import BM25Retriever
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.fusion import Fusion, fuse
from target_core.retrievers.hybrid import DEFAULT_FUSION, best_weight
from target_core.serialize import table_text, texts_fingerprint
from target_core.table_view import TableView
from target_core.types import Dataset, Query

DEMO_SETS = ("demo-qa", "demo-fact", "demo-sql")
WEAK_VIEWS = (("demo-sql", "header-only"), ("demo-qa", "no-title"))
"""Views that weaken a side as public sets do: schema-only text-to-SQL, untitled tables."""
CANDIDATES: tuple[Fusion, ...] = (
    Fusion("rrf", k=60), Fusion("rrf", k=10),
    Fusion("combsum", "min-max"), Fusion("combmnz", "min-max"),
    Fusion("combsum", "z-score"), Fusion("combmnz", "z-score"),
    Fusion("combsum", "rank"),
    Fusion("wsum", "min-max", (0.3, 0.7)), Fusion("wsum", "min-max", (0.7, 0.3)),
    Fusion("wsum", "z-score", (0.3, 0.7)), Fusion("wsum", "z-score", (0.7, 0.3)),
)


@dataclass(frozen=True)
class Components:
    """One dataset's queries and each one's top lists from both components."""

    name: str
    dataset: Dataset
    queries: tuple[Query, ...]
    lexical: tuple[Hits, ...]
    dense: tuple[Hits, ...]


def components(name: str, settings: Settings, *, limit: int | None = None,
               depth: int = 100, view: str = "default") -> Components:
    dataset = load_dataset(name, settings)
    queries = dataset.queries[:limit] if limit else dataset.queries
    texts = [table_text(t, TableView.preset(view)) for t in dataset.tables]
    key = texts_fingerprint(texts)
    bm25 = BM25Retriever()
    bm25.index(texts, corpus_key=key)
    dense = DenseRetriever.from_spec("minilm", settings)
    dense.index(texts, corpus_key=key)
    asked = [q.query for q in queries]
    label = name if view == "default" else f"{name} {view}"
    return Components(label, dataset, tuple(queries), tuple(bm25.search(asked, top_k=depth)),
                      tuple(dense.search(asked, top_k=depth)))


def randomised(parts: Components, side: str, seed: int = 0) -> Components:
    """`parts` with one side's lists replaced by random scores over the whole corpus."""
    rng = random.Random(seed)
    n, depth = len(parts.dataset.tables), len(parts.dense[0]) if parts.dense else 100
    lists = []
    for _ in parts.queries:
        chosen = rng.sample(range(n), min(depth, n))
        lists.append([(i, 1.0 - r / len(chosen)) for r, i in enumerate(chosen)])
    which = {"lexical": tuple(lists)} if side == "bm25" else {"dense": tuple(lists)}
    return Components(f"{parts.name} {side}=random", parts.dataset, parts.queries,
                      which.get("lexical", parts.lexical), which.get("dense", parts.dense))


def table2_recall(parts: Components, ranked: Sequence[Hits]) -> float:
    """recall_micro@10, or db_hit@1 for text-to-SQL (TARGET's Table 2 columns)."""
    tables = parts.dataset.tables
    if parts.dataset.task == "sql":
        hits = [bool(r) and tables[r[0][0]].database_id == q.database_id
                for q, r in zip(parts.queries, ranked, strict=True)]
        return sum(hits) / max(len(hits), 1)
    found = total = 0
    for query, hits_ in zip(parts.queries, ranked, strict=True):
        top = {tables[i].key for i, _ in hits_[:10]}
        found += sum(key in top for key in query.gold)
        total += len(query.gold)
    return found / max(total, 1)


def fused(parts: Components, fusion: Fusion) -> list[Hits]:
    return [fuse([a, b], fusion, 10) for a, b in zip(parts.lexical, parts.dense, strict=True)]


def cross_fitted(parts: Components, base: Fusion, folds: int = 5, seed: int = 0
                 ) -> list[Hits]:
    """Each query fused with the wsum weight best for recall@10 on the other folds (as
    hybrid's tune=recall@10 does)."""
    order = list(range(len(parts.queries)))
    random.Random(seed).shuffle(order)
    fold = {q: i % folds for i, q in enumerate(order)}
    position = {t.key: i for i, t in enumerate(parts.dataset.tables)}
    relevant = [{position[g] for g in q.gold if g in position} for q in parts.queries]
    pairs = list(zip(parts.lexical, parts.dense, strict=True))
    tuned = [best_weight(base, [pairs[i] for i in order if fold[i] != f],
                         [relevant[i] for i in order if fold[i] != f], 10)
             for f in range(folds)]
    return [fuse(pairs[i], tuned[fold[i]], 10) for i in range(len(pairs))]


def row(parts: Components, fusions: Sequence[Fusion]) -> dict[str, float]:
    scores = {"bm25": table2_recall(parts, parts.lexical),
              "dense": table2_recall(parts, parts.dense)}
    for fusion in fusions:
        scores[fusion.label] = table2_recall(parts, fused(parts, fusion))
    for norm in ("min-max", "z-score"):
        scores[f"wsum {norm}, tune=recall@10 (5-fold)"] = table2_recall(
            parts, cross_fitted(parts, Fusion("wsum", norm)))
    return scores


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args(argv)
    settings = load_settings()
    fusions = (DEFAULT_FUSION, *[f for f in CANDIDATES if f != DEFAULT_FUSION])
    sets = [components(name, settings, limit=args.limit, depth=args.depth)
            for name in DEMO_SETS]
    sets += [components(name, settings, limit=args.limit, depth=args.depth, view=view)
             for name, view in WEAK_VIEWS]
    sets += [randomised(sets[0], "dense"), randomised(sets[0], "bm25")]
    rows = {parts.name: row(parts, fusions) for parts in sets}
    columns = list(next(iter(rows.values())))
    out("| fusion | " + " | ".join(rows) + " |")
    out("|---|" + "---:|" * len(rows))
    for column in columns:
        label = f"**{column}** (default)" if column == DEFAULT_FUSION.label else column
        out(f"| {label} | " + " | ".join(f"{r[column]:.3f}" for r in rows.values()) + " |")
    out("| better component | " + " | ".join(
        f"{max(r['bm25'], r['dense']):.3f}" for r in rows.values()) + " |")


if __name__ == "__main__":
    main()
