"""The haystack sweep run: the missing points of a recall-vs-N curve (read_models/
haystack.py reads the curve from the stored runs), each an ordinary run of the runner
with a haystack spec (engine/haystack.py draws its distractor tables)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from target_core.config import Settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.progress import Progress, no_progress
from target_core.run_config import RunConfig

__all__ = ["run_missing"]


def run_missing(missing: Sequence[RunConfig], settings: Settings, store: RunStore, *,
                progress: Progress = no_progress,
                on_point: Callable[[int, int, str], None] | None = None) -> None:
    """Run a curve's `missing` points (HaystackCurve.missing()) in this process, one
    after the other (resuming unfinished ones). `on_point(i, n, label)` is called before
    each."""
    for i, config in enumerate(missing):
        if on_point is not None:
            on_point(i, len(missing), config.label)
        run_retrieval(config, settings=settings, store=store, progress=progress)
