"""A dense probe under a view no run has embedded: only the tables involved are embedded.

Embedding a whole corpus under a new view takes a minute at 2,000 real tables with
MiniLM on 2 cores; a probe must answer in well under a second. So the gold tables and
the run's top k for the query are serialised under the probed view and embedded (each
once per process: kept by embedder, view, dataset and table), and the gold tables are
ranked among those by cosine, ties to the lower corpus index as every retriever does.
A rank among N is the rank a full run would give when no other table moves into the
top: it says whether the view brings the gold above the tables that beat it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from target_core.datasets.chunking import document_of
from target_core.embeddings.base import blas_threads
from target_core.retrievers.base import rank_in
from target_core.retrievers.dense import DenseRetriever
from target_core.table_view import TableView
from target_core.types import Dataset, TableKey

_VECTORS: dict[tuple[str, str, str, int], np.ndarray] = {}
_LOCK = threading.Lock()
MAX_VECTORS = 50_000
"""Table vectors kept in this process (about 75 MB of 384-dim float32)."""


def subset_ranks(dense: DenseRetriever, dataset: Dataset, view: TableView, text: str,
                 gold: Sequence[TableKey], top: Sequence[TableKey],
                 position: dict[TableKey, int]) -> tuple[dict[TableKey, int | None], int]:
    """(rank of each gold table among the gold and `top` tables, how many were ranked);
    a gold document is ranked by its best passage."""
    documents = set(gold) - set(position)  # a gold document: each of its passages
    involved = sorted({position[k] for k in [*gold, *top] if k in position}
                      | {i for i, t in enumerate(dataset.tables)
                         if documents and document_of(t.key) in documents})
    vectors = _table_vectors(dense, dataset, view, involved)
    query = np.asarray(dense.embedder.embed([text], kind="query")[0], dtype=np.float32)
    with blas_threads(1):
        scores = vectors @ query if len(involved) else np.zeros(0)
    at = {index: j for j, index in enumerate(involved)}
    ranks: dict[TableKey, int | None] = {}
    for key in gold:
        if key in position and position[key] in at:
            ranks[key] = rank_in(scores, at[position[key]])
            continue
        passages = [at[i] for i, t in enumerate(dataset.tables)
                    if document_of(t.key) == key and i in at]
        best = max(passages, key=lambda j: (scores[j], -j), default=None)
        ranks[key] = None if best is None else rank_in(scores, best)
    return ranks, len(involved)


def _table_vectors(dense: DenseRetriever, dataset: Dataset, view: TableView,
                   indices: Sequence[int]) -> np.ndarray:
    """Unit vectors of the tables at `indices` under `view`, embedding only the new ones."""
    embedder = dense.embedder.fingerprint()
    keys = [(embedder, view.key, dataset.fingerprint, i) for i in indices]
    with _LOCK:
        missing = [i for i, key in zip(indices, keys, strict=True) if key not in _VECTORS]
    if missing:
        texts = dense.prepare_texts([dataset.tables[i] for i in missing], view)
        made = np.asarray(dense.embedder.embed(texts, kind="document"), dtype=np.float32)
        with _LOCK:
            if len(_VECTORS) + len(missing) > MAX_VECTORS:
                _VECTORS.clear()
            for i, vector in zip(missing, made, strict=True):
                _VECTORS[(embedder, view.key, dataset.fingerprint, i)] = vector
    with _LOCK:
        rows = [_VECTORS.get(key) for key in keys]
    if any(row is None for row in rows):  # cleared meanwhile by another probe: embed again
        return _table_vectors(dense, dataset, view, indices)
    dim = rows[0].shape[0] if rows and rows[0] is not None else 0
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), dim)
