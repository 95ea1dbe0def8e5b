"""The response cache: a model's reply stored under (model, messages, response format).

A rerun of the same prompts costs nothing and gives the same answers. Only successful
replies are stored, with the server's finish_reason, so a reply the context window cut
short stays `truncated` on a rerun (a cache made before that column has none: the reader
then judges by the reply's length). SQLite in the workspace (`cache/chat.sqlite`), one
short transaction per write, safe for the runner's worker threads and for several
processes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CachedReply:
    content: str
    tokens_in: int | None
    tokens_out: int | None
    finish_reason: str | None = None


def cache_key(model: str, messages: Sequence[Mapping[str, str]],
              response_format: Mapping[str, Any] | None) -> str:
    payload = json.dumps([model, [dict(m) for m in messages], response_format],
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def add_finish_reason(db: sqlite3.Connection) -> None:
    """Add the finish_reason column to a cache file made before it. Processes opening one
    file at once (two runs started together) may both see it missing: the one that adds
    it second finds it there, which is what it wanted (so: add, and take "already there"
    as done)."""
    try:
        db.execute("ALTER TABLE replies ADD COLUMN finish_reason TEXT")
    except sqlite3.OperationalError as exc:
        if "duplicate column name" not in str(exc):
            raise


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, "
                             "model TEXT NOT NULL, content TEXT NOT NULL, tokens_in INTEGER, "
                             "tokens_out INTEGER, created_at REAL NOT NULL, "
                             "finish_reason TEXT)")
            add_finish_reason(self._db)  # a cache file made before the column

    @classmethod
    def in_workspace(cls, workspace: Path) -> ResponseCache:
        return cls(Path(workspace) / "cache" / "chat.sqlite")

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute("SELECT content, tokens_in, tokens_out, finish_reason "
                                   "FROM replies WHERE key = ?", [key]).fetchone()
        return CachedReply(*row) if row else None

    def put(self, key: str, model: str, reply: CachedReply) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO replies (key, model, content, "
                             "tokens_in, tokens_out, created_at, finish_reason) VALUES "
                             "(?, ?, ?, ?, ?, ?, ?)",
                             [key, model, reply.content, reply.tokens_in, reply.tokens_out,
                              time.time(), reply.finish_reason])

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
