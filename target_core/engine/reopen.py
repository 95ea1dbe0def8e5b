"""A stored run's retriever opened again over the run's own texts, for explanations.

A run stores its rankings, not its index: to split a score into its parts, or to score
a table beyond the run's list, the run's retriever is rebuilt over the corpus as the
runner built it (the dataset's tables, then a haystack's distractors, through the run's
view or the retriever's own texts). Indexes that persist (Chroma) are reused, so this
embeds nothing the run embedded. Opened runs are kept per process, keyed by
(workspace, Chroma server, spec, the run's text fingerprint). A dataset that changed
since the run gives other texts: then the run cannot be opened (StaleIndexError).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from target_core.config import Settings
from target_core.engine.store import RunRecord
from target_core.errors import TargetError
from target_core.retrievers.base import Retriever
from target_core.serialize import texts_fingerprint
from target_core.types import Table, TableKey

CACHED_RUNS = 4


class StaleIndexError(TargetError):
    """The run's dataset now gives other texts than the run indexed."""

    def __init__(self, run_id: str, stored: str, now: str) -> None:
        super().__init__(f"run {run_id} indexed texts {stored}, its dataset now gives "
                         f"{now}: the dataset changed, so its scores cannot be recomputed")


@dataclass(frozen=True)
class OpenedRun:
    """A run's retriever, indexed over the run's texts."""

    retriever: Retriever
    tables: tuple[Table, ...]
    texts: tuple[str, ...]
    position: dict[TableKey, int]
    """Each table's index in `texts` (the retriever's numbering)."""
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False)
    """Held while querying: some retrievers keep the last query's state."""


_cache: OrderedDict[tuple[str, ...], OpenedRun] = OrderedDict()
_lock = threading.Lock()


def open_run(run: RunRecord, settings: Settings) -> OpenedRun:
    """The run's retriever with its index built again (cached per process). Raises
    TargetError when the run has no texts to rebuild from (an imported run), its
    retriever cannot be built, or its dataset changed (StaleIndexError)."""
    from target_core.datasets import load_dataset
    from target_core.engine.haystack import run_corpus
    from target_core.retrievers import build_retriever

    if not run.text_fingerprint:
        raise TargetError(f"run {run.run_id} recorded no indexed texts (an imported run): "
                          "its retriever cannot be opened again")
    key = (str(settings.workspace), str(settings.chroma_host), str(settings.chroma_port),
           run.config.retriever, run.text_fingerprint)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    dataset = load_dataset(run.config.dataset, settings)
    tables = run_corpus(dataset, run.config.haystack, settings)  # as the runner built it
    retriever = build_retriever(run.config.retriever, settings)
    texts = retriever.prepare_texts(tables, run.config.view)
    if (now := texts_fingerprint(texts)) != run.text_fingerprint:
        raise StaleIndexError(run.run_id, run.text_fingerprint, now)
    retriever.index(texts, corpus_key=now)  # persistent indexes: nothing embedded again
    opened = OpenedRun(retriever, tuple(tables), tuple(texts),
                       {t.key: i for i, t in enumerate(tables)})
    with _lock:
        _cache[key] = opened
        while len(_cache) > CACHED_RUNS:
            _cache.popitem(last=False)
    return opened
