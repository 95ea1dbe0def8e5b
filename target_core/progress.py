"""The progress protocol: long work reports how far it is, and callers draw bars."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]
"""progress(done, total, what): called as work advances; may be a no-op."""


def no_progress(done: int, total: int, what: str) -> None:
    """The default progress callback: does nothing."""


SCORING = "scoring"
"""The step after the last query of a retrieval-only run: its metrics computed and stored."""
SCORING_ANSWERS = "scoring answers"
"""The step after the last query of a run with a generator: its answers scored (which can
take a while: GTR's answer metrics) and the run's metrics stored."""
UNCOUNTED = frozenset({SCORING, SCORING_ANSWERS})
"""Steps reported with done == total that are no count: shown by their name alone, not
as 'N/N' (which reads as finished)."""
