"""Text corpora (GTR, Algorithm 1): documents cut into overlapping chunks, each chunk a
corpus item shaped like a one-cell table, so the engine (keys, Chroma, retrievers, stored
results, pages, metrics) works on passages unchanged.

    <dir>/documents.jsonl   {"id": str, "title"?: str, "text": str}   one document a line

A chunk of document D is the Table

    database_id = "documents" (DOCUMENTS_DB), table_id = "D#n" (n = 1, 2, ... in order)
    header ("text",), one row (the chunk's text)
    context {"kind": "passage", "title", "document_id", "chunk", "start", "end"}

where [start, end) are the chunk's character offsets in the document text, so
`text[start:end]` is the chunk. A document id may not hold "#": the chunk suffix is then
unambiguous, and (DOCUMENTS_DB, D) names the document itself (document-level gold; the
metric rule is metrics/documents.py).

Chunking is by characters at word boundaries (why characters: span gold is given in
character offsets and needs no tokenizer; LangChain's splitters, which GTR used, count
characters too). With size S and overlap O (0 <= O < S):

1. A document of at most S characters is one chunk [0, len).
2. Otherwise a chunk starts at `start` and ends at e = start + S, moved back to the last
   whitespace in (start, e] when the cut would split a word (a word longer than S is cut).
3. The next chunk starts at e - O, moved forward past the rest of a word it lands in (and
   any whitespace), but always after the previous start, so every chunk makes progress.
   Trailing whitespace is left out of a chunk; the last chunk ends at the text's end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from target_core.datasets.records import Where, identifier
from target_core.errors import ConfigError, DatasetError
from target_core.types import Table, TableKey

DOCUMENTS_FILE = "documents.jsonl"
DOCUMENTS_DB = "documents"
"""The database_id of every chunk; reserved in a dataset that has documents."""
PASSAGE = "passage"
"""context["kind"] of a chunk: serialize, prompts and pages show it as text."""


@dataclass(frozen=True)
class ChunkSettings:
    """Chunk size and overlap in characters (TARGET_CHUNK_SIZE, TARGET_CHUNK_OVERLAP)."""

    size: int = 1000
    overlap: int = 200

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise ConfigError(f"chunk size must be a positive number of characters, got "
                              f"{self.size!r}")
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) \
                or not 0 <= self.overlap < self.size:
            raise ConfigError(f"chunk overlap must be 0 or more and less than the chunk size "
                              f"{self.size}, got {self.overlap!r}")

    @property
    def label(self) -> str:
        """How a run records it, e.g. "1000 chars, overlap 200" (part of the dataset's
        fingerprint, so a run's key changes with it)."""
        return f"{self.size} chars, overlap {self.overlap}"


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


def is_passage(table: Table) -> bool:
    """Whether `table` is a chunk of a document (rendered as text, not as a grid)."""
    return table.context.get("kind") == PASSAGE


def passage_text(table: Table) -> str:
    """The chunk's text (its one cell)."""
    return str(table.rows[0][0]) if table.rows and table.rows[0] else ""


def chunk_key(document_id: str, n: int) -> TableKey:
    return (DOCUMENTS_DB, f"{document_id}#{n}")


def document_key(document_id: str) -> TableKey:
    return (DOCUMENTS_DB, document_id)


def document_of(key: Sequence[str]) -> TableKey | None:
    """The document key of a chunk key, None for anything else (a table, a document)."""
    if key[0] != DOCUMENTS_DB or "#" not in key[1]:
        return None
    return document_key(key[1].rpartition("#")[0])


def is_document_key(key: Sequence[str]) -> bool:
    """A gold key naming a whole document (DOCUMENTS_DB and no chunk suffix)."""
    return key[0] == DOCUMENTS_DB and "#" not in key[1]


def chunk_spans(text: str, settings: ChunkSettings) -> list[tuple[int, int]]:
    """[start, end) of each chunk of `text` (the module doc's rule)."""
    size, overlap, length = settings.size, settings.overlap, len(text)
    last = len(text.rstrip())  # where the last chunk ends
    start = _skip_space(text, 0)
    if start >= length:
        return []
    spans: list[tuple[int, int]] = []
    while True:
        end = min(start + size, length)
        if end < length and not text[end].isspace():
            cut = max((i for i in range(end - 1, start, -1) if text[i].isspace()), default=-1)
            if cut > start:
                end = cut
        while end > start and text[end - 1].isspace():
            end -= 1
        spans.append((start, end))
        if end >= last:
            return spans
        nxt = max(end - overlap, start + 1)
        if nxt > 0 and not text[nxt - 1].isspace():  # landed inside a word: skip its rest
            while nxt < end and not text[nxt].isspace():
                nxt += 1
        start = _skip_space(text, nxt)
        if start >= length:
            return spans


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def chunk_document(document: Document, settings: ChunkSettings) -> list[Table]:
    """The document's chunks as passage tables, in order (see the module doc)."""
    return [Table(DOCUMENTS_DB, f"{document.id}#{n}", ("text",), ((document.text[s:e],),),
                  {"kind": PASSAGE, "title": document.title, "document_id": document.id,
                   "chunk": n, "start": s, "end": e})
            for n, (s, e) in enumerate(chunk_spans(document.text, settings), start=1)]


def parse_document(record: Any, where: Where) -> Document:
    """A documents.jsonl record {id, title?, text}; errors name the file, line and field."""
    if not isinstance(record, Mapping):
        raise where.error(f"a document line must be a JSON object, got {type(record).__name__}")
    if "id" not in record:
        raise where.error("required field is missing", "id")
    doc_id = identifier(record["id"], where, "id")
    if "#" in doc_id:
        raise where.error(f"a document id may not hold '#' (it separates a chunk number), "
                          f"got {doc_id!r}", "id")
    title = record.get("title", "")
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise where.error(f"must be a string, got {type(title).__name__}", "title")
    if "text" not in record:
        raise where.error("required field is missing", "text")
    text = record["text"]
    if not isinstance(text, str) or not text.strip():
        raise where.error("must be a non-empty string", "text")
    return Document(doc_id, title, text)


def load_documents(records: Iterable[tuple[Where, Any]], path: Path
                   ) -> list[tuple[Where, Document]]:
    """Parsed documents with where each was; a repeated id is an error naming both lines."""
    seen: dict[str, Where] = {}
    documents = []
    for where, record in records:
        document = parse_document(record, where)
        if document.id in seen:
            raise where.error(f"duplicate document id {document.id!r}; first defined at line "
                              f"{seen[document.id].line}", "id")
        seen[document.id] = where
        documents.append((where, document))
    if not documents:
        raise DatasetError("holds no documents", path=path)
    return documents


# --- gold naming documents or spans -------------------------------------------------------

GOLD_FIELDS = ("document_id", "spans")
"""Query fields naming gold text: `document_id` (a document or a list of them: found when
any of its chunks is retrieved) or `spans` ([{"document_id", "start", "end"}]: the chunks
overlapping each character span [start, end) are gold)."""


def document_gold(record: Mapping[str, Any], where: Where,
                  chunks: Mapping[str, Sequence[Table]]) -> tuple[TableKey, ...]:
    """The gold keys a query record's `document_id` or `spans` name (() when neither).

    `chunks` maps each document id to its chunks. A query names documents or spans, not
    both (a document's key and its chunks' keys cannot be gold together: the metrics
    count a document-level query on documents, metrics/documents.py).
    """
    if "document_id" in record and "spans" in record:
        raise where.error("name gold text by document_id or by spans, not both", "spans")
    if "document_id" in record:
        raw = record["document_id"]
        ids = raw if isinstance(raw, list) else [raw]
        if not ids:
            raise where.error("must name at least one document", "document_id")
        keys = []
        for value in ids:
            doc_id = identifier(value, where, "document_id")
            if doc_id not in chunks:
                raise where.error(f"document {doc_id!r} is not in {DOCUMENTS_FILE}",
                                  "document_id")
            keys.append(document_key(doc_id))
        return tuple(dict.fromkeys(keys))
    if "spans" in record:
        return span_gold(record["spans"], where, chunks)
    return ()


def span_gold(spans: Any, where: Where, chunks: Mapping[str, Sequence[Table]]
              ) -> tuple[TableKey, ...]:
    """The chunks overlapping each span [start, end): chunk [s, e) overlaps when
    s < end and start < e."""
    if not isinstance(spans, list) or not spans:
        raise where.error('must be a list of {"document_id", "start", "end"}', "spans")
    keys: list[TableKey] = []
    for i, span in enumerate(spans):
        field = f"spans[{i}]"
        if not isinstance(span, Mapping) or "document_id" not in span:
            raise where.error('must be an object {"document_id", "start", "end"}', field)
        doc_id = identifier(span["document_id"], where, f"{field}.document_id")
        if doc_id not in chunks:
            raise where.error(f"document {doc_id!r} is not in {DOCUMENTS_FILE}",
                              f"{field}.document_id")
        start, end = span.get("start"), span.get("end")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) \
                or not 0 <= start < end:  # type: ignore[operator]
            raise where.error(f"start and end must be character offsets with 0 <= start < "
                              f"end, got {start!r} and {end!r}", field)
        hit = [t.key for t in chunks[doc_id]
               if t.context["start"] < end and start < t.context["end"]]
        if not hit:
            raise where.error(f"span [{start}, {end}) lies beyond the text of document "
                              f"{doc_id!r}", field)
        keys.extend(hit)
    return tuple(dict.fromkeys(keys))


