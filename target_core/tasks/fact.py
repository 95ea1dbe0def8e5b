"""Fact verification (TabFact, FEVEROUS): a verdict label per statement, judged right or
wrong."""

from __future__ import annotations

from target_core.tasks.base import TaskRules

TASK = TaskRules(
    "fact", "fact verification: True, False or Not Enough Information",
    answer_metric="fact_f1", answer_label="F1", right_metric="fact_correct",
    score_metric="fact_correct", table2_cutoff=10,
    table2_answers=(("P", "fact_precision"), ("R", "fact_recall"), ("F1", "fact_f1")),
    reply="label", reference="label", scoring="label",
    answer_columns=(("Acc", "fact_correct"),), paper_dataset="TabFact",
    heading="Fact label", check_question="Lake Baikal is deeper than Lake Tanganyika.",
    max_tokens=64, expected_reply_tokens=5, reply_note="a fact verdict")
