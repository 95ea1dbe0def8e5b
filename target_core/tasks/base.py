"""What a task is, as data: the entry each task registers (`target_core.tasks`).

A task (qa, fact, sql, retrieval, or one a user adds) is judged, generated, scored,
shown, exported and loaded by the layers above; none of them branches on the task's
name. They ask its entry: the headline and "answer right" metrics, Table 2's columns,
what the generator replies, what an answer is judged against, how the metrics code
scores it, which answer columns slices show, how hub records map. Behaviour stays in
its layer (metrics score, generators prompt, pages render); the entry says which.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GTR_COLUMNS", "GTR_EXTRAS", "REFERENCES", "REPLIES", "SCORINGS", "UNRANKED_EXTRAS",
           "TaskRules"]

REPLIES = ("text", "value", "label", "sql")
"""What a generator can reply: free text, one value (a cell, no sentence around it), a
verdict label (True / False / Not Enough
Information), or SQL (executed read-only against the dataset's SQLite databases)."""
REFERENCES = ("answer", "label", "sql")
"""The query field an answer is judged against."""
SCORINGS = ("bleu", "label", "sql", "exact")
"""How metrics.downstream scores an answer: sentence/corpus BLEU and ROUGE-L (text),
fact verification's label scores, the SQL checker's flags and VES, or exact match of
the normalised answer text (`exact_match`)."""


@dataclass(frozen=True)
class TaskRules:
    """How runs of one task are generated, judged and shown."""

    task: str
    description: str
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
    database is the gold database, `db_hit@1`), not table-level recall; failures then
    group by database and note a wrong top database."""
    default_context_k: int | None = None
    """Tables whose context the generator gets when the run does not say (None: the
    run's k). Text-to-SQL: 1, the paper's setting (the schema of the top table's
    database)."""
    answer_extras: tuple[tuple[str, str], ...] = ()
    """Answer metrics shown beside the headline wherever it shows, though not in the
    paper's Table 2: (column, metric), the same name run-level and per query.
    Text-to-SQL: BIRD's VES (`metrics.ves`)."""
    reply: str | None = None
    """What the generator replies (one of REPLIES; None: nothing is generated)."""
    reference: str = "answer"
    """What an answer is judged against (REFERENCES): the gold SQL (the answer when a
    query has none), the label (else the answer), or the answer."""
    scoring: str | None = None
    """How metrics.downstream scores the answers (SCORINGS; None: no answers)."""
    answer_columns: tuple[tuple[str, str], ...] = ()
    """Per-query answer metrics a slice table shows: (column, per-query metric)."""
    gtr: bool = False
    """GTR's answer metrics apply (seed 001: ROUGE P, SAS, a judge's truthfulness, reply
    tokens, response time): answers are free text judged against a text answer."""
    paper_dataset: str = "FeTaQA"
    """The TARGET paper dataset a dataset of this task is compared with by default."""
    heading: str = "Generation"
    """What the Query page calls a generated answer of this task."""
    check_question: str = ""
    """A question about the check table (Deepest lakes: lake, depth_m, country) that
    `check_generator` asks a generator for this task; "" skips the task."""
    max_tokens: int = 256
    """Default reply tokens (the TARGET_MAX_TOKENS_<TASK> setting)."""
    expected_reply_tokens: int = 60
    """The reply length a cost estimate assumes per query (costs.generation_cost): a
    short answer, a label, reasoning plus SQL."""
    reply_note: str = "an answer"
    """The reply in a few words, for the max-tokens setting's help."""
    prompt: tuple[str, str] | None = None
    """The task's own (system, instruction) prompt, the instruction a str.format
    template with {table_contents} and {query}; None: the prompt set's prompt for the
    task's reply (a text answer, a label, SQL)."""

    def __post_init__(self) -> None:
        if self.reply is not None and self.reply not in REPLIES:
            raise ValueError(f"task {self.task!r}: reply {self.reply!r} is not one of "
                             f"{', '.join(REPLIES)}")
        if self.reference not in REFERENCES:
            raise ValueError(f"task {self.task!r}: reference {self.reference!r} is not one "
                             f"of {', '.join(REFERENCES)}")
        if self.scoring is not None and self.scoring not in SCORINGS:
            raise ValueError(f"task {self.task!r}: scoring {self.scoring!r} is not one of "
                             f"{', '.join(SCORINGS)}")
        if (self.answer_metric is None) != (self.reply is None):
            raise ValueError(f"task {self.task!r}: a task with answers has a reply and a "
                             "headline answer metric; one without has neither")

    @property
    def answers(self) -> bool:
        """Whether a generator answers the task's queries (and metrics score them)."""
        return self.reply is not None

    @property
    def answers_sql(self) -> bool:
        """Whether answers are SQL executed against the dataset's SQLite databases: the
        dataset must have them, the prompt gives their schema, an imported or exported
        answer is [sql, database_id]."""
        return self.reply == "sql"


GTR_EXTRAS: tuple[tuple[str, str], ...] = (
    ("R-1 P", "rouge1_p"), ("R-2 P", "rouge2_p"), ("R-L P", "rougeL_p"),
    ("SAS (MiniLM cosine)", "sas"), ("truthful", "truthfulness"),
    ("reply tokens", "reply_tokens"), ("response ms", "response_ms_mean"))
"""GTR's answer metrics (seed 001, Tables 3 and 4; metrics.gtr), the answer extras of a
task with `gtr`: ROUGE-1/2/L precision, SAS (the MiniLM cosine, not a cross-encoder), a
judge's truthfulness (after `judge`), reply length in tokens, response time (run level
`response_ms_mean`, the mean of the per-query `response_ms` over real calls: a latency,
named like one)."""

GTR_COLUMNS: tuple[str, ...] = tuple(column for column, _ in GTR_EXTRAS)
"""GTR_EXTRAS' column names: a table of their own below a leaderboard or a runs list,
which then fits a 1,500-pixel screen."""

UNRANKED_EXTRAS = frozenset({"reply tokens"})
"""Answer-extra columns with no better direction (longer is not better); columns
ending in "ms" are best when lowest."""
