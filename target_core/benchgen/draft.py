"""A benchmark draft: sampled SQL with its questions and checks, under human review.

Seed 002 ends with people: domain experts read each question-SQL pair and keep the
ones where the question is answered by the SQL (95.11% in the paper). A draft holds
that work in one SQLite file in the workspace, `benchgen/<name>.sqlite`, so a review
can stop and go on later, from the page or the CLI, and nothing is lost when the app
is closed. Each write is one short transaction.

- `items`: one sampled query (`SampledQuery.to_dict()`), and the writer's error if
  it gave no question for it;
- `pairs`: one question of an item, with its automatic check (round trip) and, when a
  judge ran, the judge's verdict; `status` pending | accepted | rejected, and `edited`
  the reviewer's wording when it replaced the writer's;
- `templates`: the templates the items came from (`Template.to_dict()`), so export
  can render alternative readings without the original files;
- `meta`: how it was made (dataset, seed, n, writer, judge, created).

The acceptance rate is accepted / (accepted + rejected): pairs not yet reviewed do
not count either way.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from target_core.benchgen.instantiate import SampledQuery
from target_core.benchgen.questions import Verdict, Written
from target_core.benchgen.templates import Template, parse_template
from target_core.datasets.add import check_dataset_name
from target_core.errors import ConfigError, UnknownNameError

STATUSES = ("pending", "accepted", "rejected")
DRAFT_FOLDER = "benchgen"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS templates (template_id TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    item_id INTEGER PRIMARY KEY, record TEXT NOT NULL, writer_error TEXT);
CREATE TABLE IF NOT EXISTS pairs (
    pair_id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL REFERENCES items(item_id),
    question TEXT NOT NULL, style TEXT NOT NULL, writer TEXT NOT NULL,
    check_result TEXT NOT NULL, judge_result TEXT,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
    edited TEXT, reviewed_at REAL);
CREATE INDEX IF NOT EXISTS pairs_status ON pairs(status);
"""


def check_name(name: str) -> str:
    """A draft name: a valid dataset name (the data layer's rule), as a draft exports as
    a dataset and is saved as a file; ConfigError naming it otherwise."""
    return check_dataset_name(name, "draft")


def default_draft_name(dataset: str, database: str | None, seed: int) -> str:
    """The name a draft gets unless the user types one: dataset, database (when one is
    chosen) and seed, so another seed or database makes another draft, not a clash."""
    parts = [dataset, *([database] if database else []), f"seed{seed}"]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts)).lstrip("_.-") or "draft"
    return check_name(name[-80:].lstrip("_.-") if len(name) > 80 else name)


def drafts_dir(workspace: str | Path) -> Path:
    return Path(workspace) / DRAFT_FOLDER


def list_drafts(workspace: str | Path) -> list[str]:
    """Names of the drafts in the workspace, newest first."""
    folder = drafts_dir(workspace)
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.sqlite"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [p.stem for p in files]


@dataclass(frozen=True)
class Pair:
    """One question-SQL pair of a draft, as the reviewer sees it."""

    pair_id: int
    item_id: int
    question: str
    style: str
    writer: str
    check: Verdict
    judge: Verdict | None
    status: str
    edited: str | None
    item: SampledQuery

    @property
    def final_question(self) -> str:
        """What export writes: the reviewer's wording when edited, else the writer's."""
        return self.edited if self.edited else self.question

    @property
    def automatic(self) -> bool | None:
        """The automatic validation: the round trip alone when no judge ran; with a judge,
        False when the judge failed the pair, True only when the judge and the round
        trip both passed it. The round trip is a veto: a pair it failed is never passed
        (the judge approving it too leaves the call to a person: None), nor is one the
        judge could not decide."""
        if self.judge is None:
            return self.check.passed
        if self.judge.passed is False:
            return False
        return True if self.judge.passed and self.check.passed else None


