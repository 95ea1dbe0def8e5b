"""check_generator: ask a generator one question of each task on a tiny in-memory
context and say, in words, what is missing or wrong before a real run finds it.

    >>> import target_core
    >>> print(target_core.check_generator("py:examples/echo_generator.py:EchoGenerator"))

Nothing is downloaded; a generator that calls a model does call it (three requests and
one summary).
"""

from __future__ import annotations

from target_core.config import Settings, load_settings
from target_core.errors import TargetError
from target_core.generators.base import (
    Column,
    Context,
    Generation,
    GenerationRequest,
    Generator,
    SchemaTable,
    TableSummary,
)
from target_core.generators.prompts import build_messages
from target_core.registry import CheckReport
from target_core.tasks import all_tasks
from target_core.types import Table

CHECK_TABLE = Table("geo", "lakes", ("lake", "depth_m", "country"),
                    (("Lake Baikal", 1642, "Russia"), ("Lake Tanganyika", 1470, "Tanzania")),
                    {"title": "Deepest lakes of the world"})
CHECK_SCHEMA = SchemaTable("geo", "lakes", (Column("lake", "TEXT"), Column("depth_m", "INTEGER"),
                                            Column("country", "TEXT")),
                           "CREATE TABLE lakes (lake TEXT, depth_m INTEGER, country TEXT)")
TABLE_TEXT = ("| lake | depth_m | country |\n|---|---|---|\n| Lake Baikal | 1642 | Russia |\n"
              "| Lake Tanganyika | 1470 | Tanzania |")


def check_requests() -> list[GenerationRequest]:
    """One request per task with answers, as the engine builds them: its entry's
    `check_question` about CHECK_TABLE (a SQL task: its schema)."""
    requests = []
    for rules in all_tasks():
        task, query = rules.task, rules.check_question
        if not query:
            continue
        if rules.answers_sql:
            context = Context("retrieved", schema=(CHECK_SCHEMA,), databases=("geo",),
                              text=CHECK_SCHEMA.create_sql)
        else:
            context = Context("retrieved", (CHECK_TABLE,), text=TABLE_TEXT)
        requests.append(GenerationRequest(task, query, context,
                                          build_messages(task, query, context.text)))
    return requests


def check_generator(generator: str | object, *, settings: Settings | None = None
                    ) -> CheckReport:
    """Check a generator spec (`py:...` or any registered one) or an object with
    generate(request): it answers a QA, a fact and a text-to-SQL request with a str
    answer and no error, and summarizes a table. Never raises for what it finds."""
    from target_core.generators import build_generator
    from target_core.generators.plugin import adapt_generator

    subject = generator if isinstance(generator, str) else type(generator).__name__
    try:
        built: Generator = (build_generator(generator, settings or load_settings())
                            if isinstance(generator, str)
                            else adapt_generator(generator, spec=f"py:<{subject} object>"))
    except TargetError as exc:
        return CheckReport(subject, (str(exc),))
    problems: list[str] = []
    warnings: list[str] = []
    notes = [f"label: {built.label}; {built.concurrency} request(s) at once"]
    for request in check_requests():
        try:
            generation = built.generate(request)
        except Exception as exc:
            problems.append(f"{request.task}: generate raised {type(exc).__name__}: {exc} "
                            "(a failed call must come back as Generation.error)")
            continue
        if not isinstance(generation, Generation):
            problems.append(f"{request.task}: generate returned {type(generation).__name__}")
        elif generation.error:
            problems.append(f"{request.task}: {generation.error}")
        elif not generation.answer:
            warnings.append(f"{request.task}: empty answer to {request.query!r}")
        else:
            notes.append(f"{request.task}: {request.query!r} -> {generation.answer[:80]!r}")
    summary = built.summarize(CHECK_TABLE, rows=2)
    if not isinstance(summary, TableSummary) or summary.error or not summary.name:
        problems.append(f"summarize gave {summary!r}")
    return CheckReport(subject, tuple(problems), tuple(warnings), tuple(notes))
