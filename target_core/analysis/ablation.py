"""Metadata ablations as paired experiments: one retriever, the same queries, several
table views (title / no title × all rows / first 100 / header only, and the format).

Each variant is an ordinary run in the store, so an ablation resumes like any run and a
variant already run with the same configuration is reused, not run again. The result
reads like TARGET's Table 2 (the base view's row, then its italic "w/o title" and
"header only" rows) with each variant tested against the base on the same queries, plus
which queries only one side finds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from target_core.analysis.stats import holm, mcnemar_exact
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunRecord, RunStore, config_key
from target_core.errors import ConfigError
from target_core.progress import Progress, no_progress
from target_core.types import FORMATS, Dataset, RunConfig, TableView

__all__ = ["AblationReport", "Variant", "ablation_variants", "load_ablation", "run_ablation"]

DEFAULT_ROWS: tuple[int | None, ...] = (None, 100, 0)
RECALL_KS = (1, 3, 5, 10)
SENSITIVITY: dict[str, tuple[str, str]] = {
    "only with the title": ("all rows", "w/o title"),
    "only without the title": ("w/o title", "all rows"),
    "only with rows": ("all rows", "header only"),
    "only header only": ("header only", "all rows"),
}
"""group -> (variant that finds its queries, variant that misses them)."""


@dataclass(frozen=True)
class Variant:
    name: str
    """As in Table 2: "all rows" for the base, "w/o title", "header only", ..."""
    view: TableView


def _rows_name(rows: int | None) -> str:
    return "all rows" if rows is None else ("header only" if rows == 0 else
                                            f"first {rows} rows")


def ablation_variants(rows: Sequence[int | None] = DEFAULT_ROWS,
                      formats: Sequence[str] = FORMATS) -> list[Variant]:
    """Title × rows in markdown (the first is the base: title, all rows), then the other
    formats with the title and all rows."""
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
    return variants


@dataclass(frozen=True)
class VariantResult:
    variant: Variant
    run: RunRecord | None
    """None: not run yet."""
    p_value: float | None = None
    """Holm-adjusted McNemar p of hit@k against the base (None for the base)."""


@dataclass(frozen=True)
class AblationReport:
    dataset: str
    retriever: str
    k: int
    variants: list[VariantResult]
    hits: pd.DataFrame
    """query_id × variant name: the run's hit@k (1.0: a gold table within k)."""
    tags: dict[str, str] = field(default_factory=dict)
    """query_id -> failure_mode, when the dataset's queries carry one."""

    @property
    def complete(self) -> bool:
        return all(v.run is not None for v in self.variants)

    def table(self) -> pd.DataFrame:
        """TARGET Table 2 style: one row per variant with recall@1/3/5/10, hit@k, mean ms
        and the p-value against the base row."""
        rows = []
        for v in self.variants:
            metrics = v.run.metrics if v.run else {}
            row: dict[str, Any] = {"variant": v.variant.name, "view": v.variant.view.label}
            for k in RECALL_KS:
                row[f"R@{k}"] = metrics.get(f"recall@{k}")
            row["ms"] = metrics.get("retrieval_ms_mean")
            row["p vs base"] = v.p_value
            row["run"] = v.run.run_id if v.run else None
            rows.append(row)
        return pd.DataFrame(rows)

    def italic_rows(self) -> list[int]:
        """Rows shown in italics, as Table 2 does for "w/o title" and "header only"."""
        return [i for i, v in enumerate(self.variants)
                if "w/o title" in v.variant.name or v.variant.view.rows == 0]

    def sensitivity(self) -> dict[str, list[str]]:
        """Queries whose outcome depends on one piece of metadata (paired, all rows or
        header only, markdown): found only with the title, only without it, only with
        the rows, only header only (SENSITIVITY: found in one variant, missed in the
        other)."""
        hit = self.hits
        return {label: list(hit.index[(hit[found] > 0) & (hit[missed] == 0)])
                for label, (found, missed) in SENSITIVITY.items()
                if found in hit.columns and missed in hit.columns}

    def missed_by(self, group: str) -> RunRecord | None:
        """The run that misses the queries of a sensitivity group."""
        missed = SENSITIVITY[group][1]
        return next((v.run for v in self.variants if v.variant.name == missed), None)

    def to_dict(self) -> dict[str, Any]:
        table = self.table().astype(object).where(lambda f: f.notna(), None)
        return {"dataset": self.dataset, "retriever": self.retriever, "k": self.k,
                "complete": self.complete, "table": table.to_dict(orient="records"),
                "italic_rows": self.italic_rows(), "sensitivity": self.sensitivity()}


