"""What-if probes: one query, its text edited or its tables under another view, re-ranked
by every stored retriever of its dataset at once, beside the ranks the runs stored.

"Every stored retriever" is every complete run on this dataset's content (the newest of
each retriever and view; runs with distractor tables are left out: their corpus is
another). Each is re-ranked from what is already there:

- lexical retrievers (bm25, tfidf, ottqa) are rebuilt in memory from the view's texts,
  once per (retriever, view, dataset) in this process; every table gets a score, so the
  probed rank is the full rank, as a fresh run would store it;
- dense retrievers read the table vectors of the view from Chroma (the run's collection)
  and embed only the query; under a view no run has embedded, only the tables involved
  (the gold tables and the run's top k for the query) are serialised and embedded, and
  the rank is then among those (`among`);
- hybrid fuses both sides when both have an index for the view.

Retrievers that write their own texts or queries with a model (summary, hyse), rows and
plug-ins are listed, not re-ranked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from target_core.config import Settings
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import TargetError, UnknownNameError
from target_core.metrics.documents import unit_rank
from target_core.retrievers import build_retriever
from target_core.retrievers.base import LexicalScoring, Retriever, rank_in
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.hybrid import HybridRetriever
from target_core.serialize import texts_fingerprint
from target_core.table_view import SCHEMA_CONTEXT, TableView
from target_core.types import Dataset, TableKey, table_ref
from target_core.vectorstore import collection_name

log = logging.getLogger(__name__)

VIEW_CHANGES: tuple[str, ...] = ("as run", "title on", "title off", "header only",
                                 "first N rows", "schema")
"""How a probe changes each run's own table view."""

CACHE_SIZE = 32
"""Retrievers kept built in this process (per retriever spec, view and dataset)."""


def probe_view(view: TableView, change: str, rows: int = 5) -> TableView:
    """`view` changed as `change` says (VIEW_CHANGES); ConfigError when the view cannot
    take it (TARGET's ottqa format has no title, rows or context)."""
    if change not in VIEW_CHANGES:
        raise UnknownNameError("view change", change, VIEW_CHANGES)
    return {"as run": lambda: view,
            "title on": lambda: view.with_(title=True, section_title=True),
            "title off": lambda: view.with_(title=False, section_title=False),
            "header only": lambda: view.with_(rows=0),
            "first N rows": lambda: view.with_(rows=rows),
            "schema": lambda: view.with_(context=SCHEMA_CONTEXT)}[change]()


@dataclass(frozen=True)
class ProbeRank:
    """One stored retriever's rank of one gold table: as stored, and as probed."""

    run_id: str
    retriever: str
    view: str
    """The probed view's label."""
    table: str
    original: int | None
    """The run's stored rank (None: not ranked, or the query is not in the run)."""
    probed: int | None
    among: int | None = None
    """None: ranked among every table; N: among the N tables serialised for this probe."""
    note: str = ""

    @property
    def change(self) -> int | None:
        """Places gained (positive: the gold table moved up); None without both ranks."""
        if self.original is None or self.probed is None:
            return None
        return self.original - self.probed


