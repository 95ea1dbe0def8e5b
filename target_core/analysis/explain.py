"""Why the winner beat the gold, for one query of one run: the one explanation the CLI's
`explain --json` prints and the Query page's "Why this ranking?" draws.

Two tables are compared: by default the query's first gold table missed within k (the
first gold table when none is) and the table ranked first (when a gold table is first,
the best-ranked other table); `against` names the other. Each section comes from its
own module, chosen by what the run's retriever and task are: lexical
(explain_lexical.py: bm25, tfidf, ottqa:*, hybrid's bm25 side), dense (explain_dense.py:
what the embedder saw) and text-to-SQL (explain_sql.py: schema linking); a section that
does not apply, or whose module is not there, is None.
"""

from __future__ import annotations

import logging
from typing import Any

from target_core.analysis.explain_dense import explain_dense
from target_core.analysis.explain_sql import explain_sql
from target_core.config import Settings
from target_core.engine.results import QueryResult
from target_core.engine.store import RunStore
from target_core.errors import TargetError
from target_core.tasks import task_rules
from target_core.types import TableKey, parse_table_ref, table_ref

log = logging.getLogger(__name__)


class UnknownTableError(TargetError):
    """--against names a table the run's dataset does not have."""

    def __init__(self, ref: str, dataset: str) -> None:
        super().__init__(f"table '{ref}' is not in dataset '{dataset}' (expected "
                         "DATABASE/TABLE as the Query page lists it)")


def pick_tables(result: QueryResult, top_k: int, against: str | None = None
                ) -> list[dict[str, Any]]:
    """The two tables explained, gold first: {"table", "role", "rank", "score"}; rank
    and score from the run (a gold table beyond the list: its stored rank, no score).
    The gold table is the first one missed within `top_k` (the first one when none
    is). Roles: "gold", then "winner" (ranked first) or "chosen" (`against`, or the
    best other table when a gold table ranked first)."""
    scores = {key: score for key, score in result.ranked}
    rank = {key: i for i, (key, _) in enumerate(result.ranked, start=1)}
    missed = [key for key in result.gold
              if (r := result.gold_ranks.get(key)) is None or r > top_k]
    gold = (missed or result.gold)[0]
    other: TableKey | None
    first = result.ranked[0][0] if result.ranked else None
    if against is not None:
        other = parse_table_ref(against)
        role = "winner" if other == first and first not in set(result.gold) else "chosen"
    else:
        others = [key for key, _ in result.ranked if key not in set(result.gold)]
        other = first if first is not None and first not in set(result.gold) else (
            others[0] if others else None)
        role = "winner" if other is not None and other == first else "chosen"

    def entry(key: TableKey, role: str) -> dict[str, Any]:
        return {"table": table_ref(key), "role": role,
                "rank": rank.get(key, result.gold_ranks.get(key)),
                "score": scores.get(key)}

    return [entry(gold, "gold")] + ([entry(other, role)] if other is not None else [])


def explain(store: RunStore, settings: Settings, run_id: str, query_id: str,
            against: str | None = None) -> dict[str, Any]:
    """The explanation of query `query_id` of run `run_id` (JSON-ready); `against`
    ("DATABASE/TABLE") the table compared with the gold. Raises TargetError for an
    unknown run, query or table."""
    from target_core.analysis.explain_lexical import explain_lexical
    from target_core.datasets import load_dataset

    run = store.get_run(run_id)
    result = store.get_result(run_id, query_id)
    dataset = load_dataset(run.config.dataset, settings)
    query = dataset.query(query_id)
    if against is not None and parse_table_ref(against) not in dataset.table_index \
            and parse_table_ref(against) not in {k for k, _ in result.ranked}:
        raise UnknownTableError(against, dataset.name)
    tables = pick_tables(result, run.config.top_k, against)
    explained: dict[str, Any] = {
        "run": {"id": run.run_id, "dataset": run.config.dataset, "task": run.task,
                "retriever": run.config.retriever, "view": run.config.view.label,
                "k": run.config.top_k},
        "query": {"id": query.query_id, "text": query.query},
        "tables": tables, "lexical": None, "dense": None, "sql": None}
    if len(tables) < 2:  # the run retrieved nothing but the gold: nothing to compare
        return explained
    explained["lexical"] = explain_lexical(run, settings, query.query, result, tables)
    explained["dense"] = explain_dense(run, dataset, query, tables, settings)
    if task_rules(run.task).answers_sql:
        explained["sql"] = explain_sql(run, dataset, query, tables)
    return explained
