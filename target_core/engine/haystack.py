"""TARGET's needle-in-a-haystack setting: a run's corpus is the dataset's tables plus N
distractor tables drawn from other datasets, so recall can be read against corpus size.

The pool is every table of the sources (RunConfig.haystack.sources, in the given order,
each in corpus order), less any table whose title, header and rows equal a table of the
run's dataset (a copy of a gold table is not a distractor). The draw is the first N of
one seeded permutation of the pool, kept in pool order:

    order = shuffle(range(|pool|), seed);  distractors = sorted(order[:N])

so the same N and seed always give the same tables, and a larger N is a superset of a
smaller one: each point of a recall-vs-N curve adds tables to the previous one and never
swaps them.

A distractor's key is its source key with the database id prefixed "haystack[SOURCE]"
(e.g. ("haystack[demo-fact]wiki", "Lakes_of_Norland_0")): distinct from every key of the
dataset, so a distractor can never be gold, and still one "database/table" reference in
URLs (which split at the first "/"; a source given by a folder path is named by the
folder). Its text is the source table's under the run's view.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets import discover, load_dataset, registered_name
from target_core.errors import ConfigError, TargetError, UnknownNameError
from target_core.types import Dataset, Haystack, Query, Table, TableKey, TableLookup

__all__ = ["PREFIX", "Distractors", "HaystackLookup", "distractor_key", "distractor_pool",
           "distractor_source", "draw", "haystack_distractors", "resolve_haystack",
           "source_tag", "with_distractors"]

PREFIX = "haystack["


def source_tag(source: str) -> str:
    """How a source is named in distractor keys: its registered name, or the folder's
    name for a path (no "/" may enter a database id)."""
    return Path(source).name if "/" in source or "\\" in source else source


def distractor_key(tag: str, key: TableKey) -> TableKey:
    return (f"{PREFIX}{tag}]{key[0]}", key[1])


def distractor_source(key: TableKey) -> str | None:
    """The source tag of a distractor's key ("demo-fact"), None for any other key."""
    database_id = key[0]
    if not database_id.startswith(PREFIX) or "]" not in database_id:
        return None
    return database_id[len(PREFIX):].partition("]")[0]


def resolve_haystack(haystack: Haystack | None, settings: Settings) -> Haystack | None:
    """The haystack as runs store it: sources by registered name (a registered folder
    given by its path runs under its name), and None for size 0, so N = 0 is the plain
    run of the dataset and reuses it."""
    if haystack is None or haystack.size == 0:
        return None
    sources = tuple(registered_name(s, settings) for s in haystack.sources)
    return replace(haystack, sources=tuple(dict.fromkeys(sources)))


def _content(table: Table) -> tuple[Any, ...]:
    return (table.title, table.section_title, table.header, table.rows)


def distractor_pool(dataset: Dataset, sources: tuple[str, ...], settings: Settings
                    ) -> tuple[list[Table], dict[str, str]]:
    """Every table of `sources` re-keyed as a distractor (see the module docstring), and
    each source's corpus fingerprint. Raises UnknownNameError for a source no registry
    or folder knows, ConfigError for the run's own dataset as a source."""
    tags: dict[str, str] = {}
    for source in sources:
        tag = source_tag(source)
        if tag in tags.values():
            raise ConfigError(f"haystack sources '{source}' and "
                              f"'{next(s for s, t in tags.items() if t == tag)}' would both "
                              f"be named '{tag}' in table keys: give one by name")
        tags[source] = tag
    own = {_content(t) for t in dataset.tables}
    pool: list[Table] = []
    fingerprints: dict[str, str] = {}
    for source in sources:
        try:
            data = load_dataset(source, settings)
        except UnknownNameError:
            raise UnknownNameError("haystack source dataset", source,
                                   discover(settings)) from None
        if data.name == dataset.name or data.fingerprint == dataset.fingerprint:
            raise ConfigError(f"haystack source '{source}' is the run's own dataset: its "
                              "tables would be copies of the gold ones")
        fingerprints[data.name] = data.corpus_fingerprint
        pool += [replace(t, database_id=distractor_key(tags[source], t.key)[0])
                 for t in data.tables if _content(t) not in own]
    return pool, fingerprints


