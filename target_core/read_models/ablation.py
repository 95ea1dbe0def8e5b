"""The Ablations page's read model: the table-view variants it offers (plans/ablation.py)
read as a paired experiment (analysis/ablation.py); running the missing ones is
actions/experiments.py's run_ablation."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from target_core.analysis.ablation import AblationReport, load_ablation
from target_core.analysis.memo import Memo
from target_core.datasets.lookup import LazyTables
from target_core.plans.ablation import SCHEMA_VARIANT as SCHEMA_VARIANT
from target_core.plans.ablation import Variant, ablation_configs, ablation_variants
from target_core.read_models.links import query_link
from target_core.table_view import SCHEMA_CONTEXT
from target_core.types import TableLookup

__all__ = ["ROWS_CHOICES", "SCHEMA_VARIANT", "TABLE_FORMATS", "ablation_configs",
           "ablation_variants", "load_ablation", "chosen_variants", "has_schema_context",
           "sensitivity_frame"]

ROWS_CHOICES: dict[str, int | None] = {"all rows": None, "first 100 rows": 100,
                                       "first 10 rows": 10, "header only": 0}
"""The rows settings the page offers: label -> TableView.rows."""

TABLE_FORMATS = {"ms": "{:.2f}", "p vs base": "{:.2g}"}
"""Number formats of AblationReport.table()'s columns other than its recall columns
(3 decimals: AblationReport.recall_columns)."""


def chosen_variants(rows: Sequence[str], formats: Sequence[str], *, schema: bool = False
                    ) -> list[Variant]:
    """The variants for the page's choices: ROWS_CHOICES labels and formats (markdown
    when none is chosen), and with `schema` the schema-context variant."""
    return ablation_variants([ROWS_CHOICES[r] for r in rows], formats or ["markdown"],
                             schema=schema)


_SCHEMA_CONTEXT: Memo[bool] = Memo(16)


def has_schema_context(dataset: TableLookup) -> bool:
    """Whether any table carries a schema context key (plans.ablation.has_schema_context):
    a corpus index answers from a byte search of its corpus file and the few tables where
    a key occurs (kept per corpus version), never loading the corpus."""
    index = dataset.table_index
    if isinstance(index, LazyTables):
        return _SCHEMA_CONTEXT.get((str(index.corpus), index.corpus_fingerprint()),
                                   lambda: index.any_context(SCHEMA_CONTEXT))
    return any(t.context.get(key) for t in index.values() for key in SCHEMA_CONTEXT)


def sensitivity_frame(report: AblationReport, dataset: TableLookup, group: str
                      ) -> pd.DataFrame:
    """The queries of one sensitivity group with a link to the run that missed them."""
    run = report.missed_by(group)
    ids = report.sensitivity().get(group, [])
    rows = [{"open": query_link(run.run_id, q), "query_id": q, "tag": report.tags.get(q, ""),
             "query": dataset.query(q).query} for q in ids] if run else []
    return pd.DataFrame(rows, columns=["open", "query_id", "tag", "query"])

