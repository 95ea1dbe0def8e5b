"""Time SQL read-only, again and again: the measurements behind VES.

BIRD's valid efficiency score (`target_core.metrics.ves`) compares how long the gold and
the predicted query take. `query_seconds` times one run on the same read-only connection
scoring uses (`connect_readonly`: mode=ro, query_only, authorizer, deadline), within the
time limit and the row cap, so generated SQL still cannot write. `time_pair` repeats the
pair as BIRD's `iterated_execute_sql` does: predicted first, then gold, `repeats` times.

What is timed: executing the statement and fetching its rows (up to row_cap + 1).
Opening the connection is not timed. BIRD times `cursor.execute` alone, which in Python's
sqlite3 stops at a plain SELECT's first row; fetching makes the time the query's whole
cost (docs/text-to-sql.md, "VES").
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from target_core.errors import ConfigError, TargetError
from target_core.sql.execute import SqlLimits, connect_readonly

__all__ = ["PairTiming", "SqlTimingError", "query_seconds", "time_pair"]

Clock = Callable[[], float]
"""Seconds on a monotonic clock; `time.perf_counter` unless a test injects another."""


class SqlTimingError(TargetError):
    """A timed run failed (an error, or the time limit): the query scores VES 0."""


def query_seconds(path: str | Path, sql: str, *, limits: SqlLimits,
                  clock: Clock = time.perf_counter) -> float:
    """Seconds one read-only run of `sql` on the database at `path` takes.

    Raises SqlTimingError when the SQL fails or runs past `limits.timeout_s`, and
    SqlExecutionError when the database file cannot be used.
    """
    connection = connect_readonly(path, timeout_s=limits.timeout_s)
    try:
        start = clock()
        cursor = connection.execute(sql)
        if cursor.description:
            cursor.fetchmany(limits.row_cap + 1)
        return clock() - start
    except (sqlite3.Error, sqlite3.Warning, ValueError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        raise SqlTimingError(message) from None
    finally:
        connection.close()


@dataclass(frozen=True)
class PairTiming:
    """The repeated times of one gold/predicted pair, in seconds, repeat by repeat."""

    gold_s: tuple[float, ...]
    pred_s: tuple[float, ...]


def time_pair(time_gold: Callable[[], float], time_pred: Callable[[], float], *,
              repeats: int) -> PairTiming:
    """Call `time_pred` then `time_gold`, `repeats` times (BIRD's order).

    Each callable returns one run's seconds (e.g. a `query_seconds` partial).
    repeats < 1 raises ConfigError; SqlTimingError from a run propagates.
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be at least 1, got {repeats!r}")
    gold: list[float] = []
    pred: list[float] = []
    for _ in range(repeats):
        pred.append(time_pred())
        gold.append(time_gold())
    return PairTiming(gold_s=tuple(gold), pred_s=tuple(pred))
