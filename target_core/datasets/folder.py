"""The folder format (TARGET-compatible): dataset.json, corpus.jsonl, queries.jsonl, databases/.

    <dir>/dataset.json    {"name", "task", "description"?, "license"?}   (optional)
    <dir>/corpus.jsonl    one table per line (optional when there are documents)
    <dir>/documents.jsonl one document per line, cut into passages (optional;
                          datasets/chunking.py)
    <dir>/queries.jsonl   one query per line
    <dir>/databases/<database_id>/<database_id>.sqlite   (text-to-SQL only)

A query's gold may name tables (`table_id`, `database_id`), documents (`document_id`) or
character spans of documents (`spans`), or tables and text together (a mixed corpus).
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from target_core.datasets.chunking import (
    DOCUMENTS_DB,
    DOCUMENTS_FILE,
    GOLD_FIELDS,
    ChunkSettings,
    chunk_document,
    document_gold,
    document_key,
    load_documents,
)
from target_core.datasets.records import Where, assemble, parse_query, parse_table
from target_core.errors import DatasetError
from target_core.tasks import TASKS
from target_core.types import Dataset, Query, Table

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
META_FILE = "dataset.json"


# Only a line holding such an escape can decode to a lone surrogate (raw surrogate bytes
# are not UTF-8 and fail earlier), so the record walk below is skipped for every other line.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def is_folder_dataset(path: Path) -> bool:
    return path.is_dir() and ((path / CORPUS_FILE).is_file()
                              or (path / DOCUMENTS_FILE).is_file())


def has_documents(path: Path) -> bool:
    return (Path(path) / DOCUMENTS_FILE).is_file()


def inside(path: Path, root: Path) -> Path:
    """`path`, after checking that it resolves inside the dataset folder `root`.

    A dataset's files may be symlinks within its folder but not out of it, so a dataset
    someone shared cannot make the tool read (and show) other files on this machine. The
    folder itself may be a symlink: both sides are resolved before comparing.
    """
    real = path.resolve()
    if not real.is_relative_to(root.resolve()):
        raise DatasetError(f"resolves to {real}, outside the dataset folder; a dataset's "
                           f"files must lie inside its folder (copy the file in instead)",
                           path=path)
    return path


def lone_surrogate(record: Any) -> tuple[str, str] | None:
    """(field, character) of the first string holding half a UTF-16 surrogate pair.

    JSON's "\\ud800" escape decodes to such a half, which is no Unicode character: it
    cannot be encoded as UTF-8, so it would break the run store, exports and the UI later.
    """
    stack: list[tuple[str, Any]] = [("", record)]
    while stack:
        field, value = stack.pop()
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                name = f"{field}.{key}" if field else str(key)
                stack.append((name, item))
                stack.append((f"{name} (the key)", key))
        elif isinstance(value, list):
            stack.extend((f"{field}[{i}]", item) for i, item in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            bad = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                return field, bad
    return None


def iter_text_lines(path: Path) -> Iterator[tuple[Where, str]]:
    """Yield (where, text) for each non-blank line of a UTF-8 text file (a BOM on the
    first line is dropped); a missing file or a non-UTF-8 byte raises DatasetError.

    The file is read as bytes and decoded line by line, so a non-UTF-8 byte is reported
    with its line number rather than as an anonymous decode failure.
    """
    if not path.is_file():
        raise DatasetError("file not found", path=path)
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = Where(str(path), number, offset, len(raw))
            offset += len(raw)
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise where.error(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                                  f"{exc.start + 1}); save the file as UTF-8") from None
            if text.strip():
                yield where, text


def iter_jsonl(path: Path) -> Iterator[tuple[Where, Any]]:
    """Yield (where, record) for each non-blank line; a bad line raises DatasetError."""
    for where, text in iter_text_lines(path):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise where.error(f"malformed JSON: {exc.msg.removesuffix(' at')} at column "
                              f"{exc.colno}") from None
        except RecursionError:
            raise where.error("malformed JSON: nested too deeply") from None
        except ValueError as exc:  # an integer beyond Python's 4,300-digit limit
            raise where.error(f"malformed JSON: {str(exc).partition('; use sys')[0]}") \
                from None
        if _SURROGATE_ESCAPE.search(text):
            found = lone_surrogate(record)
            if found is not None:
                raise where.error(f"holds the escape \\u{ord(found[1]):04x}, half of a "
                                  f"UTF-16 surrogate pair without its other half; it is "
                                  f"not a character", found[0] or None)
        yield where, record


def read_meta(path: Path) -> dict[str, Any]:
    """dataset.json as a dict ({} when absent); a byte order mark is allowed."""
    meta_path = path / META_FILE
    if not meta_path.is_file():
        return {}
    inside(meta_path, path)
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise DatasetError("not valid UTF-8", path=meta_path) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"malformed JSON: {exc.msg}", path=meta_path, line=exc.lineno) from None
    except RecursionError:
        raise DatasetError("malformed JSON: nested too deeply", path=meta_path) from None
    except ValueError as exc:
        raise DatasetError(f"malformed JSON: {str(exc).partition('; use sys')[0]}",
                           path=meta_path) from None
    if not isinstance(meta, dict):
        raise DatasetError("must be a JSON object", path=meta_path)
    for key in ("name", "task", "description", "license"):
        if key in meta and not isinstance(meta[key], str):
            raise DatasetError("must be a string", path=meta_path, field=key)
    if "task" in meta and meta["task"] not in TASKS:
        raise DatasetError(f"unknown task {meta['task']!r}; expected one of {', '.join(TASKS)}",
                           path=meta_path, field="task")
    return meta


def find_databases(path: Path) -> dict[str, Path]:
    """database_id -> SQLite path for every databases/<id>/<id>.sqlite present."""
    root = path / "databases"
    if not root.is_dir():
        return {}
    return {d.name: inside(d / f"{d.name}.sqlite", path) for d in sorted(root.iterdir())
            if (d / f"{d.name}.sqlite").is_file()}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off Python's cycle collector while a dataset is parsed and assembled: its
    millions of new tuples keep triggering full collections, a third of the time spent
    loading 100,000 tables (6.5 s -> 4.5 s without). Records form no cycles; the
    collector runs as usual afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_folder(path: str | Path, *, name: str | None = None,
                wheres: list[Where] | None = None,
                chunking: ChunkSettings | None = None) -> Dataset:
    """Load and validate a folder-format dataset; raises DatasetError naming file/line/field.

    `wheres`, when given, receives where each table's record is, in corpus order (a
    passage: its document's line). Documents are cut by `chunking` (default sizes when
    None) and their passages follow the tables.
    """
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
    documents = path / DOCUMENTS_FILE
    with gc_paused():
        tables: list[tuple[Where, Table]] = []
        if corpus.is_file() or not documents.is_file():  # a missing corpus is named
            tables = [(w, parse_table(r, w)) for w, r in iter_jsonl(inside(corpus, path))]
        passages: dict[str, list[Table]] = {}
        settings = chunking or ChunkSettings()
        if documents.is_file():
            _no_table_in(tables, DOCUMENTS_DB)
            for where, document in load_documents(iter_jsonl(inside(documents, path)),
                                                  documents):
                passages[document.id] = chunk_document(document, settings)
                tables.extend((where, t) for t in passages[document.id])
        query_list = [(w, _parse_query(r, w, passages))
                      for w, r in iter_jsonl(inside(queries, path))]
        dataset = assemble(
            name=name or meta.get("name") or path.name,
            task=meta.get("task"),
            tables=tables,
            queries=query_list,
            databases=databases,
            database_dir=path / "databases",
            corpus_source=str(corpus if corpus.is_file() else documents),
            queries_source=str(queries),
            description=meta.get("description", ""),
            license=meta.get("license"),
            source=str(path),
            documents={document_key(d) for d in passages},
            chunking=settings.label if passages else "",
        )
    if wheres is not None:
        wheres.extend(w for w, _ in tables)
    return dataset


def _no_table_in(tables: Sequence[tuple[Where, Table]], database_id: str) -> None:
    """The passages' database is reserved: a corpus table in it would read as a chunk."""
    for where, table in tables:
        if table.database_id == database_id:
            raise where.error(f"database_id {database_id!r} is reserved for the passages of "
                              f"{DOCUMENTS_FILE}; rename this table's database",
                              "database_id")


_PLACEHOLDER = "\x00text-gold"


def _parse_query(record: Any, where: Where, passages: Mapping[str, Sequence[Table]]) -> Query:
    """A query record; its `document_id` or `spans` add gold text (chunking.document_gold).
    Without `table_id` such a query's gold is text only and its database the passages'."""
    if not isinstance(record, dict) or not any(f in record for f in GOLD_FIELDS):
        return parse_query(record, where)
    if not passages:
        field = next(f for f in GOLD_FIELDS if f in record)
        raise where.error(f"names gold text but the dataset has no {DOCUMENTS_FILE}", field)
    text_gold = document_gold(record, where, passages)
    if "table_id" in record:
        query = parse_query(record, where)
        return replace(query, gold=tuple(dict.fromkeys(query.gold + text_gold)))
    query = parse_query({"database_id": DOCUMENTS_DB, **record, "table_id": _PLACEHOLDER},
                        where)
    return replace(query, gold=text_gold)
