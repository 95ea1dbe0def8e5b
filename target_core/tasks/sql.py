"""Text-to-SQL (Spider, BIRD): SQL executed read-only against the dataset's databases,
right when its result equals the gold SQL's; retrieval is judged by database."""

from __future__ import annotations

from target_core.tasks.base import TaskRules

TASK = TaskRules(
    "sql", "text-to-SQL: a query run against the dataset's SQLite databases",
    answer_metric="execution_accuracy", answer_label="EX", right_metric="execution_match",
    score_metric="execution_match", table2_cutoff=1,
    table2_answers=(("EX", "execution_accuracy"),), database_level=True,
    default_context_k=1, answer_extras=(("VES", "ves"),),
    reply="sql", reference="sql", scoring="sql",
    answer_columns=(("EX", "execution_match"), ("EM", "exact_set_match"), ("VES", "ves")),
    paper_dataset="Spider", heading="Generated SQL",
    check_question="Which lake is the deepest?", max_tokens=512, expected_reply_tokens=250,
    reply_note="text-to-SQL (reasoning, SQL and database as JSON)")
"""answer_columns: GTR-T's Figure 5 and BIRD's VES (0-100+, a slice's mean of 100 · R_q)."""
