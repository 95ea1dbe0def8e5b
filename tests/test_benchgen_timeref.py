"""Time references: hand-computed ranges on fixed dates, boundaries checked in real SQLite."""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta

import pytest

from target_core.benchgen.timeref import (
    RELATIVE_EXPRESSIONS,
    TimeRange,
    TimeReferenceError,
    describe,
    is_relative,
    resolve,
)
from target_core.errors import TargetError

D = date.fromisoformat


def bounds(expression: str, reference: str) -> tuple[str, str]:
    found = resolve(expression, D(reference))
    return found.start.isoformat(), found.end.isoformat()


# 2024-03-04 is a Monday, 2024-03-06 a Wednesday, 2024-03-10 a Sunday;
# 2025-01-01 is a Wednesday whose week starts on Monday 2024-12-30.
@pytest.mark.parametrize(
    ("reference", "this_week", "last_week"),
    [
        ("2024-03-04", ("2024-03-04", "2024-03-05"), ("2024-02-26", "2024-03-04")),
        ("2024-03-06", ("2024-03-04", "2024-03-07"), ("2024-02-26", "2024-03-04")),
        ("2024-03-10", ("2024-03-04", "2024-03-11"), ("2024-02-26", "2024-03-04")),
        ("2024-03-11", ("2024-03-11", "2024-03-12"), ("2024-03-04", "2024-03-11")),
        ("2025-01-01", ("2024-12-30", "2025-01-02"), ("2024-12-23", "2024-12-30")),
    ],
)
def test_week_boundaries(reference, this_week, last_week):
    assert bounds("this week", reference) == this_week
    assert bounds("last week", reference) == last_week
    assert D(last_week[0]).weekday() == 0  # Monday


@pytest.mark.parametrize(
    ("reference", "this_month", "last_month"),
    [
        # leap February
        ("2024-03-01", ("2024-03-01", "2024-03-02"), ("2024-02-01", "2024-03-01")),
        # January -> December of the previous year
        ("2025-01-15", ("2025-01-01", "2025-01-16"), ("2024-12-01", "2025-01-01")),
        # on the 31st, the previous month being shorter
        ("2024-03-31", ("2024-03-01", "2024-04-01"), ("2024-02-01", "2024-03-01")),
        ("2024-12-31", ("2024-12-01", "2025-01-01"), ("2024-11-01", "2024-12-01")),
        ("2023-03-31", ("2023-03-01", "2023-04-01"), ("2023-02-01", "2023-03-01")),
    ],
)
def test_month_boundaries(reference, this_month, last_month):
    assert bounds("this month", reference) == this_month
    assert bounds("last month", reference) == last_month


