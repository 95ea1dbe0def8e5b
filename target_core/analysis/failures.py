"""Failure taxonomy: why a query's gold tables were not retrieved within k.

A query fails when some gold table is not among the first k retrieved (the one rule,
tasks.failure.FAILURE_RULE). Every failed query
is either a near miss or a deep miss (by the best rank of its missing gold tables), so
each has at least one category; the others say why it may have failed and can overlap.
The evidence for each category is kept as one line of text per query.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from target_core.analysis.dense_window import Window, beyond_window, dense_embedder, window_for
from target_core.analysis.memo import Memo, failed_results, run_scores, run_state
from target_core.config import Settings, load_settings
from target_core.datasets.lookup import TableHead, database_count, table_heads, tables_of
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.errors import TargetError
from target_core.serialize import cell_text
from target_core.table_view import TableView
from target_core.tasks import task_rules
from target_core.tasks.failure import failed_at, missing_gold
from target_core.textproc import tokenize
from target_core.types import Query, Table, TableKey, TableLookup, table_ref

__all__ = ["CATEGORIES", "FailureCase", "FailureReport", "FailureTables", "analyse_failures",
           "failure_tables", "title_pair"]

CATEGORIES: dict[str, str] = {
    "near-miss": "a missing gold table is ranked just below the cut: at rank k+1 to 3k.",
    "deep-miss": "every missing gold table is ranked beyond 3k, or not ranked at all.",
    "sibling-confusion": "a table ranked above the gold table looks like it: same database "
                         "(datasets whose databases group tables), a near-identical header "
                         "(column names' Jaccard ≥ 0.8), or the same title once numbers such "
                         "as years are removed.",
    "no-lexical-overlap": "no content word of the query occurs in the gold table's title, "
                          "section title, table id, header or cells.",
    "weak-lexical-overlap": "the query shares at most one content word with the gold "
                            "table's title, section title, table id and header (cells may "
                            "still match a name or a number): it is worded differently.",
    "title-dependent": "found within k by the same retriever when the view keeps the title, "
                       "missed by this run, whose view drops it (needs that run: use "
                       "ablate).",
    "truncated-evidence": "a cell the answer rests on lies in a row this run's view did not "
                          "serialize (needs the query's `evidence` annotation).",
    "evidence-beyond-window": "dense runs (dense, hybrid): the cells the answer rests on "
                              "(the `evidence` annotation, else the gold SQL's values, else "
                              "cells holding the answer) lie past where the embedder's input "
                              "window (MiniLM: 256 tokens) cut the gold table's text.",
    "partial-multi-table": "the query has several gold tables and some, not all, were "
                           "retrieved within k.",
    "wrong-database": "text-to-SQL: the top-ranked table is from another database than the "
                      "gold one, so the SQL is written against the wrong schema.",
}
HEADER_JACCARD = 0.8
_NUMBER = re.compile(r"^\d+(st|nd|rd|th)?$")
_ID_SUFFIX = re.compile(r"_\d+$")


class FailureAnalysisError(TargetError):
    """A run that cannot be analysed (no results, k out of range, another dataset)."""


@dataclass(frozen=True)
class FailureCase:
    query_id: str
    query: str
    categories: tuple[str, ...]
    best_rank: int | None
    """Best rank of a missing gold table (None: not ranked)."""
    evidence: dict[str, str]
    """category -> why it applies, in one line."""
    tag: str | None = None
    """The query's own `failure_mode` annotation, when the dataset has one (demo data)."""


