"""target_core.sql: read-only execution, result comparison, classes, exact set match.

Every database is a real SQLite file in tmp_path; expected values are worked out by
hand from the fixture rows below.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import make_sqlite
from target_core.errors import TargetError
from target_core.sql import (
    DIFF_ROW_CAP,
    ERROR_CLASSES,
    RETRIEVAL_ERROR_CLASSES,
    Comparison,
    SqlExecutionError,
    SqlResult,
    classify,
    compare_results,
    connect_readonly,
    database_class,
    error_blame,
    exact_set_match,
    execute,
)

TEAMS = [(1, "Lions", "Oslo"), (2, "Tigers", "Bergen"), (3, "Bears", "Oslo")]
PLAYERS = [(10, "Ann", 1, 3.0), (11, "Bo", 1, 1.5), (12, "Cy", 2, 0.0),
           (13, "Di", 3, 2.0), (14, "Ed", 3, 2.0), (15, "Fay", None, 4.0)]
RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


def build_db(path: Path) -> Path:
    """teams(team_id PK, name, city) and players(player_id PK, name, team_id FK, goals)."""
    statements = [
        "CREATE TABLE teams (team_id INTEGER PRIMARY KEY, name TEXT, city TEXT)",
        "CREATE TABLE players (player_id INTEGER PRIMARY KEY, name TEXT,"
        " team_id INTEGER REFERENCES teams(team_id), goals REAL)",
    ]
    statements += [f"INSERT INTO teams VALUES ({i}, '{n}', '{c}')" for i, n, c in TEAMS]
    statements += [f"INSERT INTO players VALUES ({i}, '{n}', {t if t else 'NULL'}, {g})"
                   for i, n, t, g in PLAYERS]
    return make_sqlite(path, statements)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_db(tmp_path / "league.sqlite")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def result(rows: list[tuple], columns: tuple[str, ...] = ("a",), sql: str = "SELECT a FROM t",
           error_class: str | None = None) -> SqlResult:
    """A hand-made SqlResult, for comparisons that need no database."""
    return SqlResult(sql=sql, columns=columns, rows=tuple(rows), truncated=False,
                     error=error_class and f"{error_class} happened", error_class=error_class,
                     ms=1.0)


# --- execute ---------------------------------------------------------------------------


def test_execute_returns_columns_and_rows(db: Path) -> None:
    got = execute(db, "SELECT name, city FROM teams WHERE city = 'Oslo' ORDER BY team_id;")
    assert got.ok and got.error is None and got.error_class is None
    assert got.columns == ("name", "city")
    assert got.rows == (("Lions", "Oslo"), ("Bears", "Oslo"))
    assert got.truncated is False and got.ms >= 0


def test_execute_caps_rows_and_flags_truncation(db: Path) -> None:
    capped = execute(db, "SELECT player_id FROM players ORDER BY player_id", row_cap=4)
    assert capped.rows == ((10,), (11,), (12,), (13,)) and capped.truncated is True
    exact = execute(db, "SELECT player_id FROM players", row_cap=6)
    assert len(exact.rows) == 6 and exact.truncated is False


@pytest.mark.parametrize("sql", ["", "   \n\t", ";", "-- just a comment"])
def test_execute_without_sql_is_no_sql(db: Path, sql: str) -> None:
    got = execute(db, sql)
    assert got.error_class == "no_sql" and not got.ok and got.rows == ()


@pytest.mark.parametrize(("sql", "error_class"), [
    ("SELEC name FROM teams", "syntax_error"),
    ("SELECT name FROM teams WHERE", "syntax_error"),
    ("SELECT name FROM teamz", "unknown_table_or_column"),
    ("SELECT nme FROM teams", "unknown_table_or_column"),
    ("SELECT name FROM teams JOIN players USING (team_id)", "unknown_table_or_column"),
    ("SELECT no_such_function(name) FROM teams", "execution_error"),
    ("SELECT name FROM teams WHERE team_id = ?", "execution_error"),
    ("SELECT 1; SELECT 2", "execution_error"),
])
def test_execute_classifies_bad_sql(db: Path, sql: str, error_class: str) -> None:
    got = execute(db, sql)
    assert got.error_class == error_class, got.error
    assert not got.ok and got.error and "\n" not in got.error


def test_execute_stops_a_runaway_query(db: Path) -> None:
    start = time.monotonic()
    got = execute(db, RUNAWAY, timeout_s=0.3)
    elapsed = time.monotonic() - start
    assert got.error_class == "timeout"
    assert "stopped after 0.3 s" in (got.error or "")
    assert elapsed < 0.3 + 1.0


def test_time_budget_restarts_for_each_statement(db: Path) -> None:
    connection = connect_readonly(db, timeout_s=0.3)
    try:
        for _ in range(3):  # each statement gets the whole budget, not what is left
            time.sleep(0.15)
            assert connection.execute("SELECT count(*) FROM players").fetchone() == (6,)
        with pytest.raises(sqlite3.OperationalError, match="interrupt"):
            connection.execute(RUNAWAY).fetchone()
    finally:
        connection.close()


def test_missing_file_raises_naming_the_path_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nope.sqlite"
    with pytest.raises(SqlExecutionError, match="nope.sqlite") as caught:
        execute(missing, "SELECT 1")
    assert isinstance(caught.value, TargetError)
    assert not missing.exists()


def test_non_sqlite_file_raises_naming_the_path(tmp_path: Path) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("this is not a database, just words " * 20, encoding="utf-8")
    before = sha256(text)
    with pytest.raises(SqlExecutionError, match="notes.sqlite"):
        execute(text, "SELECT 1")
    assert sha256(text) == before


@pytest.mark.parametrize("name", ["with space.sqlite", "hash#tag.sqlite", "what?.sqlite",
                                  "per%20cent.sqlite"])
def test_awkward_file_names_work(tmp_path: Path, name: str) -> None:
    path = build_db(tmp_path / "dir with space" / name)
    got = execute(path, "SELECT count(*) FROM teams")
    assert got.rows == ((3,),)
    assert sorted(p.name for p in path.parent.iterdir()) == [name]  # no stray files


def test_schema_pragmas_work_through_connect_readonly(db: Path) -> None:
    connection = connect_readonly(db)
    try:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(teams)")]
        keys = connection.execute("PRAGMA foreign_key_list(players)").fetchall()
        table_valued = connection.execute(
            "SELECT name FROM pragma_table_info('players') ORDER BY cid").fetchall()
    finally:
        connection.close()
    assert columns == ["team_id", "name", "city"]
    assert [(k[2], k[3], k[4]) for k in keys] == [("teams", "team_id", "team_id")]
    assert [r[0] for r in table_valued] == ["player_id", "name", "team_id", "goals"]


def test_sql_result_round_trips_through_json_safe_dict() -> None:
    original = SqlResult(sql="SELECT x", columns=("x", "y"),
                         rows=((1, b"\x00\xff"), (2.5, b"z" * 100), (None, "t")),
                         truncated=False, error=None, error_class=None, ms=1.23456)
    data = original.to_dict()
    assert data["rows"] == [[1, "x'00ff'"], [2.5, "<blob 100 bytes>"], [None, "t"]]
    assert data["n_rows"] == 3 and data["ms"] == 1.235
    shown = original.to_dict(max_rows=1)
    assert shown["n_rows"] == 3 and len(shown["rows"]) == 1
    again = SqlResult.from_dict(shown)
    assert again.rows == ((1, "x'00ff'"),) and again.truncated is True
    assert SqlResult.from_dict(data).columns == ("x", "y")


# --- security --------------------------------------------------------------------------

ATTACKS = [
    "DROP TABLE teams",
    "DELETE FROM teams",
    "UPDATE teams SET name = 'x'",
    "INSERT INTO teams VALUES (9, 'a', 'b')",
    "REPLACE INTO teams VALUES (1, 'a', 'b')",
    "CREATE TABLE t (x)",
    "CREATE TEMP TABLE t (x)",
    "CREATE INDEX ix ON teams (city)",
    "ALTER TABLE teams ADD COLUMN z",
    "ATTACH DATABASE '{tmp}/other.sqlite' AS o",
    "DETACH DATABASE main",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = WAL",
    "PRAGMA query_only = 0",
    "PRAGMA user_version = 7",
    "UPDATE sqlite_master SET sql = 'x'",
    "VACUUM",
    "VACUUM INTO '{tmp}/copy.sqlite'",
    "BEGIN IMMEDIATE",
    "SAVEPOINT s",
    "SELECT 1; DROP TABLE teams",
    "SELECT name FROM teams; DELETE FROM players",
]


@pytest.mark.parametrize("template", ATTACKS)
def test_writes_are_refused_and_the_file_is_unchanged(db: Path, tmp_path: Path,
                                                      template: str) -> None:
    before = sha256(db)
    got = execute(db, template.format(tmp=tmp_path))
    assert got.error_class == "refused", got.error
    assert sha256(db) == before
    assert not (tmp_path / "other.sqlite").exists()
    assert not (tmp_path / "copy.sqlite").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["league.sqlite"]  # no -journal
    assert execute(db, "SELECT count(*) FROM teams").rows == ((3,),)
    with sqlite3.connect(db) as check:  # the data is still there, read outside our code
        assert check.execute("SELECT name FROM teams WHERE team_id = 1").fetchone() == ("Lions",)
    check.close()


@pytest.mark.parametrize("sql", ["DELETE FROM teams", "CREATE TABLE t (x)",
                                 "PRAGMA user_version = 7", "ATTACH DATABASE ':memory:' AS o",
                                 "BEGIN"])
def test_the_authorizer_alone_denies_writes(db: Path, sql: str) -> None:
    """One lock tested on its own: a writable connection with only our authorizer."""
    from target_core.sql.execute import _authorize

    connection = sqlite3.connect(db, isolation_level=None)
    try:
        connection.set_authorizer(_authorize)
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            connection.execute(sql)
        assert connection.execute("SELECT count(*) FROM teams").fetchone() == (3,)
    finally:
        connection.close()


# --- compare_results ---------------------------------------------------------------------


def test_set_equal_ignores_duplicates_and_order() -> None:
    gold = result([(1,), (2,), (2,)], sql="SELECT a FROM t")
    pred = result([(2,), (1,)], sql="SELECT a FROM t")
    comparison = compare_results(gold, pred)
    assert comparison.set_equal is True
    assert comparison.strict_equal is False  # gold holds 2 twice, the prediction once
    assert comparison.diff.n_only_gold == 1 and comparison.diff.only_gold == ((2,),)
    assert comparison.diff.n_shared == 2 and comparison.diff.n_only_pred == 0


def test_reordered_rows_are_strict_equal_when_gold_does_not_order() -> None:
    gold = result([(1,), (2,), (3,)], sql="SELECT a FROM t")
    pred = result([(3,), (1,), (2,)])
    comparison = compare_results(gold, pred)
    assert comparison.set_equal and comparison.strict_equal
    assert comparison.diff.order_only is False


def test_order_matters_for_strict_when_gold_orders() -> None:
    gold = result([(1,), (2,), (3,)], sql="SELECT a FROM t ORDER BY a")
    pred = result([(3,), (2,), (1,)], sql="SELECT a FROM t ORDER BY a DESC")
    comparison = compare_results(gold, pred)
    assert comparison.set_equal is True and comparison.strict_equal is False
    assert comparison.diff.order_only is True
    same = compare_results(gold, result([(1,), (2,), (3,)]))
    assert same.strict_equal is True and same.diff.order_only is False
    # an ORDER BY inside a subquery does not order the outer result
    inner = result([(1,), (2,)], sql="SELECT a FROM (SELECT a FROM t ORDER BY a)")
    assert compare_results(inner, result([(2,), (1,)])).strict_equal is True
    # gold_sql overrides the result's own SQL
    assert compare_results(inner, result([(2,), (1,)]),
                           gold_sql="SELECT a FROM t ORDER BY a").strict_equal is False


def test_integral_floats_equal_ints_and_floats_are_rounded() -> None:
    gold = result([(1, 0.1 + 0.2, "x")], columns=("a", "b", "c"))
    pred = result([(1.0, 0.3, "x")], columns=("a", "b", "c"))
    assert compare_results(gold, pred).set_equal is True
    assert compare_results(gold, result([(1, 0.3001, "x")], ("a", "b", "c"))).set_equal is False
    assert compare_results(result([("1",)]), result([(1,)])).set_equal is False


def test_column_mismatch_ignores_column_names() -> None:
    renamed = compare_results(result([(1,)], ("a",)), result([(1,)], ("total",)))
    assert renamed.set_equal and not renamed.diff.column_mismatch
    wider = compare_results(result([(1,)], ("a",)), result([(1, 2)], ("a", "b")))
    assert wider.diff.column_mismatch and not wider.set_equal


def test_permuted_columns_are_equal_only_when_columns_are_ignored() -> None:
    gold = result([(1, "a"), (2, "b")], columns=("id", "name"))
    pred = result([("b", 2), ("a", 1)], columns=("name", "id"))
    comparison = compare_results(gold, pred)
    assert comparison.set_equal is False
    assert comparison.column_order_ignored_equal is True
    assert comparison.diff.column_order_only is True
    other = compare_results(gold, result([("b", 2), ("c", 1)], ("name", "id")))
    assert other.column_order_ignored_equal is False and not other.diff.column_order_only
    same = compare_results(gold, gold)
    assert same.column_order_ignored_equal is True and not same.diff.column_order_only


def test_diff_counts_are_exact_and_lists_capped() -> None:
    gold = result([(i,) for i in range(120)])
    pred = result([(i,) for i in range(60, 200)] + [(60,)])
    diff = compare_results(gold, pred).diff
    assert (diff.n_only_gold, diff.n_shared, diff.n_only_pred) == (60, 60, 81)
    assert len(diff.only_gold) == len(diff.shared) == len(diff.only_pred) == DIFF_ROW_CAP
    assert diff.only_gold[:3] == ((0,), (1,), (2,))  # in the order the rows came
    assert diff.shared[0] == (60,)
    assert diff.only_pred[:2] == ((60,), (120,))  # one of the prediction's two 60s is surplus


def test_diff_keeps_each_sides_raw_values() -> None:
    diff = compare_results(result([(1, 2.0)], ("a", "b")), result([(1.0, 2)], ("a", "b"))).diff
    assert diff.shared == ((1, 2.0),) and diff.n_only_pred == 0


def test_failed_executions_are_never_equal() -> None:
    gold = result([])
    failed = result([], error_class="syntax_error")
    comparison = compare_results(gold, failed)
    assert not comparison.set_equal and not comparison.strict_equal
    assert compare_results(gold, result([])).set_equal is True  # two empty results agree


def test_comparison_round_trips_through_dict() -> None:
    comparison = compare_results(result([(1, b"\x01")], ("a", "b")),
                                 result([(2, b"\x01")], ("a", "b")))
    again = Comparison.from_dict(comparison.to_dict())
    assert again.set_equal == comparison.set_equal
    assert again.diff.only_gold == ((1, "x'01'"),) and again.diff.n_only_pred == 1


def test_compare_results_on_real_executions(db: Path) -> None:
    gold = execute(db, "SELECT name FROM players WHERE goals >= 2 ORDER BY goals DESC")
    pred = execute(db, "SELECT p.name FROM players AS p WHERE p.goals > 1.5")
    comparison = compare_results(gold, pred)
    # gold: Fay 4.0, Ann 3.0, Di 2.0, Ed 2.0; the prediction has the same four names
    assert comparison.set_equal is True
    assert comparison.strict_equal is False and comparison.diff.order_only is True
    sums = compare_results(execute(db, "SELECT sum(goals) FROM players"),
                           execute(db, "SELECT 12.5"))
    assert sums.set_equal is True  # 3 + 1.5 + 0 + 2 + 2 + 4


# --- classify ------------------------------------------------------------------------------


def _classify(pred: SqlResult | None, gold: SqlResult | None = None,
              predicted_database: str | None = "league") -> str:
    gold = gold or result([(1,), (2,)])
    comparison = compare_results(gold, pred) if pred is not None else None
    return classify(gold, pred, comparison, predicted_database=predicted_database,
                    gold_database="league")


def test_classify_each_class(db: Path) -> None:
    assert _classify(result([(2,), (1,)])) == "correct"
    assert _classify(result([(1,)])) == "wrong_result"
    assert _classify(result([])) == "empty_result"
    assert _classify(None) == "no_sql"
    assert _classify(execute(db, "  ")) == "no_sql"
    assert _classify(result([(1,), (2,)]), predicted_database="cities") == "wrong_database"
    assert _classify(result([(1,), (2,)]), predicted_database=None) == "correct"
    assert _classify(execute(db, "SELEC 1")) == "syntax_error"
    assert _classify(execute(db, "SELECT x FROM teams")) == "unknown_table_or_column"
    assert _classify(execute(db, "DELETE FROM teams")) == "refused"
    assert _classify(execute(db, RUNAWAY, timeout_s=0.2)) == "timeout"
    assert _classify(execute(db, "SELECT nothing_like_this(1)")) == "execution_error"
    assert _classify(result([]), gold=result([])) == "correct"  # both empty agree


def test_classify_order_of_checks() -> None:
    # no_sql beats wrong_database, wrong_database beats the execution error
    assert _classify(None, predicted_database="cities") == "no_sql"
    broken = result([], error_class="syntax_error")
    assert _classify(broken, predicted_database="cities") == "wrong_database"
    # without a comparison, classify makes one
    assert classify(result([(1,)]), result([(1,)]), None, predicted_database=None,
                    gold_database="league") == "correct"


def test_classify_when_gold_failed_logs_and_says_execution_error(
        caplog: pytest.LogCaptureFixture) -> None:
    gold = result([], error_class="unknown_table_or_column")
    assert _classify(result([(1,)]), gold=gold) == "execution_error"
    assert "gold SQL failed" in caplog.text


def test_error_classes_are_the_documented_twelve() -> None:
    from target_core.read_models.answer import ERROR_CLASS_HELP

    assert len(ERROR_CLASSES) == len(set(ERROR_CLASSES)) == 12
    docs = Path(__file__).resolve().parent.parent / "docs" / "generators.md"
    paragraph = docs.read_text().split("**SQL execution.**", 1)[1].split("\n\n", 1)[0]
    assert all(f"`{c}`" in paragraph for c in ERROR_CLASSES), paragraph
    assert set(ERROR_CLASSES) <= set(ERROR_CLASS_HELP)  # the Query page explains each


def test_whose_fault_a_database_is() -> None:
    """The one rule of blame: another database the prompt showed is retrieval's fault; a
    database the prompt never showed (an invented id) is the generator's."""
    shown = ("league", "cities")
    assert database_class("league", "league", shown) is None
    assert database_class("league", "league", ()) is None  # right, even if unshown
    assert database_class("cities", "league", shown) == "wrong_database"
    assert database_class(None, "league", shown) == "wrong_database"  # none retrieved
    assert database_class("12345", "league", shown) == "database_not_in_prompt"
    assert database_class("cities", "league", ()) == "database_not_in_prompt"  # no context
    assert database_class("12345", "league", None) == "wrong_database"  # shown unknown
    assert error_blame("wrong_database") == "retrieval"
    assert error_blame("database_not_in_prompt") == "generation"
    assert error_blame("syntax_error") == "generation" and error_blame("correct") is None
    assert set(ERROR_CLASSES) >= RETRIEVAL_ERROR_CLASSES
    broken = result([], error_class="syntax_error")
    assert classify(result([(1,)]), broken, None, predicted_database="12345",
                    gold_database="league", shown_databases=shown) == "database_not_in_prompt"
    assert classify(result([(1,)]), broken, None, predicted_database="cities",
                    gold_database="league", shown_databases=shown) == "wrong_database"


