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
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets import discover, load_dataset, open_lookup, registered_name
from target_core.datasets.lookup import DatasetLookup, headers, tables_of, with_headers
from target_core.errors import ConfigError, DatasetError, TargetError, UnknownNameError
from target_core.types import Dataset, Table, TableKey, TableLookup

__all__ = ["PREFIX", "Distractors", "Haystack", "distractor_key",
           "distractor_pool", "distractor_source", "draw", "haystack_distractors", "pool_size",
           "resolve_haystack", "run_corpus", "source_tag", "with_distractors"]

PREFIX = "haystack["


@dataclass(frozen=True)
class Haystack:
    """TARGET's needle-in-a-haystack setting: `size` distractor tables drawn from the
    tables of `sources` (registered dataset names or dataset folder paths) and added to a
    run's corpus. The draw is the first `size` of a `seed`ed permutation of the pooled
    tables, so the same size and seed give the same tables and a larger size a superset
    of a smaller one.

    A run stores it as its spec, RunConfig.haystack: "N@SOURCE[,SOURCE][#SEED]", e.g.
    "370@demo-fact,demo-sql" or "100@demo-fact#2" (seed 0 when left out), parsed here only.
    """

    size: int
    sources: tuple[str, ...]
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 0:
            raise ConfigError(f"haystack size must be a non-negative integer, got "
                              f"{self.size!r}")
        if isinstance(self.sources, str) or not isinstance(self.sources, tuple | list):
            raise ConfigError(f"haystack sources must be a list of dataset names or "
                              f"folders, got {self.sources!r}")
        object.__setattr__(self, "sources", tuple(self.sources))  # a list from JSON
        if not self.sources:
            raise ConfigError("a haystack needs at least one source dataset")
        for source in self.sources:
            if not isinstance(source, str) or not source.strip() or "," in source:
                raise ConfigError(f"haystack source {source!r} must be a dataset name or "
                                  "folder without commas")
        if len(set(self.sources)) != len(self.sources):
            raise ConfigError(f"haystack sources repeat: {', '.join(self.sources)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ConfigError(f"haystack seed must be an integer, got {self.seed!r}")

    @property
    def spec(self) -> str:
        """The spec string that parses back to this haystack."""
        return (f"{self.size}@{','.join(self.sources)}"
                + (f"#{self.seed}" if self.seed else ""))

    @classmethod
    def parse(cls, spec: str) -> Haystack:
        """A Haystack from "N@SOURCE[,SOURCE][#SEED]"; ConfigError naming the bad part."""
        form = "N@SOURCE[,SOURCE][#SEED], e.g. 370@demo-fact,demo-sql"
        size_text, at, rest = spec.strip().partition("@")
        if not at:
            raise ConfigError(f"haystack '{spec}' is not of the form {form}")
        size_text = size_text.strip()
        if not size_text.isdigit():
            raise ConfigError(f"haystack size '{size_text}' in '{spec}' is not a "
                              "non-negative integer")
        seed = 0
        if "#" in rest:
            rest, _, seed_text = rest.rpartition("#")
            if not re.fullmatch(r"-?\d+", seed_text.strip()):
                raise ConfigError(f"haystack seed '{seed_text}' in '{spec}' is not an "
                                  "integer")
            seed = int(seed_text)
        sources = [s.strip() for s in rest.split(",")]
        if not any(sources):
            raise ConfigError(f"haystack '{spec}' names no source dataset ({form})")
        if not all(sources):
            raise ConfigError(f"haystack '{spec}' has an empty source between commas")
        return cls(size=int(size_text), sources=tuple(sources), seed=seed)


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


def resolve_haystack(spec: str | None, settings: Settings) -> str | None:
    """The spec as runs store it (RunConfig.haystack): parsed, sources by registered name
    (a registered folder given by its path runs under its name), and None for size 0,
    so N = 0 is the plain run of the dataset and reuses it. ConfigError for a malformed
    spec, naming the bad part."""
    return resolve_haystacks([spec], settings)[0]


def resolve_haystacks(specs: Sequence[str | None], settings: Settings) -> list[str | None]:
    """resolve_haystack of each spec, each source's registered name looked up once (a
    lookup scans the dataset folders: the Ablations page's haystack curve asks for one
    spec per size)."""
    names: dict[str, str] = {}

    def name_of(source: str) -> str:
        if source not in names:
            names[source] = registered_name(source, settings)
        return names[source]

    resolved: list[str | None] = []
    for spec in specs:
        haystack = None if spec is None else Haystack.parse(spec)
        if haystack is None or haystack.size == 0:
            resolved.append(None)
            continue
        sources = tuple(dict.fromkeys(name_of(s) for s in haystack.sources))
        resolved.append(replace(haystack, sources=sources).spec)
    return resolved


def _content(table: Table) -> tuple[Any, ...]:
    return (table.title, table.section_title, table.header, table.rows)


def distractor_pool(dataset: Dataset, sources: tuple[str, ...], settings: Settings
                    ) -> tuple[list[Table], dict[str, str]]:
    """Every table of `sources` re-keyed as a distractor (see the module docstring), and
    each source's corpus fingerprint. Raises UnknownNameError for a source no registry
    or folder knows, ConfigError for the run's own dataset as a source."""
    tags = _tags(sources)
    own = {_content(t) for t in dataset.tables}
    pool: list[Table] = []
    fingerprints: dict[str, str] = {}
    for source in sources:
        data = _not_own(source, _source_dataset(source, settings), dataset)
        fingerprints[source] = data.corpus_fingerprint
        pool += [replace(t, database_id=distractor_key(tags[source], t.key)[0])
                 for t in data.tables if _content(t) not in own]
    return pool, fingerprints


def pool_size(dataset: TableLookup, sources: tuple[str, ...], settings: Settings) -> int:
    """len(distractor_pool(dataset, sources, settings)[0]) without loading a dataset
    that has a corpus index (datasets/lookup.py), the run's or a source: a source table
    can equal a table of the run's dataset only if their headers are equal, so only the
    tables with a header both hold are read. The same errors as distractor_pool."""
    _tags(sources)
    size = 0
    for source in sources:
        try:
            data = _not_own(source, open_lookup(source, settings), dataset)
        except DatasetError:  # a haystack corpus (no queries) is read whole
            data = _not_own(source, _source_dataset(source, settings), dataset)
        except UnknownNameError:
            raise UnknownNameError("haystack source dataset", source, discover(settings)) \
                from None
        size += len(data.table_index) - _copies(dataset.table_index, data.table_index)
    return size


def _copies(own: Mapping[TableKey, Table], source: Mapping[TableKey, Table]) -> int:
    """How many tables of `source` have the content of a table of `own` (the headers of
    the side with fewer tables pick the candidates on both sides)."""
    shared = headers(min(own, source, key=len))
    mine = {_content(t) for t in tables_of(own, with_headers(own, shared)).values()}
    if not mine:
        return 0
    theirs = tables_of(source, with_headers(source, shared)).values()
    return sum(_content(t) in mine for t in theirs)


def _tags(sources: Sequence[str]) -> dict[str, str]:
    """Each source's tag in distractor keys; ConfigError when two would share one."""
    tags: dict[str, str] = {}
    for source in sources:
        tag = source_tag(source)
        if tag in tags.values():
            raise ConfigError(f"haystack sources '{source}' and "
                              f"'{next(s for s, t in tags.items() if t == tag)}' would both "
                              f"be named '{tag}' in table keys: give one by name")
        tags[source] = tag
    return tags


def _not_own(source: str, data: TableLookup, dataset: TableLookup) -> Any:
    """`data` (the source opened), unless it is the run's own dataset (ConfigError)."""
    if data.name == dataset.name or data.fingerprint == dataset.fingerprint:
        raise ConfigError(f"haystack source '{source}' is the run's own dataset: its "
                          "tables would be copies of the gold ones")
    return data


def _source_dataset(source: str, settings: Settings) -> Dataset:
    """A source by name or folder; a folder with a corpus.jsonl and no queries.jsonl (a
    haystack corpus, as TARGET's needle-in-a-haystack sets are: tables without queries)
    gives its tables alone."""
    from target_core.datasets.folder import CORPUS_FILE, QUERIES_FILE, inside, iter_jsonl
    from target_core.datasets.records import parse_table

    try:
        return load_dataset(source, settings)
    except UnknownNameError:
        raise UnknownNameError("haystack source dataset", source, discover(settings)) \
            from None
    except DatasetError:
        path = Path(source).expanduser()
        if not (path / CORPUS_FILE).is_file() or (path / QUERIES_FILE).exists():
            raise
        tables = tuple(parse_table(record, where)
                       for where, record in iter_jsonl(inside(path / CORPUS_FILE, path)))
        return Dataset(name=str(path), task="retrieval", tables=tables, queries=())


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

    def corpus(self, tables: Sequence[Table]) -> Sequence[Table]:
        """The run's corpus in order: the dataset's `tables`, then these (last, so each
        of the dataset's tables keeps its position with or without a haystack);
        `tables` itself when there are none (a corpus index's, read one at a time)."""
        return (*tables, *self.tables) if self.tables else tables


def haystack_distractors(dataset: Dataset, spec: str | None, settings: Settings
                         ) -> Distractors:
    """The distractor tables of a run with haystack `spec` (none without one).
    ConfigError when N is larger than the pool (saying how many there are) or a dataset
    key looks like a distractor's."""
    haystack = Haystack.parse(spec) if spec else None
    if haystack is None or haystack.size == 0:
        return Distractors()
    if any(distractor_source(t.key) is not None for t in dataset.tables):
        raise ConfigError(f"dataset '{dataset.name}' has database ids starting "
                          f"'{PREFIX}': they cannot be told from distractors")
    pool, fingerprints = distractor_pool(dataset, haystack.sources, settings)
    try:
        chosen = draw(len(pool), haystack.size, haystack.seed)
    except ConfigError:
        holds = "holds" if len(haystack.sources) == 1 else "hold"
        raise ConfigError(f"haystack {haystack.spec}: {haystack.size} distractors asked "
                          f"for, but {', '.join(haystack.sources)} {holds} only {len(pool)} "
                          f"tables not in {dataset.name}") from None
    return Distractors(tuple(pool[i] for i in chosen), {"haystack": {
        "size": haystack.size, "sources": list(haystack.sources), "seed": haystack.seed,
        "pool": len(pool), "source_fingerprints": fingerprints}})


def run_corpus(dataset: Dataset, haystack: str | None, settings: Settings
               ) -> tuple[Table, ...]:
    """The corpus of a run of `dataset` with `haystack` (its spec, or None), in the order
    the runner indexed it: the one definition every reader of a run's corpus uses (the
    runner, a reopened run, the embedding map; with_distractors for lookups)."""
    return tuple(haystack_distractors(dataset, haystack, settings).corpus(dataset.tables))


class _Tables(Mapping[TableKey, Table]):
    """The dataset's tables, then the distractors (Distractors.corpus's order), looked
    up by key."""

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


def with_distractors(lookup: TableLookup, haystack: str | None, settings: Settings
                     ) -> TableLookup:
    """`lookup` as the Query page needs it for a run with `haystack` (its spec): the distractors
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
    return DatasetLookup(name=dataset.name, task=dataset.task, queries=dataset.queries,
                          table_index=_Tables(dataset.table_index, {t.key: t for t in extra}),
                          databases=dataset.databases, description=dataset.description,
                          source=dataset.source)
