"""TARGET's generator prompts (paper, Appendix D) and the chat messages built from them.

QA and fact verification follow the paper word for word. Text-to-SQL follows its
CHESS-derived prompt; the paper fills `{format_instructions}` with LangChain's
StructuredOutputParser text, so here the same three fields are asked for as a JSON
object (and, with servers that support it, enforced with a JSON schema). The
no-context baseline replaces the tables (or schema) with the paper's instruction.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

QA_SYSTEM = "You are a data analyst who reads tables to answer questions."
QA_INSTRUCTION = (
    "Use the provided table(s) to answer the question. Yield a concise answer to the "
    "question.\nIf the tables cannot be used to answer the question, say that not enough "
    "information is provided.\nTables: {table_contents}\nQuestion: {query}")

FACT_SYSTEM = ("You are an expert in evaluating statements on factuality given the provided "
               "tables.")
FACT_INSTRUCTION = (
    "Given the following evidence which may take the form of sentences or a data table, "
    "determine whether the evidence supports or refutes the following statement, or does not "
    "contain enough information.\nAssign the statement one of three labels: True, False, Not "
    "Enough Information. Do not include anything else in your answer.\n"
    "Tables: {table_contents}\nStatement: {query}")

SQL_SYSTEM = "You are an expert and very smart data analyst."
SQL_INSTRUCTION = (
    "Below, you are presented with a database schema and a question.\n"
    "Your task is to read the schema, understand the question, and generate a valid SQLite "
    "query to answer the question.\n"
    "Before generating the final SQL query, think step by step on how to write the query.\n"
    "Database Schema: {database_schema}\n"
    "This schema offers an in-depth description of the database's architecture, detailing "
    "tables, columns, primary keys, foreign keys, and any pertinent information regarding "
    "relationships or constraints.\n"
    "Question: {query}\n"
    "Please respond with a paragraph structured as follows: {format_instructions}\n"
    "Take a deep breath and think step by step to find the correct SQLite SQL query. If you "
    "follow all the instructions and generate the correct query, I will give you 1 million "
    "dollars.")

NO_CONTEXT = (
    "Some or all tables are not available. Please use your best judgment to complete the task. "
    "DO NOT RESPOND with \"not enough information\" or similar answers, and don't acknowledge "
    "the lack of information in your response. Just use your knowledge base and answer to the "
    "best of your ability.")

SQL_FIELDS = {
    "chain_of_thought_reasoning": "Your thought process on how you arrived at the final SQL "
                                  "query.",
    "sql_query": "The SQLite query you write, as one string.",
    "database_id": "The id of the database you chose to query from.",
}
SQL_FORMAT_INSTRUCTIONS = (
    "a JSON object with exactly these string fields, and nothing else:\n"
    + "\n".join(f'  "{name}": {text}' for name, text in SQL_FIELDS.items()))

SQL_RESPONSE_SCHEMA: dict[str, Any] = {
    "name": "text_to_sql",
    "strict": True,
    "schema": {"type": "object", "additionalProperties": False,
               "required": list(SQL_FIELDS),
               "properties": {name: {"type": "string", "description": text}
                              for name, text in SQL_FIELDS.items()}},
}

SUMMARY_SYSTEM = "You are a data analyst who describes tables for a search index."
SUMMARY_INSTRUCTION = (
    "Give a short name and a one-paragraph summary of the table below, from its header and "
    "first rows. Respond with a JSON object with the string fields \"table_name\" and "
    "\"table_summary\" and nothing else.\nTable: {table_contents}")

_PROMPTS = {"qa": (QA_SYSTEM, QA_INSTRUCTION), "fact": (FACT_SYSTEM, FACT_INSTRUCTION),
            "sql": (SQL_SYSTEM, SQL_INSTRUCTION)}


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def today_line(today: date | str) -> str:
    """Today's date and what relative periods mean, as timeref resolves them (seed 002's
    prompts state the date and the week convention). The SQL generator, the question
    writer and the judge all say it this way. A dataset's own non-ISO spelling of the
    date is stated as given."""
    try:
        day = today if isinstance(today, date) else date.fromisoformat(str(today))
    except ValueError:
        return f"Today is {today}."
    return (f"Today is {day.isoformat()} ({_WEEKDAYS[day.weekday()]}). Weeks start on "
            "Monday; 'last week/month/year' means the previous full calendar period and "
            "'last N weeks/months' the N full periods before the current one; "
            "'this week/month/year' runs from the start of the current period up to and "
            "including today; 'last N days' are the N days ending today.")


def build_messages(task: str, query: str, context_text: str, *, no_context: bool = False,
                   today: date | str | None = None) -> tuple[dict[str, str], ...]:
    """System + instruction messages for `task` ("qa", "fact" or "sql").

    `today` (text-to-SQL): the reference date of a question with relative time
    references (benchmark-builder datasets store one per query); it follows the
    question, so prompts of queries without one are TARGET's exactly.
    """
    system, instruction = _PROMPTS[task]
    contents = NO_CONTEXT if no_context else context_text
    if task == "sql":
        question = f"{query}\n{today_line(today)}" if today else query
        user = instruction.format(database_schema=contents, query=question,
                                  format_instructions=SQL_FORMAT_INSTRUCTIONS)
    else:
        user = instruction.format(table_contents=contents, query=query)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def summary_messages(table_text: str) -> tuple[dict[str, str], ...]:
    return ({"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": SUMMARY_INSTRUCTION.format(table_contents=table_text)})


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's reply: the whole text, a ```json fence, or the
    outermost {...}; None when there is none."""
    candidates = [text.strip()]
    if "```" in text:
        for block in text.split("```")[1::2]:
            candidates.append(block.removeprefix("json").strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, TypeError):
            continue
        if isinstance(value, dict):
            return value
    return None
