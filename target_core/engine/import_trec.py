"""TREC run files and qrels, imported as runs against a loaded dataset (the inverse of
engine/export.py's `trec` format; storing: engine/importer.py).

A run file has one line per retrieved document, white-space separated:

    qid Q0 docid rank score tag

Each query's list is ordered as trec_eval orders it: by score, highest first, ties by
docid in reverse byte order (trec_eval's `comp_sim_docno`); the rank and Q0 columns are
ignored, as trec_eval ignores them. A docid names a corpus entry as our export writes it
(`database_id/table_id`, URL-quoted), or a document id of a text corpus (a BEIR
corpus-id: the document, whose passages it stands for), or a chunk id (`D#n`), or a
table_id that only one table of the corpus has.

Checks: a malformed line, a docid listed twice for one query, or two tags in one file
are refused (DatasetError naming the file, line and column). Queries the dataset does not
have are skipped and docids it does not have are kept at their rank (they never match
gold, as unjudged documents in trec_eval), each counted in a warning. A query of the
dataset that the run lacks is left out of the run (trec_eval without `-c`).

A qrels file (`qid iter docid rel`, rel > 0 relevant) is checked against the dataset's
gold, which every page and comparison of the dataset's runs reads: for each query both
hold, the relevant documents must be the query's gold (else refused, naming the query).
The run then holds the queries the qrels judge, as trec_eval evaluates only those.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from target_core.datasets.chunking import DOCUMENTS_DB, document_key, is_passage
from target_core.datasets.folder import iter_text_lines
from target_core.datasets.records import Where
from target_core.errors import ConfigError, DatasetError
from target_core.run_config import RunConfig
from target_core.types import Dataset, TableKey

if TYPE_CHECKING:
    from target_core.config import Settings
    from target_core.engine.importer import ImportedRun
    from target_core.engine.store import RunStore

EXAMPLES = 3


@dataclass
class TrecRun:
    """A run file, read against a dataset: per known query its (key, score) list in
    trec_eval's order, each key once; and what was skipped or kept unmatched."""

    tag: str
    lists: dict[str, list[tuple[TableKey, float]]]
    docids: dict[str, list[str]] = field(default_factory=dict)
    """Each query's docids as the file names them, in the same order."""
    unknown_queries: list[str] = field(default_factory=list)
    unknown_docs: int = 0
    unknown_doc_queries: int = 0
    unknown_examples: list[str] = field(default_factory=list)
    merged: int = 0  # docids naming a key another docid of the list named first

    def counts(self) -> dict[str, int]:
        return {"unknown_queries": len(self.unknown_queries),
                "unknown_docids": self.unknown_docs,
                "unknown_docid_queries": self.unknown_doc_queries,
                "merged_docids": self.merged}

    def warnings(self, path: str | Path, dataset: str) -> list[str]:
        out = []
        if self.unknown_queries:
            out.append(f"{path}: {len(self.unknown_queries)} queries are not in {dataset} "
                       f"and were skipped, e.g. {', '.join(self.unknown_queries[:EXAMPLES])}")
        if self.unknown_docs:
            out.append(f"{path}: {self.unknown_docs} docids in {self.unknown_doc_queries} "
                       f"queries are not in {dataset}'s corpus, e.g. "
                       f"{', '.join(self.unknown_examples)}; they keep their ranks and "
                       f"never match gold (trec_eval: unjudged, not relevant)")
        if self.merged:
            out.append(f"{path}: {self.merged} docids name an entry another docid of the "
                       f"same query named above them; each entry keeps its first rank")
        return out


class DocIds:
    """Resolves a run's or qrels' docid to a corpus key (the module doc's rules)."""

    def __init__(self, dataset: Dataset) -> None:
        self.index = dataset.table_index
        self.documents = {str(t.context.get("document_id")) for t in dataset.tables
                          if is_passage(t)}
        counts: dict[str, list[TableKey]] = {}
        for key in self.index:
            counts.setdefault(key[1], []).append(key)
        self.by_table_id = {t: keys[0] for t, keys in counts.items() if len(keys) == 1}
        self._memo: dict[str, TableKey | None] = {}

    def key(self, docid: str) -> TableKey | None:
        """The key `docid` names in the corpus, None when it names nothing there."""
        if docid not in self._memo:
            self._memo[docid] = self._resolve(docid) or (
                self._resolve(unquote(docid)) if "%" in docid else None)
        return self._memo[docid]

    def _resolve(self, text: str) -> TableKey | None:
        if text in self.documents:
            return document_key(text)
        start = text.find("/")
        while start != -1:  # a database_id may hold "/": try every split
            key = (text[:start], text[start + 1:])
            if key in self.index or (key[0] == DOCUMENTS_DB and key[1] in self.documents):
                return key
            start = text.find("/", start + 1)
        if (DOCUMENTS_DB, text) in self.index:  # a chunk id D#n
            return (DOCUMENTS_DB, text)
        return self.by_table_id.get(text)

    @staticmethod
    def unmatched(docid: str) -> TableKey:
        """The key an unknown docid keeps in a list (never gold)."""
        database_id, sep, table_id = unquote(docid).partition("/")
        return (database_id, table_id) if sep else ("", docid)


