"""Aggregate explanations of a run's failures: the query terms the gold tables lack and
the features the winning tables share, counted per failure category and for the run.

For each failed query (a case of `analysis.failures`):
- missing terms: the query's terms (`textproc.tokenize`, the one tokenizer) that no
  missing gold table's text has, the text being what this run's view serialized
  (`serialize.table_text`), so a title word is missing from a run that drops titles;
- the winner: the best-ranked table that is not gold (it sits above the best missing
  gold table), and which of WINNER_FEATURES it has against that gold table.

Counts are failed queries: a term missing twice from one query counts once; a query
with no winner (only gold above its missing gold table) has no features. Shares divide
by the failed queries in the scope.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from target_core.analysis.failures import (
    CATEGORIES,
    HEADER_JACCARD,
    FailureReport,
    FailureTables,
    _groups_by_database,
    failure_tables,
    header_jaccard,
    title_stem,
)
from target_core.analysis.memo import failed_results
from target_core.datasets.lookup import TableHead, table_heads, tables_of
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.serialize import table_text
from target_core.tasks import task_rules
from target_core.tasks.failure import missing_gold
from target_core.textproc import tokenize
from target_core.types import Table, TableKey, TableLookup, table_ref

__all__ = ["ALL", "Aggregate", "CaseExplanation", "WINNER_FEATURES", "aggregate",
           "aggregates_frame", "cases_columns", "explain_cases", "failure_explanations"]

ALL = "all failed queries"
TOP_TERMS = 10
WINNER_FEATURES: dict[str, str] = {
    "shares-title-words": "the winner's title (its table id without one) contains a "
                          "content word of the query.",
    "same-database": "the winner lies in the gold table's database (datasets whose "
                     "databases group tables, and text-to-SQL).",
    "same-title-family": "the winner's title equals the gold's once numbers such as "
                         "years are removed (a sibling page).",
    "similar-header": f"the winner's column names overlap the gold's (Jaccard ≥ "
                      f"{HEADER_JACCARD}).",
}


@dataclass(frozen=True)
class CaseExplanation:
    query_id: str
    missing_terms: tuple[str, ...]
    """Query terms no missing gold table's text has, in query order."""
    winner: TableKey | None
    features: tuple[str, ...]
    """WINNER_FEATURES the winner has, in their order."""
    title_words: tuple[str, ...] = ()
    """The query terms in the winner's title."""


@dataclass(frozen=True)
class Aggregate:
    scope: str
    """ALL or a failure category."""
    n_queries: int
    missing_terms: list[tuple[str, int]]
    """The TOP_TERMS most frequent missing terms (queries), ties alphabetical."""
    features: dict[str, int]
    """WINNER_FEATURES -> queries whose winner has it (zeros kept)."""

    def share(self, count: int) -> float:
        return count / self.n_queries if self.n_queries else 0.0


def _title_words(table: Table | TableHead) -> set[str]:
    return set(tokenize(table.title or table.table_id))


def _winner(result: QueryResult, best: int | None) -> TableKey | None:
    above = result.ranked if best is None else result.ranked[:best - 1]
    return next((key for key, _ in above if key not in result.gold), None)