@pytest.mark.parametrize(
    ("expression", "reference", "expected"),
    [
        ("today", "2024-12-31", ("2024-12-31", "2025-01-01")),
        ("yesterday", "2024-03-01", ("2024-02-29", "2024-03-01")),
        ("yesterday", "2025-01-01", ("2024-12-31", "2025-01-01")),
        ("this year", "2025-01-15", ("2025-01-01", "2025-01-16")),
        ("this year", "2024-12-31", ("2024-01-01", "2025-01-01")),
        ("last year", "2025-01-15", ("2024-01-01", "2025-01-01")),
        ("last year", "2025-01-01", ("2024-01-01", "2025-01-01")),
        ("last 1 days", "2024-03-01", ("2024-03-01", "2024-03-02")),
        ("last 7 days", "2024-12-31", ("2024-12-25", "2025-01-01")),
        ("last 7 days", "2025-01-03", ("2024-12-28", "2025-01-04")),
        ("last 30 days", "2024-03-01", ("2024-02-01", "2024-03-02")),
        ("last 30 days", "2023-03-01", ("2023-01-31", "2023-03-02")),
        ("last 1 weeks", "2024-03-06", ("2024-02-26", "2024-03-04")),
        ("last 2 weeks", "2024-03-10", ("2024-02-19", "2024-03-04")),
        ("last 4 weeks", "2025-01-01", ("2024-12-02", "2024-12-30")),
        ("last 1 month", "2025-01-15", ("2024-12-01", "2025-01-01")),
        ("last 3 months", "2024-03-01", ("2023-12-01", "2024-03-01")),
        ("last 3 months", "2025-01-15", ("2024-10-01", "2025-01-01")),
        ("last 12 months", "2024-03-15", ("2023-03-01", "2024-03-01")),
        ("last 14 months", "2024-02-29", ("2022-12-01", "2024-02-01")),
    ],
)
def test_relative_forms(expression, reference, expected):
    assert bounds(expression, reference) == expected
    assert is_relative(expression)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2024-12-31", ("2024-12-31", "2025-01-01")),
        ("2024-02-29", ("2024-02-29", "2024-03-01")),
        ("2024-02", ("2024-02-01", "2024-03-01")),
        ("2023-02", ("2023-02-01", "2023-03-01")),
        ("2024-12", ("2024-12-01", "2025-01-01")),
        ("2024", ("2024-01-01", "2025-01-01")),
        ("2024-12-01..2024-12-24", ("2024-12-01", "2024-12-25")),
        ("2024-12-31..2024-12-31", ("2024-12-31", "2025-01-01")),
        ("2024-02-28..2024-03-01", ("2024-02-28", "2024-03-02")),
    ],
)
def test_absolute_forms_ignore_the_reference(expression, expected):
    for reference in ("2020-06-15", "2025-01-01"):
        assert bounds(expression, reference) == expected
    assert not is_relative(expression)


@pytest.mark.parametrize(
    ("expression", "same_as"),
    [
        ("  Last Month ", "last month"),
        ("LAST  7  DAYS", "last 7 days"),
        ("Today", "today"),
        ("\tThis Week\n", "this week"),
        (" 2024-12 ", "2024-12"),
        ("2024-12-01 .. 2024-12-24", "2024-12-01..2024-12-24"),
    ],
)
def test_case_and_spaces(expression, same_as):
    reference = D("2025-01-15")
    found = resolve(expression, reference)
    assert found.expression == expression  # kept as written
    assert (found.start, found.end) == (resolve(same_as, reference).start,
                                        resolve(same_as, reference).end)


@pytest.mark.parametrize(
    "expression",
    ["next week", "last 0 days", "", "   ", "last -3 days", "last three days", "2024/12/31",
     "24-12-31", "last 5 years", "this decade", "2024-12-31..", "20241231", "last 7 days ago",
     "\u0662\u0660\u0662\u0664", "last \u0667 days"],
)
def test_unknown_forms_are_rejected_with_the_accepted_forms(expression):
    with pytest.raises(TimeReferenceError) as caught:
        resolve(expression, D("2025-01-15"))
    message = str(caught.value)
    assert f"'{expression}'" in message
    assert "\n" not in message
    if expression != "last 0 days":
        assert "YYYY-MM-DD" in message and "last N days" in message
    assert isinstance(caught.value, TargetError)
    assert caught.value.expression == expression


@pytest.mark.parametrize(
    "expression",
    ["2024-02-30", "2023-02-29", "2024-13", "2024-00", "2024-04-31", "0000",
     "2024-12-24..2024-12-01", "2024-01-01..2024-02-30", "9999"],
)
def test_invalid_dates_are_rejected(expression):
    with pytest.raises(TimeReferenceError, match=f"'{expression}'"):
        resolve(expression, D("2025-01-15"))


def test_out_of_range_relative_is_a_time_reference_error():
    with pytest.raises(TimeReferenceError, match="last 3 months"):
        resolve("last 3 months", date(1, 2, 10))
    with pytest.raises(TimeReferenceError, match="last 10000000 days"):
        resolve("last 10000000 days", D("2025-01-15"))


def test_reference_must_be_a_date():
    found = resolve("today", datetime(2024, 12, 31, 23, 30))
    assert (found.reference, found.start, found.end) == (D("2024-12-31"), D("2024-12-31"),
                                                         D("2025-01-01"))
    with pytest.raises(TypeError):
        resolve("today", "2024-12-31")  # type: ignore[arg-type]


