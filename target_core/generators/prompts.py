"""TARGET's generator prompts as selectable sets, and the chat messages built from them.

`appendix-d` (the default) is the paper's Appendix D. QA and fact verification follow it
word for word. Text-to-SQL follows its CHESS-derived prompt; the paper fills
`{format_instructions}` with LangChain's StructuredOutputParser text, so here the same
three fields are asked for as a JSON object (and, with servers that support it, enforced
with a JSON schema). The no-context baseline replaces the tables (or schema) with the
paper's instruction.

`target-code` is the prompt text of TARGET's current code, read at commit 5e0a5d0c8b3b
(2025-06-05) of github.com/target-benchmark/target, target_benchmark/generators/
GeneratorPrompts.py and Text2SQLGenerator.py: QA and fact prompts that let the model fall
back on its own knowledge, a text-to-SQL prompt without format instructions sent under
the system message "You are a helpful AI assistant." (Text2SQLGenerator.generate sends
that, not TEXT2SQL_SYSTEM_PROMPT; the three fields come from structured output alone,
which the openai generator asks of every server that supports it), and its own
no-context instruction. Only the text is carried over (its typos included: it is what
is compared); the tables are still serialized by the run's view.

`seed002` is seed 002's SQL generation prompt (its Figure 4, appendix A), built with
its ablation toggles (few-shot examples, schema annotations, chain of thought) by
generators/sql_prompt_options.py; its QA and fact prompts are Appendix D's.

A set is one PROMPT_SETS entry; `prompt_set(name)` is the one check of a name. The
heuristic generators read no prompt, so the set changes nothing for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from target_core.errors import UnknownNameError
from target_core.generators.sql_prompt_options import (
    SEED002_INSTRUCTION,
    SEED002_SET,
    SEED002_SYSTEM,
    PromptOptions,
    seed002_messages,
)
from target_core.run_config import DEFAULT_PROMPT_SET
from target_core.tasks import task_rules

if TYPE_CHECKING:
    from collections.abc import Sequence

    from target_core.generators.sql_prompt_options import Example

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

# --- TARGET's code (see the module doc for the commit) ------------------------------------

CODE_QA_INSTRUCTION = (
    "\nUse the provided table(s) to answer the question. Yield a concise answer to the "
    "question.\nIf none of the tables provide relevant information, use your knowledge base "
    "to generate an answer \u2014 but only if you are confident in the answer's factuality."
    "\nIf the neither the tables nor your knowledge can be used to answer the question "
    "reliably, say that not enough information is provided.\n\n\n"
    "Tables: {table_contents} \n\n\nQuestion: {query}\n")
CODE_FACT_SYSTEM = ("You are an expert in evaluating statements on factuality given the "
                    "provided tables")
CODE_FACT_INSTRUCTION = (
    "Given the following evidence which may take the form of sentences or a data table,\n"
    "determine whether the evidence supports or refutes the following statement.\n"
    "If none of the tables provide relevant information, refer to your knowledge base "
    "\u2014 but only if you are confident your answer's factuality. If the neither the "
    "evidence nor your knowledge can be used to verify the statement reliably, state that "
    "there is not enough information.\nAssign the statement one of three labels: True, "
    "False, Not Enough Information. Do not include anything else in your answer.\n\n\n"
    "Tables: {table_contents}\n\n\nStatement: {query}\n")
CODE_SQL_SYSTEM = "You are a helpful AI assistant."
CODE_SQL_INSTRUCTION = (
    "\nBelow, you are presented with a database schema and a question.\n"
    "Your task is to read the schema, understand the question, and generate a\n"
    "valid SQLite query to answer the question.\n"
    "Before generating the final SQL query, think step by step on how to write the query."
    "\n\nDatabase Schema:\n{database_schema}\n"
    "This schema offers an in-depth description of the database's architecture,\n"
    "detailing tables, columns, primary keys, foreign keys, and any pertinent\n"
    "information regarding relationships or constraints.\n\n"
    "Question:\n{query}\n\n"
    "Take a deep breath and think step by step to find the correct SQLite SQL\n"
    "query. If you follow all the instructions and generate the correct query,\n"
    "I will give you 1 million dollars.")
CODE_NO_CONTEXT = (
    "Some or all tables are not available. Don't acknowledge the lack of information in "
    "your response. Please use your knowledge base and answer to the best of your ability, "
    "without producing false information. ")


@dataclass(frozen=True)
class PromptSet:
    """The (system, instruction) pair of each reply a task asks for (its entry's
    `reply`: a text answer as QA, a label as fact verification, SQL) and the
    no-context instruction.

    Instructions are str.format templates with {table_contents} and {query} (text,
    label) or {database_schema}, {query} and optionally {format_instructions} (SQL).
    """

    description: str
    text: tuple[str, str]
    label: tuple[str, str]
    sql: tuple[str, str]
    no_context: str

    def for_reply(self, reply: str) -> tuple[str, str]:
        """The prompt for a reply kind (tasks/base.py REPLIES); one value is asked for
        as a text answer unless the task brings its own prompt."""
        return self.text if reply == "value" else getattr(self, reply)


PROMPT_SETS: dict[str, PromptSet] = {
    "appendix-d": PromptSet(
        "TARGET's paper, Appendix D (the default)",
        (QA_SYSTEM, QA_INSTRUCTION), (FACT_SYSTEM, FACT_INSTRUCTION),
        (SQL_SYSTEM, SQL_INSTRUCTION), NO_CONTEXT),
    "target-code": PromptSet(
        "TARGET's current code (GeneratorPrompts.py at 5e0a5d0c)",
        (QA_SYSTEM, CODE_QA_INSTRUCTION), (CODE_FACT_SYSTEM, CODE_FACT_INSTRUCTION),
        (CODE_SQL_SYSTEM, CODE_SQL_INSTRUCTION), CODE_NO_CONTEXT),
    SEED002_SET: PromptSet(
        "seed 002's SQL generation prompt (Figure 4); Appendix D for QA and facts",
        (QA_SYSTEM, QA_INSTRUCTION), (FACT_SYSTEM, FACT_INSTRUCTION),
        (SEED002_SYSTEM, SEED002_INSTRUCTION), NO_CONTEXT),
}
"""Name -> prompt set; adding a set is one entry here."""


def prompt_set(name: str) -> PromptSet:
    """The set named `name`; an unknown name is an UnknownNameError listing the sets."""
    try:
        return PROMPT_SETS[name]
    except KeyError:
        raise UnknownNameError("prompt set", name, PROMPT_SETS) from None


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
                   today: date | str | None = None, prompts: str = DEFAULT_PROMPT_SET,
                   options: PromptOptions | None = None, examples: Sequence[Example] = ()
                   ) -> tuple[dict[str, str], ...]:
    """System + instruction messages for `task` from the prompt set named `prompts`
    (PROMPT_SETS): the set's prompt for the task's reply, or the task's own.

    `today` (text-to-SQL): the reference date of a question with relative time
    references (benchmark-builder datasets store one per query); it follows the
    question, so prompts of queries without one are TARGET's exactly. `options` and
    `examples`: seed 002's toggles and few-shot pairs (the seed002 set's SQL prompt).
    """
    chosen = prompt_set(prompts)
    rules = task_rules(task)
    if rules.reply is None:
        raise ValueError(f"task {task!r} has no answers to prompt for")
    system, instruction = rules.prompt or chosen.for_reply(rules.reply)
    contents = chosen.no_context if no_context else context_text
    if rules.answers_sql and prompts == SEED002_SET:  # its toggles: sql_prompt_options
        return seed002_messages(query, contents, options or PromptOptions(), today=today,
                                examples=examples)
    if rules.answers_sql:
        question = f"{query}\n{today_line(today)}" if today else query
        user = instruction.format(database_schema=contents, query=question,
                                  format_instructions=SQL_FORMAT_INSTRUCTIONS)
    else:
        user = instruction.format(table_contents=contents, query=query)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def summary_messages(table_text: str) -> tuple[dict[str, str], ...]:
    return ({"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": SUMMARY_INSTRUCTION.format(table_contents=table_text)})