@dataclass(frozen=True)
class FailureReport:
    run_id: str
    dataset: str
    task: str
    k: int
    n_queries: int
    cases: list[FailureCase]
    title_pair: str | None
    """The run with the title used for title-dependent (None: none in the store)."""
    notes: list[str] = field(default_factory=list)

    @property
    def n_failed(self) -> int:
        return len(self.cases)

    @property
    def counts(self) -> dict[str, int]:
        """Failed queries per category, in CATEGORIES order (zeros kept)."""
        seen = Counter(c for case in self.cases for c in case.categories)
        return {name: seen[name] for name in CATEGORIES}

    def by_tag(self) -> dict[str, dict[str, int]]:
        """failure_mode tag -> category -> count, for datasets whose queries carry one."""
        table: dict[str, Counter[str]] = {}
        for case in self.cases:
            if case.tag is not None:
                table.setdefault(case.tag, Counter()).update(case.categories)
        return {tag: {name: counts[name] for name in CATEGORIES}
                for tag, counts in sorted(table.items())}

    def in_category(self, name: str) -> list[FailureCase]:
        return [c for c in self.cases if name in c.categories]

    def frame(self, category: str | None = None) -> pd.DataFrame:
        """One row per failed query (of `category`, or all): id, query, tag, best rank,
        categories and the evidence for `category` (or for each category, joined)."""
        rows = []
        for case in self.cases if category is None else self.in_category(category):
            why = (case.evidence[category] if category else
                   "; ".join(f"{name}: {text}" for name, text in case.evidence.items()))
            rows.append({"query_id": case.query_id, "query": case.query, "tag": case.tag,
                         "best gold rank": case.best_rank,
                         "categories": ", ".join(case.categories), "why": why})
        return pd.DataFrame(rows, columns=["query_id", "query", "tag", "best gold rank",
                                           "categories", "why"])

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "dataset": self.dataset, "task": self.task,
                "k": self.k, "n_queries": self.n_queries, "n_failed": self.n_failed,
                "definitions": CATEGORIES, "counts": self.counts, "by_tag": self.by_tag(),
                "title_pair": self.title_pair, "notes": self.notes,
                "cases": [asdict(c) | {"categories": list(c.categories)} for c in self.cases]}


# --- what a table says ------------------------------------------------------------------

def schema_words(table: Table) -> set[str]:
    """Content words of the title, section title, table id and header."""
    return set(tokenize(" ".join([table.title, table.section_title, table.table_id,
                                  *table.header])))


def cell_words(table: Table) -> set[str]:
    return set(tokenize(" ".join(cell_text(v) for row in table.rows for v in row)))


def title_stem(table: Table | TableHead) -> tuple[str, ...]:
    """The title's words without numbers (years, seasons, ordinals); the table id without
    its trailing index when there is no title."""
    text = table.title or _ID_SUFFIX.sub("", table.table_id)
    return tuple(w for w in tokenize(text) if not _NUMBER.match(w))


def header_jaccard(a: Table | TableHead, b: Table | TableHead) -> float:
    left = {h.strip().lower() for h in a.header}
    right = {h.strip().lower() for h in b.header}
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def _groups_by_database(dataset: TableLookup) -> bool:
    """Databases mean something only when there are several and they hold several tables
    (counted: a corpus-index lookup answers in SQL without reading its tables)."""
    return 1 < database_count(dataset.table_index) < len(dataset.table_index)


# --- the categories ---------------------------------------------------------------------

def _sibling(heads: Mapping[TableKey, Table | TableHead], gold: Table,
             above: Sequence[TableKey], by_db: bool) -> str | None:
    stem = title_stem(gold)
    for key in above:
        other = heads.get(key)
        if other is None:
            continue
        why = []
        if by_db and other.database_id == gold.database_id:
            why.append("same database")
        if len(gold.header) > 1 and header_jaccard(gold, other) >= HEADER_JACCARD:
            why.append("near-identical header")
        if stem and title_stem(other) == stem:
            why.append("same title stem")
        if why:
            return f"{table_ref(key)} ranked above {table_ref(gold.key)}: {', '.join(why)}"
    return None


def _lexical(query_words: set[str], gold: Table) -> tuple[str, str] | None:
    shared_schema = query_words & schema_words(gold)
    if not shared_schema and not query_words & cell_words(gold):
        return "no-lexical-overlap", f"{table_ref(gold.key)} shares no content word"
    if len(shared_schema) <= 1:
        said = ", ".join(sorted(shared_schema)) or "none"
        return ("weak-lexical-overlap",
                f"{table_ref(gold.key)}: title/header words in the query: {said}")
    return None


