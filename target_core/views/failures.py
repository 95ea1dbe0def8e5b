"""The Failures page's read model: the failure report of a run at k with links to each
failed query, the category definitions, and, for a run with a generator, whether
retrieval or generation caused its wrong answers."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from target_core.analysis.attribution import Attribution, RankQuality, attribution, rank_quality
from target_core.analysis.failures import CATEGORIES, FailureReport, analyse_failures
from target_core.engine.store import RunRecord, RunStore
from target_core.types import Dataset
from target_core.views.links import query_link

ATTRIBUTION_EXAMPLES = 20
"""Queries listed per cause (retrieval-, generation-caused)."""


def failures_report(store: RunStore, dataset: Dataset, run_id: str, k: int) -> FailureReport:
    """The run's failed queries at k, categorised; raises TargetError."""
    return analyse_failures(store, dataset, run_id, k=k)


def definitions_frame(report: FailureReport) -> pd.DataFrame:
    """One row per category: its count in `report` and its definition."""
    return pd.DataFrame([{"category": n, "queries": report.counts[n], "definition": d}
                         for n, d in CATEGORIES.items()])


def present_categories(report: FailureReport) -> list[str]:
    """The categories with at least one failed query, in CATEGORIES order."""
    return [n for n, c in report.counts.items() if c]


def cases_frame(report: FailureReport, category: str | None) -> pd.DataFrame:
    """The failed queries (of `category`, or all) as the drill-down shows them: `open`
    (the Query page's link, shown as the query id), the query, why it is in `category`,
    its best gold rank, its tag (blank without one) and the other categories it is in."""
    cases = report.frame(category)
    cases.insert(0, "open", [query_link(report.run_id, q) for q in cases["query_id"]])
    cases["tag"] = cases["tag"].fillna("").astype(str)
    if category is None:
        return cases.drop(columns=["query_id"])
    cases["also in"] = [", ".join(c for c in cats.split(", ") if c != category)
                        for cats in cases["categories"]]
    return cases[["open", "query", "why", "best gold rank", "tag", "also in"]]


@dataclass(frozen=True)
class AttributionView:
    split: Attribution | None
    """None: the run's generator did not read the retrieved tables."""
    quality: RankQuality
    table: pd.DataFrame
    """gold retrieved / missed × answer right / wrong (empty without a split)."""
    examples: pd.DataFrame
    """Up to ATTRIBUTION_EXAMPLES queries per cause, with links (empty without an oracle)."""


def attribution_view(store: RunStore, run: RunRecord) -> AttributionView | None:
    """For a run with a generator (None otherwise); raises TargetError when the run's
    scores cannot be attributed."""
    generation = run.config.generation
    if generation is None:
        return None
    split = attribution(store, run.run_id) if generation.context == "retrieved" else None
    quality = rank_quality(store, run.run_id)
    table = pd.DataFrame()
    examples = pd.DataFrame(columns=["open", "query_id", "cause"])
    if split is not None:
        counts = split.counts
        table = pd.DataFrame([
            {"": "gold retrieved", "answer right": counts["retrieved_correct"],
             "answer wrong": counts["retrieved_wrong"]},
            {"": "gold missed", "answer right": counts["missed_correct"],
             "answer wrong": counts["missed_wrong"]}])
        if split.oracle is not None:
            o = split.oracle
            examples = pd.DataFrame(
                [{"open": query_link(run.run_id, q), "query_id": q, "cause": cause}
                 for cause, ids in (("retrieval", o.retrieval_caused),
                                    ("generation", o.generation_caused))
                 for q in ids[:ATTRIBUTION_EXAMPLES]], columns=["open", "query_id", "cause"])
    return AttributionView(split, quality, table, examples)


__all__ = ["ATTRIBUTION_EXAMPLES", "AttributionView", "attribution_view",
           "cases_frame", "definitions_frame", "failures_report", "present_categories"]