def _configs(dataset: str, retriever: str, variants: Sequence[Variant], *, top_k: int,
             limit: int | None, seed: int) -> list[RunConfig]:
    return [RunConfig(dataset=dataset, retriever=retriever, view=v.view, top_k=top_k,
                      limit=limit, seed=seed) for v in variants]


def _complete_runs(store: RunStore, configs: Sequence[RunConfig], fingerprint: str
                   ) -> list[RunRecord | None]:
    """The newest complete run of each configuration on this dataset version."""
    wanted = {config_key(c, fingerprint): i for i, c in enumerate(configs)}
    found: list[RunRecord | None] = [None] * len(configs)
    for run in store.list_runs(dataset=configs[0].dataset, status="complete"):
        i = wanted.get(run.config_key)
        if i is not None and found[i] is None:
            found[i] = run
    return found


def load_ablation(store: RunStore, settings: Settings, dataset: str | Dataset,
                  retriever: str, *,
                  top_k: int = 10, limit: int | None = None, seed: int = 0,
                  variants: Sequence[Variant] | None = None, k: int | None = None
                  ) -> AblationReport:
    """The ablation as far as it has been run (variants not run yet have run None).

    `dataset` is a name or path (as given to run), or a loaded Dataset (runs by its name).
    """
    variants = list(variants or ablation_variants())
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, settings)
    name = data.name if isinstance(dataset, Dataset) else dataset
    configs = _configs(name, retriever, variants, top_k=top_k, limit=limit, seed=seed)
    runs = _complete_runs(store, configs, data.fingerprint)
    k = k or max(c for c in RECALL_KS if c <= top_k)
    hits = pd.DataFrame({v.name: _hit_column(store, run, k)
                         for v, run in zip(variants, runs, strict=True) if run is not None})
    p_values = _paired_p_values(hits, variants[0].name) if runs[0] is not None else {}
    results = [VariantResult(v, run, p_values.get(v.name))
               for v, run in zip(variants, runs, strict=True)]
    tags = {q.query_id: str(q.meta["failure_mode"]) for q in data.queries
            if q.meta.get("failure_mode") is not None}
    return AblationReport(dataset=data.name, retriever=retriever, k=k, variants=results,
                          hits=hits, tags={q: t for q, t in tags.items() if q in hits.index})


def _paired_p_values(hits: pd.DataFrame, base: str) -> dict[str, float]:
    """Exact McNemar of each variant's hit@k against the base on their common queries,
    Holm-adjusted over the variants (what compare_runs gives, without its bootstrap)."""
    others = [c for c in hits.columns if c != base]
    raw = []
    for name in others:
        pair = hits[[base, name]].dropna()
        found, other = pair[base] > 0, pair[name] > 0
        raw.append(mcnemar_exact(int((found & ~other).sum()), int((~found & other).sum())))
    return dict(zip(others, holm(raw), strict=True))


def _hit_column(store: RunStore, run: RunRecord, k: int) -> pd.Series:
    return pd.Series({q: m.get(f"hit@{k}", 0.0) for q, m in store.query_metrics(run.run_id)},
                     dtype=float)


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
    data = load_dataset(dataset, settings)
    configs = _configs(dataset, retriever, variants, top_k=top_k, limit=limit, seed=seed)
    existing = _complete_runs(store, configs, data.fingerprint)
    for i, (variant, config, run) in enumerate(zip(variants, configs, existing,
                                                   strict=True)):
        if on_variant is not None:
            on_variant(i, len(variants), variant.name)
        if run is None:
            run_retrieval(config, settings=settings, store=store, progress=progress)
    return load_ablation(store, settings, data if data.name == dataset else dataset,
                         retriever, top_k=top_k, limit=limit, seed=seed, variants=variants,
                         k=k)
