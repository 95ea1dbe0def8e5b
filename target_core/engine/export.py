"""Exports of a stored run (imports of TARGET's results: target_core.engine.importer).

Formats:
- target: JSON Lines as the TARGET library writes retrieval results,
  {"dataset_name", "query_id", "retrieval_results": [[database_id, table_id], ...]};
  a run with a generator also gets TARGET's downstream results next to it
  (`<out>.downstream.jsonl`), {"dataset_name", "query_id", "generated_results"}, where
  generated_results is the answer text (QA), the label text (fact verification) or
  [sql, database_id] (text-to-SQL, the database the SQL was run on, "" when none).
  `python -m target_core import OUT --downstream OUT.downstream.jsonl` reads both back;
- trec: a TREC run file (`qid Q0 docid rank score tag`) plus its qrels (`qid 0 docid 1`)
  next to it (`<out>.qrels`), with docid = "database_id/table_id", URL-quoted so it has
  no spaces (trec_eval splits on white space); where a query's gold names documents, its
  passages are written as their documents (each at its best rank), as the metrics count
  them. `import --format trec` reads it back (engine/import_trec.py);
- csv: one row per query with its gold, top table, gold ranks and per-query metrics;
  runs with a generator add `answer` and `generation_error`, text-to-SQL runs also
  `error_class`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from target_core.datasets.chunking import document_of
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.errors import UnknownNameError
from target_core.metrics.documents import document_level
from target_core.tasks import task_rules
from target_core.types import TableKey

FORMATS = ("target", "trec", "csv")
DOWNSTREAM_SUFFIX = ".downstream.jsonl"


def doc_id(key: TableKey) -> str:
    return quote(f"{key[0]}/{key[1]}", safe="/")


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def _target_lines(run: RunRecord, results: Iterable[QueryResult]) -> Iterator[str]:
    for r in results:
        yield _line({"dataset_name": run.config.dataset, "query_id": r.query_id,
                     "retrieval_results": [list(k) for k, _ in r.ranked]})


def generated_results(task: str, generation: dict[str, Any]) -> Any:
    """TARGET's `generated_results` of one stored generation record."""
    answer = str(generation.get("answer") or "")
    if not task_rules(task).answers_sql:
        return answer
    database = (generation.get("sql") or {}).get("database_id") or generation.get(
        "database_id")
    return [answer, database or ""]


def _downstream_lines(run: RunRecord, results: Iterable[QueryResult]) -> Iterator[str]:
    for r in results:
        if r.generation is not None:
            yield _line({"dataset_name": run.config.dataset, "query_id": r.query_id,
                         "generated_results": generated_results(run.task, r.generation)})


def export_run(store: RunStore, run_id: str, fmt: str, out: str | Path) -> list[Path]:
    """Write run `run_id` as `fmt` to `out`; returns the files written."""
    if fmt not in FORMATS:
        raise UnknownNameError("export format", fmt, FORMATS)
    run = store.get_run(run_id)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "target":
        results = list(store.iter_results(run_id))
        with out.open("w", encoding="utf-8") as handle:
            handle.writelines(_target_lines(run, results))
        if not any(r.generation is not None for r in results):
            return [out]
        downstream = out.with_name(out.name + DOWNSTREAM_SUFFIX)
        with downstream.open("w", encoding="utf-8") as handle:
            handle.writelines(_downstream_lines(run, results))
        return [out, downstream]
    if fmt == "trec":
        return _trec(run, store.iter_results(run_id), out)
    return _csv(run, list(store.iter_results(run_id)), out)


def _trec(run: RunRecord, results: Iterable[QueryResult], out: Path) -> list[Path]:
    qrels = out.with_name(out.name + ".qrels")
    tag = f"{run.config.retriever}-{run.run_id}".replace(" ", "_")
    with out.open("w", encoding="utf-8") as runs, qrels.open("w", encoding="utf-8") as rel:
        for r in results:
            qid = quote(r.query_id, safe="")
            for rank, (key, score) in enumerate(_units(r.ranked, r.gold), start=1):
                runs.write(f"{qid} Q0 {doc_id(key)} {rank} {score:.6f} {tag}\n")
            for key in r.gold:
                rel.write(f"{qid} 0 {doc_id(key)} 1\n")
    return [out, qrels]


def _units(ranked: list[tuple[TableKey, float]], gold: list[TableKey]
           ) -> list[tuple[TableKey, float]]:
    """The list as the metrics count it: with document-level gold each passage stands
    for its document at its best rank (metrics/documents.py), so the run's docids are the
    qrels' and trec_eval scores what the run shows."""
    if not document_level(gold):
        return ranked
    units: dict[TableKey, float] = {}
    for key, score in ranked:
        units.setdefault(document_of(key) or key, score)
    return list(units.items())


def _generation_cells(task: str, generation: dict[str, Any] | None) -> list[Any]:
    record = generation or {}
    cells = [record.get("answer") or "", record.get("error") or ""]
    if task_rules(task).answers_sql:
        cells.append((record.get("sql") or {}).get("error_class") or "")
    return cells


def _csv(run: RunRecord, rows: list[QueryResult], out: Path) -> list[Path]:
    metric_names = sorted({name for r in rows for name in r.metrics})
    generated = any(r.generation is not None for r in rows)
    extra = (["answer", "generation_error"]
             + (["error_class"] if task_rules(run.task).answers_sql else [])
             if generated else [])
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query_id", "gold", "top1", "gold_ranks", "ms", *extra,
                         *metric_names])
        for r in rows:
            writer.writerow([
                r.query_id, " ".join(doc_id(k) for k in r.gold),
                doc_id(r.ranked[0][0]) if r.ranked else "",
                " ".join("-" if v is None else str(v) for v in r.gold_ranks.values()),
                f"{r.ms:.3f}",
                *(_generation_cells(run.task, r.generation) if generated else []),
                *[r.metrics.get(name, "") for name in metric_names]])
    return [out]
