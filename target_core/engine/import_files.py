"""TARGET's results files, read and checked before anything is stored (engine/importer.py
stores them as runs).

Two JSON Lines files, as TARGET writes them:
- retrieval results: {"dataset_name", "query_id", "retrieval_results": [[db, table], ...]};
- downstream results: {"dataset_name", "query_id", "generated_results"}, where
  generated_results is the answer text (QA), the label text (fact verification) or
  [sql, database_id] (text-to-SQL).
Each line is validated: unknown query ids and malformed lines name the file and line.
What a line may hold but the run's ranking cannot show is counted, per file, as a
warning: tables listed twice in one list and lists longer than k (ranked at each table's
first place within k; TARGET's recall and capped recall count the list as written,
metrics.capped.target_counts), and tables that are not in the dataset's corpus (kept:
they never match gold).

TARGET's evaluator writes one file per dataset and k, `<dir>/<dataset_name>/<k>.jsonl`
(tasks/utils.py `construct_persistence_path`), retrieval and downstream results in
two such folders; TARGET's dataset names (`fetaqa`, `spider-test`, ...) resolve to a
dataset of that name here, else to TARGET's hub dataset (`hub:fetaqa`, `hub:spider`, ...).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.errors import DatasetError, DatasetUnavailableError, UnknownNameError
from target_core.generators.base import Generation
from target_core.tasks import task_rules
from target_core.types import Dataset, TableKey
from target_core.wording import agreeing, counted

EXAMPLES = 3  # tables a warning names


@dataclass
class RetrievalFile:
    """A retrieval-results file, read: (query_id, keys: each table once, at its first
    place) in file order, each list as written (`returned`), and what the lists held
    that the keys do not show (repeats, more than k, tables not in the corpus)."""

    lists: list[tuple[str, list[TableKey]]]
    returned: dict[str, list[TableKey]] = field(default_factory=dict)
    repeated: int = 0  # repeated entries (a table listed 3 times is 2)
    repeated_queries: int = 0
    beyond_k: int = 0  # entries past k, repeats included
    beyond_k_queries: int = 0
    top_k: int | None = None
    unknown: int = 0  # distinct tables per list that are not in the corpus
    unknown_queries: int = 0
    unknown_examples: list[TableKey] = field(default_factory=list)
    repeated_examples: list[TableKey] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"repeated_tables": self.repeated, "repeated_queries": self.repeated_queries,
                "beyond_k_entries": self.beyond_k, "beyond_k_queries": self.beyond_k_queries,
                "unknown_tables": self.unknown, "unknown_queries": self.unknown_queries}

    def warnings(self, path: str | Path, dataset: str) -> list[str]:
        """One sentence per kind of silent change, naming the file."""
        out = []
        if self.unknown:
            out.append(f"{path}: {counted(self.unknown, 'retrieved table')} in "
                       f"{counted(self.unknown_queries, 'query')} "
                       f"{agreeing(self.unknown, 'is')} not in {dataset}'s corpus, "
                       f"e.g. {_keys(self.unknown_examples)}; they stay in the lists and "
                       f"never match gold")
        as_written = ("recall_micro@k and capped_recall@k count the lists as written, as "
                      "TARGET does")
        if self.repeated:
            out.append(f"{path}: {counted(self.repeated, 'repeated table')} in "
                       f"{counted(self.repeated_queries, 'query')}, e.g. "
                       f"{_keys(self.repeated_examples)}; ranks use each table's first "
                       f"place, {as_written}")
        if self.beyond_k:
            out.append(f"{path}: {counted(self.beyond_k_queries, 'query')} list more than "
                       f"k = {self.top_k} tables ({counted(self.beyond_k, 'extra entry')}); "
                       f"ranks stop at k, {as_written}")
        return out


def _keys(keys: list[TableKey]) -> str:
    return ", ".join(json.dumps(list(k), ensure_ascii=False) for k in keys)


def _records(path: str | Path, dataset: Dataset, field_name: str
             ) -> Iterator[tuple[Any, str, Any]]:
    from target_core.datasets.folder import iter_jsonl

    known = dataset.query_index
    seen: set[str] = set()
    for where, record in iter_jsonl(Path(path)):
        if not isinstance(record, dict):
            raise where.error("each line must be a JSON object")
        query_id = str(record.get("query_id", ""))
        if query_id not in known:
            raise where.error(f"query {query_id!r} is not in dataset {dataset.name!r} "
                              f"(pass --dataset with the dataset these results are on)",
                              "query_id")
        if query_id in seen:
            raise where.error(f"query {query_id!r} appears twice", "query_id")
        seen.add(query_id)
        if field_name not in record:
            raise where.error(f"missing '{field_name}'", field_name)
        yield where, query_id, record[field_name]


def read_target_results(path: str | Path, dataset: Dataset, top_k: int | None = None
                        ) -> RetrievalFile:
    """The lists of a TARGET retrieval-results JSONL file, as written and each table
    once; with `top_k`, entries past it are counted (TARGET counts them too)."""
    read = RetrievalFile(lists=[], top_k=top_k)
    corpus = dataset.table_index
    for where, query_id, raw in _records(path, dataset, "retrieval_results"):
        if not isinstance(raw, list) or not all(
                isinstance(k, list) and len(k) == 2 for k in raw):
            raise where.error("must be a list of [database_id, table_id] pairs",
                              "retrieval_results")
        listed = [(str(d), str(t)) for d, t in raw]
        keys = list(dict.fromkeys(listed))
        if top_k is not None and len(listed) > top_k:
            read.beyond_k += len(listed) - top_k
            read.beyond_k_queries += 1
        if len(keys) < len(listed):
            read.repeated += len(listed) - len(keys)
            read.repeated_queries += 1
            if len(read.repeated_examples) < EXAMPLES:
                read.repeated_examples.append(next(
                    k for i, k in enumerate(listed) if k in listed[:i]))
        unknown = [k for k in keys if k not in corpus]
        if unknown:
            read.unknown += len(unknown)
            read.unknown_queries += 1
            read.unknown_examples.extend(unknown[:EXAMPLES - len(read.unknown_examples)])
        read.lists.append((query_id, keys))
        read.returned[query_id] = listed
    if not read.lists:
        raise DatasetError("no results in the file", path=path)
    return read


def read_target_downstream(path: str | Path, dataset: Dataset
                           ) -> dict[str, Generation]:
    """query_id -> the imported answer as a Generation (SQL: with its database id)."""
    answers: dict[str, Generation] = {}
    for where, query_id, raw in _records(path, dataset, "generated_results"):
        if task_rules(dataset.task).answers_sql:
            if not (isinstance(raw, list) and len(raw) == 2
                    and all(isinstance(v, str) for v in raw)):
                raise where.error("must be [sql, database_id] for a text-to-SQL dataset",
                                  "generated_results")
            answers[query_id] = Generation(answer=raw[0], database_id=raw[1] or None)
        elif isinstance(raw, str):
            answers[query_id] = Generation(answer=raw)
        else:
            raise where.error("must be a string (the generated answer)", "generated_results")
    if not answers:
        raise DatasetError("no results in the file", path=path)
    return answers


def file_digest(path: str | Path) -> str:
    """sha256 of the file's bytes: the same file imported twice is recognised by it."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _first_record(path: str | Path) -> Any:
    with open(path, encoding="utf-8-sig") as handle:  # iter_jsonl accepts a BOM too
        first = handle.readline()
    try:
        return json.loads(first)
    except ValueError:
        return None


