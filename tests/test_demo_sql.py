"""The committed demo-sql dataset (data/demo/demo-sql) and its generator scripts/demo_sql/.

The dashboard's text-to-SQL demo is only useful if its gold is right and its built-in
failure modes really are what their tags say, so these tests recheck every promise of the
dataset against the SQLite files themselves, with their own tokenizer and sqlglot rather
than the generator's helpers.
"""

from __future__ import annotations

import importlib
import json
import re
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from target_core.sql.structure import referenced_tables

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
DATA = ROOT / "data" / "demo" / "demo-sql"
DIFFICULTIES = ("easy", "medium", "hard", "extra")
"""Spider's hardness levels."""
MODES = ("sibling", "paraphrase", "deep-row", "title-only")
DEEP_ROW = 20
STOPWORDS = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "is", "are",
                       "and", "or", "id", "with", "from"})


# --- helpers ----------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@cache
def corpus() -> list[dict[str, Any]]:
    return read_jsonl(DATA / "corpus.jsonl")


@cache
def queries() -> list[dict[str, Any]]:
    return read_jsonl(DATA / "queries.jsonl")


@cache
def tables_by_key() -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["database_id"], r["table_id"]): r for r in corpus()}


def database_ids() -> list[str]:
    return sorted(p.name for p in (DATA / "databases").iterdir() if p.is_dir())


def db_path(database_id: str) -> Path:
    return DATA / "databases" / database_id / f"{database_id}.sqlite"


def connect(path: Path) -> sqlite3.Connection:
    """Read-only, so a test can never change the committed files."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def run(query: dict[str, Any]) -> list[tuple]:
    conn = connect(db_path(query["database_id"]))
    try:
        return conn.execute(query["sql"]).fetchall()
    finally:
        conn.close()


def words(text: str) -> set[str]:
    """Lower-case words (split on anything not a letter or digit, so on '_' too), with a
    plural 's' stripped and stopwords dropped."""
    found = {w[:-1] if len(w) > 3 and w.endswith("s") else w
             for w in re.findall(r"[a-z0-9]+", text.lower())}
    return found - STOPWORDS


def schema_words(query: dict[str, Any]) -> set[str]:
    """Words of the gold tables' names and column names."""
    result: set[str] = set()
    for table_id in query["table_id"]:
        header = tables_by_key()[(query["database_id"], table_id)]["table"][0]
        result |= words(table_id) | words(" ".join(header))
    return result


def content_words(query: dict[str, Any]) -> set[str]:
    """Words of the gold tables' column names and cells, not of their names."""
    result: set[str] = set()
    for table_id in query["table_id"]:
        table = tables_by_key()[(query["database_id"], table_id)]["table"]
        for row in table:
            result |= words(" ".join(str(c) for c in row if c is not None))
    return result


def sqlglot_tables(sql: str) -> set[str]:
    tree = sqlglot.parse_one(sql, read="sqlite")
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return {t.name for t in tree.find_all(exp.Table)} - ctes


def by_mode(mode: str | None) -> list[dict[str, Any]]:
    return [q for q in queries() if q["failure_mode"] == mode]


