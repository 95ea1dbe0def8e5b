"""Reading the data files of a downloaded Hugging Face dataset repo.

Which files hold a split follows the hub's own naming rules (huggingface/datasets,
data_files.py); records come with a `Where` (file, 1-based record index) so validation
errors point at the record.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from target_core.datasets.folder import iter_jsonl
from target_core.datasets.records import Where
from target_core.errors import DatasetError

# The hub's default split patterns (huggingface/datasets, data_files.py).
SPLIT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "dev", "val"),
    "test": ("test", "testing", "eval", "evaluation"),
}
DATA_EXTENSIONS = (".parquet", ".jsonl", ".json", ".csv")
_IGNORED_FILES = {"README.md", "config.json", "dataset_info.json", "dataset_infos.json",
                  "dataset_dict.json"}
_SEP = "[-._ 0-9]"
_SHARDED = re.compile(r"^data/(?P<split>\w+)-\d{5}-of-\d{5}[^/]*\.[^/]+$")


def split_files(directory: Path, split: str) -> list[Path]:
    """The data files of `split` in a downloaded dataset repo, by the hub's naming rules.

    In order, the first rule that matches any file decides: sharded files
    `data/<split>-00000-of-00001.parquet`; a directory named for the split (`test/`,
    `data/test-x/`); a file name holding the split as a word (`test.jsonl`,
    `queries_test.parquet`, `spider-corpus-test.json`); else every file is "train".
    Split keywords are the hub's (validation also matches "dev", "val", "valid").
    """
    candidates = sorted(
        p for p in directory.rglob("*")
        if p.is_file() and p.suffix.lower() in DATA_EXTENSIONS and p.name not in _IGNORED_FILES
        and not any(part.startswith((".", "__")) for part in p.relative_to(directory).parts))
    relative = {p: p.relative_to(directory).as_posix() for p in candidates}

    sharded = {p: m["split"] for p, rel in relative.items() if (m := _SHARDED.match(rel))}
    if sharded:
        return [p for p, s in sharded.items() if s == split]

    def keywords(name: str) -> tuple[str, ...]:
        return SPLIT_KEYWORDS.get(name, (name,))

    def in_dir(rel: str, kw: str) -> bool:
        pattern = re.compile(rf"^(.*{_SEP})?{re.escape(kw)}({_SEP}.*)?$")
        return any(pattern.match(part) for part in rel.split("/")[:-1])

    def in_name(rel: str, kw: str) -> bool:
        return re.match(rf"^(.*{_SEP})?{re.escape(kw)}{_SEP}", rel.rsplit("/", 1)[-1]) is not None

    every_keyword = {kw for s in {*SPLIT_KEYWORDS, split} for kw in keywords(s)}
    for rule in (in_dir, in_name):
        if any(rule(rel, kw) for rel in relative.values() for kw in every_keyword):
            wanted = keywords(split)
            return [p for p, rel in relative.items() if any(rule(rel, kw) for kw in wanted)]
    return candidates if split == "train" else []


def read_records(path: Path) -> Iterator[tuple[Where, Any]]:
    """Records of a data file with where they came from (1-based record index as line)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
            yield from ((Where(str(path), i), row) for i, row in enumerate(rows, start=1))
        elif suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as handle:
                for i, row in enumerate(csv.DictReader(handle), start=1):
                    yield Where(str(path), i), {k: (v if v != "" else None) for k, v in row.items()}
        elif suffix == ".jsonl":
            yield from iter_jsonl(path)
        else:
            yield from _json_document(path)
    except DatasetError:
        raise
    except Exception as error:  # pyarrow, csv and OS errors: one clear line, named file
        raise DatasetError(f"cannot read the file: {type(error).__name__}: {error}",
                           path=path) from None


def _json_document(path: Path) -> Iterator[tuple[Where, Any]]:
    """A JSON list of records, {"data": [...]}, a dict of equal-length columns, or JSONL."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":  # the hub's json loader also reads JSON Lines
            yield from iter_jsonl(path)
            return
        raise DatasetError(f"invalid JSON: {error.msg}", path=path, line=error.lineno) from None
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        data = data["data"]
    if isinstance(data, Mapping):  # columns, as TARGET's text-to-SQL corpora
        lengths = {len(v) if isinstance(v, list) else -1 for v in data.values()}
        if len(lengths) != 1 or -1 in lengths:
            raise DatasetError("expected a list of records or a dict of equal-length columns",
                               path=path)
        data = [{k: v[i] for k, v in data.items()} for i in range(lengths.pop())]
    if not isinstance(data, list):
        raise DatasetError(f"expected a list of records, got {type(data).__name__}", path=path)
    yield from ((Where(str(path), i), row) for i, row in enumerate(data, start=1))


def plain(value: Any) -> Any:
    """Python lists/dicts/scalars from numpy or pyarrow values, so validation sees JSON types."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy array/scalar
        return plain(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
