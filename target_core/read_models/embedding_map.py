"""Embedding maps for the Query and Failures pages (analysis/embedding_map.py projects):
the run's corpus in grey, one question (a star) with its gold and retrieved tables, or a
failure category's questions with their gold tables, each joined to its golds by a line.

Above SAMPLE_LIMIT tables the grey background is a sample around the marked points
(sample_around), and the caption says how many of how many are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from target_core.analysis.embedding_map import BORROWED_EMBEDDER as BORROWED_EMBEDDER
from target_core.analysis.embedding_map import (
    DEFAULT_METHOD,
    MAPS_DIR,
    SAMPLE_LIMIT,
    CorpusMap,
    cached_map_path,
    corpus_map,
    sample_around,
)
from target_core.analysis.embedding_map import METHODS as METHODS
from target_core.analysis.embedding_map import NoEmbeddingsError as NoEmbeddingsError
from target_core.analysis.embedding_map import borrowed_note as borrowed_note
from target_core.analysis.embedding_map import can_borrow as can_borrow
from target_core.analysis.failures import FailureReport
from target_core.config import Settings
from target_core.engine.haystack import distractor_source
from target_core.engine.haystack import with_distractors as with_distractors
from target_core.engine.store import RunStore
from target_core.figures.maps import GOLD, QUESTION, RETRIEVED, Points, map_figure
from target_core.figures.style import Figure, plain
from target_core.types import Dataset, TableKey, TableLookup, table_ref

ZOOM_BELOW = 0.5
"""The Query page's map opens zoomed to the question and its marked tables when they
fill less than half the map's width and height (t-SNE puts a sibling-confusion's gold and
top 10 in one small cluster)."""


@dataclass(frozen=True)
class MapView:
    figure: Figure
    caption: str
    n_tables: int
    n_shown: int
    computed: bool
    seconds: float


def table_hover(lookup: TableLookup, key: TableKey) -> str:
    """The table's id and title for a hover label (figures.style.plain: titles are
    dataset content)."""
    table = lookup.table_index.get(key)
    title = table.title if table else ""
    if (source := distractor_source(key)) is not None:
        title = f"distractor from {source}" + (f": {title}" if title else "")
    return plain(f"{table_ref(key)}<br>{title}" if title else table_ref(key))


def focus_ranges(everything: np.ndarray, focus: np.ndarray
                 ) -> tuple[list[float], list[float]] | None:
    """Axis ranges around the `focus` points when they fill less than ZOOM_BELOW of the
    map's width and height (else None: the whole map): padded by a fifth of their own
    extent, at least 4% of the map's."""
    if not len(focus) or not len(everything):
        return None
    low, high = everything.min(axis=0), everything.max(axis=0)
    f_low, f_high = focus.min(axis=0), focus.max(axis=0)
    full, part = np.maximum(high - low, 1e-9), f_high - f_low
    if np.any(part >= ZOOM_BELOW * full):
        return None
    pad = np.maximum(0.2 * part, 0.04 * full)
    return ([float(f_low[0] - pad[0]), float(f_high[0] + pad[0])],
            [float(f_low[1] - pad[1]), float(f_high[1] + pad[1])])


def _shown_caption(cmap: CorpusMap, shown: int, what: str) -> str:
    method = "t-SNE" if cmap.method == "tsne" else "PCA"
    n = len(cmap.keys)
    drawn = (f"all {n:,} tables" if shown >= n else
             f"showing {shown:,} of {n:,} tables, sampled around the marked points (each "
             f"marked point's nearest kept, the rest drawn at random, seed 0)")
    whose = ("dense:minilm vectors of the run's texts (the run stores none; a dense run of "
             "the same view stored them)" if cmap.borrowed else "the run's vectors")
    return (f"{method} map of {whose}: {drawn}. {what}. The projection took "
            f"{cmap.seconds:.1f} s once; it is cached in the workspace's {MAPS_DIR}/.")


def _background(cmap: CorpusMap, marked: set[int], around: np.ndarray, lookup: TableLookup,
                limit: int) -> tuple[np.ndarray, list[str], int]:
    """(background indices, their hovers, how many tables are drawn in all)."""
    chosen = sample_around(cmap.xy, marked, limit=limit, around=around)
    background = np.asarray([i for i in chosen if int(i) not in marked], dtype=int)
    return (background, [table_hover(lookup, cmap.keys[i]) for i in background],
            len(chosen))


def map_is_cached(store: RunStore, dataset: Dataset, settings: Settings, run_id: str, *,
                  method: str = DEFAULT_METHOD, borrow: bool = False) -> bool:
    """The run's map is on disk (showing it is fast). Raises TargetError
    (NoEmbeddingsError for a run without vectors)."""
    run = store.get_run(run_id)
    query_ids = [s.query_id for s in store.query_scores(run_id)]
    return cached_map_path(run, dataset, query_ids, settings, method=method,
                           borrow=borrow).exists()


