"""Row types and the seeded helpers the row generators draw cell values with."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from . import vocab as V

Row = dict[str, Any]
Rows = dict[str, list[Row]]
MIN_ROWS, MAX_ROWS = 8, 300
"""Every table's size is checked against these when its database is written."""


def random_day(rng: random.Random, start: str, end: str) -> str:
    """A uniformly drawn ISO date between start and end, inclusive."""
    low, high = date.fromisoformat(start).toordinal(), date.fromisoformat(end).toordinal()
    return date.fromordinal(rng.randint(low, high)).isoformat()


def plus_days(day: str, days: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()


def weighted_choice(rng: random.Random, options: list[tuple]) -> tuple:
    """One option from (value, weight, ...) tuples, by the weight in position 1."""
    return rng.choices(options, weights=[o[1] for o in options])[0]


def distinct_people(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """n distinct (first, last) pairs, so a full name picks out exactly one row."""
    seen: dict[tuple[str, str], None] = {}
    while len(seen) < n:
        seen[(rng.choice(V.FIRST_NAMES), rng.choice(V.LAST_NAMES))] = None
    return list(seen)


def money(rng: random.Random, low: float, high: float, step: float = 1.0) -> float:
    return round(round(rng.uniform(low, high) / step) * step, 2)
