"""The progress protocol: long work reports how far it is, and callers draw bars."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]
"""progress(done, total, what): called as work advances; may be a no-op."""


def no_progress(done: int, total: int, what: str) -> None:
    """The default progress callback: does nothing."""
