"""Metadata ablations as runs: the table-view variants of one retriever (title / no title
× all rows / first 100 / header only, then the other formats, and on request the view
with the tables' schema context: keys and column descriptions), and running the ones not
run yet. Each variant is an ordinary run, so an ablation resumes like any run and a
variant already run with the same configuration is reused; analysis/ablation.py reads
the stored variants as a paired experiment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunRecord, RunStore, config_key
from target_core.errors import ConfigError
from target_core.progress import Progress, no_progress
from target_core.run_config import RunConfig
from target_core.table_view import FORMATS, SCHEMA_CONTEXT, TEXT_FORMATS, TableView
from target_core.types import Dataset

__all__ = ["DEFAULT_ROWS", "SCHEMA_VARIANT", "Variant", "ablation_configs",
           "ablation_variants", "complete_runs", "has_schema_context", "run_variants"]

DEFAULT_ROWS: tuple[int | None, ...] = (None, 100, 0)
SCHEMA_VARIANT = "with schema context"


@dataclass(frozen=True)
class Variant:
    name: str
    """As in Table 2: "all rows" for the base, "w/o title", "header only", ..."""
    view: TableView


def _rows_name(rows: int | None) -> str:
    return "all rows" if rows is None else ("header only" if rows == 0 else
                                            f"first {rows} rows")


def has_schema_context(dataset: Dataset) -> bool:
    """Whether any table carries a schema context key (SCHEMA_CONTEXT): where the schema
    variant can differ from the base view (the Ablations page offers it by default)."""
    return any(t.context.get(key) for t in dataset.tables for key in SCHEMA_CONTEXT)


def ablation_variants(rows: Sequence[int | None] = DEFAULT_ROWS,
                      formats: Sequence[str] = TEXT_FORMATS, *, schema: bool = False
                      ) -> list[Variant]:
    """Title × rows in markdown (the first is the base: title, all rows), then the other
    formats with the title and the first rows setting; with `schema`, last, the base view
    with the tables' keys and column descriptions (SCHEMA_VARIANT)."""
    if not rows:
        raise ConfigError("an ablation needs at least one rows setting")
    for fmt in formats:
        if fmt not in FORMATS:
            raise ConfigError(f"unknown format '{fmt}'; choose from {', '.join(FORMATS)}")
    rows = list(dict.fromkeys(rows))
    variants = []
    for r in rows:
        variants.append(Variant(_rows_name(r), TableView(rows=r)))
        variants.append(Variant(f"w/o title, {_rows_name(r)}" if r is not None
                                else "w/o title",
                                TableView(title=False, section_title=False, rows=r)))
    variants += [Variant(f"{fmt} format", TableView(rows=rows[0], format=fmt))
                 for fmt in formats if fmt != "markdown"]
    if schema:
        variants.append(Variant(SCHEMA_VARIANT, TableView(rows=rows[0],
                                                          context=SCHEMA_CONTEXT)))
    return variants


def ablation_configs(dataset: str, retriever: str, variants: Sequence[Variant], *, top_k: int,
             limit: int | None, seed: int) -> list[RunConfig]:
    return [RunConfig(dataset=dataset, retriever=retriever, view=v.view, top_k=top_k,
                      limit=limit, seed=seed) for v in variants]


def complete_runs(store: RunStore, configs: Sequence[RunConfig], fingerprint: str
                   ) -> list[RunRecord | None]:
    """The newest complete run of each configuration on this dataset version."""
    wanted = {config_key(c, fingerprint): i for i, c in enumerate(configs)}
    found: list[RunRecord | None] = [None] * len(configs)
    for run in store.list_runs(dataset=configs[0].dataset, status="complete"):
        i = wanted.get(run.config_key)
        if i is not None and found[i] is None:
            found[i] = run
    return found


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
