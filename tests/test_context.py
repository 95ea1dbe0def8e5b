"""ContextBuilder: which tables enter a prompt (retrieved top-k, oracle gold, none), the
token budget that cuts rows in rank order, the generator's view of header-only runs, and
text-to-SQL schemas read read-only from real SQLite files.

Token counts use the offline estimate (`TokenCounter("test", False)`), so every number
below is computed by hand from `estimate_tokens`' rule: a word costs one token per
started 4 letters, a number one per started 3 digits, every punctuation mark one.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from target_core.errors import TargetError
from target_core.generators.context import ContextBuilder, fit_table, prompt_view, read_schema
from target_core.run_config import GenerationConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import TokenCounter
from target_core.types import Dataset, Query, Table

COUNTER = TokenCounter("test", False)
VIEW = prompt_view(TableView())

# "Title: Cities" = 2+1+2 = 5; "| city | pop |" = 3 pipes + 1 + 1 = 5;
# "| --- | --- |" = 3 pipes + 6 dashes = 9: header 19. Rows "| Oslo | 700 |" = 5 and
# "| Bergen | 290 |" = 6: 30 in all.
CITIES = Table("wiki", "cities", ("city", "pop"), (("Oslo", 700), ("Bergen", 290)),
               {"title": "Cities"})
# "Title: Winners" = 5; "| year | winner |" = 6; separator 9: header 20. Every row
# "| 1990 | Team0 |" = 3 pipes + "1990" 2 + "Team" 1 + "0" 1 = 7: 20 + 7n.
WINNERS = Table("wiki", "winners", ("year", "winner"),
                tuple((1990 + i, f"Team{i}") for i in range(20)), {"title": "Winners"})
WIDE = Table("wiki", "wide", tuple(f"column_number_{i}" for i in range(12)),
             (tuple(range(12)),), {"title": "Wide table"})
QUERY = Query("q1", "who won in 1995?", "Team5", gold=(("wiki", "winners"),),
              database_id="wiki")
DATASET = Dataset("handmade", "qa", (CITIES, WINNERS, WIDE), (QUERY,))


def _builder(dataset: Dataset = DATASET, view: TableView = VIEW, top_k: int = 10,
             **generation) -> ContextBuilder:
    return ContextBuilder(dataset, GenerationConfig(generator="heuristic", **generation),
                          view, COUNTER, top_k=top_k)


def _with_rows(table: Table, n: int) -> Table:
    return Table(table.database_id, table.table_id, table.header, table.rows[:n],
                 table.context)


def test_hand_computed_token_counts() -> None:
    assert COUNTER.count(table_text(CITIES, VIEW)) == 30
    assert COUNTER.count(table_text(_with_rows(CITIES, 0), VIEW)) == 19
    assert COUNTER.count(table_text(_with_rows(WINNERS, 0), VIEW)) == 20
    assert COUNTER.count(table_text(WINNERS, VIEW)) == 20 + 7 * 20


def test_retrieved_takes_the_top_context_k_in_rank_order() -> None:
    ranked = [("wiki", "wide"), ("wiki", "cities"), ("wiki", "winners")]
    context = _builder(context_k=2).build(QUERY, ranked)
    assert context.mode == "retrieved"
    assert context.keys == (("wiki", "wide"), ("wiki", "cities"))
    assert context.text == table_text(WIDE, VIEW) + "\n\n" + table_text(CITIES, VIEW)
    # without context_k, the run's top_k decides
    assert _builder(top_k=1).build(QUERY, ranked).keys == (("wiki", "wide"),)
    assert _builder(top_k=10).build(QUERY, ranked).keys == tuple(ranked)


def test_retrieved_keys_outside_the_corpus_are_skipped() -> None:
    context = _builder().build(QUERY, [("wiki", "gone"), ("wiki", "cities")])
    assert context.keys == (("wiki", "cities"),)
    assert context.cut["dropped"] == []


def test_oracle_takes_gold_whatever_was_retrieved() -> None:
    context = _builder(context="oracle").build(QUERY, [("wiki", "cities")])
    assert context.mode == "oracle"
    assert context.keys == (("wiki", "winners"),)
    assert context.text == table_text(WINNERS, VIEW)


def test_none_is_empty() -> None:
    context = _builder(context="none").build(QUERY, [("wiki", "cities"), ("wiki", "winners")])
    assert context.mode == "none"
    assert context.tables == () and context.schema == () and context.text == ""
    assert context.cut["tokens"] == 0 and context.cut["tables"] == []
    assert context.cut["dropped"] == []


def test_fit_table_keeps_the_largest_row_prefix_that_fits() -> None:
    shown, text, tokens = fit_table(WINNERS, VIEW, 70, COUNTER)
    assert shown.rows == WINNERS.rows[:7] and tokens == 20 + 7 * 7 == 69
    assert text == table_text(_with_rows(WINNERS, 7), VIEW)
    assert COUNTER.count(text) == tokens <= 70
    assert COUNTER.count(table_text(_with_rows(WINNERS, 8), VIEW)) == 76 > 70
    # the whole table when it fits; the bare header at exactly its cost; None below
    assert fit_table(CITIES, VIEW, 30, COUNTER) == (CITIES, table_text(CITIES, VIEW), 30)
    assert fit_table(CITIES, VIEW, 19, COUNTER)[0].rows == ()
    assert fit_table(CITIES, VIEW, 18, COUNTER) is None


def test_token_budget_cuts_rows_in_rank_order() -> None:
    ranked = [("wiki", "cities"), ("wiki", "winners"), ("wiki", "wide")]
    builder = _builder(token_budget=100)
    context = builder.build(QUERY, ranked)
    # cities costs 30, leaving 70: winners keeps 7 rows (69), leaving 1 for wide
    assert context.keys == (("wiki", "cities"), ("wiki", "winners"))
    assert context.tables[0] == CITIES
    assert context.tables[1].rows == WINNERS.rows[:7]
    assert context.cut["tables"] == [
        {"key": ["wiki", "cities"], "rows_kept": 2, "rows_total": 2},
        {"key": ["wiki", "winners"], "rows_kept": 7, "rows_total": 20}]
    assert context.cut["dropped"] == [["wiki", "wide"]]
    assert context.cut["budget"] == 100 and context.cut["tokens"] == 99 <= 100
    assert context.cut["exact"] is False
    assert COUNTER.count(table_text(_with_rows(WIDE, 0), VIEW)) > 1  # not even its header
    assert builder.build(QUERY, ranked) == context == _builder(token_budget=100).build(
        QUERY, ranked)


def test_a_header_only_retrieval_view_still_shows_rows_to_the_generator() -> None:
    header_only = TableView(title=False, section_title=False, rows=0, format="csv")
    assert "Oslo" not in table_text(CITIES, header_only)
    view = prompt_view(header_only)
    assert view == TableView(title=True, section_title=True, table_id=False, rows=None,
                             format="csv")
    context = _builder(view=header_only).build(QUERY, [("wiki", "cities")])
    assert context.text == "Title: Cities\ncity,pop\nOslo,700\nBergen,290"


# --- text-to-SQL ---------------------------------------------------------------------------

SHOP = [
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city VARCHAR(20))",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES "
    "customers(id), item TEXT, amount REAL)",
    "CREATE TABLE notes (body, customer INTEGER REFERENCES customers)",
    "INSERT INTO customers VALUES (1, 'Ada', 'Oslo'), (2, 'Bo', 'Oslo'), (3, 'Cy', NULL)",
    "INSERT INTO orders VALUES (1, 1, 'pen', 2.5), (2, 1, 'ink', 4.0), (3, 2, 'pen', 2.5)",
    "INSERT INTO notes VALUES ('late', 1), (7, 2)",
]
SCHOOL = [
    "CREATE TABLE students (id INTEGER PRIMARY KEY, name TEXT)",
    "CREATE TABLE courses (code TEXT PRIMARY KEY, title TEXT, student_id INTEGER, "
    "FOREIGN KEY (student_id) REFERENCES students (id))",
    "INSERT INTO students VALUES (1, 'Eve'), (2, 'Fay')",
    "INSERT INTO courses VALUES ('M1', 'Algebra', 1), ('P1', 'Optics', 2)",
]


def _database(path: Path, statements: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    with connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def sql_dataset(tmp_path: Path) -> Dataset:
    databases = {"shop": _database(tmp_path / "shop" / "shop.sqlite", SHOP),
                 "school": _database(tmp_path / "school" / "school.sqlite", SCHOOL)}
    tables = tuple(Table(db, name, ("x",), ()) for db, name in (
        ("shop", "customers"), ("shop", "orders"), ("shop", "notes"),
        ("school", "students"), ("school", "courses")))
    query = Query("s1", "how many orders?", "SELECT COUNT(*) FROM orders",
                  gold=(("shop", "orders"),), database_id="shop",
                  sql="SELECT COUNT(*) FROM orders")
    return Dataset("handmade-sql", "sql", tables, (query,), databases=databases)


RANKED = [("school", "courses"), ("shop", "orders"), ("school", "students")]


def test_sql_context_gives_every_table_of_each_retrieved_database(sql_dataset) -> None:
    before = {d: _sha256(p) for d, p in sql_dataset.databases.items()}
    files_before = sorted(p.name for p in Path(sql_dataset.databases["shop"]).parent.iterdir())
    context = _builder(sql_dataset).build(sql_dataset.queries[0], RANKED)
    assert context.databases == ("school", "shop")  # in rank order of their best table
    assert context.keys == (("school", "students"), ("school", "courses"),
                            ("shop", "customers"), ("shop", "orders"), ("shop", "notes"))
    assert context.tables == ()
    assert context.text.index("Database Name: school") < context.text.index(
        "Database Name: shop")
    for statement in SHOP[:3] + SCHOOL[:2]:
        assert statement in context.text
    assert context.cut["tables"] == [{"key": list(k)} for k in context.keys]
    assert context.cut["dropped"] == [] and 0 < context.cut["tokens"] <= 8000
    assert {d: _sha256(p) for d, p in sql_dataset.databases.items()} == before
    assert sorted(p.name for p in Path(sql_dataset.databases["shop"]).parent.iterdir()
                  ) == files_before  # no journal or WAL file appeared


def test_sql_schema_tables_gives_only_the_retrieved_tables(sql_dataset) -> None:
    context = _builder(sql_dataset, sql_schema="tables").build(sql_dataset.queries[0],
                                                                RANKED)
    assert context.databases == ("school", "shop")
    # databases in rank order; within one database, its own table order
    assert context.keys == (("school", "students"), ("school", "courses"),
                            ("shop", "orders"))
    assert "CREATE TABLE customers" not in context.text
    assert "Database Name: shop" in context.text and SHOP[1] in context.text
    # context_k cuts the ranking before databases are chosen
    only_first = _builder(sql_dataset, context_k=1).build(sql_dataset.queries[0], RANKED)
    assert only_first.databases == ("school",)
    assert "Database Name: shop" not in only_first.text


def test_sql_budget_drops_whole_tables(sql_dataset) -> None:
    context = _builder(sql_dataset, token_budget=100).build(sql_dataset.queries[0], RANKED)
    kept, dropped = list(context.keys), [tuple(k) for k in context.cut["dropped"]]
    assert dropped and not set(kept) & set(dropped)
    assert set(kept) | set(dropped) == {(t.database_id, t.table_id)
                                        for t in sql_dataset.tables}
    assert context.cut["tokens"] <= 100
    assert COUNTER.count(context.text) <= 100


def test_oracle_sql_context_is_the_gold_database(sql_dataset) -> None:
    context = _builder(sql_dataset, context="oracle").build(sql_dataset.queries[0], RANKED)
    assert context.databases == ("shop",)
    assert [k[0] for k in context.keys] == ["shop"] * 3


def test_read_schema_columns_values_and_keys(sql_dataset) -> None:
    path = sql_dataset.databases["shop"]
    before = _sha256(path)
    customers, orders, notes = read_schema("shop", path)
    assert customers.create_sql == SHOP[0] and customers.database_id == "shop"
    assert [(c.name, c.type) for c in customers.columns] == [
        ("id", "INTEGER"), ("name", "TEXT"), ("city", "VARCHAR(20)")]
    values = {c.name: c.values for c in customers.columns}
    assert values["id"] == ()  # numbers are not value-linked
    assert sorted(values["name"]) == ["Ada", "Bo", "Cy"]
    assert sorted(values["city"]) == ["Oslo"]  # distinct, NULL left out
    assert customers.primary_key == ("id",) and customers.foreign_keys == ()
    assert orders.foreign_keys == (("customer_id", "customers", "id"),)
    assert sorted({c.name: c.values for c in orders.columns}["item"]) == ["ink", "pen"]
    # an untyped column is read too; a reference without a column names none
    assert notes.columns[0].type == "" and sorted(notes.columns[0].values, key=str) == [
        7, "late"]
    assert notes.foreign_keys == (("customer", "customers", ""),)
    (students, courses) = read_schema("school", sql_dataset.databases["school"])
    assert courses.primary_key == ("code",)
    assert courses.foreign_keys == (("student_id", "students", "id"),)
    assert _sha256(path) == before


def test_read_schema_of_a_file_that_is_not_sqlite_is_a_target_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not a database " * 100)
    with pytest.raises(TargetError, match="bogus.sqlite"):
        read_schema("bogus", bogus)