@dataclass(frozen=True)
class Probe:
    """A probe of one query across every stored retriever of its dataset."""

    dataset: str
    query_id: str
    original_text: str
    text: str
    change: str
    rows: int
    ranks: list[ProbeRank]
    seconds: float
    built: int
    """Indexes built by this probe (0 when every one was in memory already)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ranks"] = [asdict(r) | {"change": r.change} for r in self.ranks]
        return data


def probe_runs(store: RunStore, dataset: Dataset) -> list[RunRecord]:
    """The complete runs on this dataset's content, the newest of each (retriever,
    view); runs with distractor tables are left out (their corpus is another)."""
    seen: set[tuple[str, str]] = set()
    runs = []
    for run in store.list_runs(status="complete"):
        key = (run.config.retriever, run.config.view.key)
        if (run.dataset_fingerprint != dataset.fingerprint or run.config.haystack
                or key in seen):
            continue
        seen.add(key)
        runs.append(run)
    return sorted(runs, key=lambda r: (r.config.retriever, r.config.view.key))


def probe(store: RunStore, dataset: Dataset, settings: Settings, query_id: str,
          text: str | None = None, change: str = "as run", rows: int = 5) -> Probe:
    """Re-rank query `query_id` with `text` (default: its own) under each run's view
    changed by `change`, for every run of probe_runs."""
    started = time.perf_counter()
    query = dataset.query(query_id)
    text = query.query if text is None or not text.strip() else text
    position = {t.key: i for i, t in enumerate(dataset.tables)}
    ranks: list[ProbeRank] = []
    built = 0
    for run in probe_runs(store, dataset):
        stored = _stored(store, run, query_id)
        try:
            view = probe_view(run.config.view, change, rows)
        except TargetError as exc:
            ranks += [ProbeRank(run.run_id, run.config.retriever, run.config.view.label,
                                table_ref(g), stored.get(g), None, note=str(exc))
                      for g in query.gold]
            continue
        found, among, note, fresh = _rank(run, view, dataset, settings, text, query.gold,
                                          position, store, query_id)
        built += fresh
        ranks += [ProbeRank(run.run_id, run.config.retriever, view.label, table_ref(g),
                            stored.get(g), found.get(g), among, note) for g in query.gold]
    return Probe(dataset.name, query_id, query.query, text, change, rows, ranks,
                 time.perf_counter() - started, built)


def _stored(store: RunStore, run: RunRecord, query_id: str) -> dict[TableKey, int | None]:
    try:
        return dict(store.get_result(run.run_id, query_id).gold_ranks)
    except TargetError:  # a run over a sample of the queries: not this one
        return {}


def _rank(run: RunRecord, view: TableView, dataset: Dataset, settings: Settings, text: str,
          gold: Sequence[TableKey], position: dict[TableKey, int], store: RunStore,
          query_id: str) -> tuple[dict[TableKey, int | None], int | None, str, int]:
    """(gold ranks, among, note, indexes built) for one run under `view`."""
    spec = run.config.retriever
    try:
        retriever, fresh = _indexed(spec, view, dataset, settings)
    except _NoIndex as missing:
        dense = missing.retriever
        if not missing.subset or not isinstance(dense, DenseRetriever):
            return {}, None, str(missing), 0
        from target_core.analysis.probe_dense import subset_ranks

        top = _stored_top(store, run, query_id)
        ranks, among = subset_ranks(dense, dataset, view, text, gold, top, position)
        return ranks, among, (f"no run embedded this view: ranked among the {among} gold "
                              "and top-k tables, embedded for this probe"), 0
    except TargetError as exc:
        return {}, None, f"not probed: {exc}", 0
    scores = retriever.score_all(text)
    if scores is None:
        return {}, None, "not probed: the retriever gives no scores", fresh
    keys = list(position)
    return ({g: rank_in(scores, position[g]) if g in position else unit_rank(scores, keys, g)
             for g in gold}, None, "", fresh)


def _stored_top(store: RunStore, run: RunRecord, query_id: str) -> list[TableKey]:
    try:
        return [key for key, _ in store.get_result(run.run_id, query_id).ranked]
    except TargetError:
        return []


class _NoIndex(TargetError):
    """No stored index of this retriever for the view (building one would embed the
    whole corpus), or a retriever a probe does not rebuild."""

    def __init__(self, retriever: Retriever, why: str, *, subset: bool = False) -> None:
        self.retriever = retriever
        self.subset = subset
        """A plain dense retriever: the tables involved can be embedded for the probe."""
        super().__init__(why)


_CACHE: OrderedDict[tuple[str, str, str, str], Retriever | _NoIndex] = OrderedDict()
"""Built retrievers, and what a probe learnt it cannot build (a view no run embedded)."""
_LOCK = threading.Lock()


def _indexed(spec: str, view: TableView, dataset: Dataset, settings: Settings
             ) -> tuple[Retriever, int]:
    """The retriever of `spec` indexed on the view's texts, built once per (spec, view,
    dataset, workspace) in this process; (retriever, 1 when built now)."""
    key = (spec, view.key, dataset.fingerprint, str(settings.workspace))
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            found = _CACHE[key]
            if isinstance(found, _NoIndex):  # known since the first probe: not again
                raise found
            return found, 0
    try:
        return _build(spec, view, dataset, settings, key), 1
    except _NoIndex as missing:
        _keep(key, missing)
        raise


def _keep(key: tuple[str, str, str, str], value: Retriever | _NoIndex) -> None:
    with _LOCK:
        _CACHE[key] = value
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)


def _build(spec: str, view: TableView, dataset: Dataset, settings: Settings,
           key: tuple[str, str, str, str]) -> Retriever:
    retriever = build_retriever(spec, settings)
    if not _rebuildable(retriever):
        raise _NoIndex(retriever, "not probed: this retriever writes its own texts or "
                       "queries, or runs its own code (only lexical, dense and hybrid "
                       "retrievers are re-ranked)")
    texts = retriever.prepare_texts(dataset.tables, view)
    fingerprint = texts_fingerprint(texts)
    dense = retriever.dense if isinstance(retriever, HybridRetriever) else retriever
    if isinstance(dense, DenseRetriever) and not _embedded(dense, fingerprint, len(texts)):
        if dense is retriever:
            raise _NoIndex(dense, "no collection for this view", subset=True)
        raise _NoIndex(retriever, "not probed: no run embedded this view for the dense side")
    retriever.index(texts, corpus_key=fingerprint)
    _keep(key, retriever)
    return retriever


def _rebuildable(retriever: Retriever) -> bool:
    """Scores every table from the view's texts: lexical, plain dense, hybrid (untuned)."""
    if isinstance(retriever, HybridRetriever):
        return retriever.options.tune is None
    if isinstance(retriever, DenseRetriever):
        return type(retriever).prepare_texts is DenseRetriever.prepare_texts
    return isinstance(retriever, LexicalScoring)


def _embedded(dense: DenseRetriever, fingerprint: str, n: int) -> bool:
    """A collection of these texts by this embedder holds every one of them."""
    name = collection_name(fingerprint, dense.embedder.fingerprint())
    try:
        return int(dense.store.existing(name).count()) == n
    except TargetError:
        return False


def clear_cache() -> None:
    """Forget the built retrievers (tests; a workspace whose runs were deleted)."""
    with _LOCK:
        _CACHE.clear()
