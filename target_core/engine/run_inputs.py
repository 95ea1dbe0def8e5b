"""What a run reads before it retrieves: its dataset (through its corpus index when the
run only retrieves), the sample of its queries, and the package versions it records."""

from __future__ import annotations

import importlib.metadata
import platform
import random

from target_core.config import Settings
from target_core.datasets import load_dataset, open_lookup
from target_core.datasets.lookup import DatasetLookup
from target_core.run_config import RunConfig
from target_core.types import Dataset, Query, TableLookup

_VERSIONED = ("chromadb", "rank-bm25", "scikit-learn", "numpy", "tokenizers", "openai",
              "sqlglot", "onnxruntime", "xllamacpp", "tiktoken")


def open_run_dataset(config: RunConfig, settings: Settings) -> Dataset | DatasetLookup:
    """The run's dataset. A run that only retrieves opens a large folder dataset through
    its corpus index (datasets/corpus_stream.py): its tables are read one at a time to be
    indexed, never all held (7 GB at a million tables); the same texts, rankings and run
    as with the dataset loaded. Generation and haystacks load it whole."""
    if config.generation is None and config.haystack is None:
        return open_lookup(config.dataset, settings)
    return load_dataset(config.dataset, settings)


def select_queries(dataset: TableLookup, limit: int | None, seed: int) -> list[Query]:
    """All queries, or a seeded sample of `limit` of them kept in dataset order."""
    queries = list(dataset.queries)
    if limit is None or limit >= len(queries):
        return queries
    chosen = sorted(random.Random(seed).sample(range(len(queries)), limit))
    return [queries[i] for i in chosen]


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions
