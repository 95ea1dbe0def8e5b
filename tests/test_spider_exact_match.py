"""exact_set_match against Spider's official evaluator, on committed verdicts.

`tests/fixtures/spider_exact_match.jsonl` holds (gold, predicted) pairs over the bundled
demo-sql databases, each with the verdict, the gold query's hardness and whether the
parser accepted the queries, as test-suite-sql-eval's `evaluation.py` gave them
(`--etype match` rules; tests/fixtures/README says how they were made). Every verdict the
official script gives must be ours too.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from target_core.sql import exact_set_match
from target_core.sql.schema import SqlSchema, read_schema
from target_core.sql.spider_form import OutsideSpiderGrammar
from target_core.sql.spider_parse import spider_parse
from target_core.sql.structural_match import structural_match
from target_core.sql.structure import SqlParseError, spider_hardness

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "spider_exact_match.jsonl"
DATABASES = ROOT / "data" / "demo" / "demo-sql" / "databases"
PAIRS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def _schema(db_id: str) -> SqlSchema:
    return read_schema(DATABASES / db_id / f"{db_id}.sqlite")


def _readable(sql: str, schema: SqlSchema) -> bool:
    try:
        spider_parse(sql, schema)
    except SqlParseError:
        return False
    return True


def test_the_fixture_is_large_enough() -> None:
    parsed = [p for p in PAIRS if p["parsed"]]
    assert len(parsed) >= 200
    assert {p["official_match"] for p in parsed} == {0, 1}
    assert {p["hardness"] for p in parsed} == {"easy", "medium", "hard", "extra"}


def test_every_official_verdict_is_ours() -> None:
    """100% agreement where the official parser read both queries, overall and so at
    every hardness level."""
    wrong = []
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for pair in PAIRS:
        if not pair["parsed"]:
            continue
        ours = exact_set_match(pair["gold"], pair["pred"], schema=_schema(pair["db_id"]))
        for level in ("all", pair["hardness"]):
            totals[level][0] += 1
            totals[level][1] += pair["official_match"]
            totals[level][2] += int(ours)
        if ours != bool(pair["official_match"]):
            wrong.append((pair["source"], pair["official_match"], pair["gold"], pair["pred"]))
    assert not wrong, wrong
    assert {level: official for level, (_, official, ours) in totals.items()} == \
        {level: ours for level, (_, _, ours) in totals.items()}


def test_we_read_exactly_what_the_official_parser_reads() -> None:
    """Our reading refuses a query exactly when Spider's parser did (gold queries, and
    predictions the official script parsed against a readable gold)."""
    differ = []
    for pair in PAIRS:
        schema = _schema(pair["db_id"])
        if _readable(pair["gold"], schema) != pair["gold_parsed"]:
            differ.append(("gold", pair["gold"]))
        if pair["gold_parsed"] and _readable(pair["pred"], schema) != pair["parsed"]:
            differ.append(("pred", pair["pred"]))
    assert not differ, differ


def test_an_unreadable_prediction_is_not_a_match() -> None:
    """The official script scores a prediction it cannot parse against an empty query: 0."""
    unreadable = [p for p in PAIRS if p["gold_parsed"] and not p["parsed"]]
    assert len(unreadable) >= 10
    for pair in unreadable:
        assert pair["official_match"] == 0
        assert exact_set_match(pair["gold"], pair["pred"], schema=_schema(pair["db_id"])) is False


def test_an_unreadable_gold_falls_back_to_the_structural_comparison() -> None:
    """The official script has no verdict when it cannot parse the gold query; ours is
    then `structural_match`'s."""
    unreadable = [p for p in PAIRS if not p["gold_parsed"]]
    assert len(unreadable) >= 10
    verdicts = set()
    for pair in unreadable:
        assert pair["official_match"] is None and pair["hardness"] is None
        ours = exact_set_match(pair["gold"], pair["pred"], schema=_schema(pair["db_id"]))
        assert ours == structural_match(pair["gold"], pair["pred"])
        verdicts.add(ours)
    assert verdicts == {True, False}


def test_hardness_is_the_official_one() -> None:
    golds = {p["gold"]: p["hardness"] for p in PAIRS if p["gold_parsed"]}
    assert {gold: spider_hardness(gold) for gold in golds} == golds


# --- the rules, by hand ----------------------------------------------------------------------

SCHOOL = SqlSchema(
    {"departments": ("dept_id", "name"),
     "students": ("student_id", "name", "major_id", "gpa"),
     "courses": ("course_id", "title", "dept_id")},
    (("students.major_id", "departments.dept_id"), ("courses.dept_id", "departments.dept_id")))


