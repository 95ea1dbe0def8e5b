"""TARGET's own datasets, read from Hugging Face hub snapshots the way TARGET reads them.

TARGET (github.com/target-benchmark/target, dataset_loaders/) keeps each dataset as two
hub dataset repos, a corpus and its queries. QA and fact verification load both with
`datasets.load_dataset(repo, split=...)` (HFDatasetLoader), so the data file for a split
is found by the hub's file-naming rules (e.g. `queries_test.parquet`). Text-to-SQL
(Text2SQLDatasetLoader) snapshots the corpus repo and reads the dict-of-columns JSON
`<spider|bird>-corpus-<split>.json` with SQLite files in `<split>_database/<db>/<db>.sqlite`.
Fact answers are strings read with TARGET's rule (FactVerificationTask): "true" in the
lower-cased answer is True, else "false" in it is False, else not enough information.

Downloading is bounded in time: a dashboard must not hang because the hub is slow or
unreachable, so `load_hub_dataset` gives up after `settings.hub_timeout` seconds with a
DatasetUnavailableError that says what to do instead.
"""

from __future__ import annotations

import ast
import json
import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from target_core.config import Settings
from target_core.datasets.hub_files import (
    DATA_EXTENSIONS,
    SPLIT_KEYWORDS,
    plain,
    read_records,
    split_files,
)
from target_core.datasets.records import Where, assemble, parse_query, parse_table
from target_core.errors import DatasetError, DatasetUnavailableError, UnknownNameError
from target_core.sql.structure import SqlParseError, gold_tables
from target_core.tasks import task_rules
from target_core.types import Dataset, Query, Table

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HubSpec:
    """One TARGET dataset on the hub: its corpus and queries repos, split and task."""

    name: str
    corpus_repo: str
    queries_repo: str
    split: str
    task: str
    description: str
    target_name: str = ""
    """TARGET's short name ("spider", "bird"): names the text-to-SQL corpus file."""
    dataset_name: str = ""
    """TARGET's `dataset_name` ("fetaqa", "spider-test"): what its results files and
    results folders (`<dir>/<dataset_name>/<k>.jsonl`) call the dataset."""

    @property
    def answers_sql(self) -> bool:
        """The task's answers are SQL (its entry): the corpus is one file beside the
        databases, and a query's gold SQL is its answer."""
        return task_rules(self.task).answers_sql

    @property
    def labels(self) -> bool:
        """Answers are judged against a label (its entry): a record without a boolean
        label takes it from its answer."""
        return task_rules(self.task).reference == "label"

    @property
    def sql_corpus_file(self) -> str:
        return f"{self.target_name}-corpus-{self.split}.json"

    @property
    def database_dir(self) -> str:
        return f"{self.split}_database"


# The repos of TARGET 0.1.3's released loader (dataset_loaders/TargetDatasetConfig.py).
HUB_DATASETS: dict[str, HubSpec] = {spec.name: spec for spec in (
    HubSpec("hub:fetaqa", "target-benchmark/fetaqa-corpus", "target-benchmark/fetaqa-queries",
            "test", "qa", "FeTaQA from TARGET: free-form answers over Wikipedia tables.",
            dataset_name="fetaqa"),
    HubSpec("hub:ottqa", "target-benchmark/ottqa-corpus", "target-benchmark/ottqa-queries",
            "validation", "qa", "OTT-QA from TARGET: open-domain QA over Wikipedia tables.",
            dataset_name="ottqa"),
    HubSpec("hub:tabfact", "target-benchmark/tabfact-corpus", "target-benchmark/tabfact-queries",
            "test", "fact", "TabFact from TARGET: statements to verify against tables.",
            dataset_name="tabfact"),
    HubSpec("hub:spider", "target-benchmark/spider-corpus-test",
            "target-benchmark/spider-queries-test", "test", "sql",
            "Spider test from TARGET: text-to-SQL over SQLite databases.",
            target_name="spider", dataset_name="spider-test"),
    HubSpec("hub:bird", "target-benchmark/bird-corpus-validation",
            "target-benchmark/bird-queries-validation", "validation", "sql",
            "BIRD validation from TARGET: text-to-SQL over large SQLite databases.",
            target_name="bird", dataset_name="bird-validation"),
)}


def hub_name_of_target(dataset_name: str) -> str | None:
    """The hub dataset ("hub:spider") that TARGET calls `dataset_name` ("spider-test"),
    or None when TARGET has no such dataset."""
    return next((spec.name for spec in HUB_DATASETS.values()
                 if spec.dataset_name == dataset_name), None)


def hub_spec(name: str) -> HubSpec:
    """The spec for "hub:<name>" (the bare "<name>" is accepted too)."""
    key = name if name.startswith("hub:") else f"hub:{name}"
    if key not in HUB_DATASETS:
        raise UnknownNameError("hub dataset", name, HUB_DATASETS)
    return HUB_DATASETS[key]


def _missing(value: Any) -> bool:
    return (value is None or (isinstance(value, float) and math.isnan(value))
            or (isinstance(value, (list, str)) and not value))


