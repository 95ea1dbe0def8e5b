"""The metadata ablation's plan: its table-view variants of one retriever (title / no
title × all rows / first 100 / header only, then the other formats, and on request the
view with the tables' schema context: keys and column descriptions) and their run
configurations. experiments/ablation.py runs them; analysis/ablation.py and the read
models read the stored variants."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from target_core.errors import ConfigError
from target_core.run_config import RunConfig
from target_core.table_view import FORMATS, SCHEMA_CONTEXT, TEXT_FORMATS, TableView
from target_core.types import Dataset

__all__ = ["DEFAULT_ROWS", "SCHEMA_VARIANT", "Variant", "ablation_configs",
           "ablation_variants", "has_schema_context"]

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
