"""One query of one run, for the Query page: what was retrieved, where the gold went,
and which words of the query a table contains.

Highlighting works on tokens (target_core.textproc), the same notion of a word that the
lexical retrievers use, and is returned as cell styles, never as HTML with content in it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pandas as pd

from target_core.analysis.explain import explain as explain
from target_core.analysis.memo import run_scores
from target_core.datasets.chunking import document_of, is_passage, table_or_document
from target_core.datasets.chunking import passage_text as passage_text
from target_core.engine.haystack import distractor_source
from target_core.engine.haystack import with_distractors as with_distractors
from target_core.engine.store import QueryResult, RunRecord, RunStore
from target_core.read_models.datasets import table_frame
from target_core.serialize import cell_text
from target_core.tasks import task_rules
from target_core.tasks.judging import answer_right
from target_core.textproc import match_tokens
from target_core.types import Query, Table, TableKey, TableLookup, table_ref
from target_core.wording import counted


@dataclass(frozen=True)
class QueryOutcomeView:
    """Everything the Query page shows for one query of one run."""

    run: RunRecord
    query: Query
    result: QueryResult
    ranked: pd.DataFrame
    gold: pd.DataFrame
    found: bool
    """Every gold table within the run's k (tasks.failure.FAILURE_RULE)."""
    previous_failed: str | None
    next_failed: str | None
    n_failed: int


def query_terms(text: str) -> set[str]:
    """The query's words and whole numbers that cells are matched on (textproc)."""
    return match_tokens(text)


def ranked_frame(dataset: TableLookup, result: QueryResult) -> pd.DataFrame:
    """The ranked list; a passage shows its document's title, and is gold when it is or
    its document is (metrics/documents.py)."""
    gold = set(result.gold)
    rows = []
    for rank, (key, score) in enumerate(result.ranked, start=1):
        table = dataset.table_index.get(key)
        title = table.title if table else "(not in the dataset)"
        if table is not None and is_passage(table):
            title = f"{table.title} (passage {table.context.get('chunk', '')})"
        if (source := distractor_source(key)) is not None:  # a haystack run's: never gold
            title = f"distractor from {source}" + (f": {table.title}" if table else "")
        rows.append({"rank": rank, "gold": key in gold or document_of(key) in gold,
                     "table": table_ref(key),
                     "title": title,
                     "section": table.section_title if table else "", "score": score})
    return pd.DataFrame(rows, columns=["rank", "gold", "table", "title", "section", "score"])


NOT_IN_LIST = "not ranked (not in the retriever's list; it gives no scores)"
"""Where a missing gold table is, for a retriever that ranks only its hits (a py: class
of TARGET's shape, or one without score_all)."""


def gold_frame(dataset: TableLookup, result: QueryResult, top_k: int, *,
               unranked: str = "not ranked (no match)") -> pd.DataFrame:
    rows = []
    for key in result.gold:
        rank = result.gold_ranks.get(key)
        table = table_or_document(dataset.table_index, key)  # a gold document too
        where = (unranked if rank is None else
                 f"rank {rank}" + ("" if rank <= top_k else f" (beyond k = {top_k})"))
        rows.append({"table": table_ref(key), "title": table.title if table else "",
                     "rank": rank, "found": rank is not None and rank <= top_k, "where": where})
    return pd.DataFrame(rows, columns=["table", "title", "rank", "found", "where"])


@dataclass(frozen=True)
class QueryFlags:
    """Per query of a run: retrieval found every gold table within k; answer right
    (None: the run has no generator, or its task no right/wrong)."""

    k: int
    found: dict[str, bool]
    right: dict[str, bool] | None


    def filters(self) -> list[str]:
        """The Query page's filters this run offers."""
        return ["all queries", "missed by retrieval"] + (["wrong answer"] if self.right
                                                         else [])

    def chosen(self, shown: str) -> list[str]:
        """The query ids a filter keeps, in query order."""
        right = self.right or {}
        return [q for q in self.found if shown == "all queries"
                or (shown == "missed by retrieval" and not self.found[q])
                or (shown == "wrong answer" and not right.get(q, True))]

    def label(self, query_id: str) -> str:
        """The id, marked ✗ when retrieval failed and ≠ when the answer is wrong."""
        return (query_id + ("" if self.found[query_id] else "  ✗")
                + ("" if (self.right or {}).get(query_id, True) else "  ≠"))


