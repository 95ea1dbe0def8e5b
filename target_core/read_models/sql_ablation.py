"""Seed 002's Table 2 from stored runs: per variant of the text-to-SQL prompt (the full
system, then one module removed at a time; plans/sql_ablation.py), on the queries every
stored variant answered:

- Overall Acc = EA + Alt; EA: the prediction's result equals the gold result (execution
  match); Alt: not EA, but equal to an alternative reading of the question (seed 002's
  hierarchical rule, sql/interpretations.py); Error = 1 - Overall;
- P50 / P90 of the generation time in seconds (numpy's linear percentiles) over the
  replies that were not served from the response cache (a cached reply has no latency;
  a variant whose prompts equal another's is all cache hits when run after it);
- mean prompt and reply tokens per query as the server counted them (none for the
  heuristic generator, which calls no model);
- p vs base: the exact McNemar test of each query's overall correctness against the
  full system's on the same queries, Holm-adjusted over the variants;
- with the `answer` option, the phrased answers' mean sentence BLEU and ROUGE-L F over
  the queries with a reference answer.

The heuristic generator reads no prompt, so for it the toggles change nothing: its rows
are equal by construction and the report says so (`notes`) instead of ranking them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from target_core.analysis.stats import holm, mcnemar_exact
from target_core.engine.store import RunRecord, RunStore
from target_core.generators.sql_prompt_options import applies_to
from target_core.metrics.downstream import generation_summary
from target_core.plans.sql_ablation import (
    SqlVariant,
    sql_ablation_configs,
    sql_ablation_variants,
    sql_variant_runs,
)
from target_core.read_models.links import run_queries_link
from target_core.run_config import RunConfig
from target_core.types import Dataset

__all__ = ["TABLE2_COLUMNS", "SqlAblation", "VariantOutcome", "load_sql_ablation"]

TABLE2_COLUMNS = ("variant", "options", "Overall Acc", "EA", "Alt", "Error", "P50 s",
                  "P90 s", "tokens in", "tokens out", "p vs base", "queries", "run_id")


@dataclass(frozen=True)
class VariantOutcome:
    """One variant's stored run (None: not run yet) and its per-query outcomes."""

    variant: SqlVariant
    config: RunConfig
    run: RunRecord | None
    per_query: dict[str, dict[str, Any]] = field(default_factory=dict)
    """query id -> {ea, alt, ms, cached, tokens_in, tokens_out, bleu, rouge_l}."""


def _outcomes(store: RunStore, run: RunRecord) -> dict[str, dict[str, Any]]:
    rows = {}
    for result in store.iter_results(run.run_id):
        record = result.generation or {}
        flags = (record.get("sql") or {}).get("flags") or {}
        answer = record.get("nl_answer") or {}
        ea = bool(flags.get("execution_match"))
        rows[result.query_id] = {
            "ea": ea, "alt": not ea and bool(flags.get("alt_interpretation")),
            "ms": record.get("ms"), "cached": bool(record.get("cached")),
            "tokens_in": record.get("tokens_in"), "tokens_out": record.get("tokens_out"),
            "bleu": answer.get("bleu"), "rouge_l": answer.get("rouge_l")}
    return rows


