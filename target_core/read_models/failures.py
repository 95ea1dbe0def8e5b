"""The Failures page's read model: the failure report of a run at k with links to each
failed query, the category definitions, and, for a run with a generator, whether
retrieval or generation caused its wrong answers.

The report and its aggregates are kept in the process (analysis.memo) while the run, its
title pair, the dataset and k are unchanged, so a rerun or a revisit does no work."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from target_core.analysis.attribution import Attribution, RankQuality, attribution, rank_quality
from target_core.analysis.failure_aggregates import (
    ALL,
    WINNER_FEATURES,
    aggregates_frame,
    cases_columns,
    failure_explanations,
)
from target_core.analysis.failures import (
    CATEGORIES,
    FailureReport,
    analyse_failures,
    title_pair,
)
from target_core.analysis.memo import Memo, digest, run_scores, run_state
from target_core.config import Settings, load_settings
from target_core.engine.notes import notes as notes
from target_core.engine.store import RunRecord, RunStore
from target_core.read_models.cells import formatted
from target_core.read_models.links import query_link
from target_core.types import TableLookup

ATTRIBUTION_EXAMPLES = 20
"""Queries listed per cause (retrieval-, generation-caused)."""


_REPORTS: Memo[FailureReport] = Memo(8)


def failures_report(store: RunStore, dataset: TableLookup, run_id: str, k: int,
                    settings: Settings | None = None) -> FailureReport:
    """The run's failed queries at k, categorised (kept while the run, the run it is
    paired with for title-dependent, the dataset and k are unchanged; `settings` tell an
    OpenAI embedder's window); raises TargetError."""
    settings = settings or load_settings()
    run = store.get_run(run_id)
    pair = title_pair(store, run, k)
    key = ("failures", *run_state(store, run), dataset.fingerprint, k,
           run_state(store, pair) if pair else None, settings.openai_base_url)
    return _REPORTS.get(key, lambda: analyse_failures(store, dataset, run_id, k=k,
                                                      settings=settings))


def definitions(report: FailureReport) -> list[tuple[str, int, str]]:
    """Each category with its count in `report` and its definition (Markdown: the text
    docs/failures.md shows), in CATEGORIES order."""
    return [(n, report.counts[n], d) for n, d in CATEGORIES.items()]


def present_categories(report: FailureReport) -> list[str]:
    """The categories with at least one failed query, in CATEGORIES order."""
    return [n for n, c in report.counts.items() if c]


def cases_frame(report: FailureReport, category: str | None) -> pd.DataFrame:
    """The failed queries (of `category`, or all) as the drill-down shows them: `open`
    (the Query page's link, shown as the query id), the query, why it is in `category`,
    its best gold rank (text: "not ranked" when the run ranked none of its gold tables), its
    tag (blank without one) and the other categories it is in."""
    cases = report.frame(category)
    cases.insert(0, "open", [query_link(report.run_id, q) for q in cases["query_id"]])
    cases["tag"] = cases["tag"].fillna("").astype(str)
    if category is None:
        return cases.drop(columns=["query_id"])
    cases["also in"] = [", ".join(c for c in cats.split(", ") if c != category)
                        for cats in cases["categories"]]
    # text: a gold table the run did not rank at all would be drawn as a grey "None"
    cases["best gold rank"] = [formatted(rank, ".0f") or "not ranked"
                               for rank in cases["best gold rank"]]
    return cases[["open", "query", "why", "best gold rank", "tag", "also in"]]


@dataclass(frozen=True)
class AggregatesView:
    """What recurs among the failed queries (analysis.failure_aggregates), per scope."""

    frame: pd.DataFrame
    """scope | failed queries | kind | item | queries | share: the aggregates' CSV."""
    export: pd.DataFrame
    """report.frame() (every failed query) + missing terms, winner, winner features."""

    def terms(self, scope: str = ALL) -> pd.DataFrame:
        """The scope's most frequent missing query terms: term | queries | share."""
        rows = self.frame[(self.frame["scope"] == scope)
                          & (self.frame["kind"] == "missing term")]
        return rows[["item", "queries", "share"]].rename(columns={"item": "term"})

    def features(self, scope: str = ALL) -> pd.DataFrame:
        """The scope's winner features: feature | queries | share | meaning."""
        rows = self.frame[(self.frame["scope"] == scope)
                          & (self.frame["kind"] == "winner feature")]
        out = rows[["item", "queries", "share"]].rename(columns={"item": "feature"})
        return out.assign(meaning=[WINNER_FEATURES[f] for f in out["feature"]])


_AGGREGATES: Memo[AggregatesView] = Memo(8)


def aggregates_view(store: RunStore, dataset: TableLookup, report: FailureReport
                    ) -> AggregatesView:
    """The report's aggregate explanations and the per-query export carrying them (kept
    while the run, the dataset and the report's cases are unchanged)."""
    def make() -> AggregatesView:
        explained, aggregates = failure_explanations(store, dataset, report)
        export = report.frame()
        export = pd.concat([export, cases_columns(explained, export["query_id"])], axis=1)
        return AggregatesView(aggregates_frame(aggregates), export)

    cases = digest([f"{c.query_id}|{c.best_rank}|{','.join(c.categories)}"
                    for c in report.cases])
    key = ("aggregates", *run_state(store, store.get_run(report.run_id)),
           dataset.fingerprint, report.k, cases)
    return _AGGREGATES.get(key, make)