def query_flags(store: RunStore, run: RunRecord, k: int | None = None) -> QueryFlags:
    """For the Query page's filters: which queries failed retrieval at k (default: the
    run's top_k; tasks.failure.FAILURE_RULE), which answers are wrong."""
    k = run.config.top_k if k is None else k
    scores = run_scores(store, run).values()
    found = {s.query_id: not s.failed_at(k) for s in scores}
    if task_rules(run.task).right_metric is None or run.config.generation is None:
        return QueryFlags(k, found, None)
    return QueryFlags(k, found, {s.query_id: bool(answer_right(run.task, s.metrics))
                                 for s in scores})


def failed_query_ids(store: RunStore, run: RunRecord, k: int | None = None) -> list[str]:
    """Queries that failed retrieval at k (default: the run's top_k), in query order."""
    flags = query_flags(store, run, k)
    return [q for q, found in flags.found.items() if not found]


def outcome_view(store: RunStore, dataset: TableLookup, run_id: str, query_id: str,
                 shown: list[str] | None = None) -> QueryOutcomeView:
    """One query of a run; previous/next step through the failed queries, or through
    `shown` (the queries a page's filter keeps, in query order) when given."""
    run = store.get_run(run_id)
    result = store.get_result(run_id, query_id)
    query = dataset.query(query_id)
    steps = failed_query_ids(store, run) if shown is None else shown
    order = {q: i for i, q in enumerate(run_scores(store, run))}
    here = order[query_id]
    before = [q for q in steps if order[q] < here]
    after = [q for q in steps if order[q] > here]
    return QueryOutcomeView(
        run=run, query=query, result=result, ranked=ranked_frame(dataset, result),
        gold=gold_frame(dataset, result, run.config.top_k,
                        **({"unranked": NOT_IN_LIST}
                           if run.index_info.get("ranks_beyond_k") is False else {})),
        found=not result.failed_at(run.config.top_k),
        previous_failed=before[-1] if before else None,
        next_failed=after[0] if after else None, n_failed=len(steps))


def preview_table(dataset: TableLookup, key: TableKey) -> Table:
    """The table, passage or whole gold document (its chunks joined) a preview shows."""
    found = table_or_document(dataset.table_index, key)
    return found if found is not None else dataset.table(key)


def passage_caption(table: Table) -> str:
    """Where a passage sits in its document: "passage 2 of Karsk_Mountains, characters
    90-210", or "document Karsk_Mountains, 3 passages" for a whole gold document."""
    context = table.context
    if "chunks" in context:
        n = context["chunks"]
        return f"document {context.get('document_id')}, {counted(n, 'passage')}"
    return (f"passage {context.get('chunk')} of document {context.get('document_id')}, "
            f"characters {context.get('start')}-{context.get('end')}")


def term_cells(table: Table, terms: set[str], limit: int | None = None
               ) -> tuple[set[int], set[tuple[int, int]]]:
    """Header columns and (row, column) cells whose text contains a query term."""
    header = {i for i, name in enumerate(table.header) if terms & match_tokens(name)}
    rows = table.rows if limit is None else table.rows[:limit]
    cells = {(r, c) for r, row in enumerate(rows) for c, value in enumerate(row)
             if terms & match_tokens(cell_text(value))}
    return header, cells


def highlighted_table(table: Table, terms: set[str], limit: int = 200, *,
                      rows: Collection[int] = ()) -> Any:
    """The table (first `limit` rows) as a Styler with query-term cells shaded; matching
    column names are marked with a leading '◆' (text, not markup). `rows` (0-based, e.g.
    the rows a rows-retriever matched) are shaded whole, in another colour."""
    frame = table_frame(table, limit)
    header, cells = term_cells(table, terms, limit)
    frame.columns = [f"◆ {name}" if i in header else name for i, name in enumerate(frame.columns)]
    shade = "background-color: #bfdbfe"
    matched = "background-color: #fde68a"

    def style(data: pd.DataFrame) -> pd.DataFrame:
        styles = pd.DataFrame("", index=data.index, columns=data.columns)
        for row in rows:
            if 0 <= row < len(data):
                styles.iloc[row, :] = matched
        for row, column in cells:
            styles.iat[row, column] = shade
        return styles

    return frame.style.apply(style, axis=None)


def matched_terms(table: Table, terms: set[str]) -> tuple[list[str], list[str]]:
    """(terms found in the title/section/header/cells, terms found nowhere), sorted."""
    text = " ".join([table.title, table.section_title, table.table_id, *table.header,
                     *(cell_text(v) for row in table.rows for v in row)])
    present = terms & match_tokens(text)
    return sorted(present), sorted(terms - present)
