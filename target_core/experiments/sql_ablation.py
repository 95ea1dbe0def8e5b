"""Seed 002's ablation (its Table 2) as runs: the text-to-SQL system with its seed002
prompt and every module on, then the same with one module removed at a time (few-shot
examples, schema annotation, chain of thought), on the same queries.

Each variant is an ordinary stored run of one retriever and generator (its prompt
options in GenerationConfig.prompt_options), so a variant already complete is reused
and an unfinished one resumes; read_models/sql_ablation.py reads them as Table 2. The
variants and their configurations are plans/sql_ablation.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from target_core.config import Settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.plans.sql_ablation import (
    BASE_NAME,
    DEFAULT_SHOTS,
    SqlVariant,
    sql_ablation_configs,
    sql_ablation_variants,
    sql_variant_runs,
)
from target_core.progress import Progress, no_progress
from target_core.run_config import RunConfig
from target_core.types import Dataset

__all__ = ["BASE_NAME", "DEFAULT_SHOTS", "SqlVariant", "sql_ablation_configs",
           "sql_ablation_variants", "sql_variant_runs", "run_sql_variants"]

def run_sql_variants(store: RunStore, settings: Settings, dataset: Dataset,
                     configs: Sequence[RunConfig], *, progress: Progress = no_progress,
                     on_variant: Callable[[int, int], None] | None = None) -> None:
    """Run every configuration not complete yet (resuming unfinished ones), in order."""
    existing = sql_variant_runs(store, dataset, configs)
    for i, (config, run) in enumerate(zip(configs, existing, strict=True)):
        if on_variant is not None:
            on_variant(i, len(configs))
        if run is None:
            run_retrieval(config, settings=settings, store=store, progress=progress)