def query_map_view(store: RunStore, dataset: Dataset, lookup: TableLookup,
                   settings: Settings, run_id: str, query_id: str, *,
                   method: str = DEFAULT_METHOD, limit: int = SAMPLE_LIMIT,
                   borrow: bool = False) -> MapView:
    """One question of the run (a star), its gold tables and its top k. `lookup` gives
    titles (the dataset with a haystack run's distractors). Raises TargetError
    (NoEmbeddingsError for a run without vectors)."""
    run = store.get_run(run_id)
    query_ids = [s.query_id for s in store.query_scores(run_id)]
    cmap = corpus_map(run, dataset, query_ids, settings, method=method, borrow=borrow)
    result = store.get_result(run_id, query_id)
    position = cmap.positions()
    gold = [k for k in result.gold if k in position]
    ranked = [(rank, key) for rank, (key, _) in
              enumerate(result.ranked[:run.config.top_k], start=1) if key in position]
    marked = {position[k] for k in gold} | {position[k] for _, k in ranked}
    query_xy = cmap.query_xy[[cmap.query_index()[query_id]]]
    background, hover, shown = _background(cmap, marked, query_xy, lookup, limit)

    def where(key: TableKey) -> str:
        rank = result.gold_ranks.get(key)
        return "not ranked" if rank is None else f"rank {rank}"

    retrieved = [(r, k) for r, k in ranked if k not in set(gold)]
    text = dataset.query(query_id).query
    zoom = focus_ranges(np.vstack([cmap.xy, cmap.query_xy]),
                        np.vstack([cmap.xy[sorted(marked)], query_xy]))
    figure = map_figure(cmap, background, hover, [
        Points("retrieved (rank)", cmap.xy[[position[k] for _, k in retrieved]],
               [f"rank {r} · " + table_hover(lookup, k) for r, k in retrieved], RETRIEVED,
               labels=[str(r) for r, _ in retrieved]),
        Points("gold", cmap.xy[[position[k] for k in gold]],
               [f"gold, {where(k)} · " + table_hover(lookup, k) for k in gold], GOLD,
               symbol="diamond", size=13,
               labels=[str(r) if (r := result.gold_ranks.get(k)) else "" for k in gold]),
        Points("question", query_xy, [plain(f"{query_id}: {text}")], QUESTION,
               symbol="star", size=18)], zoom=zoom)
    zoomed = "; zoomed to these points (double-click the chart for the whole map)"
    caption = _shown_caption(cmap, shown, f"Star: question {query_id}; diamonds: its gold "
                             "tables, labelled by rank even beyond k; blue: the run's top "
                             f"{run.config.top_k}, labelled by rank" + (zoomed if zoom
                                                                        else ""))
    return MapView(figure, caption, len(cmap.keys), shown, cmap.computed, cmap.seconds)


def category_map_view(store: RunStore, dataset: Dataset, lookup: TableLookup,
                      settings: Settings, report: FailureReport, category: str, *,
                      method: str = DEFAULT_METHOD, limit: int = SAMPLE_LIMIT,
                      borrow: bool = False) -> MapView:
    """The failed questions of `category` in `report` (stars) and their gold tables
    (diamonds), each question joined to its golds. Raises TargetError."""
    run = store.get_run(report.run_id)
    query_ids = [s.query_id for s in store.query_scores(run.run_id)]
    cmap = corpus_map(run, dataset, query_ids, settings, method=method, borrow=borrow)
    position, index = cmap.positions(), cmap.query_index()
    cases = [c for c in report.in_category(category) if c.query_id in index]
    golds = {c.query_id: [k for k in dataset.query(c.query_id).gold if k in position]
             for c in cases}
    marked_keys = list(dict.fromkeys(k for keys in golds.values() for k in keys))
    marked = {position[k] for k in marked_keys}
    query_xy = cmap.query_xy[[index[c.query_id] for c in cases]]
    background, hover, shown = _background(cmap, marked, query_xy, lookup, limit)
    lines = np.asarray([[*cmap.query_xy[index[q]], *cmap.xy[position[k]]]
                        for q, keys in golds.items() for k in keys]).reshape(-1, 4)
    gold_of = {k: [q for q, keys in golds.items() if k in keys] for k in marked_keys}
    figure = map_figure(cmap, background, hover, [
        Points("gold tables", cmap.xy[[position[k] for k in marked_keys]],
               [f"gold of {', '.join(gold_of[k])} · " + table_hover(lookup, k)
                for k in marked_keys], GOLD, symbol="diamond", size=12),
        Points(f"{category} questions", query_xy,
               [plain(f"{c.query_id}: {c.query}") for c in cases], QUESTION,
               symbol="star", size=14)], lines=lines)
    caption = _shown_caption(cmap, shown, f"Stars: the {len(cases)} questions in "
                             f"{category} at k = {report.k}; diamonds: their gold tables, "
                             "each joined to its question")
    return MapView(figure, caption, len(cmap.keys), shown, cmap.computed, cmap.seconds)


__all__ = ["MapView", "category_map_view", "focus_ranges", "map_is_cached",
           "query_map_view", "table_hover"]