def _decoded(value: Any) -> Any:
    """Nested values some hub files store as text (TARGET literal_evals them too)."""
    if not isinstance(value, str) or value[:1] not in "[{(":
        return value
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return value


def _context(value: Any) -> Any:
    value = _decoded(plain(value))
    if _missing(value):
        return {}
    if isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}  # a parquet map column
    if isinstance(value, str):
        return {"text": value}
    return value


def fact_label(answer: Any) -> bool | None:
    """TARGET's reading of a fact-verification answer: True, False or None (not enough info)."""
    if isinstance(answer, bool) or answer is None:
        return answer
    text = str(answer).lower()
    if "true" in text:
        return True
    if "false" in text:
        return False
    return None


def load_hub_snapshot(spec: HubSpec, corpus_dir: Path, queries_dir: Path) -> Dataset:
    """A Dataset from downloaded snapshots of `spec`'s corpus and queries repos.

    Raises DatasetError naming the file, the 1-based record index (as line) and field.
    """
    corpus_dir, queries_dir = Path(corpus_dir), Path(queries_dir)
    if spec.answers_sql:
        corpus_files = [corpus_dir / spec.sql_corpus_file]
        if not corpus_files[0].is_file():
            raise DatasetError("the text-to-SQL corpus file is missing", path=corpus_files[0])
    else:
        corpus_files = _split_files_or_error(corpus_dir, spec.split)
    tables = [(where, _table(record, where)) for path in corpus_files
              for where, record in read_records(path)]

    known: dict[str, dict[str, str]] = {}
    for _, table in tables:
        known.setdefault(table.database_id, {}).setdefault(table.table_id.lower(), table.table_id)
    queries = [(where, _query(record, where, spec, known))
               for path in _split_files_or_error(queries_dir, spec.split)
               for where, record in read_records(path)]
    databases = ({db: corpus_dir / spec.database_dir / db / f"{db}.sqlite" for db in known}
                 if spec.answers_sql else {})
    return assemble(
        name=spec.name, task=spec.task, tables=tables, queries=queries, databases=databases,
        corpus_source=str(corpus_files[0]), queries_source=str(queries_dir),
        description=spec.description,
        source=f"{spec.corpus_repo} + {spec.queries_repo} ({spec.split})")


def _split_files_or_error(directory: Path, split: str) -> list[Path]:
    files = split_files(directory, split)
    if not files:
        present = sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*")
                         if p.is_file() and p.suffix.lower() in DATA_EXTENSIONS)
        raise DatasetError(f"no data file for split {split!r} (data files: "
                           f"{', '.join(present[:10]) or 'none'})", path=directory)
    return files


def _table(record: Any, where: Where) -> Table:
    if isinstance(record, Mapping):
        record = {k: plain(v) for k, v in record.items()}
        record["table"] = _decoded(record.get("table"))
        record["context"] = _context(record.get("context"))
    return parse_table(record, where)


def _query(record: Any, where: Where, spec: HubSpec,
           known: Mapping[str, Mapping[str, str]]) -> Query:
    if not isinstance(record, Mapping):
        return parse_query(record, where)
    record = {k: plain(v) for k, v in record.items() if not str(k).startswith("__index_level")}
    if "table_id" in record:
        record["table_id"] = _decoded(record["table_id"])
    if spec.labels and not isinstance(record.get("label"), bool):
        record["label"] = fact_label(record.get("answer"))
    if spec.answers_sql and record.get("database_id") is not None:
        record["sql"], record["table_id"] = _sql_gold(record, where, known)
    return parse_query(record, where)


def _sql_gold(record: Mapping[str, Any], where: Where,
              known: Mapping[str, Mapping[str, str]]) -> tuple[str, Any]:
    """The gold SQL (TARGET's answer) and its tables: given, or derived from the SQL."""
    sql = record.get("answer")
    if not isinstance(sql, str) or not sql.strip():
        raise where.error("must be the gold SQL (a non-empty string)", "answer")
    tables = known.get(str(record["database_id"]), {})
    if not tables:
        raise where.error(f"database {record['database_id']!r} has no tables in the corpus",
                          "database_id")
    gold = record.get("table_id")
    if _missing(gold):
        try:
            return sql, gold_tables(sql, tables.values())
        except SqlParseError as error:
            raise where.error(str(error), "answer") from None
    # SQLite names are case-insensitive: use the corpus spelling of each gold table
    ids = gold if isinstance(gold, list) else [gold]
    return sql, [tables.get(t.lower(), t) if isinstance(t, str) else t for t in ids]


# --- fetching from the hub ---------------------------------------------------------------


@dataclass
class _Progress:
    """What the download worker got to; read by the caller after the time limit."""

    repo: str = ""
    reached: bool = False
    paths: dict[str, Path] = field(default_factory=dict)
    error: BaseException | None = None