def _truncated(query: Query, missing: Sequence[TableKey], view: TableView) -> str | None:
    if view.rows is None:
        return None
    single = missing[0][1] if len(query.gold) == 1 else None
    for item in query.meta.get("evidence") or ():
        if not isinstance(item, dict) or not isinstance(item.get("row"), int):
            continue
        table_id = item.get("table_id") or single
        if any(key[1] == table_id for key in missing) and item["row"] >= view.rows:
            shown = "header only" if view.rows == 0 else f"first {view.rows} rows"
            return (f"evidence at data row {item['row'] + 1} of {table_id} "
                    f"({item.get('column', '?')}); the view keeps the {shown}")
    return None


def _above(result: QueryResult, missing: Sequence[TableKey]) -> list[TableKey]:
    """The non-gold tables ranked above the best missing gold table (all ranked tables
    when none is ranked)."""
    ranks = [r for g in missing if (r := result.gold_ranks.get(g)) is not None]
    cut = len(result.ranked) if not ranks else min(ranks) - 1
    return [key for key, _ in result.ranked[:cut] if key not in result.gold]


@dataclass(frozen=True)
class FailureTables:
    """The tables a run's failed queries at k need: their missing gold tables in full,
    the heads (names, header) of the tables ranked above them (the winners among them),
    each read once for all."""

    golds: Mapping[TableKey, Table]
    heads: Mapping[TableKey, Table | TableHead]


def _case(dataset: TableLookup, run: RunRecord, result: QueryResult, k: int, by_db: bool,
          title_hits: set[str] | None, tables: FailureTables, window: Window | None = None
          ) -> FailureCase | None:
    missing = missing_gold(result.gold, result.gold_ranks, k)
    if not missing:
        return None
    query = dataset.query(result.query_id)
    ranks = [r for g in missing if (r := result.gold_ranks.get(g)) is not None]
    best = min(ranks) if ranks else None
    evidence: dict[str, str] = {}
    if best is not None and best <= 3 * k:
        evidence["near-miss"] = f"best missing gold table at rank {best} (k = {k})"
    else:
        evidence["deep-miss"] = ("no missing gold table is ranked" if best is None
                                 else f"best missing gold table at rank {best} > 3k = {3 * k}")
    above = _above(result, missing)
    words = set(tokenize(query.query))
    for key in missing:
        gold = tables.golds.get(key)
        if gold is None:
            continue
        if "sibling-confusion" not in evidence and (why := _sibling(tables.heads, gold, above,
                                                                    by_db)):
            evidence["sibling-confusion"] = why
        lexical = _lexical(words, gold)
        if lexical and lexical[0] not in evidence:
            evidence[lexical[0]] = lexical[1]
    if title_hits is not None and result.query_id in title_hits:
        evidence["title-dependent"] = "found within k when the view keeps the title"
    if why := _truncated(query, missing, run.config.view):
        evidence["truncated-evidence"] = why
    for key in missing:
        gold = tables.golds.get(key)
        if window is not None and gold is not None and (
                why := beyond_window(window, query, gold, run.config.view)):
            evidence["evidence-beyond-window"] = why
            break
    if len(missing) < len(result.gold):
        evidence["partial-multi-table"] = (f"{len(result.gold) - len(missing)} of "
                                           f"{len(result.gold)} gold tables within k")
    if (task_rules(dataset.task).database_level and result.ranked
            and result.ranked[0][0][0] != query.database_id):
        evidence["wrong-database"] = (f"top table from '{result.ranked[0][0][0]}', gold "
                                      f"database '{query.database_id}'")
    tag = query.meta.get("failure_mode")
    return FailureCase(query_id=query.query_id, query=query.query,
                       categories=tuple(c for c in CATEGORIES if c in evidence),
                       best_rank=best, evidence=evidence,
                       tag=str(tag) if tag is not None else None)


# --- the title pair ---------------------------------------------------------------------

