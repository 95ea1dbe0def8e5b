"""Launching experiments (sets of runs, experiments/): a table-view ablation run in this
process, TARGET's Table 2 baselines launched as jobs, and the truthfulness judge of a
run's answers as a job."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from target_core.analysis.ablation import AblationReport, load_ablation
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.store import RunStore
from target_core.engine.workers import Launch
from target_core.experiments.ablation import Variant, ablation_variants, run_variants
from target_core.experiments.judge import launch_judge
from target_core.experiments.reproduce import launch_missing
from target_core.progress import Progress, no_progress
from target_core.types import TableLookup

__all__ = ["judge_run", "launch_baselines", "run_ablation"]


def judge_run(run_id: str, judge: str, settings: Settings, *, limit: int | None = None
              ) -> Any:
    """Rate a stored run's answers in a worker process (experiments/judge.py); the Job.
    TargetError (nothing started) for a run without answers or an unknown judge."""
    return launch_judge(run_id, judge, settings, limit=limit)


def launch_baselines(settings: Settings, dataset: TableLookup, **options: Any) -> list[Launch]:
    """Launch every Table 2 baseline not complete yet as a job (the Overview's button);
    `options` as plans.reproduce.stored_reproduction's."""
    return launch_missing(settings, dataset, **options)


def run_ablation(store: RunStore, settings: Settings, dataset: str, retriever: str, *,
                 top_k: int = 10, limit: int | None = None, seed: int = 0,
                 variants: Sequence[Variant] | None = None, k: int | None = None,
                 progress: Progress = no_progress,
                 on_variant: Callable[[int, int, str], None] | None = None
                 ) -> AblationReport:
    """Run every variant not yet run (resuming unfinished ones), then load the report.

    `on_variant(i, n, name)` is called before each variant; `progress` is each run's.
    """
    variants = list(variants or ablation_variants())
    run_variants(store, settings, dataset, retriever, top_k=top_k, limit=limit, seed=seed,
                 variants=variants, progress=progress, on_variant=on_variant)
    data = load_dataset(dataset, settings)
    return load_ablation(store, settings, data if data.name == dataset else dataset,
                         retriever, top_k=top_k, limit=limit, seed=seed, variants=variants,
                         k=k)