def _allow_patterns(spec: HubSpec, repo: str) -> list[str]:
    """Only the split's files: the SQL corpus repos also hold other splits' databases."""
    if spec.answers_sql and repo == spec.corpus_repo:
        return [spec.sql_corpus_file, f"{spec.database_dir}/*"]
    return [f"*{kw}*" for kw in SPLIT_KEYWORDS.get(spec.split, (spec.split,))]


def _cached(repo: str, patterns: list[str], cache_dir: Path | None) -> Path | None:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo, repo_type="dataset", local_files_only=True,
                                      cache_dir=cache_dir, allow_patterns=patterns))
    except (LocalEntryNotFoundError, OSError):
        return None


def _download(jobs: list[tuple[str, list[str]]], settings: Settings, cache_dir: Path | None,
              progress: _Progress) -> None:
    """Worker: fetch each repo. Errors are stored, never raised, so the thread ends quietly."""
    try:
        from huggingface_hub import HfApi, snapshot_download

        # token=False: TARGET's repos are public, and a custom HF_ENDPOINT gets no token.
        api = HfApi(endpoint=settings.hf_endpoint, token=False)
        for repo, patterns in jobs:
            progress.repo = repo
            api.repo_info(repo, repo_type="dataset", timeout=settings.hub_timeout)
            progress.reached = True
            progress.paths[repo] = Path(snapshot_download(
                repo, repo_type="dataset", cache_dir=cache_dir, allow_patterns=patterns,
                endpoint=settings.hf_endpoint, etag_timeout=settings.hub_timeout, token=False))
    except Exception as error:  # reported by load_hub_dataset as DatasetUnavailableError
        progress.error = error


def load_hub_dataset(name: str, settings: Settings, *, cache_dir: Path | None = None) -> Dataset:
    """Load a TARGET hub dataset ("hub:fetaqa", ...), downloading it if it is not cached.

    The local Hugging Face cache (or `cache_dir`) is tried first, which is instant and
    works offline. Otherwise both repos are downloaded from `settings.hf_endpoint` in a
    daemon thread that gets `settings.hub_timeout` seconds in all; after that this
    raises DatasetUnavailableError (the abandoned download may finish in the background).
    """
    spec = hub_spec(name)
    repos = [spec.corpus_repo, spec.queries_repo]
    paths = {repo: _cached(repo, _allow_patterns(spec, repo), cache_dir) for repo in repos}
    missing = [(repo, _allow_patterns(spec, repo)) for repo in repos if paths[repo] is None]
    if missing:
        logger.info("downloading %s from %s (at most %g s)", ", ".join(r for r, _ in missing),
                    settings.hf_endpoint, settings.hub_timeout)
        progress = _Progress()
        worker = threading.Thread(target=_download, name=f"hub-download-{spec.name}",
                                  args=(missing, settings, cache_dir, progress), daemon=True)
        worker.start()
        worker.join(timeout=settings.hub_timeout)
        timed_out = worker.is_alive()
        if timed_out or progress.error is not None:
            raise DatasetUnavailableError(_unavailable(spec, settings, progress, timed_out))
        paths.update(progress.paths)
    corpus_dir, queries_dir = paths[spec.corpus_repo], paths[spec.queries_repo]
    if corpus_dir is None or queries_dir is None:  # the worker fetches both or records an error
        raise DatasetUnavailableError(f"{spec.name}: the download ended without a snapshot of "
                                      f"{spec.corpus_repo} and {spec.queries_repo}")
    return load_hub_snapshot(spec, corpus_dir, queries_dir)


_CONNECTION_ERRORS = {"ConnectError", "TimeoutException", "NetworkError", "ProtocolError",
                      "OfflineModeIsEnabled", "ConnectionError", "TimeoutError"}


def _unavailable(spec: HubSpec, settings: Settings, progress: _Progress, timed_out: bool) -> str:
    """One line: which repo, what went wrong, and what to do instead."""
    error, hub = progress.error, settings.hf_endpoint
    cause = ""
    if error is not None:
        lines = str(error).strip().splitlines()
        cause = f" ({type(error).__name__}: {lines[0] if lines else 'no details'})"
    if timed_out and progress.reached:
        what = (f"the hub at {hub} answered but the download did not finish within "
                f"{settings.hub_timeout:g} s (raise TARGET_HUB_TIMEOUT)")
    elif timed_out or {c.__name__ for c in type(error).__mro__} & _CONNECTION_ERRORS:
        what = (f"the Hugging Face hub at {hub} could not be reached within "
                f"{settings.hub_timeout:g} s{cause}")
    else:
        what = f"the hub at {hub} refused it{cause}"
    return (f"{spec.name}: cannot fetch {progress.repo or spec.corpus_repo}, which is not in the "
            f"local Hugging Face cache: {what}. Connect to the internet and retry, or download "
            f"{spec.corpus_repo} and {spec.queries_repo} on a connected machine "
            f"(`hf download <repo> --repo-type dataset`) and copy its Hugging Face cache here, "
            f"or convert the dataset to the folder format and point TARGET_DATASETS at it "
            f"(or pass the folder path).")
