"""Document-level gold: the one rule for counting passages against a document.

A query's gold may name a whole document, (DOCUMENTS_DB, D) (datasets/chunking.py),
while a run retrieves its chunks (DOCUMENTS_DB, "D#n"). The rule:

    When a query's gold names a document, every retrieved chunk stands for its document,
    and a document retrieved through several chunks keeps the best-ranked one: the ranked
    list becomes a list of units (documents and tables, each once), and every retrieval
    metric (recall@k, hit@k, MRR, nDCG, the failure rule) is computed on that list.

So a document counts as found at k when one of its chunks is among the first k units,
and its rank is 1 + the number of distinct units ranked above its best chunk. Tables
are units of their own and are never merged. A query whose gold is tables or chunk
spans (no document key) is scored on the list as retrieved.

Example: retrieved [A#2, T, A#1, B#1] with gold {A} -> units [A, T, B]: A at rank 1,
recall@1 = 1; with gold {B} -> B at rank 3 (not 4).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from target_core.datasets.chunking import document_of, is_document_key
from target_core.types import TableKey

__all__ = ["document_level", "ranked_units", "unit_rank"]


def document_level(gold: Sequence[TableKey]) -> bool:
    """Whether the rule applies: some gold key names a whole document."""
    return any(is_document_key(key) for key in gold)


def _unit(key: TableKey) -> TableKey:
    return document_of(key) or tuple(key)  # type: ignore[return-value]


def ranked_units(retrieved: Sequence[TableKey], gold: Sequence[TableKey]
                 ) -> tuple[TableKey, ...]:
    """`retrieved` as the metrics see it: unchanged, or (document-level gold) each chunk
    replaced by its document, duplicates dropped keeping the first (best) rank."""
    if not document_level(gold):
        return tuple(retrieved)
    return tuple(dict.fromkeys(_unit(key) for key in retrieved))


def unit_rank(scores: np.ndarray, keys: Sequence[TableKey], unit: TableKey) -> int | None:
    """The rank of `unit` (a document or a table) in the unit list of the whole corpus
    under `scores` (ties broken by the lower index, as retrievers.base.rank_in), for a
    gold document beyond the run's k; None when none of its texts matches at all (a
    non-finite score)."""
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores, dtype=float)))
    seen: set[TableKey] = set()
    for index in order:
        if not np.isfinite(scores[index]):
            return None
        found = _unit(keys[index])
        if found == tuple(unit):
            return len(seen) + 1
        seen.add(found)
    return None
