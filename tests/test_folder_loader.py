"""The folder format: a hand-written dataset loads; every kind of bad input names file,
line and field, and nothing is half-loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_sqlite, query_record, table_record, write_jsonl
from target_core.datasets.folder import iter_jsonl, load_folder
from target_core.errors import DatasetError


def test_handmade_dataset_loads(handmade_dir: Path) -> None:
    dataset = load_folder(handmade_dir)
    assert dataset.name == "handmade-qa"
    assert dataset.task == "qa"
    assert [t.table_id for t in dataset.tables][:2] == ["Lakes_of_Norland_0",
                                                        "2019_Norland_Marathon_0"]
    lakes = dataset.table(("wiki", "Lakes_of_Norland_0"))
    assert lakes.header == ("Lake", "Area (km2)", "Max depth (m)")
    assert lakes.rows[2] == ("Tamm", 12.25, None)
    assert lakes.title == "Lakes of Norland" and lakes.section_title == "Largest lakes"
    assert dataset.table(("wiki", "Empty_Results_0")).n_rows == 0
    assert [q.query_id for q in dataset.queries] == ["q1", "q2", "q3"]  # blank line skipped
    q3 = dataset.query("q3")
    assert q3.gold == (("wiki", "2019_Norland_Marathon_0"), ("wiki", "2020_Norland_Marathon_0"))
    q2 = dataset.query("q2")
    assert q2.difficulty == "easy" and q2.meta == {"failure_mode": "sibling"}
    assert dataset.databases == {}


def test_fingerprint_is_stable_and_content_sensitive(write_dataset) -> None:
    first = load_folder(write_dataset(name="a"))
    again = load_folder(write_dataset(name="b"))
    assert first.fingerprint == again.fingerprint
    assert first.corpus_fingerprint == again.corpus_fingerprint
    changed = load_folder(write_dataset(corpus=[table_record("t1", [["a", "b"], [1, 3]]),
                                                table_record("t2")]))
    assert changed.corpus_fingerprint != first.corpus_fingerprint


def test_task_is_inferred(write_dataset) -> None:
    folder = write_dataset(queries=[query_record("q1", "t1", label=True),
                                    query_record("q2", "t2", label=False)])
    assert load_folder(folder).task == "fact"
    assert load_folder(write_dataset()).task == "qa"


def test_integer_ids_become_strings(write_dataset) -> None:
    folder = write_dataset(corpus=[{"database_id": 0, "table_id": 7, "table": [["x"], [1]]}],
                           queries=[{"query_id": 1, "query": "x?", "answer": 1, "table_id": 7,
                                     "database_id": 0}])
    dataset = load_folder(folder)
    assert dataset.tables[0].key == ("0", "7")
    assert dataset.queries[0].gold == (("0", "7"),)


def _error(folder: Path) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        load_folder(folder)
    return info.value


def _assert_names(error: DatasetError, file: str, line: int | None, field: str | None) -> None:
    assert error.path is not None and error.path.endswith(file), error
    assert error.line == line, error
    assert error.field == field, error
    message = str(error)
    assert file in message
    if line is not None:
        assert f"line {line}" in message
    if field is not None:
        assert f"'{field}'" in message


def test_malformed_json_line(write_dataset) -> None:
    folder = write_dataset()
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"database_id": "wiki", "table_id": \n')
    error = _error(folder)
    _assert_names(error, "corpus.jsonl", 3, None)
    assert "malformed JSON" in str(error)


def test_missing_required_field(write_dataset) -> None:
    record = table_record("t3")
    del record["table_id"]
    error = _error(write_dataset(corpus=[table_record("t1"), table_record("t2"), record]))
    _assert_names(error, "corpus.jsonl", 3, "table_id")
    assert "missing" in str(error)


@pytest.mark.parametrize("row", [[1, 2, 3], [1]])
def test_row_length_differs_from_header(write_dataset, row: list[int]) -> None:
    bad = table_record("t2", [["a", "b"], [1, 2], row])
    error = _error(write_dataset(corpus=[table_record("t1"), bad]))
    _assert_names(error, "corpus.jsonl", 2, "table[2]")
    assert f"row 2 has {len(row)} cells but the header has 2" in str(error)


def test_duplicate_table_key(write_dataset) -> None:
    error = _error(write_dataset(corpus=[table_record("t1"), table_record("t2"),
                                         table_record("t1")]))
    _assert_names(error, "corpus.jsonl", 3, "table_id")
    assert "first defined at line 1" in str(error)


def test_same_table_id_in_two_databases_is_fine(write_dataset) -> None:
    folder = write_dataset(corpus=[table_record("t1", database_id="a"),
                                   table_record("t1", database_id="b")],
                           queries=[query_record("q1", "t1", database_id="b")])
    assert len(load_folder(folder).tables) == 2


def test_gold_table_not_in_corpus(write_dataset) -> None:
    error = _error(write_dataset(queries=[query_record("q1", "t1"),
                                          query_record("q2", "nope")]))
    _assert_names(error, "queries.jsonl", 2, "table_id")
    assert "not in the corpus" in str(error)


def test_empty_corpus(write_dataset) -> None:
    error = _error(write_dataset(corpus=[]))
    _assert_names(error, "corpus.jsonl", None, None)
    assert "empty" in str(error)


def test_no_queries(write_dataset) -> None:
    error = _error(write_dataset(queries=[]))
    _assert_names(error, "queries.jsonl", None, None)


def test_not_utf8(write_dataset) -> None:
    folder = write_dataset()
    with (folder / "queries.jsonl").open("ab") as handle:
        handle.write(b'{"query_id": "q2", "query": "caf\xe9?", "answer": "x", '
                     b'"table_id": "t1", "database_id": "wiki"}\n')
    error = _error(folder)
    _assert_names(error, "queries.jsonl", 2, None)
    assert "not valid UTF-8" in str(error) and "0xe9" in str(error)


def test_utf8_bom_is_accepted(write_dataset) -> None:
    folder = write_dataset()
    path = folder / "corpus.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(load_folder(folder).tables) == 2


def test_missing_database_file(write_dataset) -> None:
    folder = write_dataset(corpus=[table_record("t1", database_id="shop")],
                           queries=[query_record("q1", ["t1"], database_id="shop",
                                                 sql="SELECT a FROM t1")],
                           meta={"name": "broken-sql", "task": "sql"})
    make_sqlite(folder / "databases" / "other" / "other.sqlite", ["CREATE TABLE x (a)"])
    error = _error(folder)
    _assert_names(error, "queries.jsonl", 1, "database_id")
    assert "databases/shop/shop.sqlite does not exist" in str(error)


def test_sqlite_file_that_is_not_a_database(write_dataset) -> None:
    folder = write_dataset(corpus=[table_record("t1", database_id="shop")],
                           queries=[query_record("q1", ["t1"], database_id="shop",
                                                 sql="SELECT a FROM t1")],
                           meta={"name": "fake-db", "task": "sql"})
    fake = folder / "databases" / "shop" / "shop.sqlite"
    fake.parent.mkdir(parents=True)
    fake.write_text("this is not sqlite")
    error = _error(folder)
    assert "is not a SQLite database" in str(error)


def test_sql_dataset_loads(write_dataset) -> None:
    folder = write_dataset(corpus=[table_record("t1", [["a", "b"], [1, 2]], database_id="shop")],
                           queries=[query_record("q1", ["t1"], database_id="shop",
                                                 sql="SELECT a FROM t1", difficulty="easy")])
    make_sqlite(folder / "databases" / "shop" / "shop.sqlite",
                ["CREATE TABLE t1 (a INTEGER PRIMARY KEY, b)", "INSERT INTO t1 VALUES (1, 2)"])
    dataset = load_folder(folder)
    assert dataset.task == "sql"
    assert dataset.databases["shop"].name == "shop.sqlite"


@pytest.mark.parametrize(("record", "field", "reason"), [
    (table_record(""), "table_id", "must not be empty"),
    ({**table_record("t3"), "table": "a,b\n1,2"}, "table", "list of rows"),
    ({**table_record("t3"), "table": []}, "table", "no header"),
    ({**table_record("t3"), "table": [["a"], [{"nested": 1}]]}, "table[1]", "cells must be"),
    ({**table_record("t3"), "context": "Title"}, "context", "JSON object"),
    ({**table_record("t3"), "database_id": ["x"]}, "database_id", "must be a string"),
    (["not", "an", "object"], None, "JSON object"),
])
def test_wrong_types_in_corpus(write_dataset, record, field, reason) -> None:
    error = _error(write_dataset(corpus=[table_record("t1"), table_record("t2"), record]))
    _assert_names(error, "corpus.jsonl", 3, field)
    assert reason in str(error)


@pytest.mark.parametrize(("extra", "field"), [
    ({"query": "   "}, "query"),
    ({"table_id": []}, "table_id"),
    ({"label": "yes"}, "label"),
    ({"sql": ""}, "sql"),
])
def test_wrong_types_in_queries(write_dataset, extra, field) -> None:
    error = _error(write_dataset(queries=[query_record("q1", "t1"),
                                          {**query_record("q2", "t1"), **extra}]))
    _assert_names(error, "queries.jsonl", 2, field)


def test_duplicate_query_id(write_dataset) -> None:
    error = _error(write_dataset(queries=[query_record("q1", "t1"), query_record("q1", "t2")]))
    _assert_names(error, "queries.jsonl", 2, "query_id")


def test_malformed_dataset_json(write_dataset) -> None:
    folder = write_dataset()
    (folder / "dataset.json").write_text('{"name": "x",\n "task": }')
    error = _error(folder)
    _assert_names(error, "dataset.json", 2, None)


def test_unknown_task_in_dataset_json(write_dataset) -> None:
    error = _error(write_dataset(meta={"name": "x", "task": "summarize"}))
    assert "unknown task 'summarize'" in str(error)


def test_error_then_fix_loads_cleanly(write_dataset) -> None:
    """Nothing half-loaded: after a failure the same folder, once fixed, loads whole."""
    folder = write_dataset(queries=[query_record("q1", "missing")])
    _error(folder)
    write_jsonl(folder / "queries.jsonl", [query_record("q1", "t1")])
    dataset = load_folder(folder)
    assert len(dataset.queries) == 1 and len(dataset.tables) == 2


def test_iter_jsonl_reports_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert [(w.line, r) for w, r in iter_jsonl(path)] == [(1, {"a": 1}), (3, {"a": 2})]