def document_chunks(tables: Iterable[Table], document_id: str) -> list[Table]:
    """The chunks of one document in a corpus, in order."""
    return [t for t in tables if is_passage(t) and t.context.get("document_id") == document_id]


def document_table(tables: Mapping[TableKey, Table], key: Sequence[str]) -> Table | None:
    """A whole document as one passage, put back together from its chunks in `tables`
    (a table index) by their offsets, for pages that show a gold document; None when
    `key` names no document there. Whitespace between chunks that do not overlap is
    shown as one space (chunks leave out leading and trailing whitespace)."""
    if not is_document_key(key):
        return None
    chunks: list[Table] = []
    while (chunk := tables.get(chunk_key(key[1], len(chunks) + 1))) is not None:
        chunks.append(chunk)
    if not chunks:
        return None
    text = ""
    for chunk in chunks:
        start, body = int(chunk.context["start"]), passage_text(chunk)
        text = (text + body[len(text) - start:] if start < len(text)
                else f"{text} {body}" if text else body)
    first = chunks[0]
    return Table(DOCUMENTS_DB, key[1], ("text",), ((text,),),
                 {"kind": PASSAGE, "title": first.title, "document_id": key[1],
                  "chunks": len(chunks), "start": 0, "end": int(chunks[-1].context["end"])})


def table_or_document(tables: Mapping[TableKey, Table], key: Sequence[str]) -> Table | None:
    """The table (or passage) of `key`, else the document it names, else None."""
    found = tables.get((key[0], key[1]))
    return found if found is not None else document_table(tables, key)
