"""What each task is judged by, and when a query failed: the one home of these rules.

Every page, the CLI and the analyses ask here: which run-level metric is a task's
headline for its answers, which per-query metric says an answer is right, which columns
and cutoffs TARGET's Table 2 shows for it, and whether a query's retrieval failed at k.

Retrieval failure at k (TARGET's recall: every gold table counts): a query fails at k
when some gold table is not among the first k retrieved tables. A query with several gold
tables that found some of them within k has failed too (recall@k < 1); `hit@k` (any gold
table within k) stays a metric of its own, but never decides what failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from target_core.errors import UnknownNameError
from target_core.types import Query, TableKey

__all__ = ["ANSWER_TASKS", "FAILURE_RULE", "QA_BLEU_THRESHOLD", "QA_EXTRAS", "RULES",
           "UNRANKED_EXTRAS", "TaskRules",
           "answer_right", "failed_at", "last_gold_rank", "missing_gold", "per_query_metric",
           "reference_of", "right_rule", "table2_recall_columns", "task_rules"]

FAILURE_RULE = ("a query fails at k when some gold table is not among the first k "
                "retrieved (TARGET's recall: with several gold tables, finding only some "
                "of them is a failure)")
"""The failure definition in words, for pages and help texts."""


@dataclass(frozen=True)
class TaskRules:
    """How runs of one task are judged."""

    task: str
    answer_metric: str | None
    """Run-level headline of the generated answers (None: the task has no answers)."""
    answer_label: str
    """Short name of answer_metric for tables and axes."""
    right_metric: str | None
    """Per-query metric that is 1 when the answer is right (None: graded only, as QA)."""
    score_metric: str | None
    """Per-query downstream score (BLEU for QA; the right/wrong metric otherwise)."""
    table2_cutoff: int
    """The recall cutoff TARGET's Table 2 reports for the task."""
    table2_answers: tuple[tuple[str, str], ...]
    """Table 2's downstream columns: (column, run-level metric)."""
    database_level: bool = False
    """Table 2's recall is database-level (text-to-SQL: a success when the top table's
    database is the gold database, `db_hit@1`), not table-level recall."""
    default_context_k: int | None = None
    """Tables whose context the generator gets when the run does not say (None: the
    run's k). Text-to-SQL: 1, the paper's setting (the schema of the top table's
    database)."""
    answer_extras: tuple[tuple[str, str], ...] = ()
    """Answer metrics shown beside the headline wherever it shows, though not in the
    paper's Table 2: (column, metric), the same name run-level and per query.
    Text-to-SQL: BIRD's VES (`metrics.ves`)."""


QA_EXTRAS: tuple[tuple[str, str], ...] = (
    ("R-1 P", "rouge1_p"), ("R-2 P", "rouge2_p"), ("R-L P", "rougeL_p"),
    ("SAS (MiniLM cosine)", "sas"), ("truthful", "truthfulness"),
    ("reply tokens", "reply_tokens"), ("response ms", "response_ms_mean"))
"""GTR's answer metrics (seed 001, Tables 3 and 4; metrics.gtr): ROUGE-1/2/L precision,
SAS (the MiniLM cosine, not a cross-encoder), a judge's truthfulness (after
`judge`), reply length in tokens, response time (run level `response_ms_mean`, the
mean of the per-query `response_ms` over real calls: a latency, named like one)."""

UNRANKED_EXTRAS = frozenset({"reply tokens"})
"""Answer-extra columns with no better direction (longer is not better); columns
ending in "ms" are best when lowest."""


RULES: dict[str, TaskRules] = {r.task: r for r in (
    TaskRules("qa", "sacrebleu", "sacreBLEU", None, "sentence_bleu", 10,
              (("SB", "sacrebleu"),), answer_extras=QA_EXTRAS),
    TaskRules("fact", "fact_f1", "F1", "fact_correct", "fact_correct", 10,
              (("P", "fact_precision"), ("R", "fact_recall"), ("F1", "fact_f1"))),
    TaskRules("sql", "execution_accuracy", "EX", "execution_match", "execution_match", 1,
              (("EX", "execution_accuracy"),), database_level=True, default_context_k=1,
              answer_extras=(("VES", "ves"),)),
    TaskRules("retrieval", None, "", None, None, 10, ()),
)}


