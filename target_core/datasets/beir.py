"""BEIR-style datasets (github.com/beir-cellar/beir), loaded as text corpora.

    <dir>/corpus.jsonl        {"_id": str, "title"?: str, "text": str, "metadata"?: {...}}
    <dir>/queries.jsonl       {"_id": str, "text": str, "metadata"?: {...}}
    <dir>/qrels/<split>.tsv   query-id <TAB> corpus-id <TAB> score   (a header line first)
    <dir>/dataset.json        optional: {"name"?, "description"?, "license"?, "split"?}

A folder is BEIR-style when its corpus.jsonl's first record has `_id` and it has a
qrels/ folder (datasets.registry checks this before the folder format). The split is
dataset.json's "split", else `test`, else the only qrels file there is; `load_beir(...,
split=)` picks any.

Each corpus record is a document of the text-corpus path (datasets/chunking.py): cut into
passages with the workspace's chunk settings, its title kept in every passage's context.
The queries are those of queries.jsonl that the split's qrels judge at least one document
relevant (score > 0), in queries.jsonl's order; their gold names whole documents, so the
metrics count a document as found when one of its passages is (metrics/documents.py).
The task is `retrieval` (BEIR has no answers).

Relevance grades are kept: each query's `meta["relevance"]` maps every judged corpus id
to its score (0 and negative scores included, as judged non-relevant). The metrics use
binary relevance (score > 0 is gold; metrics/ranking.py's nDCG has gain 1), so on graded
qrels nDCG@10 here is trec_eval's nDCG on the qrels made binary.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from target_core.datasets.chunking import (
    DOCUMENTS_DB,
    ChunkSettings,
    Document,
    chunk_document,
    document_key,
)
from target_core.datasets.folder import (
    gc_paused,
    inside,
    iter_jsonl,
    iter_text_lines,
    read_meta,
)
from target_core.datasets.records import Where, assemble, identifier
from target_core.errors import DatasetError
from target_core.types import Dataset, Query, Table

logger = logging.getLogger(__name__)

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_DIR = "qrels"
DEFAULT_SPLIT = "test"


def is_beir_dataset(path: Path) -> bool:
    """A folder with qrels/ and a corpus.jsonl whose first record has `_id`."""
    corpus = Path(path) / CORPUS_FILE
    if not (corpus.is_file() and (Path(path) / QRELS_DIR).is_dir()):
        return False
    try:
        for _, record in iter_jsonl(corpus):
            return isinstance(record, dict) and "_id" in record
    except DatasetError:
        return False  # not readable: let the folder loader name the problem
    return False


def splits(path: Path) -> list[str]:
    """The splits a BEIR folder has qrels for (qrels/<split>.tsv), sorted."""
    root = Path(path) / QRELS_DIR
    return sorted(p.stem for p in root.glob("*.tsv") if p.is_file()) if root.is_dir() else []


def choose_split(path: Path, split: str | None = None) -> str:
    """`split`, else dataset.json's "split", else `test`, else the only split there is."""
    meta = read_meta(Path(path))
    wanted = split or meta.get("split")
    if wanted is not None and not isinstance(wanted, str):
        raise DatasetError("must be a string (a qrels/<split>.tsv name)",
                           path=Path(path) / "dataset.json", field="split")
    found = splits(path)
    if wanted is None:
        wanted = found[0] if len(found) == 1 else DEFAULT_SPLIT
    if wanted not in found:
        raise DatasetError(f"no qrels for split {wanted!r}; the splits here are "
                           f"{', '.join(found) or 'none'} (choose one with \"split\" in "
                           f"dataset.json)", path=Path(path) / QRELS_DIR / f"{wanted}.tsv")
    return wanted


def parse_beir_document(record: Any, where: Where) -> Document:
    """A corpus record {_id, title?, text}; a blank text takes the title."""
    if not isinstance(record, Mapping):
        raise where.error(f"a corpus line must be a JSON object, got {type(record).__name__}")
    if "_id" not in record:
        raise where.error("required field is missing", "_id")
    doc_id = identifier(record["_id"], where, "_id")
    if "#" in doc_id:
        raise where.error(f"a document id may not hold '#' (it separates a passage number), "
                          f"got {doc_id!r}", "_id")
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise where.error(f"must be a string, got {type(title).__name__}", "title")
    if "text" not in record:
        raise where.error("required field is missing", "text")
    text = record["text"] if record["text"] is not None else ""
    if not isinstance(text, str):
        raise where.error(f"must be a string, got {type(text).__name__}", "text")
    if not text.strip():
        if not title.strip():
            raise where.error("text and title are both empty", "text")
        text = title
    return Document(doc_id, title, text)