def _lines(path: str | Path, columns: int, names: str) -> Iterator[tuple[Where, list[str]]]:
    """(where, cells) of each non-blank line with exactly `columns` cells."""
    for where, text in iter_text_lines(Path(path)):
        cells = text.split()
        if len(cells) != columns:
            raise where.error(f"expected {columns} white-space separated columns "
                              f"({names}), got {len(cells)}")
        yield where, cells


def trec_order(entries: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """trec_eval's order: score descending, ties by docid descending (byte order)."""
    by_docid = sorted(entries, key=lambda e: e[0], reverse=True)  # code points: UTF-8 order
    return sorted(by_docid, key=lambda e: -e[1])  # stable: ties keep the docid order


def read_trec_run(path: str | Path, dataset: Dataset) -> TrecRun:
    """Read and check a TREC run file against `dataset` (see the module doc)."""
    tag: tuple[str, Where] | None = None
    entries: dict[str, list[tuple[str, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for where, (qid, _q0, docid, _rank, score_text, run_tag) in _lines(
            path, 6, "qid Q0 docid rank score tag"):
        try:
            score = float(score_text)
        except ValueError:
            raise where.error(f"must be a number, got {score_text!r}", "score") from None
        if not math.isfinite(score):
            raise where.error(f"must be a finite number, got {score_text!r}", "score")
        if tag is None:
            tag = (run_tag, where)
        elif run_tag != tag[0]:
            raise where.error(f"a second run tag {run_tag!r} (line {tag[1].line} has "
                              f"{tag[0]!r}); import one run per file", "tag")
        if (qid, docid) in seen:
            raise where.error(f"docid {docid!r} is listed twice for query {qid!r} (first at "
                              f"line {seen[(qid, docid)]}); trec_eval refuses that too",
                              "docid")
        seen[(qid, docid)] = where.line or 0
        entries.setdefault(qid, []).append((docid, score))
    if tag is None:
        raise DatasetError("holds no run lines (qid Q0 docid rank score tag)", path=path)
    known = dataset.query_index
    ids = DocIds(dataset)
    read = TrecRun(tag=tag[0], lists={})
    for qid, listed in entries.items():
        query_id = qid if qid in known else unquote(qid)  # our export quotes query ids
        if query_id not in known:
            read.unknown_queries.append(qid)
            continue
        ranked: dict[TableKey, float] = {}
        docids = []
        unknown = 0
        for docid, score in trec_order(listed):
            key = ids.key(docid)
            if key is None:
                unknown += 1
                if len(read.unknown_examples) < EXAMPLES:
                    read.unknown_examples.append(docid)
                key = ids.unmatched(docid)
            if key in ranked:
                read.merged += 1
                continue
            ranked[key] = score
            docids.append(docid)
        read.unknown_docs += unknown
        read.unknown_doc_queries += bool(unknown)
        read.lists[query_id] = list(ranked.items())
        read.docids[query_id] = docids
    if not read.lists:
        raise DatasetError(f"none of its {len(entries)} queries is in dataset "
                           f"{dataset.name!r} (e.g. {next(iter(entries))!r}); pass --dataset "
                           f"with the dataset the run is on", path=path)
    return read


@dataclass
class TrecQrels:
    """A qrels file, read against a dataset: per known query the grade of each judged key."""

    grades: dict[str, dict[TableKey, int]]
    unknown_queries: list[str] = field(default_factory=list)
    graded: bool = False  # some grade is above 1

    def relevant(self, query_id: str) -> set[TableKey]:
        return {k for k, g in self.grades.get(query_id, {}).items() if g > 0}


def read_trec_qrels(path: str | Path, dataset: Dataset) -> TrecQrels:
    """Read a TREC qrels file (`qid iter docid rel`); a relevant docid (rel > 0) that is
    not in the corpus is refused (it could never be found), a judged non-relevant one
    is ignored, a query the dataset lacks is counted."""
    known = dataset.query_index
    ids = DocIds(dataset)
    read = TrecQrels(grades={})
    for where, (qid, _iter, docid, rel_text) in _lines(path, 4, "qid iter docid rel"):
        try:
            grade = int(rel_text)
        except ValueError:
            raise where.error(f"must be an integer, got {rel_text!r}", "rel") from None
        query_id = qid if qid in known else unquote(qid)
        if query_id not in known:
            if qid not in read.unknown_queries:
                read.unknown_queries.append(qid)
            continue
        key = ids.key(docid)
        if key is None:
            if grade > 0:
                raise where.error(f"relevant docid {docid!r} is not in {dataset.name}'s "
                                  f"corpus", "docid")
            continue
        read.grades.setdefault(query_id, {})[key] = grade
        read.graded = read.graded or grade > 1
    if not read.grades:
        raise DatasetError(f"judges none of the queries of dataset {dataset.name!r}",
                           path=path)
    return read


def check_qrels(qrels: TrecQrels, dataset: Dataset, query_ids: list[str],
                path: str | Path) -> list[str]:
    """The run's queries the qrels judge relevant documents for, after checking that
    those are each query's gold (DatasetError naming the first that differs)."""
    kept = []
    for query_id in query_ids:
        relevant = qrels.relevant(query_id)
        if not relevant:
            continue
        gold = set(dataset.query(query_id).gold)
        if relevant != gold:
            extra, missing = sorted(relevant - gold), sorted(gold - relevant)
            raise DatasetError(
                f"query {query_id!r}: the qrels' relevant documents differ from dataset "
                f"{dataset.name!r}'s gold" + (f"; relevant here, not gold: {extra[:EXAMPLES]}"
                                              if extra else "")
                + (f"; gold, not relevant here: {missing[:EXAMPLES]}" if missing else "")
                + ". Runs are scored against the dataset's gold: load the qrels as the "
                "dataset's (e.g. a BEIR folder) to score against them", path=path)
        kept.append(query_id)
    if not kept:
        raise DatasetError("judges no query of the run relevant", path=path)
    return kept


def import_trec(path: str | Path, *, settings: Settings, dataset: str,
                qrels: str | Path | None = None, label: str | None = None,
                top_k: int | None = None, store: RunStore | None = None) -> ImportedRun:
    """Store a TREC run file as a run on `dataset` (a name or folder), scored against the
    dataset's gold like a native run; `qrels` is checked against that gold and limits the
    run to the queries it judges (see the module doc). The retriever is
    `imported:<label>`, by default the run's tag; top_k is `top_k` (the lists are cut
    there) or the longest list. The same files imported again give back their run."""
    from target_core.datasets.registry import registered_name
    from target_core.engine.import_files import file_digest
    from target_core.engine.importer import _load, _Plan, _store
    from target_core.engine.store import RunStore, config_key

    if top_k is not None and top_k < 1:
        raise ConfigError(f"--top-k must be a positive integer, got {top_k}")
    data = _load(dataset, settings, str(path))
    read = read_trec_run(path, data)
    warnings = read.warnings(path, data.name)
    order = [q.query_id for q in data.queries if q.query_id in read.lists]
    checked = None
    if qrels is not None:
        checked = read_trec_qrels(qrels, data)
        kept = check_qrels(checked, data, order, qrels)
        if checked.unknown_queries:
            warnings.append(f"{qrels}: {len(checked.unknown_queries)} queries are not in "
                            f"{data.name} and were skipped, e.g. "
                            f"{', '.join(checked.unknown_queries[:EXAMPLES])}")
        if len(kept) < len(order):
            warnings.append(f"{qrels}: judges {len(kept)} of the run's {len(order)} queries; "
                            f"the run keeps those {len(kept)}, as trec_eval evaluates only "
                            f"judged queries")
        if checked.graded:
            warnings.append(f"{qrels}: relevance is graded; recall, MRR and nDCG here count "
                            f"every grade > 0 as relevant with gain 1 (trec_eval's nDCG uses "
                            f"the grades)")
        order = kept
    if len(order) < len(data.queries):
        warnings.append(f"{path}: holds {len(order)} of the {len(data.queries)} queries of "
                        f"{data.name}; the run's numbers are over those {len(order)} only "
                        f"(trec_eval without -c)")
    name = label or read.tag
    k = top_k or max(len(read.lists[q]) for q in order)
    config = RunConfig(dataset=registered_name(dataset, settings), retriever=f"imported:{name}",
                       top_k=k)
    sources = [str(p) for p in (path, qrels) if p is not None]
    key = json.dumps([config_key(config, data.fingerprint), "trec",
                      [file_digest(p) for p in sources]], sort_keys=True)
    index_info: dict[str, Any] = {
        "imported_from": sources, "import_format": "trec", "trec_tag": read.tag,
        "import_key": hashlib.sha256(key.encode()).hexdigest()[:20],
        "import_warnings": warnings, "trec_checks": read.counts()}
    if checked is not None:
        index_info["qrels_graded"] = checked.graded
    plan = _Plan(config, data, order, {q: [key for key, _ in read.lists[q]] for q in order},
                 None, name, index_info, warnings, {},
                 scores_of={q: [score for _, score in read.lists[q]] for q in order})
    return _store(plan, settings, store or RunStore.in_workspace(settings.workspace))
