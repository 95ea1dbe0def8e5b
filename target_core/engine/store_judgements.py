"""What the run store keeps of judges: a judge's rating of each answer of a run, with its
reason or error (experiments/judge.py writes them); the table is made on first use, so
stores older than judging read as having none."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from target_core.engine.store_file import StoreFile


class Judgements(StoreFile):
    """The run store's judgements (RunStore is one)."""

    def save_judgements(self, run_id: str, judge: str, label: str,
                        rows: Iterable[tuple[str, float | None, str, str | None]]) -> None:
        """A judge's (query_id, rating or None, reason, error) per query, replacing that
        judge's earlier ones; the table is made on first use (old stores lack it)."""
        now = time.time()
        with self._write():
            self.db.execute(_JUDGEMENTS)
            self.db.table("judgements").insert_all(
                [{"run_id": run_id, "query_id": q, "judge": judge, "label": label,
                  "rating": rating, "reason": reason, "error": error, "created_at": now}
                 for q, rating, reason, error in rows], replace=True)

    def judgements(self, run_id: str) -> list[dict[str, Any]]:
        """The run's stored judgements, newest first."""
        return list(self.db.query("SELECT * FROM judgements WHERE run_id = ? ORDER BY "
                                  "created_at DESC, query_id", [run_id])
                    ) if self.db["judgements"].exists() else []

    def _delete_judgements(self, run_id: str) -> None:
        if self.db["judgements"].exists():
            self.db.execute("DELETE FROM judgements WHERE run_id = ?", [run_id])


_JUDGEMENTS = """CREATE TABLE IF NOT EXISTS judgements (
    run_id TEXT NOT NULL, query_id TEXT NOT NULL, judge TEXT NOT NULL, label TEXT NOT NULL,
    rating REAL, reason TEXT NOT NULL DEFAULT '', error TEXT, created_at REAL NOT NULL,
    PRIMARY KEY (run_id, query_id, judge))"""
"""A judge's rating of one answer (experiments.judge); rating NULL: the judgement failed."""
