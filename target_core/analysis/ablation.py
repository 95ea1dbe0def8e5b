"""Metadata ablations as paired experiments: one retriever, the same queries, several
table views (title / no title × all rows / first 100 / header only, and the format).

Each variant is an ordinary run in the store, so an ablation resumes like any run and a
variant already run with the same configuration is reused, not run again. The result
reads like TARGET's Table 2 (the base view's row, then its italic "w/o title" and
"header only" rows) with each variant tested against the base on the same queries, plus
which queries only one side finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from target_core.analysis.memo import run_scores
from target_core.analysis.stats import holm, mcnemar_exact
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.store import RunRecord, RunStore
from target_core.experiments.ablation import (
    Variant,
    ablation_configs,
    ablation_variants,
    complete_runs,
)
from target_core.metrics.labels import label
from target_core.types import TableLookup

__all__ = ["AblationReport", "VariantResult", "load_ablation"]

RECALL_KS = (1, 3, 5, 10)
SENSITIVITY: dict[str, tuple[str, str]] = {
    "only with the title": ("all rows", "w/o title"),
    "only without the title": ("w/o title", "all rows"),
    "only with rows": ("all rows", "header only"),
    "only header only": ("header only", "all rows"),
}
"""group -> (variant that finds its queries, variant that misses them)."""


@dataclass(frozen=True)
class VariantResult:
    variant: Variant
    run: RunRecord | None
    """None: not run yet."""
    p_value: float | None = None
    """Holm-adjusted McNemar p of found-at-k against the base (None for the base)."""


@dataclass(frozen=True)
class AblationReport:
    dataset: str
    retriever: str
    k: int
    variants: list[VariantResult]
    hits: pd.DataFrame
    """query_id × variant name: 1.0 where the run found every gold table within k
    (tasks.failure.FAILURE_RULE), 0.0 where it failed."""
    tags: dict[str, str] = field(default_factory=dict)
    """query_id -> failure_mode, when the dataset's queries carry one."""

    @property
    def complete(self) -> bool:
        return all(v.run is not None for v in self.variants)

    @property
    def recall_columns(self) -> list[tuple[str, str]]:
        """(column, metric) of table()'s recall columns: TARGET's recall at 1, 3, 5, 10
        under its one label (metrics.labels: "R@k"; text-to-SQL "R@k tables")."""
        task = next((v.run.task for v in self.variants if v.run), None)
        return [(label(f"recall_micro@{k}", task), f"recall_micro@{k}") for k in RECALL_KS]

    def table(self) -> pd.DataFrame:
        """TARGET Table 2 style: one row per variant with TARGET's recall at 1/3/5/10
        (`recall_columns`), mean ms and the p-value against the base row."""
        rows = []
        for v in self.variants:
            metrics = v.run.metrics if v.run else {}
            row: dict[str, Any] = {"variant": v.variant.name, "view": v.variant.view.label}
            for column, metric in self.recall_columns:
                row[column] = metrics.get(metric)
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


def load_ablation(store: RunStore, settings: Settings, dataset: str | TableLookup,
                  retriever: str, *,
                  top_k: int = 10, limit: int | None = None, seed: int = 0,
                  variants: Sequence[Variant] | None = None, k: int | None = None
                  ) -> AblationReport:
    """The ablation as far as it has been run (variants not run yet have run None).

    `dataset` is a name or path (as given to run), or a loaded Dataset or a lookup over
    its corpus index (runs by its name: only its name, fingerprint and queries are read).
    """
    variants = list(variants or ablation_variants())
    data = dataset if isinstance(dataset, TableLookup) else load_dataset(dataset, settings)
    name = data.name if isinstance(dataset, TableLookup) else dataset
    configs = ablation_configs(name, retriever, variants, top_k=top_k, limit=limit, seed=seed)
    runs = complete_runs(store, configs, data.fingerprint)
    k = k or max(c for c in RECALL_KS if c <= top_k)
    hits = pd.DataFrame({v.name: _found_column(store, run, k)
                         for v, run in zip(variants, runs, strict=True) if run is not None})
    p_values = _paired_p_values(hits, variants[0].name) if runs[0] is not None else {}
    results = [VariantResult(v, run, p_values.get(v.name))
               for v, run in zip(variants, runs, strict=True)]
    tags = {q.query_id: str(q.meta["failure_mode"]) for q in data.queries
            if q.meta.get("failure_mode") is not None}
    return AblationReport(dataset=data.name, retriever=retriever, k=k, variants=results,
                          hits=hits, tags={q: t for q, t in tags.items() if q in hits.index})


def _paired_p_values(hits: pd.DataFrame, base: str) -> dict[str, float]:
    """Exact McNemar of each variant's found-at-k against the base on common queries,
    Holm-adjusted over the variants (what compare_runs gives, without its bootstrap)."""
    others = [c for c in hits.columns if c != base]
    raw = []
    for name in others:
        pair = hits[[base, name]].dropna()
        found, other = pair[base] > 0, pair[name] > 0
        raw.append(mcnemar_exact(int((found & ~other).sum()), int((~found & other).sum())))
    return dict(zip(others, holm(raw), strict=True))


def _found_column(store: RunStore, run: RunRecord, k: int) -> pd.Series:
    """1.0 where the run found every gold table within k (tasks.failure.FAILURE_RULE)."""
    return pd.Series({s.query_id: 0.0 if s.failed_at(k) else 1.0
                      for s in run_scores(store, run).values()}, dtype=float)
