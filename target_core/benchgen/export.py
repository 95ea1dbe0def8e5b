"""Export a reviewed draft as a folder-format `sql` dataset that runs like any other.

The accepted pairs become queries (the reviewer's wording when edited), each with its
gold SQL as `sql` and `answer` (TARGET's convention for text-to-SQL), the tables the
SQL reads as gold (`table_id`), and the template's difficulty. The corpus is every
table of every database a query uses, read from the SQLite file (header, all rows,
primary and foreign keys), as demo-sql and Spider's corpora are; the databases are
copied with SQLite's backup API, so the dataset stands alone.

Each query also keeps what evaluation by error source needs (`error_sources.py`):
`template_id`, `bindings`, `reference_date`, `time` (the resolved range), `time_column`
and `alternatives`: the SQL of every other valid reading, from the template's own
alternatives and from the relative time reference's alternative readings. The
text-to-SQL prompt states the reference date for queries that have one.

The folder is written next to the workspace's runs (`workspace/datasets/<name>/`),
where the dataset list finds it; it is built in a temporary folder, loaded back to
check it, and only then moved into place, so a failed export leaves nothing behind.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from target_core.benchgen.draft import Draft, Pair
from target_core.benchgen.render import render_sql
from target_core.benchgen.templates import Template
from target_core.benchgen.timeref import TimeRange, alternative_readings
from target_core.config import Settings
from target_core.errors import ConfigError
from target_core.generators.context import read_schema
from target_core.sql import connect_readonly
from target_core.sql.execute import json_safe_value
from target_core.sql.structure import gold_tables


@dataclass(frozen=True)
class ExportResult:
    name: str
    path: Path
    queries: int
    tables: int
    databases: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "queries": self.queries,
                "tables": self.tables, "databases": list(self.databases)}


def alternatives(pair: Pair, template: Template | None) -> list[dict[str, str]]:
    """Every other valid reading of `pair`'s question, as SQL on its database."""
    if template is None:
        return []
    item = pair.item
    time_range = TimeRange.from_dict(item.time) if item.time else None
    found: list[dict[str, str]] = []
    for alt in template.alternatives:
        found.append({"kind": alt.kind, "description": alt.description,
                      "sql": render_sql(alt.sql, template, item.bindings, time_range)})
    if time_range is not None:
        for reading in alternative_readings(time_range):
            found.append({"kind": "time", "description": reading.expression,
                          "sql": render_sql(template.sql, template, item.bindings, reading)})
    unique: dict[str, dict[str, str]] = {}
    for option in found:
        if " ".join(option["sql"].split()) != " ".join(item.sql.split()):
            unique.setdefault(option["sql"], option)
    return list(unique.values())


def _time_column(template: Template | None) -> str | None:
    placeholder = template.time_placeholder if template else None
    if placeholder is None or placeholder.column is None:
        return None
    return f"{placeholder.column.table}.{placeholder.column.column}"


def query_record(pair: Pair, template: Template | None, query_id: str,
                 tables: Sequence[str]) -> dict[str, Any]:
    item = pair.item
    return {
        "query_id": query_id, "query": pair.final_question, "answer": item.sql,
        "sql": item.sql, "table_id": gold_tables(item.sql, tables),
        "database_id": item.database, "difficulty": item.difficulty,
        "template_id": item.template_id, "bindings": item.bindings,
        "reference_date": item.reference_date, "time": item.time,
        "time_column": _time_column(template),
        "alternatives": alternatives(pair, template),
        "question_style": pair.style, "writer": pair.writer,
        "review": "edited" if pair.edited else "accepted",
        "written_question": pair.question if pair.edited else None,
    }