def read_qrels(path: Path, query_ids: Mapping[str, Where], documents: Mapping[str, Any]
               ) -> dict[str, dict[str, int]]:
    """query id -> {corpus id: score} from a BEIR qrels TSV, in file order. A first line
    whose score is not an integer is the header. Unknown ids, a malformed line or a pair
    judged twice raise DatasetError naming the line and column."""
    qrels: dict[str, dict[str, int]] = {}
    for where, text in iter_text_lines(path):
        cells = text.rstrip("\r\n").split("\t")
        if len(cells) != 3:
            raise where.error(f"expected 3 tab-separated columns (query-id, corpus-id, "
                              f"score), got {len(cells)}")
        query_id, doc_id, score_text = (c.strip() for c in cells)
        try:
            score = int(score_text)
        except ValueError:
            if where.line == 1:
                continue  # the header
            raise where.error(f"must be an integer, got {score_text!r}", "score") from None
        if query_id not in query_ids:
            raise where.error(f"query {query_id!r} is not in {QUERIES_FILE}", "query-id")
        if doc_id not in documents:
            raise where.error(f"document {doc_id!r} is not in {CORPUS_FILE}", "corpus-id")
        judged = qrels.setdefault(query_id, {})
        if doc_id in judged:
            raise where.error(f"query {query_id!r} judges document {doc_id!r} twice",
                              "corpus-id")
        judged[doc_id] = score
    return qrels


def load_beir(path: str | Path, *, name: str | None = None, split: str | None = None,
              chunking: ChunkSettings | None = None) -> Dataset:
    """Load a BEIR-style folder (see the module doc); raises DatasetError naming the
    file, line and field of the first bad record."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError("not a directory", path=root)
    meta = read_meta(root)
    chosen = choose_split(root, split)
    settings = chunking or ChunkSettings()
    corpus, queries_path = root / CORPUS_FILE, root / QUERIES_FILE
    with gc_paused():
        documents: dict[str, Where] = {}
        tables: list[tuple[Where, Table]] = []
        for where, record in iter_jsonl(inside(corpus, root)):
            document = parse_beir_document(record, where)
            if document.id in documents:
                raise where.error(f"duplicate _id {document.id!r}; first defined at line "
                                  f"{documents[document.id].line}", "_id")
            documents[document.id] = where
            tables.extend((where, t) for t in chunk_document(document, settings))
        if not documents:
            raise DatasetError("holds no documents", path=corpus)
        texts: dict[str, tuple[Where, str, dict[str, Any]]] = {}
        for where, record in iter_jsonl(inside(queries_path, root)):
            query_id, text, extra = _parse_beir_query(record, where)
            if query_id in texts:
                raise where.error(f"duplicate _id {query_id!r}; first defined at line "
                                  f"{texts[query_id][0].line}", "_id")
            texts[query_id] = (where, text, extra)
        qrels_path = inside(root / QRELS_DIR / f"{chosen}.tsv", root)
        qrels = read_qrels(qrels_path, {q: w for q, (w, _, _) in texts.items()}, documents)
        queries: list[tuple[Where, Query]] = []
        for query_id, (where, text, extra) in texts.items():
            judged = qrels.get(query_id)
            relevant = [d for d, score in (judged or {}).items() if score > 0]
            if relevant:
                queries.append((where, Query(
                    query_id, text, None, tuple(document_key(d) for d in relevant),
                    DOCUMENTS_DB, meta={**extra, "relevance": dict(judged or {}),
                                        "split": chosen})))
        skipped = len(qrels) - len(queries)
        if skipped:
            logger.info("%s: %d judged queries have no relevant document (score > 0) and "
                        "are left out", qrels_path, skipped)
        if not queries:
            raise DatasetError(f"judges no document relevant (score > 0) for any query of "
                               f"{QUERIES_FILE}", path=qrels_path)
        dataset = assemble(
            name=name or meta.get("name") or root.name, task="retrieval", tables=tables,
            queries=queries, corpus_source=str(corpus), queries_source=str(queries_path),
            description=meta.get("description", "") or f"BEIR-style, split {chosen}",
            license=meta.get("license"), source=str(root),
            documents={document_key(d) for d in documents}, chunking=settings.label)
    return dataset


def _parse_beir_query(record: Any, where: Where) -> tuple[str, str, dict[str, Any]]:
    """(id, text, metadata) of a queries.jsonl record {_id, text, metadata?}."""
    if not isinstance(record, Mapping):
        raise where.error(f"a query line must be a JSON object, got {type(record).__name__}")
    if "_id" not in record:
        raise where.error("required field is missing", "_id")
    query_id = identifier(record["_id"], where, "_id")
    text = record.get("text")
    if "text" not in record:
        raise where.error("required field is missing", "text")
    if not isinstance(text, str) or not text.strip():
        raise where.error("must be a non-empty string", "text")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise where.error(f"must be a JSON object, got {type(metadata).__name__}", "metadata")
    return query_id, text, {"metadata": dict(metadata)} if metadata else {}