@pytest.mark.parametrize(("gold", "pred", "expected"), [
    # DISTINCT is dropped at the top, and kept in a WHERE subquery
    ("SELECT DISTINCT name FROM students", "SELECT name FROM students", True),
    ("SELECT count(DISTINCT name) FROM students", "SELECT count(name) FROM students", True),
    ("SELECT name FROM students WHERE major_id IN (SELECT DISTINCT dept_id FROM courses)",
     "SELECT name FROM students WHERE major_id IN (SELECT dept_id FROM courses)", False),
    # columns resolve against the schema: unqualified = the first FROM table having it
    ("SELECT T1.name FROM students AS T1 JOIN departments AS T2 ON T1.major_id = T2.dept_id",
     "SELECT name FROM students JOIN departments ON major_id = dept_id", True),
    ("SELECT T2.name FROM students AS T1 JOIN departments AS T2 ON T1.major_id = T2.dept_id",
     "SELECT name FROM students JOIN departments ON major_id = dept_id", False),
    # the two ends of a foreign key are one column, when both tables are in FROM
    ("SELECT T1.major_id FROM students AS T1 JOIN departments AS T2 ON T1.major_id = T2.dept_id",
     "SELECT T2.dept_id FROM students AS T1 JOIN departments AS T2 ON T1.major_id = T2.dept_id",
     True),
    # values never count, in WHERE, HAVING, LIMIT or a WHERE subquery
    ("SELECT name FROM students WHERE gpa > 3 ORDER BY gpa DESC LIMIT 1",
     "SELECT name FROM students WHERE gpa > 2 ORDER BY gpa DESC LIMIT 5", True),
    # ...but do in a FROM subquery, which is compared as written
    ("SELECT count(*) FROM (SELECT name FROM students WHERE gpa > 3)",
     "SELECT count(*) FROM (SELECT name FROM students WHERE gpa > 2)", False),
    # one ORDER BY direction: the last written
    ("SELECT name FROM students ORDER BY gpa ASC, name DESC",
     "SELECT name FROM students ORDER BY gpa DESC, name DESC", True),
    # join conditions count only by their keywords; table order does not count
    ("SELECT T1.name FROM students AS T1 JOIN courses AS T2 ON T1.major_id = T2.dept_id",
     "SELECT T1.name FROM courses AS T2 JOIN students AS T1 ON T1.student_id = T2.course_id",
     True),
    # set operations are ordered (Spider nests them to the right)
    ("SELECT name FROM students UNION SELECT name FROM departments",
     "SELECT name FROM departments UNION SELECT name FROM students", False),
    # HAVING and GROUP BY lists are compared in order
    ("SELECT major_id FROM students GROUP BY major_id HAVING count(*) > 1 AND avg(gpa) > 3",
     "SELECT major_id FROM students GROUP BY major_id HAVING avg(gpa) > 3 AND count(*) > 1",
     False),
    # a prediction Spider cannot read is not a match; a gold it cannot read falls back
    ("SELECT name FROM students", "SELECT name AS n FROM students", False),
    ("SELECT name FROM students WHERE gpa IS NULL",
     "SELECT name FROM students WHERE gpa IS NULL", True),
])
def test_rules(gold: str, pred: str, expected: bool) -> None:
    assert exact_set_match(gold, pred, schema=SCHOOL) is expected


def test_without_a_schema_the_comparison_is_structural() -> None:
    gold = "SELECT T1.name FROM students AS T1 JOIN departments AS T2 ON T1.major_id = T2.dept_id"
    pred = "SELECT name FROM students JOIN departments ON major_id = dept_id"
    assert exact_set_match(gold, pred, schema=SCHOOL) is True
    assert exact_set_match(gold, pred) is False  # `name` cannot be resolved
    assert exact_set_match(gold, pred) is structural_match(gold, pred)


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT name FROM students AS s LEFT JOIN departments AS d ON s.major_id = d.dept_id",
     "joins"),
    ("SELECT name FROM students WHERE gpa <> 3", "<>"),
    ("SELECT name FROM students s", "without AS"),
    ("SELECT name FROM students WHERE NOT gpa IN (SELECT gpa FROM students)", "NOT before"),
    ("SELECT name FROM students WHERE major_id IN (1, 2)", "list of values"),
    ("SELECT name FROM students WHERE (gpa > 3 OR gpa < 1)", "parentheses"),
    ("SELECT name FROM students AS courses", "table's name"),
    ("SELECT nickname FROM students", "no column"),
    ("(SELECT name FROM students UNION SELECT name FROM departments)", "parentheses"),
    ("SELECT name FROM students ORDER BY 1", "where a column belongs"),
])
def test_what_spider_cannot_read(sql: str, reason: str) -> None:
    with pytest.raises(OutsideSpiderGrammar, match=reason):
        spider_parse(sql, SCHOOL)


def test_spider_reads_on_past_a_column_value() -> None:
    """`a = b OR c > 1` is read as `a = b`: Spider's value reader runs to the next AND."""
    gold = ("SELECT T1.name FROM students AS T1 JOIN courses AS T2 "
            "WHERE T1.major_id = T2.dept_id OR T1.gpa > 3 AND T2.title = 'x'")
    read = spider_parse(gold, SCHOOL)
    assert [u if isinstance(u, str) else u[1] for u in read.where] == ["=", "and", "="]
    pred = ("SELECT T1.name FROM students AS T1 JOIN courses AS T2 "
            "WHERE T1.major_id = T2.dept_id AND T2.title = 'y'")
    assert exact_set_match(gold, pred, schema=SCHOOL) is True


def test_foreign_key_groups_are_never_merged() -> None:
    """Spider's build_foreign_key_map: a key pair joins the first group holding either
    column; a column in two groups takes the later group's stand-in."""
    schema = SqlSchema({"a": ("x",), "b": ("y",), "c": ("z",), "d": ("w",)},
                       (("a.x", "b.y"), ("c.z", "d.w"), ("b.y", "c.z")))
    assert schema.key_map == {"a.x": "a.x", "b.y": "a.x", "c.z": "c.z", "d.w": "c.z"}


def test_read_schema(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            "CREATE TABLE Teams (Team_ID INTEGER PRIMARY KEY, Name TEXT);"
            "CREATE TABLE players (player_id INTEGER, team INTEGER REFERENCES Teams);")
    connection.close()
    schema = read_schema(path)
    assert schema.tables == {"teams": ("team_id", "name"), "players": ("player_id", "team")}
    assert schema.foreign_keys == (("players.team", "teams.team_id"),)
    assert read_schema(path) is schema  # cached while the file is unchanged
