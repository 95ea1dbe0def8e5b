"""Seed 002's text-to-SQL prompt (its Figure 4) and the toggles its ablation removes.

Seed 002 ("Text-to-SQL Evaluation at Scale") prints a simplified SQL generation prompt
as Figure 4 (text in its appendix A, "SQL generation prompt") and ablates three of its
modules in Table 2: few-shot examples, schema annotation and chain of thought (CoT).
The prompt set `seed002` (generators/prompts.py) sends Figure 4's text; a run's
`GenerationConfig.prompt_options` switches the modules on, parsed here only:

| option | what enters the prompt |
|---|---|
| `fewshot=N` | N question/SQL pairs of the query's database in `<examples>` (FewShotPool) |
| `annotations` | each table's column descriptions, as SQL comments after its CREATE TABLE |
| `cot` | Figure 4's "Think step-by-step ... reasoning in <reasoning> tags" block |
| `answer` | after execution, the generator phrases the result as a sentence (sql_answer.py) |

Figure 4 is kept word for word (its e-commerce wording included), with three changes,
all stated here: the time lines are filled from the query's `reference_date` (absent
without one) with this project's week convention (weeks start on Monday, as
benchgen/timeref.py resolves "this week"; the paper's start on Sunday); the paper's
"..." elisions are dropped; and one line of ours asks for the SQL in a ```sql block so
it can be read back (`extract_sql`). The paper's few-shot triplets carry hand-written
reasoning; the pairs here have none, so an example is a question and its SQL.

The reply is prose, not JSON: `GenerationRequest.sql_reply = "text"` tells the OpenAI
generator to ask for no structured output (a JSON schema would force a reasoning field
and blur the CoT ablation) and to read the SQL with `extract_sql`. The heuristic
generator reads no prompt: these toggles change nothing for it (`applies_to`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from target_core.errors import ConfigError
from target_core.tasks import task_rules
from target_core.textproc import STOPWORDS
from target_core.types import Dataset, Query

SEED002_SET = "seed002"
DRAFT_FOLDER = "benchgen"
"""Where the benchmark builder keeps its drafts in the workspace (benchgen/draft.py)."""
OPTION_NAMES = ("fewshot=N", "annotations", "cot", "answer")
MAX_SHOTS = 20

SEED002_SYSTEM = ("You are an expert data analyst specializing in transforming e-commerce "
                  "sellers' business data requests into efficient and valid SQLite queries.")
_USER = ("Here is the table schema you have access to:\n<table_schema>\n{database_schema}\n"
         "</table_schema>\n<instruction>\n{instruction}\n</instruction>\n{examples}"
         "Here is the seller's question:\n<query>\n{query}\n</query>\n"
         "Strictly follow the above instructions and provide the SQL query that would "
         "retrieve the data. Do not provide explanations after the SQL code.")
_EXAMPLES = "Here are some examples:\n<examples>\n{examples}\n</examples>\n"
COT_LINES = ("Think step-by-step to generate the SQL query:",
             "- First provide your reasoning on how to generate the SQL query in <reasoning> "
             "tags.")
PERIODS_LINE = ("Interpret 'last/past' periods as complete calendar units before the "
                "current date, unless explicitly stated otherwise.")
SQL_BLOCK_LINE = "Then write the SQL query in a ```sql code block."
SQL_ONLY_LINE = "Write only the SQL query, in a ```sql code block."
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class PromptOptions:
    """The parsed toggles of one run (all off: Figure 4 without its modules)."""

    few_shot: int = 0
    annotations: bool = False
    cot: bool = False
    answer: bool = False

    @property
    def prompt_toggles(self) -> bool:
        """Whether any toggle changes the SQL prompt (`answer` adds a step after it)."""
        return bool(self.few_shot or self.annotations or self.cot)

    def to_options(self) -> tuple[str, ...]:
        """The canonical option list (the order of OPTION_NAMES)."""
        return tuple(name for name, on in ((f"fewshot={self.few_shot}", self.few_shot),
                                           ("annotations", self.annotations),
                                           ("cot", self.cot), ("answer", self.answer)) if on)


def parse_prompt_options(options: Sequence[str] | str, prompt_set: str = SEED002_SET
                         ) -> PromptOptions:
    """PromptOptions of a run's option list (or a comma-separated string); an unknown,
    repeated or malformed option is a ConfigError naming it, and the prompt toggles need
    the seed002 prompt set (the others have no place for them)."""
    items = [o.strip() for o in options.split(",")] if isinstance(options, str) else list(
        options)
    found: dict[str, object] = {}
    for item in (i for i in items if i != ""):
        name, eq, value = str(item).partition("=")
        if name == "fewshot":
            if not (eq and value.isdigit() and 1 <= int(value) <= MAX_SHOTS):
                raise ConfigError(f"prompt option {item!r}: fewshot needs a number of "
                                  f"examples from 1 to {MAX_SHOTS}, e.g. fewshot=3")
            parsed: object = int(value)
        elif name in ("annotations", "cot", "answer") and not eq:
            parsed = True
        else:
            raise ConfigError(f"unknown prompt option {item!r}; the options are "
                              f"{', '.join(OPTION_NAMES)}")
        if name in found:
            raise ConfigError(f"prompt option {item!r} is given twice")
        found[name] = parsed
    result = PromptOptions(few_shot=int(found.get("fewshot", 0)),  # type: ignore[call-overload]
                           annotations="annotations" in found, cot="cot" in found,
                           answer="answer" in found)
    if result.prompt_toggles and prompt_set != SEED002_SET:
        raise ConfigError(f"prompt options {', '.join(result.to_options())} belong to the "
                          f"{SEED002_SET} prompt set, not '{prompt_set}' (add --prompt-set "
                          f"{SEED002_SET})")
    return result


def applies_to(generator: str) -> bool:
    """Whether the prompt toggles can change `generator`'s answers: the heuristic
    generator reads no prompt, so for it they do not apply."""
    return generator != "heuristic"


# --- few-shot examples ---------------------------------------------------------------------

@dataclass(frozen=True)
class Example:
    question: str
    sql: str
    source: str
    """Where it came from: "draft NAME, pair 12" or "query ID"."""


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def _norm(text: str) -> str:
    return " ".join(text.lower().replace(";", " ").split())


def accepted_pairs(workspace: str | Path | None, dataset: str
                   ) -> list[tuple[str, Example]]:
    """(database, pair) for every accepted pair of the workspace's benchmark-builder
    drafts made from `dataset`, drafts by name, pairs in review order; the reviewer's
    wording when edited. The draft files (benchgen/draft.py's schema) are read here
    directly, read-only: benchgen sits above the engine, which builds prompts;
    tests/test_sql_ablation.py writes its draft with benchgen's Draft, so the two stay
    in step."""
    folder = Path(workspace) / DRAFT_FOLDER if workspace is not None else None
    if folder is None or not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.sqlite")):
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = dict(connection.execute("SELECT key, value FROM meta"))
            if json.loads(meta.get("dataset", "null")) != dataset:
                continue
            for pair_id, question, edited, record in connection.execute(
                    "SELECT p.pair_id, p.question, p.edited, i.record FROM pairs p JOIN "
                    "items i USING (item_id) WHERE p.status = 'accepted' ORDER BY "
                    "p.item_id, p.pair_id"):
                item = json.loads(record)
                found.append((item["database"], Example(edited or question, item["sql"],
                                                        f"draft {path.stem}, pair {pair_id}")))
        except (sqlite3.DatabaseError, ValueError, KeyError) as exc:
            raise ConfigError(f"benchmark-builder draft {path}: cannot read its accepted "
                              f"pairs for few-shot examples: {exc}") from None
        finally:
            connection.close()
    return found


class FewShotPool:
    """Question/SQL pairs per database: the benchmark builder's accepted pairs of the
    workspace's drafts made from this dataset; a database no draft covers falls back to
    the dataset's own queries of that database. `pick` never returns the query itself,
    its question or a pair with its SQL (whitespace and case aside)."""

    def __init__(self, by_database: dict[str, tuple[list[Example], str]]) -> None:
        self.by_database = by_database

    @classmethod
    def build(cls, dataset: Dataset, workspace: str | Path | None) -> FewShotPool:
        drafted: dict[str, list[Example]] = {}
        for database_id, example in accepted_pairs(workspace, dataset.name):
            drafted.setdefault(database_id, []).append(example)
        own: dict[str, list[Example]] = {}
        answers_sql = task_rules(dataset.task).answers_sql
        for q in dataset.queries:
            if q.sql or answers_sql:
                own.setdefault(q.database_id, []).append(
                    Example(q.query, q.sql or str(q.answer), f"query {q.query_id}"))
        by_database = {db: (examples, "benchmark builder drafts")
                       for db, examples in drafted.items()}
        for db, examples in own.items():
            by_database.setdefault(db, (examples, "the dataset's other queries"))
        return cls(by_database)

    def source(self, database_id: str) -> str:
        return self.by_database.get(database_id, ([], "none"))[1]

    def pick(self, query: Query, n: int) -> list[Example]:
        """The `n` pairs of the query's database whose questions share the most content
        words with it (Jaccard; ties in pool order)."""
        examples, _ = self.by_database.get(query.database_id, ([], ""))
        own_sql = _norm(query.sql or str(query.answer or ""))
        words = _words(query.query)
        allowed = [e for e in examples if e.source != f"query {query.query_id}"
                   and _norm(e.question) != _norm(query.query) and _norm(e.sql) != own_sql]

        def score(e: Example) -> float:
            other = _words(e.question)
            return len(words & other) / len(words | other) if words | other else 0.0

        ranked = sorted(enumerate(allowed), key=lambda p: (-score(p[1]), p[0]))
        return [e for _, e in ranked[:n]]


# --- the prompt ------------------------------------------------------------------------------

def time_lines(today: date | str | None) -> list[str]:
    """Figure 4's two date lines for a query with a reference date (none without)."""
    if not today:
        return []
    try:
        day = today if isinstance(today, date) else date.fromisoformat(str(today))
    except ValueError:
        return [f"Today is {today}."]
    start = day - timedelta(days=day.weekday())
    return [f"Today is {day.isoformat()} ({_WEEKDAYS[day.weekday()]}) in YYYY-MM-DD format.",
            f"This week starts from {start.isoformat()} (Monday) and ends on "
            f"{(start + timedelta(days=6)).isoformat()} (Sunday)."]


def instruction(options: PromptOptions, today: date | str | None) -> str:
    """The <instruction> block: with CoT, Figure 4's step-by-step reasoning with the time
    analysis nested under it; without, the time lines and an SQL-only request."""
    dates = time_lines(today)
    if options.cot:
        lines = list(COT_LINES)
        if dates:
            lines += ["  - Analyze the associated time in the seller question",
                      *(f"    - {line}" for line in dates)]
        return "\n".join([*lines, f"  - {PERIODS_LINE}", f"- {SQL_BLOCK_LINE}"])
    return "\n".join([*(f"- {line}" for line in dates), f"- {PERIODS_LINE}",
                      f"- {SQL_ONLY_LINE}"])


def example_text(examples: Sequence[Example]) -> str:
    return "\n".join(f"<example>\nQuestion: {e.question}\nSQL:\n```sql\n{e.sql}\n```\n"
                     "</example>" for e in examples)


def seed002_messages(query: str, schema: str, options: PromptOptions, *,
                     today: date | str | None = None, examples: Sequence[Example] = ()
                     ) -> tuple[dict[str, str], ...]:
    """Figure 4 as chat messages: its first sentence as the system message, the rest as
    the user message; the <examples> section only with few-shot examples."""
    shots = _EXAMPLES.format(examples=example_text(examples)) if examples else ""
    user = _USER.format(database_schema=schema, instruction=instruction(options, today),
                        examples=shots, query=query)
    return ({"role": "system", "content": SEED002_SYSTEM}, {"role": "user", "content": user})


SEED002_INSTRUCTION = seed002_messages("{query}", "{database_schema}", PromptOptions()
                                       )[1]["content"]
"""The user message template with every toggle off (the PromptSet entry)."""


_FENCE = re.compile(r"```[ \t]*(?:sql|sqlite)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<(reasoning|sql)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_START = re.compile(r"\b(SELECT|WITH)\b", re.IGNORECASE)


def extract_sql(reply: str) -> tuple[str, str | None]:
    """(the SQL, the reasoning) of a prose reply: the last ```sql block, else <sql>
    tags, else the text from the first SELECT/WITH after any reasoning; the reasoning is
    the <reasoning> tags' text, else the prose before the SQL. ("", ...) when none."""
    tags = {m.group(1).lower(): m.group(2).strip() for m in _TAG.finditer(reply)}
    fences = [b.strip() for b in _FENCE.findall(reply) if b.strip()]
    if fences:
        sql = fences[-1]
        before = reply[:reply.rfind("```", 0, reply.rfind("```"))]
    elif "sql" in tags:
        sql, before = tags["sql"], reply[:reply.lower().find("<sql>")]
    else:
        rest = reply.rsplit("</reasoning>", 1)[-1] if "reasoning" in tags else reply
        start = _START.search(rest)
        sql = rest[start.start():].strip() if start else ""
        before = reply[:len(reply) - len(rest) + (start.start() if start else len(rest))]
    reasoning = tags.get("reasoning") or _TAG.sub("", before).strip() or None
    return sql.strip().rstrip(";").strip(), reasoning
