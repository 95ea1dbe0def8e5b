"""Retrieval only: queries with gold tables and no answers to generate."""

from __future__ import annotations

from target_core.tasks.base import TaskRules

TASK = TaskRules(
    "retrieval", "retrieval only: find the gold tables, generate nothing",
    answer_metric=None, answer_label="", right_metric=None, score_metric=None,
    table2_cutoff=10, table2_answers=(), paper_dataset="FeTaQA")
