"""The folder format (TARGET-compatible): dataset.json, corpus.jsonl, queries.jsonl, databases/.

    <dir>/dataset.json    {"name", "task", "description"?, "license"?}   (optional)
    <dir>/corpus.jsonl    one table per line
    <dir>/queries.jsonl   one query per line
    <dir>/databases/<database_id>/<database_id>.sqlite   (text-to-SQL only)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from target_core.datasets.records import Where, assemble, parse_query, parse_table
from target_core.errors import DatasetError
from target_core.types import Dataset

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
META_FILE = "dataset.json"


def is_folder_dataset(path: Path) -> bool:
    return path.is_dir() and (path / CORPUS_FILE).is_file()


def iter_jsonl(path: Path) -> Iterator[tuple[Where, Any]]:
    """Yield (where, record) for each non-blank line; a bad line raises DatasetError.

    The file is read as bytes and decoded line by line, so a non-UTF-8 byte is reported
    with its line number rather than as an anonymous decode failure.
    """
    if not path.is_file():
        raise DatasetError("file not found", path=path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = Where(str(path), number)
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise where.error(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                                  f"{exc.start + 1}); save the file as UTF-8") from None
            if not text.strip():
                continue
            try:
                yield where, json.loads(text)
            except json.JSONDecodeError as exc:
                raise where.error(f"malformed JSON: {exc.msg} at column {exc.colno}") from None


def read_meta(path: Path) -> dict[str, Any]:
    """dataset.json as a dict ({} when absent)."""
    meta_path = path / META_FILE
    if not meta_path.is_file():
        return {}
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise DatasetError("not valid UTF-8", path=meta_path) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"malformed JSON: {exc.msg}", path=meta_path, line=exc.lineno) from None
    if not isinstance(meta, dict):
        raise DatasetError("must be a JSON object", path=meta_path)
    for key in ("name", "task", "description", "license"):
        if key in meta and not isinstance(meta[key], str):
            raise DatasetError("must be a string", path=meta_path, field=key)
    return meta


def find_databases(path: Path) -> dict[str, Path]:
    """database_id -> SQLite path for every databases/<id>/<id>.sqlite present."""
    root = path / "databases"
    if not root.is_dir():
        return {}
    return {d.name: d / f"{d.name}.sqlite" for d in sorted(root.iterdir())
            if (d / f"{d.name}.sqlite").is_file()}


def load_folder(path: str | Path, *, name: str | None = None) -> Dataset:
    """Load and validate a folder-format dataset; raises DatasetError naming file/line/field."""
    path = Path(path)
    if not path.is_dir():
        raise DatasetError("not a directory", path=path)
    meta = read_meta(path)
    databases = find_databases(path)
    if meta.get("task") == "sql" and not databases:
        raise DatasetError("task is 'sql' but there is no databases/<id>/<id>.sqlite",
                           path=path / "databases")
    corpus = path / CORPUS_FILE
    queries = path / QUERIES_FILE
    tables = [(w, parse_table(r, w)) for w, r in iter_jsonl(corpus)]
    query_list = [(w, parse_query(r, w)) for w, r in iter_jsonl(queries)]
    return assemble(
        name=name or meta.get("name") or path.name,
        task=meta.get("task"),
        tables=tables,
        queries=query_list,
        databases=databases,
        database_dir=path / "databases",
        corpus_source=str(corpus),
        queries_source=str(queries),
        description=meta.get("description", ""),
        license=meta.get("license"),
        source=str(path),
    )
