"""Why a table won, for text-to-SQL: which words of the question link to each table.

The linking is the SQL writer's own (`generators.sql_linking`, over the schema read as
the SQL prompt reads it, `generators.context.read_schema`): a question word names a
table (3 points), a column (1) or a sampled value (2 per span), and a database scores
as its best table. For the gold table and the other table (the winner, or the one
chosen), the explanation lists what each content word of the question links to in
each, the words only one of them has, and, when the two lie in different databases,
each database's score and the words that pulled the question into the wrong one.

`explain_sql(run, dataset, query, tables)` is one section of `analysis.explain`'s
answer (its `"sql"` key): JSON-ready, None for a dataset that is not text-to-SQL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from target_core.datasets.lookup import DatasetLookup
from target_core.engine.store import RunRecord
from target_core.generators.base import SchemaTable
from target_core.generators.context import read_schema
from target_core.generators.sql_linking import TableLinks, database_links, words
from target_core.generators.sql_schema import sql_literal
from target_core.serialize import table_text
from target_core.tasks import task_rules
from target_core.textproc import STOPWORDS, tokenize
from target_core.types import Dataset, Query, TableKey, parse_table_ref, table_ref

__all__ = ["explain_sql"]

QWord = tuple[str, int, int]


@lru_cache(maxsize=32)
def _schema(database_id: str, path: str, modified: int) -> tuple[SchemaTable, ...]:
    return read_schema(database_id, Path(path))


def _database(dataset: Dataset | DatasetLookup, database_id: str
              ) -> tuple[SchemaTable, ...] | None:
    path = dataset.databases.get(database_id)
    if path is None or not Path(path).is_file():
        return None
    return _schema(database_id, str(path), Path(path).stat().st_mtime_ns)


def _word_links(found: TableLinks, question: str, qword: QWord) -> list[str]:
    """What `qword` links to in one table: its name, columns it names, a value span."""
    word, start, _ = qword
    out = []
    if found.mention == start:
        out.append(f"table {found.table}")
    out += [f"column {found.table}.{column}" for column, named in found.columns
            if word in named]
    out += [f"value {link.column} = {sql_literal(link.value)} "
            f"(\"{question[link.start:link.end]}\")"
            for link in found.values if link.start <= start < link.end]
    return out


def _linked_words(links: Sequence[TableLinks], question: str, qwords: list[QWord]
                  ) -> list[str]:
    """The content words of the question linking to any of `links`, in question order."""
    return list(dict.fromkeys(q[0] for q in qwords if q[0] not in STOPWORDS and any(
        _word_links(found, question, q) for found in links)))


def _text_words(dataset: Dataset | DatasetLookup, run: RunRecord, key: TableKey,
                question: str) -> list[str]:
    """The query's words (textproc) in the table's text as this run's view wrote it."""
    table = dataset.table_index.get(key)
    if table is None:
        return []
    text = set(tokenize(table_text(table, run.config.view)))
    return [w for w in dict.fromkeys(tokenize(question)) if w in text]


def _table_entry(entry: Mapping[str, Any], found: TableLinks | None, question: str,
                 qwords: list[QWord], text_words: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"table": entry["table"], "role": entry.get("role"),
                           "rank": entry.get("rank"), "in_schema": found is not None,
                           "text_words": text_words}
    if found is None:
        return out | {"score": None, "name_word": None, "columns": [], "values": [],
                      "words": []}
    name_word = next((w for w, start, _ in qwords if start == found.mention), None)
    return out | {
        "score": found.score, "name_word": name_word,
        "columns": [{"column": c, "words": list(named)} for c, named in found.columns],
        "values": [{"column": link.column, "value": link.value,
                    "text": question[link.start:link.end]} for link in found.values],
        "words": _linked_words([found], question, qwords)}


def _database_entry(database: str, links: list[TableLinks], question: str,
                    qwords: list[QWord]) -> dict[str, Any]:
    best = max(links, key=lambda found: found.score, default=None)
    return {"database": database, "score": best.score if best else None,
            "best_table": best.table if best else None,
            "words": _linked_words(links, question, qwords)}