def _titled(view: TableView) -> bool:
    return view.title or view.section_title or view.table_id


def title_pair(store: RunStore, run: RunRecord, k: int) -> RunRecord | None:
    """The newest complete run of the same retriever on the same dataset whose view is
    this run's with the title kept (same rows and format), when this run drops it."""
    view = run.config.view
    if _titled(view):
        return None
    for other in store.list_runs(dataset=run.config.dataset, status="complete"):
        theirs = other.config.view
        if (other.run_id != run.run_id and other.config.retriever == run.config.retriever
                and other.dataset_fingerprint == run.dataset_fingerprint
                and other.config.generation is None and other.config.top_k >= k
                and _titled(theirs) and (theirs.rows, theirs.format) == (view.rows,
                                                                         view.format)):
            return other
    return None


_TABLES: Memo[FailureTables] = Memo(2)


def failure_tables(store: RunStore, dataset: TableLookup, run: RunRecord, k: int
                   ) -> FailureTables:
    """What the run's failed queries at k need of the dataset, in two bulk reads (kept
    while the run and the dataset are unchanged: the report and its aggregates share it)."""
    def read() -> FailureTables:
        golds: list[TableKey] = []
        above: list[TableKey] = []
        for result in failed_results(store, run, k):
            if missing := missing_gold(result.gold, result.gold_ranks, k):
                golds += missing
                above += _above(result, missing)
        return FailureTables(tables_of(dataset.table_index, golds),
                             table_heads(dataset.table_index, above))

    return _TABLES.get(("failure-tables", *run_state(store, run), dataset.fingerprint, k),
                       read)


def _found(store: RunStore, run: RunRecord, k: int) -> set[str]:
    """The queries of `run` that did not fail at k (from their scores: no ranked list)."""
    return {q for q, score in run_scores(store, run).items()
            if not failed_at(score.last_rank, k)}


def analyse_failures(store: RunStore, dataset: TableLookup, run_id: str, *, k: int | None = None,
                     settings: Settings | None = None) -> FailureReport:
    """Categorise every query of `run_id` whose gold tables are not all within the first
    k (default: the run's top_k, at most 10). `settings` (default: the environment's)
    tell an OpenAI embedder's window."""
    run = store.get_run(run_id)
    if run.dataset_fingerprint != dataset.fingerprint:
        raise FailureAnalysisError(f"run {run_id} was made on another version of dataset "
                                   f"'{run.config.dataset}' than the one loaded")
    if k is None:
        k = min(run.config.top_k, 10)
    if not 1 <= k <= run.config.top_k:
        raise FailureAnalysisError(f"k = {k} must be between 1 and the run's top_k "
                                   f"({run.config.top_k})")
    n_queries = store.count_results(run_id)
    if not n_queries:
        raise FailureAnalysisError(f"run {run_id} has no stored queries")
    pair = title_pair(store, run, k)
    title_hits = _found(store, pair, k) if pair else None
    by_db = _groups_by_database(dataset)
    embedder = dense_embedder(run.config.retriever)
    window = window_for(embedder, settings or load_settings()) if embedder else None
    tables = failure_tables(store, dataset, run, k)
    cases = [c for r in failed_results(store, run, k)
             if (c := _case(dataset, run, r, k, by_db, title_hits, tables, window))]
    notes = []
    if embedder and window is None:
        notes.append(f"evidence-beyond-window needs the input window of embedder "
                     f"'{embedder}', which is not known offline.")
    if pair is None and not _titled(run.config.view):
        notes.append("title-dependent needs a run of the same retriever with the title kept "
                     "(same rows and format); none is stored. `ablate` makes one.")
    if run.config.view.rows is not None and not any(q.meta.get("evidence")
                                                    for q in dataset.queries):
        notes.append("truncated-evidence needs queries annotated with `evidence`; this "
                     "dataset has none.")
    return FailureReport(run_id=run_id, dataset=run.config.dataset, task=run.task, k=k,
                         n_queries=n_queries, cases=cases,
                         title_pair=pair.run_id if pair else None, notes=notes)