def load_script() -> ModuleType:
    """The generator package scripts/demo_sql/, imported by name (scripts/ is no package)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module("demo_sql")


def files_under(root: Path) -> Iterator[str]:
    return (p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file())


# --- dataset.json and sizes -------------------------------------------------------------


def test_dataset_json_names_the_task_license_and_failure_modes() -> None:
    meta = json.loads((DATA / "dataset.json").read_text(encoding="utf-8"))
    assert meta["name"] == "demo-sql"
    assert meta["task"] == "sql"
    assert "CC0" in meta["license"] and "scripts/demo_sql/" in meta["license"]
    description = meta["description"]
    for needle in (*MODES, *DIFFICULTIES, "failure_mode", "evidence", "decisive", "siblings",
                   "employees", "departments", "customers", "members"):
        assert needle in description, needle


def test_databases_and_tables_are_big_enough() -> None:
    assert len(database_ids()) >= 7
    assert {r["database_id"] for r in corpus()} == set(database_ids())
    assert len(corpus()) >= 35
    sizes = [len(r["table"]) - 1 for r in corpus()]
    assert all(8 <= n <= 300 for n in sizes), sizes
    assert sum(n > 40 for n in sizes) >= 6


def test_sqlite_files_stay_small() -> None:
    total = sum(db_path(d).stat().st_size for d in database_ids())
    assert total < 3 * 1024 * 1024, total


# --- keys and corpus --------------------------------------------------------------------


def test_every_table_has_a_primary_key_and_foreign_keys_hold() -> None:
    n_foreign_keys = 0
    for database_id in database_ids():
        conn = connect(db_path(database_id))
        try:
            names = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            for name in names:
                info = conn.execute(f"PRAGMA table_info({name})").fetchall()
                assert any(col[5] for col in info), f"{database_id}.{name} has no primary key"
                n_foreign_keys += len(conn.execute(f"PRAGMA foreign_key_list({name})")
                                      .fetchall())
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        finally:
            conn.close()
    assert n_foreign_keys >= 15


def test_corpus_matches_the_databases_exactly() -> None:
    for database_id in database_ids():
        records = {r["table_id"]: r for r in corpus() if r["database_id"] == database_id}
        conn = connect(db_path(database_id))
        try:
            names = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            assert set(records) == names, database_id
            for name, record in records.items():
                info = conn.execute(f"PRAGMA table_info({name})").fetchall()
                header = [col[1] for col in info]
                rows = [list(r) for r in conn.execute(f"SELECT * FROM {name} ORDER BY rowid")]
                assert record["table"][0] == header, (database_id, name)
                assert record["table"][1:] == rows, (database_id, name)
                context = record["context"]
                assert context["title"] == name and context["database"] == database_id
                keys = [c[1] for c in sorted((c for c in info if c[5]), key=lambda c: c[5])]
                assert context["primary_key"] == keys
                links = {(fk[3], f"{fk[2]}.{fk[4]}")
                         for fk in conn.execute(f"PRAGMA foreign_key_list({name})")}
                assert {(f["column"], f["references"]) for f in context["foreign_keys"]} == links
        finally:
            conn.close()


def test_table_names_repeat_across_databases_with_different_columns() -> None:
    owners: dict[str, list[tuple[str, ...]]] = {}
    for record in corpus():
        owners.setdefault(record["table_id"], []).append(tuple(record["table"][0]))
    repeated = {name: headers for name, headers in owners.items() if len(headers) > 1}
    assert len(repeated) >= 4, sorted(repeated)
    assert max(len(h) for h in repeated.values()) >= 3
    for name, headers in repeated.items():
        assert len(set(headers)) > 1, f"every {name} table has the same columns"


# --- queries: gold ----------------------------------------------------------------------


def test_queries_are_numerous_unique_and_well_formed() -> None:
    assert len(queries()) >= 170
    ids = [q["query_id"] for q in queries()]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"demo-sql-\d{4}", i) for i in ids)
    assert len({q["query"] for q in queries()}) == len(queries())
    for q in queries():
        assert q["answer"] == q["sql"], q["query_id"]
        assert q["difficulty"] in DIFFICULTIES
        assert q["failure_mode"] in (*MODES, None)
        for table_id in q["table_id"]:
            assert (q["database_id"], table_id) in tables_by_key(), q["query_id"]


def test_every_gold_sql_returns_rows() -> None:
    for q in queries():
        assert run(q), f"{q['query_id']} returns no rows: {q['sql']}"


def test_table_id_lists_the_tables_the_sql_reads_in_order() -> None:
    for q in queries():
        assert set(q["table_id"]) == sqlglot_tables(q["sql"]), q["query_id"]
        assert q["table_id"] == referenced_tables(q["sql"]), q["query_id"]


def test_difficulty_is_spiders_hardness() -> None:
    """`difficulty` reads as Spider's levels: the official rules on the gold SQL (which
    tests/test_spider_exact_match.py checks against Spider's own script)."""
    from target_core.sql.structure import spider_hardness

    levels = Counter(q["difficulty"] for q in queries())
    assert all(levels[d] >= 20 for d in DIFFICULTIES), levels
    for q in queries():
        assert q["difficulty"] == spider_hardness(q["sql"]), q["query_id"]