def table_records(database_id: str, path: Path) -> list[dict[str, Any]]:
    """Every table of a database in the folder format: header, all rows, keys."""
    schema = read_schema(database_id, path)
    connection = connect_readonly(path)
    connection.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
    try:
        records = []
        for table in schema:
            quoted = '"' + table.name.replace('"', '""') + '"'
            cursor = connection.execute(f"SELECT * FROM {quoted}")
            header = [d[0] for d in cursor.description]
            rows = [[_cell(v) for v in row] for row in cursor.fetchall()]
            records.append({
                "database_id": database_id, "table_id": table.name, "table": [header, *rows],
                "context": {"title": table.name, "database": database_id,
                            "primary_key": list(table.primary_key),
                            "foreign_keys": [{"column": c, "ref_table": t, "ref_column": r}
                                             for c, t, r in table.foreign_keys]}})
        return records
    finally:
        connection.close()


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return json_safe_value(value)


def _copy_database(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    src = connect_readonly(source)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _description(draft: Draft, accepted: int, databases: Sequence[str]) -> str:
    meta, summary = draft.meta(), draft.summary()
    return (f"Text-to-SQL benchmark made with the benchmark builder (seed 002) from draft "
            f"'{draft.name}' over dataset '{meta.get('dataset')}' "
            f"(databases: {', '.join(databases)}). SQL sampled from templates with seed "
            f"{meta.get('seed')}; questions by {meta.get('writer')}; checked by "
            f"{meta.get('judge')}; {accepted} question-SQL pairs accepted in human review "
            f"(acceptance rate {summary.acceptance_rate:.1%} of {summary.reviewed} reviewed).")


def export_draft(draft: Draft, settings: Settings, name: str, *,
                 overwrite: bool = False) -> ExportResult:
    """Write the accepted pairs of `draft` as dataset `name` in the workspace.

    The SQLite files come from the dataset the draft was sampled from. Raises
    ConfigError when nothing is accepted, when the name is taken by another dataset,
    or when the folder exists and `overwrite` is not set.
    """
    from target_core.datasets.add import check_dataset_name
    from target_core.datasets.folder import load_folder
    from target_core.datasets.registry import discover, load_dataset

    check_dataset_name(name)
    accepted = draft.pairs("accepted")
    if not accepted:
        raise ConfigError(f"draft '{draft.name}' has no accepted pairs to export; review "
                          "some first")
    target = settings.workspace / "datasets" / name
    known = discover(settings).get(name)
    if known is not None and Path(known.location).resolve() != target.resolve():
        raise ConfigError(f"dataset name '{name}' is taken by {known.location}; pick another")
    if target.exists() and not overwrite:
        raise ConfigError(f"dataset '{name}' exists ({target}); overwrite it or pick "
                          "another name")
    used = sorted({p.item.database for p in accepted})
    databases = load_dataset(draft.meta()["dataset"], settings).databases
    if missing := [d for d in used if d not in databases]:
        raise ConfigError(f"database '{missing[0]}' of the draft is not in the source "
                          "dataset any more")
    templates = draft.templates()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{name}.") as tmp:
        folder = Path(tmp) / name
        corpus = []
        for database in used:
            copy = folder / "databases" / database / f"{database}.sqlite"
            _copy_database(Path(databases[database]), copy)
            corpus += table_records(database, copy)
        tables_of = {d: [r["table_id"] for r in corpus if r["database_id"] == d] for d in used}
        queries = [query_record(p, templates.get(p.item.template_id), f"{name}-{i:04d}",
                                tables_of[p.item.database])
                   for i, p in enumerate(accepted, start=1)]
        _write_jsonl(folder / "corpus.jsonl", corpus)
        _write_jsonl(folder / "queries.jsonl", queries)
        meta = {"name": name, "task": "sql",
                "description": _description(draft, len(queries), used),
                "license": "as the source databases", "source_draft": draft.name}
        (folder / "dataset.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False),
                                             encoding="utf-8")
        load_folder(folder, name=name)  # the dataset must load before it is published
        if target.exists():
            shutil.rmtree(target)
        folder.rename(target)
    return ExportResult(name, target, len(queries), len(corpus), tuple(used))


def _write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
