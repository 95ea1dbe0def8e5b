"""Time references in SQL templates, resolved to half-open date ranges.

A template parameter may hold an absolute date or a relative expression; a relative
one is resolved against the reference date stored with each benchmark item, so the
item's SQL and question stay correct whenever the benchmark is re-run (seed 002).

Every expression resolves to ``[start, end)``: start inclusive, end exclusive.
Matching is case-insensitive; surrounding spaces are ignored and inner runs of
spaces count as one. Weeks are ISO weeks, Monday to Sunday. With ``ref`` the
reference date:

Absolute
- ``YYYY-MM-DD``: that day.                      ``[d, d+1)``
- ``YYYY-MM``: that calendar month.               ``[1st, 1st of next month)``
- ``YYYY``: that calendar year.                   ``[1 Jan, 1 Jan next year)``
- ``YYYY-MM-DD..YYYY-MM-DD``: both days included. ``[a, b+1)``; a after b is an error.

Relative. "this ..." means *to date*: from the start of the current period up to
and including ``ref``, never into the future. "last ..." means *full* periods
before the current one, except "last N days", which is the rolling window that
ends with ``ref``.
- ``today``: ``[ref, ref+1)``;  ``yesterday``: ``[ref-1, ref)``.
- ``this week``: ``[Monday of ref's week, ref+1)``.
- ``this month`` / ``this year``: ``[1st of ref's month / 1 Jan, ref+1)``.
- ``last week``: the previous full Monday-Sunday week (same as ``last 1 weeks``).
- ``last month``: the previous full calendar month; in January that is December
  of the previous year (same as ``last 1 months``).
- ``last year``: the previous full calendar year.
- ``last N days`` (N >= 1): ``[ref-(N-1), ref+1)``, the N days ending with ref.
- ``last N weeks``: the N full weeks before the current week, ``[Monday-7N, Monday)``.
- ``last N months``: the N full calendar months before the current month.
  The unit may be singular (``last 1 month``); N is ASCII digits.

Anything else, an impossible date (``2024-02-30``), N = 0 or a range outside
years 1..9999 raises ``TimeReferenceError``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from target_core.errors import TargetError

RELATIVE_EXPRESSIONS: tuple[str, ...] = (
    "today", "yesterday", "this week", "last week", "this month", "last month",
    "this year", "last year", "last 7 days", "last 30 days", "last 90 days",
    "last 4 weeks", "last 3 months", "last 6 months", "last 12 months",
)

ACCEPTED_FORMS = (
    "YYYY-MM-DD, YYYY-MM, YYYY, YYYY-MM-DD..YYYY-MM-DD, today, yesterday, "
    "this week|month|year, last week|month|year, last N days|weeks|months"
)

_DAY = r"(\d{4})-(\d{2})-(\d{2})"
_ABS_DAY = re.compile(_DAY, re.ASCII)
_ABS_MONTH = re.compile(r"(\d{4})-(\d{2})", re.ASCII)
_ABS_YEAR = re.compile(r"(\d{4})", re.ASCII)
_ABS_RANGE = re.compile(_DAY + r"\s*\.\.\s*" + _DAY, re.ASCII)
_LAST_N = re.compile(r"last (\d+) (day|week|month)s?", re.ASCII)
_FIXED = frozenset({"today", "yesterday", "this week", "last week", "this month",
                    "last month", "this year", "last year"})


class TimeReferenceError(TargetError):
    """A time reference that cannot be parsed or resolved; the message names it."""

    def __init__(self, expression: str, reason: str) -> None:
        self.expression = expression
        self.reason = reason
        super().__init__(f"time reference '{expression}': {reason}")


@dataclass(frozen=True)
class TimeRange:
    """The half-open range ``[start, end)`` an expression resolved to."""

    expression: str
    reference: date
    start: date
    end: date

    def sql_condition(self, column: str) -> str:
        """``col >= 'start' AND col < 'end'`` on ISO text dates, as SQLite stores them.

        ``column`` must already be a quoted identifier. The end bound is exclusive, so
        ISO timestamps ('2024-12-31 23:59:59') on the last day also match. Wrap the
        result in parentheses before combining it with OR.
        """
        if not column.strip():
            raise ValueError("sql_condition needs a column")
        return f"{column} >= '{self.start.isoformat()}' AND {column} < '{self.end.isoformat()}'"

    def to_dict(self) -> dict:
        return {
            "expression": self.expression,
            "reference": self.reference.isoformat(),
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> TimeRange:
        """Inverse of ``to_dict``."""
        return cls(
            expression=data["expression"],
            reference=date.fromisoformat(data["reference"]),
            start=date.fromisoformat(data["start"]),
            end=date.fromisoformat(data["end"]),
        )


def _normalize(expression: str) -> str:
    return " ".join(expression.lower().split())


def is_relative(expression: str) -> bool:
    """True for a relative form (``today``, ``last N days``...), False otherwise."""
    text = _normalize(expression)
    return text in _FIXED or _LAST_N.fullmatch(text) is not None


def _add_months(first_of_month: date, months: int) -> date:
    index = first_of_month.year * 12 + first_of_month.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _resolve_absolute(text: str) -> tuple[date, date] | None:
    if m := _ABS_RANGE.fullmatch(text):
        first = date(*map(int, m.groups()[:3]))
        last = date(*map(int, m.groups()[3:]))
        if first > last:
            raise ValueError("range starts after it ends")
        return first, last + timedelta(days=1)
    if m := _ABS_DAY.fullmatch(text):
        day = date(*map(int, m.groups()))
        return day, day + timedelta(days=1)
    if m := _ABS_MONTH.fullmatch(text):
        first = date(int(m[1]), int(m[2]), 1)
        return first, _add_months(first, 1)
    if m := _ABS_YEAR.fullmatch(text):
        return date(int(m[1]), 1, 1), date(int(m[1]) + 1, 1, 1)
    return None


def _resolve_relative(text: str, ref: date) -> tuple[date, date] | None:
    next_day = ref + timedelta(days=1)
    monday = ref - timedelta(days=ref.weekday())
    month_start = ref.replace(day=1)
    fixed = {
        "today": lambda: (ref, next_day),
        "yesterday": lambda: (ref - timedelta(days=1), ref),
        "this week": lambda: (monday, next_day),
        "this month": lambda: (month_start, next_day),
        "this year": lambda: (date(ref.year, 1, 1), next_day),
        "last week": lambda: (monday - timedelta(weeks=1), monday),
        "last month": lambda: (_add_months(month_start, -1), month_start),
        "last year": lambda: (date(ref.year - 1, 1, 1), date(ref.year, 1, 1)),
    }
    if text in fixed:
        return fixed[text]()
    m = _LAST_N.fullmatch(text)
    if m is None:
        return None
    n, unit = int(m[1]), m[2]
    if n == 0:
        raise ValueError("N must be at least 1")
    if unit == "day":
        return ref - timedelta(days=n - 1), next_day
    if unit == "week":
        return monday - timedelta(weeks=n), monday
    return _add_months(month_start, -n), month_start


def resolve(expression: str, reference: date) -> TimeRange:
    """Resolve ``expression`` against ``reference`` (see the module docstring)."""
    if isinstance(reference, datetime):
        reference = reference.date()
    if not isinstance(reference, date):
        raise TypeError(f"reference must be a date, not {type(reference).__name__}")
    if not isinstance(expression, str):
        raise TimeReferenceError(str(expression), f"expected text; accepted: {ACCEPTED_FORMS}")
    text = _normalize(expression)
    try:
        bounds = _resolve_absolute(text) or _resolve_relative(text, reference)
    except (ValueError, OverflowError) as exc:
        raise TimeReferenceError(expression, str(exc)) from None
    if bounds is None:
        raise TimeReferenceError(expression, f"not a known form; accepted: {ACCEPTED_FORMS}")
    return TimeRange(expression=expression, reference=reference, start=bounds[0], end=bounds[1])


def _day_text(day: date) -> str:
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"


def describe(time_range: TimeRange) -> str:
    """Words for a question: relative forms stay as written (normalized; ``in the last
    N days``), absolute ones are spelled out: ``on 31 December 2024``, ``in December
    2024``, ``in 2024``, ``from 1 December 2024 to 24 December 2024``.
    """
    text = _normalize(time_range.expression)
    if _LAST_N.fullmatch(text):
        return f"in the {text}"
    if is_relative(text):
        return text
    start, last = time_range.start, time_range.end - timedelta(days=1)
    if _ABS_DAY.fullmatch(text) or start == last:
        return f"on {_day_text(start)}"
    if _ABS_MONTH.fullmatch(text):
        return f"in {calendar.month_name[start.month]} {start.year}"
    if _ABS_YEAR.fullmatch(text):
        return f"in {start.year}"
    return f"from {_day_text(start)} to {_day_text(last)}"


def _sunday(day: date) -> date:
    return day - timedelta(days=(day.weekday() + 1) % 7)


def _readings(text: str, ref: date) -> list[tuple[str, date, date]]:
    """(words, start, end) for the other readings of a relative expression."""
    next_day, sunday = ref + timedelta(days=1), _sunday(ref)
    month_start = ref.replace(day=1)
    fixed = {
        "this week": [("this week, weeks starting on Sunday", sunday, next_day)],
        "last week": [("last week, weeks starting on Sunday", sunday - timedelta(weeks=1),
                       sunday), ("the last 7 days", ref - timedelta(days=6), next_day)],
        "last month": [("the last 30 days", ref - timedelta(days=29), next_day)],
        "last year": [("the last 365 days", ref - timedelta(days=364), next_day)],
    }
    if text in fixed:
        return fixed[text]
    m = _LAST_N.fullmatch(text)
    if m is None:
        return []
    n, unit = int(m[1]), m[2]
    if unit == "day":
        return [(f"the {n} days before today", ref - timedelta(days=n), ref)]
    if unit == "week":
        return [(f"the last {7 * n} days", ref - timedelta(days=7 * n - 1), next_day),
                (f"the last {n} weeks starting on Sunday", sunday - timedelta(weeks=n),
                 sunday)]
    return [(f"the last {30 * n} days", ref - timedelta(days=30 * n - 1), next_day),
            (f"the last {n} months including this month", _add_months(month_start, 1 - n),
             next_day)]


def alternative_readings(time_range: TimeRange) -> list[TimeRange]:
    """Other ranges a reader may reasonably mean by a relative expression.

    Seed 002 counts an answer that takes "last month" as the last 30 days, or "last
    week" as a Sunday-to-Saturday week, as an *alternative interpretation*, not an
    error. Each reading is a TimeRange whose `expression` says it in words; readings
    equal to the range itself are left out. Absolute dates have none, nor do today,
    yesterday, this month and this year (data ends at the reference date, so "to
    date" and "the whole period" coincide).
    """
    text = _normalize(time_range.expression)
    if not is_relative(text):
        return []
    seen = {(time_range.start, time_range.end)}
    readings = []
    for words, start, end in _readings(text, time_range.reference):
        if (start, end) not in seen:
            seen.add((start, end))
            readings.append(TimeRange(words, time_range.reference, start, end))
    return readings