def _features(winner: Table | TableHead, gold: Table, terms: set[str], by_db: bool
              ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    shared = tuple(sorted(terms & _title_words(winner)))
    stem = title_stem(gold)
    found = {"shares-title-words": bool(shared),
             "same-database": by_db and winner.database_id == gold.database_id,
             "same-title-family": bool(stem) and title_stem(winner) == stem,
             "similar-header": len(gold.header) > 1
             and header_jaccard(gold, winner) >= HEADER_JACCARD}
    return tuple(name for name in WINNER_FEATURES if found[name]), shared


def explain_cases(dataset: TableLookup, run: RunRecord, report: FailureReport,
                  results: Iterable[QueryResult], tables: FailureTables | None = None
                  ) -> dict[str, CaseExplanation]:
    """query_id -> its missing terms and its winner's features, for report's cases
    (`tables`: the ones they need, read already)."""
    failed = {case.query_id: case for case in report.cases}
    by_db = task_rules(dataset.task).database_level or _groups_by_database(dataset)
    mine = [(r, failed[r.query_id], missing_gold(r.gold, r.gold_ranks, report.k))
            for r in results if r.query_id in failed]
    if tables is None:
        tables = FailureTables(
            tables_of(dataset.table_index, [g for _, _, missing in mine for g in missing]),
            table_heads(dataset.table_index,
                        [w for r, case, _ in mine if (w := _winner(r, case.best_rank))]))
    gold_tables, winners = tables.golds, tables.heads
    texts: dict[TableKey, set[str]] = {}
    out: dict[str, CaseExplanation] = {}
    for result, case, missing in mine:
        golds = [t for g in missing if (t := gold_tables.get(g)) is not None]
        for gold in golds:
            if gold.key not in texts:
                texts[gold.key] = set(tokenize(table_text(gold, run.config.view)))
        terms = list(dict.fromkeys(tokenize(case.query)))
        lacking = tuple(t for t in terms if golds and not any(t in texts[g.key]
                                                              for g in golds))
        winner_key = _winner(result, case.best_rank)
        winner = winners.get(winner_key) if winner_key else None
        best_gold = min(golds, key=lambda g: result.gold_ranks.get(g.key) or 10**9,
                        default=None)
        features: tuple[str, ...] = ()
        shared: tuple[str, ...] = ()
        if winner is not None and best_gold is not None:
            features, shared = _features(winner, best_gold, set(terms), by_db)
        out[case.query_id] = CaseExplanation(case.query_id, lacking, winner_key, features,
                                             shared)
    return out


def aggregate(report: FailureReport, explained: Mapping[str, CaseExplanation],
              top: int = TOP_TERMS) -> list[Aggregate]:
    """The run's aggregate (first), then one per category with failed queries."""
    scopes = [(ALL, report.cases)] + [(name, report.in_category(name))
                                      for name in CATEGORIES if report.counts[name]]
    out = []
    for scope, cases in scopes:
        rows = [explained[c.query_id] for c in cases if c.query_id in explained]
        terms = Counter(t for row in rows for t in row.missing_terms)
        features = Counter(f for row in rows for f in row.features)
        out.append(Aggregate(scope, len(cases),
                             sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:top],
                             {name: features[name] for name in WINNER_FEATURES}))
    return out


def aggregates_frame(aggregates: list[Aggregate]) -> pd.DataFrame:
    """One row per (scope, missing term or winner feature): its failed queries and their
    share of the scope's failed queries."""
    rows: list[dict[str, Any]] = []
    for agg in aggregates:
        rows += [{"scope": agg.scope, "failed queries": agg.n_queries,
                  "kind": "missing term", "item": term, "queries": n,
                  "share": round(agg.share(n), 4)} for term, n in agg.missing_terms]
        rows += [{"scope": agg.scope, "failed queries": agg.n_queries,
                  "kind": "winner feature", "item": name, "queries": n,
                  "share": round(agg.share(n), 4)} for name, n in agg.features.items()]
    return pd.DataFrame(rows, columns=["scope", "failed queries", "kind", "item", "queries",
                                       "share"])


def cases_columns(explained: Mapping[str, CaseExplanation], query_ids: Iterable[str]
                  ) -> pd.DataFrame:
    """Per query: its missing terms, its winner and the winner's features (joined)."""
    rows = []
    for query_id in query_ids:
        row = explained.get(query_id)
        rows.append({"missing terms": " ".join(row.missing_terms) if row else "",
                     "winner": table_ref(row.winner) if row and row.winner else "",
                     "winner features": ", ".join(row.features) if row else ""})
    return pd.DataFrame(rows, columns=["missing terms", "winner", "winner features"])


def failure_explanations(store: RunStore, dataset: TableLookup, report: FailureReport
                         ) -> tuple[dict[str, CaseExplanation], list[Aggregate]]:
    """The report's per-query explanations and their aggregates (reads its results)."""
    run = store.get_run(report.run_id)
    explained = explain_cases(dataset, run, report, failed_results(store, run, report.k),
                              failure_tables(store, dataset, run, report.k))
    return explained, aggregate(report, explained)
