"""The Ablations page's and `ablate`'s entry point: run the table-view variants not run
yet (engine/ablate.py), then read them as a paired experiment (analysis/ablation.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from target_core.analysis.ablation import AblationReport, load_ablation
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.ablate import Variant, ablation_variants, run_variants
from target_core.engine.store import RunStore
from target_core.progress import Progress, no_progress

__all__ = ["ablation_variants", "load_ablation", "run_ablation"]


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