WINDOW_CATEGORY = "evidence-beyond-window"


def window_share(report: FailureReport, run: RunRecord) -> str | None:
    """For a dense run (dense, hybrid), how many of its failed queries have their
    evidence beyond the embedder's window, as a share of them; None for other runs."""
    from target_core.analysis.dense_window import dense_embedder

    embedder = dense_embedder(run.config.retriever)
    if embedder is None or not report.n_failed:
        return None
    n = report.counts[WINDOW_CATEGORY]
    return (f"{n} of {report.n_failed} failed queries ({n / report.n_failed:.0%}) have "
            f"their evidence beyond {embedder}'s input window")


def top_tables(n: int) -> str:
    """"the top table" / "the top 5 tables"."""
    return "the top table" if n == 1 else f"the top {n} tables"


@dataclass(frozen=True)
class MissCounts:
    """The page's two counts of queries that missed a gold table, by the one rule
    (tasks.failure.failed_at) at two cuts: the headline's k, and `context_k`, the tables
    the generator was given (the attribution's rows). A query missed at the larger cut
    is missed at the smaller, so the counts differ by exactly `between`."""

    k: int
    missed_within_k: int
    context_k: int
    missed_in_context: int
    between: int
    """Queries missed at the smaller cut whose gold is all within the larger one."""

    @property
    def note(self) -> str:
        """The two counts and their difference, with its reason."""
        given = top_tables(self.context_k)
        if self.context_k == self.k:
            return (f"The generator was given {given}, the cut of the count above "
                    f"(k = {self.k}): the same {self.missed_within_k} queries missed a "
                    f"gold table.")
        counts = (f"{self.missed_in_context} queries missed a gold table in {given} (what "
                  f"the generator saw), {self.missed_within_k} within k = {self.k} (the "
                  f"count above): ")
        if self.context_k < self.k:
            return counts + (f"{self.between} more: their gold was within k = {self.k} "
                             f"but the generator saw only {given}.")
        return counts + (f"{self.between} fewer: the generator saw {given}, more than "
                         f"k = {self.k}, and their gold was within them.")


def miss_counts(store: RunStore, run: RunRecord, k: int, context_k: int) -> MissCounts:
    """Queries of `run` that missed a gold table within k and within `context_k`."""
    low, high = sorted((k, context_k))
    scores = run_scores(store, run).values()
    return MissCounts(
        k=k, missed_within_k=sum(s.failed_at(k) for s in scores), context_k=context_k,
        missed_in_context=sum(s.failed_at(context_k) for s in scores),
        between=sum(s.failed_at(low) and not s.failed_at(high) for s in scores))


@dataclass(frozen=True)
class AttributionView:
    split: Attribution | None
    """None: the run's generator did not read the retrieved tables."""
    quality: RankQuality
    table: pd.DataFrame
    """gold in / not in the tables given × answer right / wrong (empty without a split)."""
    examples: pd.DataFrame
    """Up to ATTRIBUTION_EXAMPLES queries per cause, with links (empty without an oracle)."""
    misses: MissCounts | None = None
    """The table's misses against the headline's (None without a split)."""

    @property
    def caption(self) -> str | None:
        """What the table's rows count (None without a split)."""
        if self.split is None:
            return None
        given = top_tables(self.split.k)
        return (f"Rows: whether every gold table was in {given} retrieved, the tables the "
                f"generator was given (its context, k = {self.split.k}). Right: "
                f"{self.split.correct_rule}.")


def attribution_view(store: RunStore, run: RunRecord, k: int | None = None
                     ) -> AttributionView | None:
    """For a run with a generator (None otherwise), with its misses against the page's
    headline count at `k` (default: the run's top_k, at most 10, as analyse_failures);
    raises TargetError when the run's scores cannot be attributed."""
    generation = run.config.generation
    if generation is None:
        return None
    split = attribution(store, run.run_id) if generation.context == "retrieved" else None
    quality = rank_quality(store, run.run_id)
    table = pd.DataFrame()
    examples = pd.DataFrame(columns=["open", "query_id", "cause"])
    misses = None
    if split is not None:
        counts, given = split.counts, top_tables(split.k)
        table = pd.DataFrame([
            {"": f"all gold in {given}", "answer right": counts["retrieved_correct"],
             "answer wrong": counts["retrieved_wrong"]},
            {"": f"a gold table not in {given}", "answer right": counts["missed_correct"],
             "answer wrong": counts["missed_wrong"]}])
        misses = miss_counts(store, run, k or min(run.config.top_k, 10), split.k)
        if split.oracle is not None:
            o = split.oracle
            examples = pd.DataFrame(
                [{"open": query_link(run.run_id, q), "query_id": q, "cause": cause}
                 for cause, ids in (("retrieval", o.retrieval_caused),
                                    ("generation", o.generation_caused))
                 for q in ids[:ATTRIBUTION_EXAMPLES]], columns=["open", "query_id", "cause"])
    return AttributionView(split, quality, table, examples, misses)


__all__ = ["ATTRIBUTION_EXAMPLES", "AggregatesView", "AttributionView", "MissCounts",
           "aggregates_view", "attribution_view",
           "cases_frame", "definitions", "failures_report", "miss_counts",
           "present_categories", "top_tables", "window_share"]
