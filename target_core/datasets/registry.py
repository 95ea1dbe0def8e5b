"""Resolve dataset names and paths to loaders, and list what is available.

Sources, in order: the bundled demo datasets (data/demo/*), datasets saved in the
workspace (workspace/datasets/*), folders on TARGET_DATASETS, datasets added to the
workspace (`datasets add`, the Datasets page: workspace/datasets.json, read afresh on
every lookup so every process sees an addition at once), and TARGET's hub datasets
(`hub:<name>`). A path to a folder-format or Spider-layout folder works
anywhere a name does. Two sources with one name are an error, not a silent choice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from target_core.config import DEMO_DIR, Settings, load_settings
from target_core.datasets import corpus_stream, lookup
from target_core.datasets.added import read_added
from target_core.datasets.chunking import ChunkSettings, is_passage
from target_core.datasets.folder import (
    CORPUS_FILE,
    has_documents,
    inside,
    is_folder_dataset,
    load_folder,
    read_meta,
)
from target_core.datasets.records import Where
from target_core.errors import ConfigError, DatasetError, TargetError, UnknownNameError
from target_core.types import Dataset

_CACHE_SIZE = 8
_cache: OrderedDict[tuple[Any, ...], Dataset] = OrderedDict()
_lookups: OrderedDict[tuple[Any, ...], lookup.DatasetLookup] = OrderedDict()
_cache_lock = threading.Lock()
_opening: dict[tuple[Any, ...], threading.RLock] = {}


@dataclass(frozen=True)
class DatasetEntry:
    """Where a dataset lives: kind is demo | folder | spider | hub (how it loads);
    source is demo | workspace | TARGET_DATASETS | added | hub (where it was found)."""

    name: str
    kind: str
    location: str
    source: str = ""


@dataclass(frozen=True)
class DatasetInfo:
    """Counts and description of one dataset, as `datasets --json` prints them."""

    name: str
    task: str | None
    tables: int | None
    queries: int | None
    databases: int | None
    kind: str
    location: str
    description: str = ""
    error: str | None = None
    source: str = ""
    passages: int | None = None
    """Passages cut from documents (documents.jsonl); `tables` counts the rest, as the
    Datasets page does (one rule: dataset_info)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_spider(path: Path) -> bool:
    from target_core.datasets.spider import is_spider_dir

    return is_spider_dir(path)


def _entry_for_dir(path: Path, kind: str) -> DatasetEntry | None:
    from target_core.datasets.beir import is_beir_dataset

    if is_beir_dataset(path):  # before the folder format: both have a corpus.jsonl
        try:
            name = read_meta(path).get("name") or path.name
        except DatasetError:
            name = path.name
        return DatasetEntry(name, "beir", str(path))
    if is_folder_dataset(path):
        try:
            name = read_meta(path).get("name") or path.name
        except DatasetError:
            name = path.name  # reported when it is loaded
        return DatasetEntry(name, kind, str(path))
    if _is_spider(path):
        return DatasetEntry(path.name, "spider", str(path))
    return None


def _scan(root: Path, kind: str) -> list[DatasetEntry]:
    """The dataset at `root`, or the datasets in its immediate subfolders."""
    if not root.is_dir():
        return []
    own = _entry_for_dir(root, kind)
    if own is not None:
        return [own]
    found = (_entry_for_dir(child, kind) for child in sorted(root.iterdir()) if child.is_dir())
    return [e for e in found if e is not None]


def hub_entries() -> list[DatasetEntry]:
    from target_core.datasets.target_hub import HUB_DATASETS

    return [DatasetEntry(name, "hub", spec.corpus_repo, "hub")
            for name, spec in HUB_DATASETS.items()]


def _found(entries: list[DatasetEntry], source: str) -> list[DatasetEntry]:
    return [replace(e, source=source) for e in entries]