def _mean(values: Sequence[Any]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


@dataclass(frozen=True)
class SqlAblation:
    dataset: str
    retriever: str
    generator: str
    variants: tuple[VariantOutcome, ...]
    notes: tuple[str, ...] = ()

    def missing(self) -> list[RunConfig]:
        """Configurations of the variants not stored yet (to run or launch as jobs)."""
        return [v.config for v in self.variants if v.run is None]

    def shared_queries(self) -> list[str]:
        """Query ids every stored variant answered, in the base run's order."""
        stored = [v.per_query for v in self.variants if v.run is not None]
        if not stored:
            return []
        return [q for q in stored[0] if all(q in other for other in stored[1:])]

    def table(self) -> pd.DataFrame:
        """Table 2: one row per variant (TABLE2_COLUMNS; + "BLEU" and "ROUGE-L" when any
        variant phrased answers); fractions in [0, 1], NaN where not measurable."""
        queries = self.shared_queries()
        base = self.variants[0]
        rows: list[dict[str, Any]] = []
        p_raw: list[tuple[int, float]] = []
        for v in self.variants:
            row: dict[str, Any] = {"variant": v.variant.name,
                                   "options": ",".join(v.variant.options.to_options()),
                                   "queries": len(queries) if v.run else 0,
                                   "run_id": v.run.run_id if v.run else None}
            if v.run is not None and queries:
                outcome = [v.per_query[q] for q in queries]
                ea = sum(o["ea"] for o in outcome) / len(outcome)
                alt = sum(o["alt"] for o in outcome) / len(outcome)
                live = generation_summary([o["ms"] for o in outcome
                                           if o["ms"] is not None and not o["cached"]])
                row.update({"Overall Acc": ea + alt, "EA": ea, "Alt": alt,
                            "Error": 1 - ea - alt,
                            "P50 s": _seconds(live.get("generation_ms_p50")),
                            "P90 s": _seconds(live.get("generation_ms_p90")),
                            "tokens in": _mean([o["tokens_in"] for o in outcome]),
                            "tokens out": _mean([o["tokens_out"] for o in outcome]),
                            "BLEU": _mean([o["bleu"] for o in outcome]),
                            "ROUGE-L": _mean([o["rouge_l"] for o in outcome])})
                if v is not base and base.run is not None:
                    right = [base.per_query[q]["ea"] or base.per_query[q]["alt"]
                             for q in queries]
                    mine = [o["ea"] or o["alt"] for o in outcome]
                    b = sum(r and not m for r, m in zip(right, mine, strict=True))
                    c = sum(m and not r for r, m in zip(right, mine, strict=True))
                    p_raw.append((len(rows), mcnemar_exact(b, c)))
            rows.append(row)
        for (i, _), adjusted in zip(p_raw, holm([p for _, p in p_raw]), strict=True):
            rows[i]["p vs base"] = adjusted
        frame = pd.DataFrame(rows)
        extra = [c for c in ("BLEU", "ROUGE-L") if c in frame and frame[c].notna().any()]
        frame = frame.reindex(columns=[*TABLE2_COLUMNS, *extra])
        for column in frame.columns:
            if column not in ("variant", "options", "run_id", "queries"):
                frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
        frame["open"] = [run_queries_link(r) if isinstance(r, str) else None
                         for r in frame["run_id"]]
        return frame


SHOWN_FORMATS = {"Overall Acc": ".2%", "EA": ".2%", "Alt": ".2%", "Error": ".2%",
                 "P50 s": ".3f", "P90 s": ".3f", "p vs base": ".3g", "tokens in": ".1f",
                 "tokens out": ".1f", "BLEU": ".1f", "ROUGE-L": ".3f"}


def shown_table(report: SqlAblation) -> pd.DataFrame:
    """Table 2 as the page shows it: numbers as text (accuracies in percent), blank where
    a variant is not run yet or a figure cannot be measured; no run id column."""
    from target_core.read_models.cells import as_text

    frame = report.table()
    frame = as_text(frame, {c: f for c, f in SHOWN_FORMATS.items() if c in frame})
    frame["open"] = frame["open"].fillna("")
    return frame.drop(columns=["run_id"])


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def load_sql_ablation(store: RunStore, dataset: Dataset, retriever: str, generator: str, *,
                      few_shot: int = 3, answer: bool = False, top_k: int = 10,
                      limit: int | None = None, seed: int = 0, name: str | None = None
                      ) -> SqlAblation:
    """The ablation's variants with their stored runs (missing ones without) and notes
    on what cannot differ: a generator that reads no prompt, a dataset without column
    descriptions. `name`: the dataset as runs name it (default: its name)."""
    variants = sql_ablation_variants(few_shot, answer=answer)
    configs = sql_ablation_configs(name or dataset.name, retriever, generator, variants,
                                   top_k=top_k, limit=limit, seed=seed)
    runs = sql_variant_runs(store, dataset, configs)
    outcomes = tuple(VariantOutcome(v, c, r, _outcomes(store, r) if r else {})
                     for v, c, r in zip(variants, configs, runs, strict=True))
    notes = []
    if not applies_to(generator):
        notes.append(f"{generator}: prompt toggles do not apply (it reads no prompt and "
                     "writes SQL by rules), so every row's accuracy is the same by "
                     "construction; only timing noise differs.")
    if not any(t.context.get("column_descriptions") for t in dataset.tables):
        notes.append(f"{dataset.name} has no column descriptions: schema annotation adds "
                     "nothing, so '[-] Schema Annotation' sends the full system's prompts "
                     "(an LLM's replies then come from the cache: no latency).")
    return SqlAblation(dataset.name, retriever, generator, outcomes, tuple(notes))