def first_dataset_name(path: str | Path) -> str:
    record = _first_record(path)
    if isinstance(record, dict) and "dataset_name" in record:
        return str(record["dataset_name"])
    raise DatasetError("names no dataset_name; pass --dataset", path=path, line=1,
                       field="dataset_name")


def dataset_name_of(path: str | Path, folder_name: str) -> str:
    """The file's dataset_name, else the name of its `<dataset_name>/` folder."""
    record = _first_record(path)
    if isinstance(record, dict) and "dataset_name" in record:
        return str(record["dataset_name"])
    return folder_name


def is_downstream(path: str | Path) -> bool:
    record = _first_record(path)
    return isinstance(record, dict) and "generated_results" in record


def k_of(path: Path) -> int | None:
    """The k of TARGET's `<dataset_name>/<k>.jsonl` (None for any other name)."""
    if path.suffix != ".jsonl" or not path.stem.isdigit() or int(path.stem) < 1:
        return None
    return int(path.stem)


def target_files(root: Path) -> tuple[dict[tuple[str, int], Path], str]:
    """TARGET's results files under `root` by (dataset_name, k), and the name of the
    folder holding the dataset folders (the default label of the runs)."""
    own = {(root.name, k): f for f in sorted(root.iterdir()) if (k := k_of(f)) is not None}
    if own:
        return own, root.resolve().parent.name
    found = {(d.name, k): f for d in sorted(root.iterdir()) if d.is_dir()
             for f in sorted(d.iterdir()) if (k := k_of(f)) is not None}
    if not found:
        raise DatasetError("holds no <dataset_name>/<k>.jsonl files (the layout of "
                           "TARGET's results folder)", path=root)
    return found, root.resolve().name


def resolve_target_dataset(name: str, settings: Settings, *, source: str | Path) -> Dataset:
    """The dataset TARGET's results in `source` call `name`: a dataset of that name (or
    path) here, else TARGET's hub dataset of that name (`spider-test` is `hub:spider`).
    Raises DatasetError naming the file and saying which --dataset to pass."""
    from target_core.datasets.registry import resolve
    from target_core.datasets.target_hub import HUB_DATASETS, hub_name_of_target

    try:
        resolve(name, settings)
        return load_dataset(name, settings)
    except UnknownNameError as unknown:
        hub = hub_name_of_target(name)
        if hub is None:
            targets = ", ".join(s.dataset_name for s in HUB_DATASETS.values())
            raise DatasetError(f"the results are on dataset {name!r}, which is neither a "
                               f"dataset here nor one of TARGET's ({targets}); pass "
                               f"--dataset with its name or folder (for a results "
                               f"folder: --dataset {name}=NAME_OR_FOLDER) ({unknown})",
                               path=source) from None
    try:
        return load_dataset(hub, settings)
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            f"{source}: the results are on TARGET's {name!r}, which is {hub} here and cannot "
            f"be loaded ({exc}). Pass --dataset with a copy of it on this machine: its folder, "
            f"or its name in `python -m target_core datasets`") from None