def _pick(tables: Sequence[Mapping[str, Any]], query: Query
          ) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    gold = next((t for t in tables if t.get("role") == "gold"), None)
    other = next((t for t in tables if t.get("role") in ("winner", "chosen")), None)
    if gold is None and query.gold:
        gold = {"table": table_ref(query.gold[0]), "role": "gold", "rank": None}
    return gold, other


def explain_sql(run: RunRecord, dataset: Dataset | DatasetLookup, query: Query,
                tables: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The schema linking of `query` against the gold table and the other table of
    `tables` (explain()'s entries: "table" as "db/table", "role" gold, winner or
    chosen, "rank"); None unless the run or dataset is text-to-SQL with databases."""
    if not any(task_rules(t).answers_sql for t in (run.task, dataset.task)) \
            or not dataset.databases:
        return None
    gold_entry, other_entry = _pick(tables, query)
    if gold_entry is None:
        return None
    question = query.query
    qwords = words(question)
    entries = [e for e in (gold_entry, other_entry) if e is not None]
    keys: list[TableKey] = [parse_table_ref(str(e["table"])) for e in entries]
    by_database: dict[str, list[TableLinks]] = {}
    notes = []
    for database in dict.fromkeys(key[0] for key in keys):
        schema = _database(dataset, database)
        if schema is None:
            notes.append(f"database '{database}' has no SQLite file: its tables are not "
                         f"linked")
            continue
        by_database[database] = database_links(question, qwords, schema)
    found = [next((f for f in by_database.get(key[0], []) if f.table == key[1]), None)
             for key in keys]
    sections = [_table_entry(e, f, question, qwords, _text_words(dataset, run, key, question))
                for e, f, key in zip(entries, found, keys, strict=True)]
    per_word = []
    for qword in qwords:
        if qword[0] in STOPWORDS:
            continue
        row: dict[str, Any] = {"word": qword[0]}
        for section, links in zip(sections, found, strict=True):
            row[section["role"] or "table"] = (_word_links(links, question, qword)
                                               if links else [])
        if row not in per_word:  # a word said twice links the same way twice
            per_word.append(row)
    gold_words = set(sections[0]["words"])
    other_words = set(sections[1]["words"]) if len(sections) > 1 else set()
    result: dict[str, Any] = {
        "gold": sections[0]["table"],
        "other": sections[1]["table"] if len(sections) > 1 else None,
        "tables": sections, "words": per_word,
        "only_gold": [w for w in sections[0]["words"] if w not in other_words],
        "only_other": ([w for w in sections[1]["words"] if w not in gold_words]
                       if len(sections) > 1 else []),
        "same_database": len(keys) < 2 or keys[0][0] == keys[1][0],
        "databases": None, "notes": notes}
    if not result["same_database"] and all(k[0] in by_database for k in keys):
        gold_db = _database_entry(keys[0][0], by_database[keys[0][0]], question, qwords)
        other_db = _database_entry(keys[1][0], by_database[keys[1][0]], question, qwords)
        gold_words = set(gold_db["words"])
        result["databases"] = {
            "gold": gold_db, "other": other_db,
            "pulled_by": [w for w in other_db["words"] if w not in gold_words],
            "writer_picks": _writer_pick(gold_db, other_db, entries)}
    return result


def _writer_pick(gold: dict[str, Any], other: dict[str, Any],
                 entries: list[Mapping[str, Any]]) -> str:
    """The database the heuristic SQL writer would pick between the two: the higher
    score, the better-ranked one on a tie (the writer goes in rank order)."""
    gold_score, other_score = gold["score"] or 0.0, other["score"] or 0.0
    if gold_score != other_score:
        return str(gold["database"] if gold_score > other_score else other["database"])
    ranks = [int(e["rank"]) if e.get("rank") is not None else 10**9 for e in entries]
    return str(gold["database"] if ranks[0] < ranks[1] else other["database"])