def discover(settings: Settings) -> dict[str, DatasetEntry]:
    """Every known dataset by name; two sources with one name raise ConfigError."""
    entries = (_found(_scan(DEMO_DIR, "demo"), "demo")
               + _found(_scan(settings.workspace / "datasets", "folder"), "workspace"))
    for extra in settings.datasets_path:
        entries += _found(_scan(extra, "folder"), "TARGET_DATASETS")
    entries += [DatasetEntry(a.name, a.kind, a.location, "added")
                for a in read_added(settings.workspace).values()]
    entries += hub_entries()
    known: dict[str, DatasetEntry] = {}
    for entry in entries:
        if entry.name in known:
            raise ConfigError(f"dataset name '{entry.name}' is used twice: "
                              f"{known[entry.name].location} and {entry.location}; "
                              f"rename one (the 'name' in its dataset.json) or "
                              f"`datasets remove` an added one")
        known[entry.name] = entry
    return known


def resolve(name_or_path: str | Path, settings: Settings) -> DatasetEntry:
    """The entry for a registered name, or for a path to a dataset folder."""
    text = str(name_or_path)
    known = discover(settings)
    if text in known:
        return known[text]
    path = Path(text).expanduser()
    if path.exists():
        entry = _entry_for_dir(path, "folder") if path.is_dir() else None
        if entry is None:
            raise DatasetError("not a dataset: expected corpus.jsonl or documents.jsonl "
                               "(folder format; with qrels/ BEIR-style) or tables.json "
                               "with dev.json (Spider layout)", path=path)
        return entry
    raise UnknownNameError("dataset", text, known)


def registered_name(name_or_path: str | Path, settings: Settings) -> str:
    """The registered name of a dataset given by its name or by the path of its folder,
    so the runs of one dataset carry one name whichever way it was given (they list,
    reuse and compare together); a path outside the registry stays as given."""
    text = str(name_or_path)
    known = discover(settings)
    if text in known:
        return text
    path = Path(text).expanduser()
    if path.is_dir():
        target = path.resolve()
        for entry in known.values():
            if entry.kind != "hub" and Path(entry.location).resolve() == target:
                return entry.name
    return text


def chunk_settings(settings: Settings) -> ChunkSettings:
    """How documents are cut into passages (TARGET_CHUNK_SIZE, TARGET_CHUNK_OVERLAP)."""
    return ChunkSettings(settings.chunk_size, settings.chunk_overlap)


def _signature(entry: DatasetEntry, settings: Settings) -> tuple[Any, ...]:
    """What must be unchanged for a cached load to stay valid: top-level files' mtimes
    and, for a dataset with documents, the chunk settings."""
    if entry.kind == "hub":
        return (entry.kind, entry.name)
    root = Path(entry.location)
    stats = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size)
                         for p in root.iterdir() if p.is_file()))
    if entry.kind == "beir":  # its qrels/<split>.tsv files count too
        stats += tuple(sorted((f"qrels/{p.name}", p.stat().st_mtime_ns, p.stat().st_size)
                              for p in (root / "qrels").glob("*.tsv")))
    chunks = (chunk_settings(settings).label if has_documents(root) or entry.kind == "beir"
              else "")
    return (entry.kind, entry.name, entry.location, stats, chunks)


def _load_entry(entry: DatasetEntry, settings: Settings) -> Dataset:
    if entry.kind == "hub":
        from target_core.datasets.target_hub import load_hub_dataset

        return load_hub_dataset(entry.name, settings)
    if entry.kind == "spider":
        from target_core.datasets.spider import load_spider

        # TARGET's corpus for a split holds that split's databases, not all of Spider's.
        return load_spider(Path(entry.location), name=entry.name, corpus="split")
    if entry.kind == "beir":
        from target_core.datasets.beir import load_beir

        return load_beir(entry.location, name=entry.name, chunking=chunk_settings(settings))
    wheres: list[Where] = []
    dataset = load_folder(Path(entry.location), name=entry.name, wheres=wheres,
                          chunking=chunk_settings(settings))
    # passages are cut from documents.jsonl, not read from lines: no corpus index for them
    if len(dataset.tables) >= lookup.INDEX_MIN_TABLES and not dataset.chunking:
        lookup.write_index(settings.workspace, Path(entry.location) / CORPUS_FILE, dataset,
                           wheres)
    return dataset


def load_dataset(name_or_path: str | Path, settings: Settings | None = None) -> Dataset:
    """Load a dataset by name or path; repeated loads of unchanged files are cached."""
    settings = settings or load_settings()
    return _load_cached(resolve(name_or_path, settings), settings)