def test_a_result_cut_by_the_row_cap_is_never_compared_by_its_prefix(db: Path) -> None:
    """Regression: results over the cap compared by their first rows, so two different
    results with the same first rows counted as equal."""
    sql = "SELECT player_id FROM players ORDER BY player_id"
    gold, pred = execute(db, sql, row_cap=2), execute(db, sql + " LIMIT 3", row_cap=2)
    assert gold.truncated and pred.truncated and gold.rows == pred.rows  # same prefix
    comparison = compare_results(gold, pred)
    assert not comparison.comparable and not comparison.set_equal
    assert not comparison.strict_equal and not comparison.column_order_ignored_equal
    assert Comparison.from_dict(comparison.to_dict()) == comparison
    assert classify(gold, pred, comparison, predicted_database="d",
                    gold_database="d") == "not_comparable"
    whole = compare_results(execute(db, sql), execute(db, sql + " LIMIT 3"))
    assert whole.comparable and not whole.set_equal  # compared whole: different


# --- exact_set_match ---------------------------------------------------------------------


@pytest.mark.parametrize(("gold", "pred"), [
    ("SELECT name FROM teams WHERE team_id > 1", "SELECT name FROM teams WHERE team_id > 5"),
    ("SELECT name FROM teams WHERE team_id > 1 AND city = 'Oslo'",
     "select NAME from TEAMS where city = 'Bergen' and 5 < team_id"),
    ("SELECT t.name FROM teams AS t", "SELECT name FROM teams"),
    ("SELECT T1.name FROM teams AS T1 JOIN players AS T2 ON T1.team_id = T2.team_id",
     "SELECT a.name FROM players AS b JOIN teams AS a ON b.team_id = a.team_id"),
    ("SELECT name, city FROM teams", "SELECT city, name FROM teams"),
    ("SELECT name FROM teams ORDER BY name ASC LIMIT 1",
     "SELECT name FROM teams ORDER BY name LIMIT 3"),
    ("SELECT count(*) AS n, city FROM teams GROUP BY city ORDER BY n DESC",
     "SELECT city, count(*) FROM teams GROUP BY 1 ORDER BY count(*) DESC"),
    ("SELECT name FROM teams WHERE team_id IN (1, 2, 3)",
     "SELECT name FROM teams WHERE team_id IN (4)"),
    ("SELECT name FROM teams UNION SELECT name FROM players",
     "SELECT name FROM players UNION SELECT name FROM teams"),
    ("SELECT name FROM players WHERE team_id IN (SELECT team_id FROM teams WHERE city = 'Oslo')",
     "SELECT name FROM players WHERE team_id IN (SELECT team_id FROM teams WHERE city = 'x')"),
    ("SELECT name FROM teams WHERE city = 'a' OR team_id = 1",
     "SELECT name FROM teams WHERE (team_id = 2 OR city = 'b')"),
    # DISTINCT does not count, as in Spider's official script
    ("SELECT DISTINCT city FROM teams", "SELECT city FROM teams"),
    ("SELECT count(DISTINCT city) FROM teams", "SELECT count(city) FROM teams"),
])
def test_exact_set_match_equal(gold: str, pred: str) -> None:
    assert exact_set_match(gold, pred) is True
    assert exact_set_match(pred, gold) is True


