"""The Query page's text-to-SQL explanation: explain_sql's section as a summary line,
one row per question word (what it links to in the gold table and in the other), and,
for a wrong database, the two databases' scores and the words that pulled the question
away. Dataset text stays plain text: the page shows it in dataframes and captions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["SqlExplanationView", "render_sql"]


@dataclass(frozen=True)
class SqlExplanationView:
    summary: str
    """One line per table: its link score and the words naming it."""
    words: pd.DataFrame
    """word | gold | <other role>: what each content word links to ("" when nothing)."""
    database: str | None
    """For a wrong database: both scores, the words that pulled it, the writer's pick."""
    notes: list[str]


def _said(words: list[str]) -> str:
    return ", ".join(f"'{w}'" for w in words) or "no word"


def _table_line(table: dict[str, Any]) -> str:
    role = table.get("role") or "table"
    if not table.get("in_schema"):
        return f"{role} {table['table']}: not in its database's schema"
    score = table["score"]
    return (f"{role} {table['table']}: link score {score:g}, named by "
            f"{_said(table['words'])}; its indexed text shares {_said(table['text_words'])}")


def render_sql(section: dict[str, Any]) -> SqlExplanationView:
    """What the page draws from explain()'s "sql" section."""
    tables = section["tables"]
    roles = [t.get("role") or "table" for t in tables]
    words = pd.DataFrame([{"word": row["word"],
                           **{role: "; ".join(row.get(role, [])) for role in roles}}
                          for row in section["words"]], columns=["word", *roles])
    database = None
    if (dbs := section.get("databases")) is not None:
        gold, other = dbs["gold"], dbs["other"]
        database = (f"Gold database {gold['database']} scores {gold['score'] or 0:g} "
                    f"(best table {gold['best_table']}), {other['database']} scores "
                    f"{other['score'] or 0:g} (best table {other['best_table']}); words "
                    f"linking only into {other['database']}: {_said(dbs['pulled_by'])}. "
                    f"The heuristic SQL writer would pick {dbs['writer_picks']}.")
    return SqlExplanationView(summary="\n".join(_table_line(t) for t in tables),
                              words=words, database=database,
                              notes=list(section.get("notes", [])))
