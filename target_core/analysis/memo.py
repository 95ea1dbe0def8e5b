"""Numbers derived from stored runs, kept in the process so a page revisited (or another
page asking the same) does no work again.

A stored run changes by growing (a resumed run stores more queries and finishes again),
by its status, and by metrics added after it (`judge` and the answer scores merge
per-query metrics and then the run's own): `run_state` holds the run's row for all of
those, and every key here includes it, so a key goes stale exactly when its run changes
and the next call computes afresh. Values are shared between callers: treat them as
read-only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

from target_core.engine.results import QueryScore
from target_core.engine.store import QueryResult, RunRecord, RunStore

__all__ = ["Memo", "clear_all", "digest", "run_results", "run_scores", "run_state"]

T = TypeVar("T")
_MEMOS: list[Memo[object]] = []


class Memo(Generic[T]):
    """A bounded, thread-safe least-recently-used memo (Streamlit runs sessions in
    threads; two sessions computing one key at once both compute, one result stays)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()
        _MEMOS.append(self)  # type: ignore[arg-type]
        self.misses = 0
        """How many calls computed their value (for tests)."""

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = make()
        with self._lock:
            self.misses += 1
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


def clear_all() -> None:
    """Forget every memo (tests; nothing else needs it: keys go stale by themselves)."""
    for memo in _MEMOS:
        memo.clear()


def run_state(store: RunStore, run: RunRecord) -> tuple[object, ...]:
    """What must be unchanged for numbers derived from `run` to stay valid: its store,
    id, status, stored query count, finish time and run-level metrics."""
    return (str(store.path), run.run_id, run.status, run.n_done, run.finished_at,
            json.dumps(run.metrics, sort_keys=True, default=str))


def digest(values: Sequence[str]) -> str:
    """A short fingerprint of a sequence of strings (e.g. the query ids compared)."""
    return hashlib.blake2b("\x1f".join(values).encode(), digest_size=16).hexdigest()


_SCORES: Memo[dict[str, QueryScore]] = Memo(16)


def run_scores(store: RunStore, run: RunRecord) -> dict[str, QueryScore]:
    """query_id -> its QueryScore, in query order (RunStore.query_scores, kept while the
    run is unchanged)."""
    return _SCORES.get(("scores", *run_state(store, run)),
                       lambda: {s.query_id: s for s in store.query_scores(run.run_id)})


_FAILED: Memo[tuple[QueryResult, ...]] = Memo(4)


def failed_results(store: RunStore, run: RunRecord, k: int) -> tuple[QueryResult, ...]:
    """The results of the run's queries that failed at k, with their ranked lists, in
    query order (RunStore.failed_results, kept while the run is unchanged: the failure
    report and its aggregates both read them)."""
    return _FAILED.get(("failed", k, *run_state(store, run)),
                       lambda: tuple(store.failed_results(run.run_id, k)))


_RESULTS: Memo[tuple[QueryResult, ...]] = Memo(4)


def run_results(store: RunStore, run: RunRecord) -> tuple[QueryResult, ...]:
    """The run's query results with their ranked lists, in query order
    (RunStore.iter_results, kept while the run is unchanged: the failure report and its
    aggregates both read them)."""
    return _RESULTS.get(("results", *run_state(store, run)),
                        lambda: tuple(store.iter_results(run.run_id)))
