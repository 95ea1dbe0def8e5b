"""Question answering over tables (FeTaQA, OTT-QA): free-text answers, graded by BLEU."""

from __future__ import annotations

from target_core.tasks.base import GTR_EXTRAS, TaskRules

TASK = TaskRules(
    "qa", "question answering: a free-text answer from the tables",
    answer_metric="sacrebleu", answer_label="sacreBLEU", right_metric=None,
    score_metric="sentence_bleu", table2_cutoff=10, table2_answers=(("SB", "sacrebleu"),),
    answer_extras=GTR_EXTRAS, reply="text", reference="answer", scoring="bleu",
    answer_columns=(("BLEU", "sentence_bleu"),), gtr=True, paper_dataset="FeTaQA",
    heading="Generated answer", check_question="How deep is Lake Baikal?", max_tokens=256,
    reply_note="a question's answer")
