"""TARGET's Table 2 reproduced: our run of each baseline beside the paper's figure for a
paper dataset, with the difference and a note where the settings differ. Shared by the
Overview's reproduction mode and `reproduce`."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from target_core.analysis.leaderboard import recall_curves
from target_core.analysis.paper import PAPER_DATASETS, PAPER_TABLE2, PaperCell, PaperDataset
from target_core.datasets.registry import DatasetInfo
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import UnknownNameError
from target_core.figures.recall import recall_at_k_curves
from target_core.figures.style import Figure
from target_core.plans.reproduce import Baseline
from target_core.plans.reproduce import stored_reproduction as stored_reproduction
from target_core.read_models.cells import as_text
from target_core.read_models.links import run_queries_link
from target_core.tasks import task_rules
from target_core.tasks.judging import table2_recall_columns

__all__ = ["REPRODUCTION_COLUMNS", "corpus_note", "default_dataset",
           "default_paper", "paper_dataset", "reproduction_curves", "reproduction_frame"]

REPRODUCTION_COLUMNS = ["method", "ours R", "paper R", "Δ R", "ours ms", "paper ms",
                        "ours answers", "paper answers", "Δ answers", "follows", "note",
                        "run", "open"]


def paper_dataset(name: str) -> PaperDataset:
    """A dataset of the paper's Table 2 by name; unknown names suggest the closest."""
    if name not in PAPER_DATASETS:
        raise UnknownNameError("paper dataset", name, PAPER_DATASETS)
    return PAPER_DATASETS[name]


def _answers(run: RunRecord) -> tuple[str, float | None]:
    """Our downstream figure as Table 2 prints it, and the number to subtract."""
    rules = task_rules(run.task)
    names = [metric for _, metric in rules.table2_answers]
    values = [run.metrics.get(m) for m in names]
    if run.config.generation is None or any(v is None for v in values):
        return "", None
    if len(values) > 1:  # fact: P/R/F1, compared on the headline (F1)
        headline = run.metrics.get(rules.answer_metric or "", values[-1])
        return "/".join(f"{v:.2f}" for v in values if v is not None), headline
    # one figure (QA's SB, sacreBLEU on the paper's 0-100 scale; text-to-SQL's EX), then
    # the answer extras beside it (VES) unless they are GTR's, a table of their own; the
    # paper reports none, so the difference is on the figure alone
    extras = [] if rules.gtr else [f"{column} {run.metrics[metric]:.2f}"
                                   for column, metric in rules.answer_extras
                                   if metric in run.metrics]
    return " · ".join([f"{values[0]:.3f}", *extras]), values[0]


def reproduction_frame(done: Sequence[tuple[Baseline, RunRecord]], paper: str
                       ) -> pd.DataFrame:
    """One row per baseline run: our recall (Table 2's: R@10, or database-level R@1 for
    text-to-SQL), time and answers beside the paper's on `paper`, and the differences.
    Times are in milliseconds on both sides (the paper's seconds × 1000)."""
    target = paper_dataset(paper)
    rows = []
    for baseline, run in done:
        cell = (PAPER_TABLE2[baseline.paper_row][target.name] if baseline.paper_row
                else PaperCell(None, None, None))
        _, metric = table2_recall_columns(run.task, run.config.top_k)[0]
        recall = None if baseline.needs_generator else run.metrics.get(metric)
        ms = None if baseline.needs_generator else run.metrics.get("retrieval_ms_mean")
        ours_text, ours_value = _answers(run)
        paper_value = None if cell.downstream is None else cell.downstream[-1]
        paper_text = ("" if cell.downstream is None else
                      "/".join(f"{v:g}" for v in cell.downstream))
        notes = [n for n in (baseline.note, _task_note(run.task, target)) if n]
        rows.append({
            "method": baseline.method, "ours R": recall, "paper R": cell.recall,
            "Δ R": None if recall is None or cell.recall is None else recall - cell.recall,
            "ours ms": ms, "paper ms": None if cell.seconds is None else cell.seconds * 1000,
            "ours answers": ours_text, "paper answers": paper_text,
            "Δ answers": None if ours_value is None or paper_value is None
            else ours_value - paper_value,
            "follows": baseline.follows, "note": "; ".join(notes), "run": run.run_id,
            "open": run_queries_link(run.run_id)})
    frame = pd.DataFrame(rows, columns=REPRODUCTION_COLUMNS)
    for column in ("ours R", "paper R", "Δ R", "ours ms", "paper ms", "Δ answers"):
        frame[column] = frame[column].astype("Float64")
    return frame


REPRODUCTION_FORMATS = {"ours R": ".3f", "paper R": ".3f", "Δ R": "+.3f", "ours ms": ",.2f",
                        "paper ms": ",.2f", "Δ answers": "+.3f"}
"""How the Overview shows reproduction_frame's numbers (text: a cell may be blank)."""


def reproduction_table(done: Sequence[tuple[Baseline, RunRecord]], paper: str
                       ) -> pd.DataFrame:
    """reproduction_frame as the Overview shows it: numbers as text, blank where the
    paper or the run has no figure."""
    return as_text(reproduction_frame(done, paper), REPRODUCTION_FORMATS)


def _task_note(task: str, target: PaperDataset) -> str:
    if task != target.task:
        return f"our dataset's task is {task}, {target.name}'s is {target.task}"
    return ""


def corpus_note(name: str, n_tables: int, n_queries: int, paper: str) -> str:
    """Both corpora in one line: the paper's figures come from another corpus size."""
    target = paper_dataset(paper)
    return (f"Paper: {target.name} ({target.split} split), {target.corpus}, "
            f"{target.queries} queries. Ours: {name}, {n_tables:,} tables, "
            f"{n_queries:,} queries. k = 10; text-to-SQL's R@1 is database-level.")


def default_dataset(infos: Sequence[DatasetInfo]) -> str | None:
    """The dataset the reproduction opens on without a choice: the first with tables
    (TARGET's Table 2 is over tables; a text corpus such as demo-docs has none)."""
    return next((i.name for i in infos if i.tables and not i.error), None)


def default_paper(task: str) -> str:
    """The paper dataset a dataset of `task` is compared with unless chosen (its entry's
    `paper_dataset`)."""
    return task_rules(task).paper_dataset


def reproduction_curves(store: RunStore, done: Sequence[tuple[Baseline, RunRecord]]
                        ) -> Figure:
    """Recall@k for k = 1..10 of each baseline run (the paper's Figure 2, on our data;
    the paper prints its curve without numbers, so only ours is drawn)."""
    runs = [run for baseline, run in done if not baseline.needs_generator]
    methods = {run.run_id: baseline.method for baseline, run in done}
    curves = recall_curves(store, runs)
    curves["label"] = curves["run_id"].map(methods)
    return recall_at_k_curves(curves)