def test_at_least_fifty_queries_join() -> None:
    joins = [q for q in queries()
             if sqlglot.parse_one(q["sql"], read="sqlite").find(exp.Join) is not None]
    assert len(joins) >= 50


# --- queries: failure modes -------------------------------------------------------------


def test_failure_mode_counts() -> None:
    modes = Counter(q["failure_mode"] for q in queries())
    assert all(modes[m] >= 15 for m in MODES), modes
    assert 0.3 <= modes[None] / len(queries()) <= 0.5, modes


def test_sibling_queries_hinge_on_domain_words() -> None:
    owners: dict[str, set[str]] = {}
    for record in corpus():
        owners.setdefault(record["table_id"], set()).add(record["database_id"])
    for q in by_mode("sibling"):
        repeated = [t for t in q["table_id"] if len(owners[t]) > 1]
        assert repeated, q["query_id"]
        assert set(q["siblings"]) == owners[repeated[0]] - {q["database_id"]}, q["query_id"]
        assert not words(q["query"]) & words(q["database_id"]), q["query_id"]


def test_paraphrase_queries_share_no_word_with_the_schema() -> None:
    for q in by_mode("paraphrase"):
        overlap = words(q["query"]) & schema_words(q)
        assert not overlap, (q["query_id"], overlap)


def test_deep_row_evidence_is_deep_and_decisive() -> None:
    for q in by_mode("deep-row"):
        assert q["evidence"], q["query_id"]
        result = {str(v) for row in run(q) for v in row}
        for ev in q["evidence"]:
            assert ev["table_id"] in q["table_id"], q["query_id"]
            table = tables_by_key()[(q["database_id"], ev["table_id"])]["table"]
            header, rows = table[0], table[1:]
            assert len(rows) > 40 and ev["row"] >= DEEP_ROW, q["query_id"]
            column = header.index(ev["column"])
            value = rows[ev["row"]][column]
            assert value not in [r[column] for r in rows[:DEEP_ROW]], q["query_id"]
            literal = str(value).replace("'", "''")
            assert literal in q["sql"] or str(value) in result, q["query_id"]


def test_title_only_word_is_in_the_table_name_only() -> None:
    for q in by_mode("title-only"):
        decisive = q["decisive"]
        assert re.search(rf"\b{re.escape(decisive)}\b", q["query"]), q["query_id"]
        assert words(decisive) & set().union(*map(words, q["table_id"])), q["query_id"]
        assert not words(decisive) & content_words(q), q["query_id"]


# --- generator --------------------------------------------------------------------------


def test_rebuild_is_identical_and_removes_stale_files(tmp_path: Path) -> None:
    stale = tmp_path / "demo-sql" / "stale.txt"
    stale.parent.mkdir()
    stale.write_text("left over", encoding="utf-8")
    load_script().build(tmp_path)
    fresh = tmp_path / "demo-sql"
    assert not stale.exists()
    assert list(files_under(fresh)) == list(files_under(DATA))
    for name in ("corpus.jsonl", "queries.jsonl", "dataset.json"):
        assert (fresh / name).read_bytes() == (DATA / name).read_bytes(), name
    for database_id in database_ids():
        old, new = connect(db_path(database_id)), connect(
            fresh / "databases" / database_id / f"{database_id}.sqlite")
        try:
            assert list(old.iterdump()) == list(new.iterdump()), database_id
        finally:
            old.close()
            new.close()


def test_folder_loader_reads_it_as_a_sql_dataset() -> None:
    folder = pytest.importorskip("target_core.datasets.folder")
    dataset = folder.load_folder(DATA)
    assert dataset.name == "demo-sql" and dataset.task == "sql"
    assert len(dataset.tables) == len(corpus()) and len(dataset.queries) == len(queries())
    assert sorted(dataset.databases) == database_ids()
    deep = next(q for q in dataset.queries if q.meta.get("failure_mode") == "deep-row")
    assert deep.meta["evidence"]
