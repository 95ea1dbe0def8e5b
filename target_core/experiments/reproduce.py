"""TARGET's Table 2 baselines as runs (plans/reproduce.py: each method in the paper's
settings): run them in this process, or launch the missing ones as jobs (the Overview's
button); read_models/reproduce.py sets ours beside the paper's figures."""

from __future__ import annotations

from collections.abc import Callable

from target_core.config import Settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunRecord
from target_core.engine.workers import Launch, launch_run
from target_core.plans.reproduce import (
    OTTQA_VIEW,
    PAPER_K,
    Baseline,
    baselines,
    reproduction_configs,
    stored_reproduction,
)
from target_core.progress import Progress, no_progress
from target_core.run_config import DEFAULT_PROMPT_SET
from target_core.types import TableLookup

__all__ = ["OTTQA_VIEW", "PAPER_K", "Baseline", "baselines", "launch_missing", "reproduce",
           "reproduction_configs", "stored_reproduction"]


def reproduce(settings: Settings, dataset: str, *, generator: str | None = None,
              embedder: str = "minilm", summarizer: str = "heuristic", ours: bool = False,
              limit: int | None = None, seed: int = 0, progress: Progress = no_progress,
              on_method: Callable[[int, int, str], None] | None = None,
              prompt_set: str = DEFAULT_PROMPT_SET
              ) -> list[tuple[Baseline, RunRecord]]:
    """Run (or reuse) every baseline; `on_method(i, n, method)` before each."""
    configs = reproduction_configs(dataset, generator=generator, embedder=embedder,
                                   summarizer=summarizer, ours=ours, limit=limit, seed=seed,
                                   prompt_set=prompt_set)
    done = []
    for i, (baseline, config) in enumerate(configs):
        if on_method is not None:
            on_method(i, len(configs), baseline.method)
        done.append((baseline, run_retrieval(config, settings=settings,
                                             progress=progress).run))
    return done


def launch_missing(settings: Settings, dataset: TableLookup, *, generator: str | None = None,
                   embedder: str = "minilm", summarizer: str = "heuristic", ours: bool = False,
                   limit: int | None = None, seed: int = 0,
                   prompt_set: str = DEFAULT_PROMPT_SET) -> list[Launch]:
    """Launch every baseline not complete yet as a job (the Overview's button); complete
    ones are reused, queued or running ones found."""
    return [launch_run(config, settings=settings, dataset=dataset)
            for _, config in reproduction_configs(dataset.name, generator=generator,
                                                  embedder=embedder, summarizer=summarizer,
                                                  ours=ours,
                                                  limit=limit, seed=seed,
                                                  prompt_set=prompt_set)]