def load_entry(entry: DatasetEntry, settings: Settings) -> Dataset:
    """Load (and so validate) the dataset an entry describes, cached as load_dataset."""
    return _load_cached(entry, settings)


def _one_at_a_time(key: tuple[Any, ...]) -> threading.RLock:
    """The lock of one dataset version: two threads that open it at once (the launcher's
    warm-up and a first page, two sessions) load it once, the second waiting for the
    first, not twice side by side (twice the time and memory)."""
    with _cache_lock:
        return _opening.setdefault(key, threading.RLock())


def _load_cached(entry: DatasetEntry, settings: Settings) -> Dataset:
    key = _signature(entry, settings)
    with _one_at_a_time(key):
        return _load_locked(key, entry, settings)


def _load_locked(key: tuple[Any, ...], entry: DatasetEntry, settings: Settings) -> Dataset:
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    dataset = _load_entry(entry, settings)
    with _cache_lock:
        _cache[key] = dataset
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return dataset


def open_lookup(name_or_path: str | Path, settings: Settings | None = None
                ) -> Dataset | lookup.DatasetLookup:
    """What a page needs to show a few queries and tables: the dataset when it is in
    memory, else a lookup over its corpus index when one is current (a large folder
    dataset that loaded before, or whose corpus file is so large that it is indexed a
    table at a time now: corpus_stream.py), else the dataset, loaded in full."""
    settings = settings or load_settings()
    return _open(resolve(name_or_path, settings), settings)


def _open(entry: DatasetEntry, settings: Settings) -> Dataset | lookup.DatasetLookup:
    key = _signature(entry, settings)
    with _one_at_a_time(key):
        return _open_locked(key, entry, settings)


def _open_locked(key: tuple[Any, ...], entry: DatasetEntry, settings: Settings
                 ) -> Dataset | lookup.DatasetLookup:
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        if key in _lookups:
            return _lookups[key]
    if entry.kind in ("demo", "folder") and not has_documents(Path(entry.location)):
        corpus = inside(Path(entry.location) / CORPUS_FILE, Path(entry.location))
        if corpus.is_file() and corpus.stat().st_size >= corpus_stream.STREAM_MIN_BYTES:
            corpus_stream.index_streaming(settings.workspace, corpus)  # never a full load
        found = lookup.lookup_folder(Path(entry.location), entry.name, settings.workspace)
        if found is not None:
            with _cache_lock:
                _lookups[key] = found
                while len(_lookups) > _CACHE_SIZE:
                    _lookups.popitem(last=False)
            return found
    return _load_locked(key, entry, settings)


def dataset_info(dataset: Dataset | lookup.DatasetLookup, entry: DatasetEntry) -> DatasetInfo:
    """The counts of `dataset`: its tables and, apart, the passages cut from its documents
    (a corpus-index lookup is of a folder without documents: no passages)."""
    passages = (sum(1 for t in dataset.tables if is_passage(t))
                if isinstance(dataset, Dataset) else 0)
    return DatasetInfo(name=dataset.name, task=dataset.task,
                       tables=len(dataset.table_index) - passages, passages=passages,
                       queries=len(dataset.queries), databases=len(dataset.databases),
                       kind=entry.kind, location=entry.location,
                       description=dataset.description, source=entry.source)


def list_datasets(settings: Settings | None = None, *, remote: bool = False) -> list[DatasetInfo]:
    """Info for every local dataset (and, with `remote`, the hub names, uncounted).

    Large datasets with a current corpus index are counted from it, not loaded. A
    dataset that fails to load is listed with its error instead of hiding the rest.
    """
    settings = settings or load_settings()
    infos = []
    for entry in discover(settings).values():
        if entry.kind == "hub":
            if remote:
                infos.append(DatasetInfo(entry.name, None, None, None, None, entry.kind,
                                         entry.location, "TARGET dataset on the Hugging Face hub",
                                         source=entry.source))
            continue
        try:
            infos.append(dataset_info(_open(entry, settings), entry))
        except TargetError as exc:
            infos.append(DatasetInfo(entry.name, None, None, None, None, entry.kind,
                                     entry.location, error=str(exc), source=entry.source))
    return infos