def test_every_listed_relative_expression_resolves_to_a_nonempty_past_range():
    reference = D("2024-03-01")
    assert len(set(RELATIVE_EXPRESSIONS)) == len(RELATIVE_EXPRESSIONS)
    for expression in RELATIVE_EXPRESSIONS:
        found = resolve(expression, reference)
        assert is_relative(expression)
        assert found.start < found.end <= reference + timedelta(days=1), expression
    for expression in ("today", "this week", "last week", "last month", "last 7 days",
                       "last 30 days", "last 3 months"):
        assert expression in RELATIVE_EXPRESSIONS


def test_definitions_hold_on_every_day_of_three_years():
    """Cross-check against day-by-day definitions rather than the module's arithmetic."""
    day = D("2023-01-01")
    while day <= D("2025-12-31"):
        last_week = resolve("last week", day)
        assert last_week.start.weekday() == 0 and (last_week.end - last_week.start).days == 7
        assert last_week.end <= day < last_week.end + timedelta(days=7)
        previous_month_day = day.replace(day=1) - timedelta(days=1)
        last_month = resolve("last month", day)
        assert last_month.start == previous_month_day.replace(day=1)
        assert last_month.end - timedelta(days=1) == previous_month_day
        this_week = resolve("this week", day)
        assert this_week.start.isocalendar()[:2] == day.isocalendar()[:2]
        assert this_week.start.weekday() == 0 and this_week.end == day + timedelta(days=1)
        assert (resolve("last 30 days", day).end - resolve("last 30 days", day).start).days == 30
        day += timedelta(days=1)


def test_sql_condition_text():
    found = resolve("2024-12", D("2025-01-15"))
    assert found.sql_condition('"day"') == "\"day\" >= '2024-12-01' AND \"day\" < '2025-01-01'"
    assert resolve("last week", D("2025-01-01")).sql_condition("t.d") == (
        "t.d >= '2024-12-23' AND t.d < '2024-12-30'"
    )
    with pytest.raises(ValueError):
        found.sql_condition(" ")


@pytest.fixture
def events() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute('CREATE TABLE events ("day" TEXT)')
    rows = [
        "2023-12-31", "2024-01-01", "2024-01-31", "2024-02-01", "2024-02-29",
        "2024-02-29 23:59:59", "2024-03-01", "2024-03-01 00:00:00", "2024-03-02",
        "2024-12-22", "2024-12-23", "2024-12-29", "2024-12-29 23:59:59", "2024-12-30",
        "2024-12-31", "2025-01-01", "2025-01-02",
    ]
    connection.executemany("INSERT INTO events VALUES (?)", [(row,) for row in rows])
    yield connection
    connection.close()


@pytest.mark.parametrize(
    ("expression", "reference", "matching"),
    [
        ("last month", "2024-03-01",
         ["2024-02-01", "2024-02-29", "2024-02-29 23:59:59"]),
        ("this month", "2024-03-01", ["2024-03-01", "2024-03-01 00:00:00"]),
        ("last week", "2025-01-01",
         ["2024-12-23", "2024-12-29", "2024-12-29 23:59:59"]),
        ("this week", "2025-01-01", ["2024-12-30", "2024-12-31", "2025-01-01"]),
        ("last year", "2025-01-01",
         ["2024-01-01", "2024-01-31", "2024-02-01", "2024-02-29", "2024-02-29 23:59:59",
          "2024-03-01", "2024-03-01 00:00:00", "2024-03-02", "2024-12-22", "2024-12-23",
          "2024-12-29", "2024-12-29 23:59:59", "2024-12-30", "2024-12-31"]),
        ("yesterday", "2024-03-01", ["2024-02-29", "2024-02-29 23:59:59"]),
        ("last 3 days", "2024-03-01",
         ["2024-02-29", "2024-02-29 23:59:59", "2024-03-01", "2024-03-01 00:00:00"]),
        ("2024-01", "2025-01-15", ["2024-01-01", "2024-01-31"]),
        ("2024-12-29..2024-12-30", "2025-01-15",
         ["2024-12-29", "2024-12-29 23:59:59", "2024-12-30"]),
    ],
)
def test_sql_condition_selects_exactly_the_boundary_rows(events, expression, reference, matching):
    condition = resolve(expression, D(reference)).sql_condition('"day"')
    rows = events.execute(f'SELECT "day" FROM events WHERE {condition} ORDER BY "day"').fetchall()
    assert [row[0] for row in rows] == matching


