"""Notes on a query: what a user found (a what-if probe, a remark), kept with the runs.

A note belongs to a dataset (by name) and a query, not to a run: it shows on the Query
page of any run of that dataset and in the Failures page's drill-down. Notes live in the
run store's SQLite file, in a table made on first use (older stores lack it), so a
workspace carries its notes with its runs.
"""

from __future__ import annotations

import json
import time
from typing import Any

from target_core.engine.store import RunStore
from target_core.errors import ConfigError

_NOTES = """CREATE TABLE IF NOT EXISTS query_notes (
    note_id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL,
    query_id TEXT NOT NULL, text TEXT NOT NULL, probe TEXT, created_at REAL NOT NULL)"""

MAX_NOTE = 4000
"""Characters of a note's text."""


def save_note(store: RunStore, dataset: str, query_id: str, text: str,
              probe: dict[str, Any] | None = None) -> int:
    """Store a note on (dataset, query_id) with an optional probe (Probe.to_dict());
    returns its id. ConfigError for an empty or over-long text."""
    text = text.strip()
    if not text and probe is None:
        raise ConfigError(f"a note on query {query_id} needs a text or a probe")
    if len(text) > MAX_NOTE:
        raise ConfigError(f"a note on query {query_id} has {len(text)} characters; "
                          f"at most {MAX_NOTE}")
    with store.db.conn:  # one transaction
        store.db.execute(_NOTES)
        cursor = store.db.execute(
            "INSERT INTO query_notes (dataset, query_id, text, probe, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [dataset, query_id, text, None if probe is None else json.dumps(probe),
             time.time()])
    return int(cursor.lastrowid or 0)


def notes(store: RunStore, dataset: str, query_id: str | None = None
          ) -> list[dict[str, Any]]:
    """The notes on a dataset's queries (or one query's), newest first; each with
    note_id, dataset, query_id, text, probe (dict or None), created_at."""
    if not store.db["query_notes"].exists():
        return []
    sql = "SELECT * FROM query_notes WHERE dataset = ?"
    params: list[Any] = [dataset]
    if query_id is not None:
        sql += " AND query_id = ?"
        params.append(query_id)
    rows = list(store.db.query(sql + " ORDER BY created_at DESC, note_id DESC", params))
    return [row | {"probe": json.loads(row["probe"]) if row["probe"] else None}
            for row in rows]


def delete_note(store: RunStore, note_id: int) -> None:
    if store.db["query_notes"].exists():
        with store.db.conn:
            store.db.execute("DELETE FROM query_notes WHERE note_id = ?", [note_id])
