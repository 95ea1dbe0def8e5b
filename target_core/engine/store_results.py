"""What the run store keeps per query: each query's ranked tables with their scores, the
rank of each gold table, its metrics and time, and its generated answer (the
`query_results` table), written a batch per transaction so a run killed at any moment
keeps exactly the queries it finished."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from target_core.engine.results import QueryResult, QueryScore
from target_core.engine.store_file import StoreFile
from target_core.errors import UnknownNameError
from target_core.metrics.retrieval import QueryOutcome
from target_core.tasks.failure import FAILED_AT_SQL, LAST_GOLD_RANK_SQL
from target_core.types import TableKey


class QueryResults(StoreFile):
    """The run store's per-query results (RunStore is one)."""

    def done_query_ids(self, run_id: str) -> set[str]:
        return {r["query_id"] for r in self.db.query(
            "SELECT query_id FROM query_results WHERE run_id = ?", [run_id])}

    def generation_errors(self, run_id: str) -> list[tuple[str, str, str | None]]:
        """(query_id, error, error class as stored) of each query whose generation
        failed, in query order."""
        return [(r["query_id"], r["error"], r["error_class"]) for r in self.db.query(
            "SELECT query_id, json_extract(generation, '$.error') AS error, "
            "json_extract(generation, '$.error_class') AS error_class FROM query_results "
            "WHERE run_id = ? AND generation IS NOT NULL "
            "AND COALESCE(json_extract(generation, '$.error'), '') != '' ORDER BY position",
            [run_id])]

    def served_models(self, run_id: str) -> dict[str, int]:
        """The model ids the server answered with (as its replies name them), and how
        many of the run's generations each answered."""
        return {r["model"]: r["n"] for r in self.db.query(
            "SELECT json_extract(generation, '$.served_model') AS model, COUNT(*) AS n "
            "FROM query_results WHERE run_id = ? AND model IS NOT NULL GROUP BY model "
            "ORDER BY n DESC", [run_id])}

    def save_results(self, run_id: str, results: Iterable[QueryResult]) -> None:
        """Write a batch of query results in one transaction (all or nothing)."""
        rows = [{
            "run_id": run_id, "query_id": r.query_id, "position": r.position,
            "ranked": json.dumps([[k[0], k[1], s] for k, s in r.ranked], ensure_ascii=False),
            "gold": json.dumps([list(k) for k in r.gold], ensure_ascii=False),
            "gold_ranks": json.dumps({_key_text(k): v for k, v in r.gold_ranks.items()},
                                     ensure_ascii=False),
            "metrics": json.dumps(r.metrics), "ms": r.ms,
            "generation": None if r.generation is None else json.dumps(
                r.generation, ensure_ascii=False)} for r in results]
        with self._write():
            self.db.table("query_results").insert_all(rows, replace=True)

    def query_metrics(self, run_id: str) -> list[tuple[str, dict[str, float]]]:
        """(query_id, per-query metrics) in query order, without the ranked lists."""
        return [(r["query_id"], json.loads(r["metrics"])) for r in self.db.query(
            "SELECT query_id, metrics FROM query_results WHERE run_id = ? ORDER BY position",
            [run_id])]

    def query_scores(self, run_id: str) -> list[QueryScore]:
        """Every query's metrics, best and last gold rank, in query order."""
        return [QueryScore(r["query_id"], json.loads(r["metrics"]), r["best_rank"],
                           r["last_rank"])
                for r in self.db.query(
                    "SELECT query_id, metrics, "
                    "(SELECT MIN(value) FROM json_each(gold_ranks)) AS best_rank, "
                    f"{LAST_GOLD_RANK_SQL} AS last_rank "
                    "FROM query_results WHERE run_id = ? ORDER BY position", [run_id])]

    def failed_results(self, run_id: str, k: int) -> list[QueryResult]:
        """The results of the queries that failed at k (tasks.failure.failed_at of their
        last gold rank), in query order: what failure analysis reads, without decoding
        the ranked lists of the queries that did not fail (three quarters of a 5,000-query
        BM25 run at 100,000 tables)."""
        return [_result(row) for row in self.db.query(
            f"SELECT * FROM (SELECT *, {LAST_GOLD_RANK_SQL} AS last_rank FROM "
            f"query_results WHERE run_id = ?) WHERE {FAILED_AT_SQL} ORDER BY position",
            [run_id, k])]

    def count_results(self, run_id: str) -> int:
        """How many queries of the run are stored."""
        return int(self.db.execute("SELECT COUNT(*) FROM query_results WHERE run_id = ?",
                                   [run_id]).fetchone()[0])

    def outcomes(self, run_id: str) -> list[QueryOutcome]:
        """Each query's ranked keys against its gold, in query order: what recall curves
        need, read without the scores, metrics and generation (most of a stored result:
        2.8 times as fast as iter_results' outcome() over the demo suite's runs)."""
        found = []
        for query_id, ranked, gold, ms in self.db.execute(
                "SELECT query_id, ranked, gold, ms FROM query_results WHERE run_id = ? "
                "ORDER BY position", [run_id]).fetchall():
            keys = [tuple(k) for k in json.loads(gold)]
            found.append(QueryOutcome(query_id=query_id,
                                      retrieved=[(d, t) for d, t, _ in json.loads(ranked)],
                                      gold=tuple(keys), gold_database=keys[0][0], ms=ms))
        return found

    def iter_results(self, run_id: str) -> Iterator[QueryResult]:
        """The run's query results in query order."""
        for row in self.db.query("SELECT * FROM query_results WHERE run_id = ? "
                                 "ORDER BY position", [run_id]):
            yield _result(row)

    def get_result(self, run_id: str, query_id: str) -> QueryResult:
        rows = list(self.db.query("SELECT * FROM query_results WHERE run_id = ? AND "
                                  "query_id = ?", [run_id, query_id]))
        if not rows:
            raise UnknownNameError(f"query of run {run_id}", query_id,
                                   self.done_query_ids(run_id))
        return _result(rows[0])

    def merge_query_metrics(self, run_id: str, values: Mapping[str, Mapping[str, float | None]]
                            ) -> None:
        """Set per-query metrics found after the run, {query_id: {name: v}}; None drops."""
        with self._write():
            self.db.conn.executemany(
                "UPDATE query_results SET metrics = json_patch(metrics, ?) "
                "WHERE run_id = ? AND query_id = ?",
                [(json.dumps(v), run_id, q) for q, v in values.items()])

    def merge_run_metrics(self, run_id: str, values: dict[str, float]) -> None:
        """Add or overwrite run-level metrics computed after the run."""
        with self._write():
            self.db.execute("UPDATE runs SET metrics = json_patch(metrics, ?) WHERE run_id = ?",
                            [json.dumps(values), run_id])

    def _delete_results(self, run_id: str) -> None:
        self.db.execute("DELETE FROM query_results WHERE run_id = ?", [run_id])


def _key_text(key: TableKey) -> str:
    return json.dumps(list(key), ensure_ascii=False)


def _result(row: dict[str, Any]) -> QueryResult:
    ranks = json.loads(row["gold_ranks"])
    return QueryResult(
        query_id=row["query_id"], position=row["position"],
        ranked=[((d, t), s) for d, t, s in json.loads(row["ranked"])],
        gold=[tuple(k) for k in json.loads(row["gold"])],
        gold_ranks={tuple(json.loads(k)): v for k, v in ranks.items()},
        metrics=json.loads(row["metrics"]), ms=row["ms"],
        generation=json.loads(row["generation"]) if row.get("generation") else None)