def test_to_dict_is_json_safe_and_round_trips():
    found = resolve("Last Month", D("2025-01-15"))
    data = json.loads(json.dumps(found.to_dict()))
    assert data == {"expression": "Last Month", "reference": "2025-01-15",
                    "start": "2024-12-01", "end": "2025-01-01"}
    assert TimeRange.from_dict(data) == found


@pytest.mark.parametrize(
    ("expression", "text"),
    [
        ("last month", "last month"),
        ("  Last  Month ", "last month"),
        ("yesterday", "yesterday"),
        ("last 7 days", "in the last 7 days"),
        ("Last 3  Months", "in the last 3 months"),
        ("2024-12-31", "on 31 December 2024"),
        ("2024-12", "in December 2024"),
        ("2024", "in 2024"),
        ("2024-12-01..2024-12-24", "from 1 December 2024 to 24 December 2024"),
        ("2024-12-31..2024-12-31", "on 31 December 2024"),
    ],
)
def test_describe(expression, text):
    assert describe(resolve(expression, D("2025-01-15"))) == text


# --- alternative readings (seed 002's alternative interpretations of time) ---------------


def _readings(expression: str, reference: str) -> list[tuple[str, str, str]]:
    from target_core.benchgen.timeref import alternative_readings

    return [(r.expression, r.start.isoformat(), r.end.isoformat())
            for r in alternative_readings(resolve(expression, D(reference)))]


@pytest.mark.parametrize(
    ("expression", "reference", "readings"),
    [
        # Wednesday 15 January 2025: ISO last week is 6-12 January
        ("last week", "2025-01-15", [
            ("last week, weeks starting on Sunday", "2025-01-05", "2025-01-12"),
            ("the last 7 days", "2025-01-09", "2025-01-16")]),
        # on a Sunday the Sunday week starts today, the ISO week began on Monday 6th
        ("this week", "2025-01-12", [
            ("this week, weeks starting on Sunday", "2025-01-12", "2025-01-13")]),
        ("this week", "2025-01-13", [  # a Monday: the Sunday week began yesterday
            ("this week, weeks starting on Sunday", "2025-01-12", "2025-01-14")]),
        ("last month", "2025-01-15", [("the last 30 days", "2024-12-17", "2025-01-16")]),
        ("last month", "2024-03-01", [("the last 30 days", "2024-02-01", "2024-03-02")]),
        ("last year", "2025-01-15", [("the last 365 days", "2024-01-17", "2025-01-16")]),
        ("last 3 months", "2025-01-15", [
            ("the last 90 days", "2024-10-18", "2025-01-16"),
            ("the last 3 months including this month", "2024-11-01", "2025-01-16")]),
        ("last 2 weeks", "2025-01-15", [
            ("the last 14 days", "2025-01-02", "2025-01-16"),
            ("the last 2 weeks starting on Sunday", "2024-12-29", "2025-01-12")]),
        ("last 2 days", "2025-01-15", [("the 2 days before today", "2025-01-13", "2025-01-15")]),
        ("2024-12", "2025-01-15", []),
        ("today", "2025-01-15", []),
        ("this month", "2025-01-15", []),
    ],
)
def test_alternative_readings(expression, reference, readings):
    assert _readings(expression, reference) == readings


def test_alternative_readings_never_repeat_the_range_or_each_other():
    from target_core.benchgen.timeref import alternative_readings

    for expression in ("last week", "last 1 weeks", "this week", "last month", "last 1 months"):
        for day in range(1, 32):
            main = resolve(expression, D(f"2025-01-{day:02d}"))
            spans = [(r.start, r.end) for r in alternative_readings(main)]
            assert (main.start, main.end) not in spans
            assert len(spans) == len(set(spans))
