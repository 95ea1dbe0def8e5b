"""Metadata ablations as runs: the table-view variants of one retriever (title / no title
× all rows / first 100 / header only, then the other formats, and on request the view
with the tables' schema context: keys and column descriptions), and running the ones not
run yet. Each variant is an ordinary run, so an ablation resumes like any run and a
variant already run with the same configuration is reused; analysis/ablation.py reads
the stored variants as a paired experiment. The variants and their configurations are
plans/ablation.py's (read models read them without importing what runs them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore, complete_runs
from target_core.plans.ablation import (
    DEFAULT_ROWS,
    SCHEMA_VARIANT,
    Variant,
    ablation_configs,
    ablation_variants,
    has_schema_context,
)
from target_core.progress import Progress, no_progress

__all__ = ["DEFAULT_ROWS", "SCHEMA_VARIANT", "Variant", "ablation_configs",
           "ablation_variants", "complete_runs", "has_schema_context", "run_variants"]

def run_variants(store: RunStore, settings: Settings, dataset: str, retriever: str, *,
                 top_k: int = 10, limit: int | None = None, seed: int = 0,
                 variants: Sequence[Variant] | None = None,
                 progress: Progress = no_progress,
                 on_variant: Callable[[int, int, str], None] | None = None
                 ) -> None:
    """Run every variant not yet run (resuming unfinished ones).

    `on_variant(i, n, name)` is called before each variant; `progress` is each run's.
    """
    variants = list(variants or ablation_variants())
    data = load_dataset(dataset, settings)
    configs = ablation_configs(dataset, retriever, variants, top_k=top_k, limit=limit, seed=seed)
    existing = complete_runs(store, configs, data.fingerprint)
    for i, (variant, config, run) in enumerate(zip(variants, configs, existing,
                                                   strict=True)):
        if on_variant is not None:
            on_variant(i, len(variants), variant.name)
        if run is None:
            run_retrieval(config, settings=settings, store=store, progress=progress)