ANSWER_TASKS: tuple[str, ...] = tuple(t for t, r in RULES.items() if r.answer_metric)
"""The tasks whose queries a generator answers (and metrics then score)."""


def task_rules(task: str) -> TaskRules:
    """The rules of `task`; an unknown task raises UnknownNameError."""
    if task not in RULES:
        raise UnknownNameError("task", task, RULES)
    return RULES[task]


QA_BLEU_THRESHOLD = 20.0
"""A QA answer counts as right when its sentence BLEU (0-100) reaches this, where a
right/wrong split is needed (attribution); QA has no right/wrong of its own."""


def answer_right(task: str, metrics: Mapping[str, float], *,
                 bleu_threshold: float | None = None) -> bool | None:
    """Whether a query's answer is right: the task's right/wrong metric is 1 (fact,
    text-to-SQL); for QA, sentence BLEU >= bleu_threshold when one is given. None: no
    such notion, or the query has no score."""
    rules = task_rules(task)
    if rules.right_metric is not None:
        value = metrics.get(rules.right_metric)
        return None if value is None else value > 0
    if rules.score_metric is not None and bleu_threshold is not None:
        value = metrics.get(rules.score_metric)
        return None if value is None else value >= bleu_threshold
    return None


def right_rule(task: str, bleu_threshold: float | None = None) -> str:
    """`answer_right`'s rule for `task` in words, e.g. "execution_match = 1"."""
    rules = task_rules(task)
    if rules.right_metric is not None:
        return f"{rules.right_metric} = 1"
    if rules.score_metric is not None and bleu_threshold is not None:
        return f"{rules.score_metric} >= {bleu_threshold:g}"
    return "no right/wrong"


def table2_recall_columns(task: str, top_k: int) -> list[tuple[str, str]]:
    """Table 2's retrieval columns for a run of `task` with `top_k`: (column, metric),
    the metric stored per run and per query.

    R@c at the task's cutoff c (capped at top_k) is TARGET's recall, micro-averaged
    (Σ gold tables within c / Σ gold tables: `recall_micro@c`); text-to-SQL's R@1 is
    database-level (`db_hit@1`, TARGET's rule), its table-level recall@1 follows as
    "R@1 tables"."""
    rules = task_rules(task)
    cutoff = min(rules.table2_cutoff, top_k)
    if rules.database_level:
        return [("R@1", "db_hit@1"), (f"R@{cutoff} tables", f"recall_micro@{cutoff}")]
    return [(f"R@{cutoff}", f"recall_micro@{cutoff}")]


def per_query_metric(metric: str) -> str:
    """The per-query value behind a run-level metric, for paired tests: a micro recall is
    a ratio of sums, so its queries are compared on their own recall@k."""
    return metric.replace("recall_micro@", "recall@")


def reference_of(query: Query, task: str) -> Any:
    """What a generated answer is judged against: the gold SQL (text-to-SQL; the answer
    when a query has none), the label (fact verification; else the answer), the answer."""
    if task == "sql":
        return query.sql or query.answer
    if task == "fact":
        return query.label if query.label is not None else query.answer
    return query.answer


def last_gold_rank(gold_ranks: Mapping[TableKey, int | None]) -> int | None:
    """The rank by which every gold table has been retrieved: the worst gold rank.

    None when some gold table was never ranked; 0 when there is no gold table (nothing
    to find). RunStore.query_scores computes the same in SQL.
    """
    ranks = list(gold_ranks.values())
    if not ranks:
        return 0
    if any(r is None for r in ranks):
        return None
    return max(r for r in ranks if r is not None)


def failed_at(last_rank: int | None, k: int) -> bool:
    """Whether a query whose last gold table came at `last_rank` failed at k."""
    return last_rank is None or last_rank > k


def missing_gold(gold: list[TableKey], gold_ranks: Mapping[TableKey, int | None], k: int
                 ) -> list[TableKey]:
    """The gold tables not within the first k, in gold order."""
    return [g for g in gold if (rank := gold_ranks.get(g)) is None or rank > k]
