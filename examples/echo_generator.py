"""A tiny generator for TARGET Explorer (`--generator py:examples/echo_generator.py:EchoGenerator`):
it shows the minimal shape and needs no model.

    python -m target_core run --dataset demo-qa --retriever bm25 \
        --generator py:examples/echo_generator.py:EchoGenerator

A generator is a class with `generate(self, request)`. `request` has `task` ("qa",
"fact" or "sql"), `query`, `context` (`context.tables`: the tables given, in prompt
order; `context.databases`: the database ids for text-to-SQL; `context.text`: what the
prompt shows) and `messages` (the chat messages of TARGET's prompts). It returns the
answer as a str, or a dict with "answer" and, for text-to-SQL, "database_id". Optional:
`label`, `concurrency` (requests at once, default 1) and `summarize(table, rows=3)`.
An exception is recorded as that query's error; the run goes on.
"""

from __future__ import annotations

from typing import Any


class EchoGenerator:
    """Answers with the first row of the first table it is given; says "True" to every
    statement; selects everything from the first table for text-to-SQL."""

    label = "echo (example: repeats the first row, no model)"

    def generate(self, request: Any) -> dict[str, Any]:
        tables = request.context.tables
        if request.task == "fact":
            return {"answer": "True"}
        if request.task == "sql":
            schema = request.context.schema
            if not schema:
                return {"answer": ""}
            return {"answer": f'SELECT * FROM "{schema[0].name}"',
                    "database_id": schema[0].database_id}
        if not tables or not tables[0].rows:
            return {"answer": ""}
        return {"answer": ", ".join(str(cell) for cell in tables[0].rows[0])}
