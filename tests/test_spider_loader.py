"""Spider's own layout: tables.json + dev.json + database/<db>/<db>.sqlite, built in tmp_path."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from target_core.datasets.spider import is_spider_dir, load_spider
from target_core.errors import DatasetError, UnknownNameError

DATABASES: dict[str, dict[str, Any]] = {
    "concert_singer": {
        "ddl": [
            "CREATE TABLE stadium (Stadium_ID INTEGER PRIMARY KEY, Name TEXT, Capacity INTEGER)",
            "CREATE TABLE singer (Singer_ID INTEGER PRIMARY KEY, Name TEXT, Country TEXT, "
            "Age INTEGER)",
            "CREATE TABLE concert (concert_ID INTEGER PRIMARY KEY, concert_Name TEXT, "
            "Stadium_ID INTEGER REFERENCES stadium(Stadium_ID), Year INTEGER)",
            "CREATE TABLE singer_in_concert (concert_ID INTEGER REFERENCES concert(concert_ID), "
            "Singer_ID INTEGER REFERENCES singer(Singer_ID), PRIMARY KEY (concert_ID, Singer_ID))",
        ],
        "rows": {
            "stadium": [(1, "Stark's Park", 10104), (2, "Glebe Park", 4125), (3, "Balmoor", 4000)],
            "singer": [(1, "Joe Sharp", "Netherlands", 52), (2, "Timbaland", "United States", 32),
                       (3, "Tribal King", "France", 25)],
            "concert": [(1, "Auditions", 1, 2014), (2, "Super bootcamp", 2, 2015)],
            "singer_in_concert": [(1, 1), (1, 2), (2, 3)],
        },
        "schema": {
            "table_names_original": ["stadium", "singer", "concert", "singer_in_concert"],
            "column_names_original": [
                [-1, "*"], [0, "Stadium_ID"], [0, "Name"], [0, "Capacity"],
                [1, "Singer_ID"], [1, "Name"], [1, "Country"], [1, "Age"],
                [2, "concert_ID"], [2, "concert_Name"], [2, "Stadium_ID"], [2, "Year"],
                [3, "concert_ID"], [3, "Singer_ID"]],
            "column_types": ["text", "number", "text", "number", "number", "text", "text",
                             "number", "number", "text", "number", "number", "number",
                             "number"],
            "primary_keys": [1, 4, 8, [12, 13]],
            "foreign_keys": [[10, 1], [12, 8], [13, 4]],
        },
    },
    "pets_1": {
        "ddl": [
            "CREATE TABLE Student (StuID INTEGER PRIMARY KEY, LName TEXT, Age INTEGER)",
            "CREATE TABLE Pets (PetID INTEGER PRIMARY KEY, PetType TEXT, pet_age INTEGER)",
            "CREATE TABLE Has_Pet (StuID INTEGER REFERENCES Student(StuID), "
            "PetID INTEGER REFERENCES Pets(PetID))",
        ],
        "rows": {
            "Student": [(1001, "Smith", 18), (1002, "Kim", 21), (1003, "Jones", None)],
            "Pets": [(2001, "cat", 3), (2002, "dog", 2)],
            "Has_Pet": [(1001, 2001), (1002, 2002)],
        },
        "schema": {
            "table_names_original": ["Student", "Has_Pet", "Pets"],
            "column_names_original": [
                [-1, "*"], [0, "StuID"], [0, "LName"], [0, "Age"], [1, "StuID"], [1, "PetID"],
                [2, "PetID"], [2, "PetType"], [2, "pet_age"]],
            "column_types": ["text", "number", "text", "number", "number", "number", "number",
                             "text", "number"],
            "primary_keys": [1, 6],
            "foreign_keys": [[4, 1], [5, 6]],
        },
    },
}

# (question, gold SQL, gold tables, hardness)
DEV = [
    ("concert_singer", "How many singers are there?", "SELECT count(*) FROM singer",
     ["singer"], "easy"),
    ("concert_singer", "Show the stadium name and the number of concerts in each stadium.",
     "SELECT T2.name ,  count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id  =  "
     "T2.stadium_id GROUP BY T1.stadium_id", ["concert", "stadium"], "medium"),
    ("concert_singer", "Show names for all stadiums except for stadiums having a concert.",
     "SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)",
     ["stadium", "concert"], "hard"),
    ("concert_singer", "Countries with singers above 40 and singers below 30?",
     "SELECT country FROM singer WHERE age  >  40 INTERSECT SELECT country FROM singer "
     "WHERE age  <  30", ["singer"], "hard"),
    ("pets_1", "How many students are older than 20?",
     "SELECT count(*) FROM student WHERE age  >  20", ["Student"], "easy"),
    ("pets_1", "Last names of students who have a cat?",
     "SELECT T1.Lname FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid  =  T2.stuid JOIN pets "
     "AS T3 ON T3.petid  =  T2.petid WHERE T3.pettype  =  'cat'",
     ["Student", "Has_Pet", "Pets"], "hard"),
    ("concert_singer", "Stadium with the most concerts after 2013, and its capacity?",
     "SELECT T2.name ,  T2.capacity FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id  =  "
     "T2.stadium_id WHERE T1.year  >=  2014 GROUP BY T2.stadium_id ORDER BY count(*) DESC "
     "LIMIT 1", ["concert", "stadium"], "extra"),
]


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def make_spider(root: Path, *, dev: list[tuple] | None = None) -> Path:
    """A small Spider-layout folder; `orphan_db` is in tables.json without a SQLite file."""
    root.mkdir(parents=True, exist_ok=True)
    schemas = []
    for db_id, spec in DATABASES.items():
        db_dir = root / "database" / db_id
        db_dir.mkdir(parents=True)
        connection = sqlite3.connect(db_dir / f"{db_id}.sqlite")
        for statement in spec["ddl"]:
            connection.execute(statement)
        for table, rows in spec["rows"].items():
            marks = ",".join("?" * len(rows[0]))
            connection.executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)
        connection.commit()
        connection.close()
        schemas.append({"db_id": db_id, **spec["schema"]})
    schemas.append({"db_id": "orphan_db", "table_names_original": ["ghost"],
                    "column_names_original": [[-1, "*"], [0, "id"]], "column_types": ["text"],
                    "primary_keys": [1], "foreign_keys": []})
    _write_json(root / "tables.json", schemas)
    rows = DEV if dev is None else dev
    _write_json(root / "dev.json", [
        {"db_id": db, "question": q, "query": sql, "query_toks": sql.split(),
         "sql": {"parsed": "by Spider, ignored"}} for db, q, sql, *_ in rows])
    _write_json(root / "train_spider.json", [
        {"db_id": "pets_1", "question": "List all pet types.", "query": "SELECT PetType FROM Pets"},
        {"db_id": "concert_singer", "question": "List singer names.",
         "query": "SELECT name FROM singer"}])
    return root


@pytest.fixture
def spider_dir(tmp_path: Path) -> Path:
    return make_spider(tmp_path / "spider")


def test_load_spider_builds_the_corpus_from_sqlite(spider_dir: Path) -> None:
    dataset = load_spider(spider_dir)
    assert dataset.name == "spider" and dataset.task == "sql"
    assert set(dataset.databases) == {"concert_singer", "pets_1"}  # orphan_db has no file
    assert dataset.databases["pets_1"] == spider_dir / "database/pets_1/pets_1.sqlite"
    assert [t.key for t in dataset.tables] == [
        ("concert_singer", "stadium"), ("concert_singer", "singer"),
        ("concert_singer", "concert"), ("concert_singer", "singer_in_concert"),
        ("pets_1", "Student"), ("pets_1", "Has_Pet"), ("pets_1", "Pets")]

    stadium = dataset.table(("concert_singer", "stadium"))
    assert stadium.header == ("Stadium_ID", "Name", "Capacity")
    assert stadium.rows == ((1, "Stark's Park", 10104), (2, "Glebe Park", 4125),
                            (3, "Balmoor", 4000))
    assert stadium.title == "stadium"
    assert dataset.table(("pets_1", "Student")).rows[2] == (1003, "Jones", None)

    concert = dataset.table(("concert_singer", "concert"))
    assert dict(concert.context) == {
        "title": "concert", "database": "concert_singer", "primary_key": ["concert_ID"],
        "foreign_keys": [{"column": "Stadium_ID", "ref_table": "stadium",
                          "ref_column": "Stadium_ID"}]}
    link = dataset.table(("concert_singer", "singer_in_concert"))
    assert link.context["primary_key"] == ["concert_ID", "Singer_ID"]  # composite key
    assert len(link.context["foreign_keys"]) == 2


def test_load_spider_queries_carry_gold_sql_tables_and_hardness(spider_dir: Path) -> None:
    dataset = load_spider(spider_dir)
    assert [q.query_id for q in dataset.queries] == [f"dev-{i:05d}" for i in range(len(DEV))]
    for query, (db_id, question, sql, gold, hardness) in zip(dataset.queries, DEV, strict=True):
        assert query.query == question
        assert query.sql == query.answer == sql
        assert query.database_id == db_id
        assert query.gold == tuple((db_id, t) for t in gold)
        assert query.difficulty == hardness
        assert query.label is None and dict(query.meta) == {}


def test_load_spider_opens_databases_read_only(spider_dir: Path) -> None:
    files = sorted((spider_dir / "database").rglob("*"))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}
    load_spider(spider_dir)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted((spider_dir / "database").rglob("*")) if p.is_file()}
    assert after == before  # no journal, no WAL, no change


def test_split_selects_the_question_file(spider_dir: Path) -> None:
    dataset = load_spider(spider_dir, split="train")
    assert dataset.name == "spider-train"
    assert [q.query_id for q in dataset.queries] == ["train-00000", "train-00001"]
    assert dataset.queries[0].gold == (("pets_1", "Pets"),)
    assert load_spider(spider_dir, split="train", name="mine").name == "mine"
    with pytest.raises(UnknownNameError, match="did you mean 'train'"):
        load_spider(spider_dir, split="trian")


def test_corpus_can_be_limited_to_the_split_databases(spider_dir: Path) -> None:
    dataset = load_spider(spider_dir, split="train", corpus="split")
    assert len(dataset.tables) == 7  # train uses both databases
    rows = [("pets_1", "How many pets?", "SELECT count(*) FROM Pets", ["Pets"], "easy")]
    root = make_spider(spider_dir.parent / "small", dev=rows)
    dataset = load_spider(root, corpus="split")
    assert set(dataset.databases) == {"pets_1"}
    assert {t.database_id for t in dataset.tables} == {"pets_1"}


def test_train_is_the_default_without_dev(spider_dir: Path) -> None:
    (spider_dir / "dev.json").unlink()
    assert load_spider(spider_dir).queries[0].query_id == "train-00000"


def test_is_spider_dir(spider_dir: Path, tmp_path: Path) -> None:
    assert is_spider_dir(spider_dir)
    assert not is_spider_dir(tmp_path / "nowhere")
    assert not is_spider_dir(spider_dir / "tables.json")
    folder = tmp_path / "folder_format"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("")
    assert not is_spider_dir(folder)


# --- errors ---------------------------------------------------------------------------


def test_missing_tables_json(spider_dir: Path) -> None:
    (spider_dir / "tables.json").unlink()
    with pytest.raises(DatasetError, match="is missing") as info:
        load_spider(spider_dir)
    assert info.value.path == str(spider_dir / "tables.json")


def test_missing_question_file(spider_dir: Path) -> None:
    (spider_dir / "dev.json").unlink()
    (spider_dir / "train_spider.json").unlink()
    with pytest.raises(DatasetError, match="question file is missing") as info:
        load_spider(spider_dir)
    assert info.value.path == str(spider_dir / "dev.json")
    with pytest.raises(DatasetError) as info:
        load_spider(spider_dir, split="train")
    assert info.value.path == str(spider_dir / "train_spider.json")


def test_question_on_a_database_without_sqlite_file(tmp_path: Path) -> None:
    rows = [*DEV[:2], ("orphan_db", "Anything?", "SELECT id FROM ghost", ["ghost"], "easy")]
    root = make_spider(tmp_path / "spider", dev=rows)
    with pytest.raises(DatasetError, match="orphan_db.sqlite does not exist") as info:
        load_spider(root)
    assert (info.value.path, info.value.line, info.value.field) == (
        str(root / "dev.json"), 3, "db_id")


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT name FROM WHERE age > 3", "cannot parse SQL"),
    ("SELECT name FROM singers", "'singers' is not in the database"),
])
def test_bad_gold_sql_names_the_record(tmp_path: Path, sql: str, message: str) -> None:
    rows = [*DEV[:3], ("concert_singer", "Broken?", sql, [], "easy"), *DEV[3:]]
    root = make_spider(tmp_path / "spider", dev=rows)
    with pytest.raises(DatasetError, match=message) as info:
        load_spider(root)
    assert (info.value.path, info.value.line, info.value.field) == (
        str(root / "dev.json"), 4, "query")


def test_sqlite_file_that_is_not_a_database(spider_dir: Path) -> None:
    db_path = spider_dir / "database/pets_1/pets_1.sqlite"
    db_path.write_bytes(b"this is not a database, just some text " * 50)
    with pytest.raises(DatasetError, match="is not a SQLite database") as info:
        load_spider(spider_dir)
    assert info.value.path == str(db_path)


def test_table_missing_from_sqlite(spider_dir: Path) -> None:
    schemas = json.loads((spider_dir / "tables.json").read_text())
    schemas[1]["table_names_original"].append("Vets")
    (spider_dir / "tables.json").write_text(json.dumps(schemas))
    with pytest.raises(DatasetError, match="cannot read table 'Vets'") as info:
        load_spider(spider_dir)
    assert info.value.path == str(spider_dir / "database/pets_1/pets_1.sqlite")


def test_malformed_schema_entry(spider_dir: Path) -> None:
    schemas = json.loads((spider_dir / "tables.json").read_text())
    del schemas[1]["column_names_original"]
    (spider_dir / "tables.json").write_text(json.dumps(schemas))
    with pytest.raises(DatasetError) as info:
        load_spider(spider_dir)
    assert (info.value.line, info.value.field) == (2, "column_names_original")


def test_malformed_question_record(tmp_path: Path) -> None:
    root = make_spider(tmp_path / "spider")
    questions = json.loads((root / "dev.json").read_text())
    questions[5]["question"] = ""
    (root / "dev.json").write_text(json.dumps(questions))
    with pytest.raises(DatasetError) as info:
        load_spider(root)
    assert (info.value.line, info.value.field) == (6, "question")


def test_invalid_json_reports_its_line(spider_dir: Path) -> None:
    (spider_dir / "dev.json").write_text('[\n {"db_id": "pets_1",\n oops}\n]')
    with pytest.raises(DatasetError, match="invalid JSON") as info:
        load_spider(spider_dir)
    assert info.value.line == 3


@pytest.mark.parametrize("file", ["tables.json", "dev.json",
                                  "database/pets_1/pets_1.sqlite"])
def test_a_file_linked_from_outside_the_folder_is_refused(spider_dir: Path, tmp_path: Path,
                                                          file: str) -> None:
    # as for the folder format: a shared dataset must not make the tool read other files
    target = spider_dir / file
    outside = tmp_path / "elsewhere" / target.name
    outside.parent.mkdir()
    target.rename(outside)
    target.symlink_to(outside)
    with pytest.raises(DatasetError, match="outside the dataset folder") as error:
        load_spider(spider_dir)
    assert target.name in str(error.value)


def test_links_inside_the_folder_are_fine(spider_dir: Path) -> None:
    tables = spider_dir / "tables.json"
    tables.rename(spider_dir / "schemas.json")
    tables.symlink_to("schemas.json")
    assert len(load_spider(spider_dir).queries) > 0