@dataclass(frozen=True)
class ReviewSummary:
    total: int
    pending: int
    accepted: int
    rejected: int
    edited: int
    automatic_passed: int
    """Pairs the automatic validation passed (`Pair.automatic`: the round trip, and the
    judge too when one ran)."""

    @property
    def reviewed(self) -> int:
        return self.accepted + self.rejected

    @property
    def acceptance_rate(self) -> float | None:
        """accepted / reviewed; None before the first review."""
        return self.accepted / self.reviewed if self.reviewed else None

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "pending": self.pending, "accepted": self.accepted,
                "rejected": self.rejected, "edited": self.edited,
                "automatic_passed": self.automatic_passed, "reviewed": self.reviewed,
                "acceptance_rate": self.acceptance_rate}


def _verdict(text: str | None) -> Verdict | None:
    if text is None:
        return None
    data = json.loads(text)
    return Verdict(passed=data.get("passed"), missing=list(data.get("missing") or []),
                   method=data.get("method", ""), reason=data.get("reason", ""))


class Draft:
    """One draft file; open with `Draft.open` or make one with `Draft.create`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.stem
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA foreign_keys = ON")
        with self._db:
            self._db.executescript(_SCHEMA)

    # --- making and opening ---------------------------------------------------------------

    @classmethod
    def create(cls, workspace: str | Path, name: str, *, templates: Iterable[Template],
               items: Sequence[tuple[SampledQuery, Written, Sequence[Verdict],
                                     Sequence[Verdict | None]]],
               meta: Mapping[str, Any], replace: bool = False) -> Draft:
        """A new draft from (item, written questions, their checks, their judge verdicts)."""
        path = drafts_dir(workspace) / f"{check_name(name)}.sqlite"
        if path.exists():
            if not replace:
                raise ConfigError(f"a draft named '{name}' exists ({path}); pick another "
                                  "name or replace it")
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = cls(path)
        with draft._db as db:
            db.executemany("INSERT INTO meta VALUES (?, ?)",
                           [(k, json.dumps(v)) for k, v in
                            {**meta, "created_at": time.time()}.items()])
            db.executemany("INSERT INTO templates VALUES (?, ?)",
                           [(t.id, json.dumps(t.to_dict())) for t in templates])
            for item_id, (item, written, checks, verdicts) in enumerate(items, start=1):
                db.execute("INSERT INTO items VALUES (?, ?, ?)",
                           [item_id, json.dumps(item.to_dict()), written.error])
                db.executemany(
                    "INSERT INTO pairs (item_id, question, style, writer, check_result, "
                    "judge_result) VALUES (?, ?, ?, ?, ?, ?)",
                    [(item_id, q.text, q.style, q.writer, json.dumps(c.to_dict()),
                      json.dumps(v.to_dict()) if v is not None else None)
                     for q, c, v in zip(written.questions, checks, verdicts, strict=True)])
        return draft

    @classmethod
    def open(cls, workspace: str | Path, name: str) -> Draft:
        path = drafts_dir(workspace) / f"{check_name(name)}.sqlite"
        if not path.is_file():
            raise UnknownNameError("draft", name, list_drafts(workspace))
        return cls(path)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Draft:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading --------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM meta")}

    def templates(self) -> dict[str, Template]:
        return {tid: parse_template(json.loads(record), source=f"draft {self.name}")
                for tid, record in self._db.execute("SELECT template_id, record FROM templates")}

    def writer_errors(self) -> list[tuple[SampledQuery, str]]:
        rows = self._db.execute("SELECT record, writer_error FROM items WHERE writer_error "
                                "IS NOT NULL ORDER BY item_id")
        return [(SampledQuery.from_dict(json.loads(r)), e) for r, e in rows]

    def pairs(self, status: str | None = None) -> list[Pair]:
        """Every pair (or those with `status`), in item order then question order."""
        if status is not None and status not in STATUSES:
            raise UnknownNameError("review status", status, STATUSES)
        sql = ("SELECT p.pair_id, p.item_id, p.question, p.style, p.writer, p.check_result, "
               "p.judge_result, p.status, p.edited, i.record FROM pairs p JOIN items i "
               "USING (item_id)" + (" WHERE p.status = ?" if status else "") +
               " ORDER BY p.item_id, p.pair_id")
        items: dict[str, SampledQuery] = {}
        result = []
        for row in self._db.execute(sql, [status] if status else []):
            record = row[9]
            if record not in items:
                items[record] = SampledQuery.from_dict(json.loads(record))
            result.append(Pair(pair_id=row[0], item_id=row[1], question=row[2], style=row[3],
                               writer=row[4], check=_verdict(row[5]),  # type: ignore[arg-type]
                               judge=_verdict(row[6]), status=row[7], edited=row[8],
                               item=items[record]))
        return result

    def summary(self) -> ReviewSummary:
        counts = dict(self._db.execute("SELECT status, COUNT(*) FROM pairs GROUP BY status"))
        edited = self._db.execute("SELECT COUNT(*) FROM pairs WHERE edited IS NOT NULL"
                                  ).fetchone()[0]
        passed = sum(p.automatic is True for p in self.pairs())
        return ReviewSummary(total=sum(counts.values()), pending=counts.get("pending", 0),
                             accepted=counts.get("accepted", 0),
                             rejected=counts.get("rejected", 0), edited=edited,
                             automatic_passed=passed)

    # --- reviewing ------------------------------------------------------------------------

    def review(self, pair_ids: int | Iterable[int], status: str, *,
               edited: str | None = None) -> int:
        """Set the status of one or more pairs; `edited` (one pair) replaces its question.

        Returns how many pairs changed. An unknown pair id is an error, and nothing is
        written then. An edit that is blank or equal to the writer's question clears it.
        """
        if status not in STATUSES:
            raise UnknownNameError("review status", status, STATUSES)
        ids = [pair_ids] if isinstance(pair_ids, int) else list(pair_ids)
        if edited is not None and len(ids) != 1:
            raise ConfigError("an edited question belongs to exactly one pair")
        with self._db as db:
            known = {r[0]: r[1] for r in db.execute(
                f"SELECT pair_id, question FROM pairs WHERE pair_id IN "
                f"({','.join('?' * len(ids))})", ids)} if ids else {}
            if missing := [i for i in ids if i not in known]:
                raise UnknownNameError("pair", str(missing[0]), [str(k) for k in known])
            stamp = None if status == "pending" else time.time()
            if edited is not None:
                text = edited.strip()
                text_or_none = text if text and text != known[ids[0]] else None
                db.execute("UPDATE pairs SET status = ?, edited = ?, reviewed_at = ? "
                           "WHERE pair_id = ?", [status, text_or_none, stamp, ids[0]])
            else:
                db.executemany("UPDATE pairs SET status = ?, reviewed_at = ? WHERE pair_id = ?",
                               [(status, stamp, i) for i in ids])
        return len(ids)

    def accept_automatic(self) -> int:
        """Accept every pending pair the automatic validation passed, reject every pending
        pair it failed; pairs it could not decide stay pending, among them every pair the
        judge approved and the round trip failed (`Pair.automatic`). Returns pairs
        changed."""
        pending = self.pairs("pending")
        passed = [p.pair_id for p in pending if p.automatic is True]
        failed = [p.pair_id for p in pending if p.automatic is False]
        return (self.review(passed, "accepted") if passed else 0) + (
            self.review(failed, "rejected") if failed else 0)


def pair_rows(pairs: Sequence[Pair]) -> list[dict[str, Any]]:
    """One row per pair for a table: ids, status, question, checks, template, SQL."""
    return [{"pair": p.pair_id, "status": p.status, "question": p.final_question,
             "edited": p.edited is not None, "round trip": p.check.passed,
             "judge": None if p.judge is None else p.judge.passed,
             "template": p.item.template_id, "difficulty": p.item.difficulty,
             "sql": p.item.sql} for p in pairs]