def draw(pool_size: int, size: int, seed: int) -> list[int]:
    """Positions of the `size` distractors in a pool of `pool_size`: the first `size` of
    the seeded permutation, in pool order (so a larger size is a superset)."""
    if size > pool_size:
        raise ConfigError(f"haystack size {size} is larger than the pool: its sources hold "
                          f"{pool_size} tables")
    order = list(range(pool_size))
    random.Random(seed).shuffle(order)
    return sorted(order[:size])


@dataclass(frozen=True)
class Distractors:
    """The tables a haystack adds, and what the run records of them (index_info)."""

    tables: tuple[Table, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)


def haystack_distractors(dataset: Dataset, haystack: Haystack | None, settings: Settings
                         ) -> Distractors:
    """The distractor tables of a run (none without a haystack). ConfigError when N is
    larger than the pool (saying how many there are) or a dataset key looks like a
    distractor's."""
    if haystack is None or haystack.size == 0:
        return Distractors()
    if any(distractor_source(t.key) is not None for t in dataset.tables):
        raise ConfigError(f"dataset '{dataset.name}' has database ids starting "
                          f"'{PREFIX}': they cannot be told from distractors")
    pool, fingerprints = distractor_pool(dataset, haystack.sources, settings)
    try:
        chosen = draw(len(pool), haystack.size, haystack.seed)
    except ConfigError:
        raise ConfigError(f"haystack {haystack.spec}: {haystack.size} distractors asked "
                          f"for, but {', '.join(haystack.sources)} hold only {len(pool)} "
                          f"tables not in {dataset.name}") from None
    return Distractors(tuple(pool[i] for i in chosen), {"haystack": {
        "size": haystack.size, "sources": list(haystack.sources), "seed": haystack.seed,
        "pool": len(pool), "source_fingerprints": fingerprints}})


class _Tables(Mapping[TableKey, Table]):
    """The dataset's tables, then the distractors."""

    def __init__(self, base: Mapping[TableKey, Table], extra: Mapping[TableKey, Table]
                 ) -> None:
        self.base, self.extra = base, extra

    def __getitem__(self, key: TableKey) -> Table:
        return self.extra[key] if distractor_source(key) is not None else self.base[key]

    def __iter__(self) -> Iterator[TableKey]:
        yield from self.base
        yield from self.extra

    def __len__(self) -> int:
        return len(self.base) + len(self.extra)


@dataclass(frozen=True)
class HaystackLookup(TableLookup):
    """A dataset (or lookup) whose `table(key)` also opens a run's distractor tables."""

    name: str
    task: str
    queries: tuple[Query, ...]
    table_index: _Tables
    databases: Mapping[str, Path] = field(default_factory=dict)
    description: str = ""
    source: str = ""


def with_distractors(lookup: TableLookup, haystack: Haystack | None, settings: Settings
                     ) -> TableLookup:
    """`lookup` as the Query page needs it for a run with `haystack`: the distractors
    open like any table. Unchanged without a haystack, or when its sources no longer
    load as they did (a missing distractor then shows as not in the dataset)."""
    if haystack is None:
        return lookup
    try:
        dataset = (lookup if isinstance(lookup, Dataset)
                   else load_dataset(lookup.name, settings))
        extra = haystack_distractors(dataset, haystack, settings).tables
    except (TargetError, OSError):
        return lookup
    return HaystackLookup(name=dataset.name, task=dataset.task, queries=dataset.queries,
                          table_index=_Tables(dataset.table_index, {t.key: t for t in extra}),
                          databases=dataset.databases, description=dataset.description,
                          source=dataset.source)
