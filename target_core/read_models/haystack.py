"""Recall against haystack size: the stored runs of one dataset that differ only in the
number N of distractor tables (engine/haystack.py), as TARGET's needle-in-a-haystack
curve. Each point is an ordinary run (N = 0 is the dataset's plain run), so points are
reused when complete and the missing ones launch as jobs (or run in the process:
experiments/haystack.py); `haystack` on the command line and the Ablations page's
Haystack section read them here; figures.recall.haystack_figure draws them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from target_core.config import Settings
from target_core.engine.haystack import Haystack, resolve_haystack, resolve_haystacks
from target_core.engine.haystack import pool_size as count_pool
from target_core.engine.store import RunRecord, RunStore, complete_runs
from target_core.errors import ConfigError
from target_core.metrics.labels import label
from target_core.metrics.retrieval import default_ks
from target_core.read_models.links import run_queries_link
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import TableLookup

__all__ = ["HaystackCurve", "HaystackPoint", "default_sizes", "default_sources",
           "haystack_configs",
           "haystack_curve", "parse_sizes", "pool_size"]


def parse_sizes(text: str) -> tuple[int, ...]:
    """Sizes from "0,30,100,370" (also "1k", "10k"), sorted, each once; ConfigError
    naming a part that is not a non-negative integer."""
    sizes = []
    for part in (p.strip().lower() for p in text.split(",")):
        if not part:
            continue
        digits = part[:-1] if part.endswith("k") else part
        if not digits.isdigit():
            raise ConfigError(f"haystack size '{part}' is not a non-negative integer "
                              "(e.g. 0,100,1k)")
        sizes.append(int(digits) * (1000 if part.endswith("k") else 1))
    if not sizes:
        raise ConfigError(f"no haystack sizes in '{text}' (e.g. 0,100,1k)")
    return tuple(sorted(set(sizes)))


def default_sizes(pool: int) -> tuple[int, ...]:
    """0, then 30, 100, 300, 1k, 3k, ... below the pool, then the whole pool; a step
    within a factor 1.5 of the pool is left out (0, 30, 100, 370 for a pool of 370)."""
    steps = [m * 10 ** e for e in range(1, 12) for m in (3, 10)]
    return tuple([0] + [s for s in steps if s * 1.5 <= pool] + ([pool] if pool else []))


def pool_size(dataset: TableLookup, sources: Sequence[str], settings: Settings) -> int:
    """How many distractors `sources` can give `dataset` (the largest N), without
    loading a dataset that has a corpus index (engine.haystack.pool_size)."""
    spec = resolve_haystack(Haystack(1, tuple(sources)).spec, settings)
    if not spec:
        return 0
    return count_pool(dataset, Haystack.parse(spec).sources, settings)


def default_sources(settings: Settings, dataset: str) -> list[str]:
    """Where the page draws distractors from by default: every other local dataset (the
    hub's need network) but text corpora (datasets/chunking.py: their passages are not
    tables, and demo-mixed's tables are demo-qa's)."""
    from target_core.datasets import discover
    from target_core.datasets.folder import has_documents

    return [name for name, entry in discover(settings).items()
            if entry.kind != "hub" and name != dataset
            and not has_documents(Path(entry.location))]


def haystack_configs(dataset: str, retriever: str, sizes: Sequence[int],
                     sources: Sequence[str], settings: Settings, *, seed: int = 0,
                     view: TableView | None = None, top_k: int = 10,
                     limit: int | None = None, query_seed: int = 0) -> list[RunConfig]:
    """One run configuration per size, as the runner stores it (N = 0: no haystack)."""
    specs = resolve_haystacks([Haystack(n, tuple(sources), seed).spec for n in sizes],
                              settings)
    return [RunConfig(dataset=dataset, retriever=retriever, view=view or TableView(),
                      top_k=top_k, limit=limit, seed=query_seed, haystack=spec)
            for spec in specs]


@dataclass(frozen=True)
class HaystackPoint:
    retriever: str
    size: int
    config: RunConfig
    run: RunRecord | None
    """The newest complete run of `config`, None while it is missing."""


@dataclass(frozen=True)
class HaystackCurve:
    dataset: str
    n_tables: int
    """Tables of the dataset itself: the corpus at N is n_tables + N."""
    sources: tuple[str, ...]
    pool: int
    points: tuple[HaystackPoint, ...]
    ks: tuple[int, ...]

    def missing(self) -> list[RunConfig]:
        return [p.config for p in self.points if p.run is None]

    def frame(self) -> pd.DataFrame:
        """One row per (retriever, N): recall@k for each k, queries, run id and link
        (NaN and None for a point not run yet)."""
        columns = ["retriever", "N", "corpus", *(f"recall@{k}" for k in self.ks),
                   "n_queries", "run_id", "open"]
        rows = [{"retriever": p.retriever, "N": p.size, "corpus": self.n_tables + p.size,
                 **{f"recall@{k}": p.run.metrics.get(f"recall@{k}", math.nan) if p.run
                    else math.nan for k in self.ks},
                 "n_queries": p.run.n_queries if p.run else pd.NA,
                 "run_id": p.run.run_id if p.run else None,
                 "open": run_queries_link(p.run.run_id) if p.run else None}
                for p in self.points]
        return pd.DataFrame(rows, columns=columns).astype({"n_queries": "Int64"})


def points_table(curve: HaystackCurve) -> pd.DataFrame:
    """The curve's points as the page lists them: recall as text with 3 decimals under
    its label ("mean recall@k", metrics.labels), blank (not "None") where a point is not
    run yet."""
    from target_core.read_models.cells import as_text

    frame = as_text(curve.frame(), {**{f"recall@{k}": ".3f" for k in curve.ks},
                                    "n_queries": "d"})
    frame[["run_id", "open"]] = frame[["run_id", "open"]].fillna("")
    return frame.rename(columns={f"recall@{k}": label(f"recall@{k}") for k in curve.ks})


def _differs_in_size(config: RunConfig, base: RunConfig) -> bool:
    """Whether `config` is `base` (any retriever) with another haystack size."""
    if config.haystack is None or base.haystack is None:
        return False
    mine, theirs = Haystack.parse(config.haystack), Haystack.parse(base.haystack)
    return (mine.sources == theirs.sources
            and mine.seed == theirs.seed
            and replace(config, retriever=base.retriever, haystack=None)
            == replace(base, haystack=None))


def haystack_curve(store: RunStore, settings: Settings, dataset: TableLookup,
                   retrievers: Sequence[str], sources: Sequence[str], *,
                   sizes: Sequence[int] | None = None, seed: int = 0,
                   view: TableView | None = None, top_k: int = 10, limit: int | None = None,
                   query_seed: int = 0, name: str | None = None) -> HaystackCurve:
    """The curve of each retriever over `sizes` (default: default_sizes of the pool),
    plus any other N stored with the same sources, seed and settings. `name` is the
    dataset as its runs name it (default: its name; a folder outside the registry: its
    path). ConfigError for a size beyond the pool, naming it and the pool."""
    if not retrievers:
        raise ConfigError("a haystack curve needs at least one retriever")
    pool = pool_size(dataset, sources, settings)
    wanted = tuple(sizes) if sizes is not None else default_sizes(pool)
    if too_big := [n for n in wanted if n > pool]:
        raise ConfigError(f"haystack size {too_big[0]} is larger than the pool: "
                          f"{', '.join(sources)} hold{'s' if len(sources) == 1 else ''} {pool} "
                          f"tables not in {dataset.name}")
    name = name or dataset.name
    base = haystack_configs(name, retrievers[0], [1], sources, settings, seed=seed,
                            view=view, top_k=top_k, limit=limit, query_seed=query_seed)[0]
    stored = {Haystack.parse(run.config.haystack).size
              for run in store.list_runs(dataset=name, status="complete")
              if run.config.haystack is not None and run.config.retriever in retrievers
              and _differs_in_size(run.config, base)}
    all_sizes = sorted(set(wanted) | {n for n in stored if n <= pool})
    points = []
    for retriever in dict.fromkeys(retrievers):
        configs = haystack_configs(name, retriever, all_sizes, sources, settings,
                                   seed=seed, view=view, top_k=top_k, limit=limit,
                                   query_seed=query_seed)
        runs = complete_runs(store, configs, dataset.fingerprint)
        points += [HaystackPoint(retriever, n, c, r)
                   for n, c, r in zip(all_sizes, configs, runs, strict=True)]
    resolved = Haystack.parse(base.haystack).sources if base.haystack else tuple(sources)
    return HaystackCurve(name, dataset.n_tables, resolved, pool, tuple(points),
                         tuple(default_ks(top_k)))