@pytest.mark.parametrize(("gold", "pred"), [
    ("SELECT name FROM teams", "SELECT city FROM teams"),
    ("SELECT count(*) FROM teams", "SELECT sum(team_id) FROM teams"),
    ("SELECT name FROM teams ORDER BY name", "SELECT name FROM teams ORDER BY name DESC"),
    ("SELECT name FROM teams LIMIT 1", "SELECT name FROM teams"),
    ("SELECT name FROM teams UNION SELECT name FROM players",
     "SELECT name FROM teams INTERSECT SELECT name FROM players"),
    ("SELECT name FROM teams UNION SELECT name FROM players",
     "SELECT name FROM teams UNION ALL SELECT name FROM players"),
    ("SELECT name FROM teams EXCEPT SELECT name FROM players",
     "SELECT name FROM players EXCEPT SELECT name FROM teams"),
    ("SELECT name FROM teams WHERE team_id > 1", "SELECT name FROM teams WHERE team_id < 1"),
    ("SELECT name FROM teams WHERE team_id > 1", "SELECT name FROM teams"),
    ("SELECT city FROM teams GROUP BY city", "SELECT city FROM teams"),
    ("SELECT city FROM teams GROUP BY city HAVING count(*) > 1",
     "SELECT city FROM teams GROUP BY city"),
    ("SELECT T1.name FROM teams AS T1 JOIN players AS T2 ON T1.team_id = T2.team_id",
     "SELECT T2.name FROM teams AS T1 JOIN players AS T2 ON T1.team_id = T2.team_id"),
    ("SELECT name FROM players WHERE team_id IN (SELECT team_id FROM teams WHERE city = 'Oslo')",
     "SELECT name FROM players WHERE team_id IN (SELECT team_id FROM teams WHERE name = 'Oslo')"),
    ("SELECT name FROM players WHERE team_id IN (SELECT team_id FROM teams)",
     "SELECT name FROM players WHERE team_id NOT IN (SELECT team_id FROM teams)"),
])
def test_exact_set_match_different(gold: str, pred: str) -> None:
    assert exact_set_match(gold, pred) is False
    assert exact_set_match(pred, gold) is False


@pytest.mark.parametrize("broken", ["SELECT name FROM teams WHERE", "", "DROP TABLE teams",
                                    "SELECT 'open"])
def test_exact_set_match_unparsable_is_false(broken: str) -> None:
    assert exact_set_match("SELECT name FROM teams", broken) is False
    assert exact_set_match(broken, "SELECT name FROM teams") is False
