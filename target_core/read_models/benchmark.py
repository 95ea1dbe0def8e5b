"""The Benchmark builder page's read model (seed 002): which datasets can be sampled,
the templates' databases, a sampled query's result, the review queue, and a text-to-SQL
run split by error source with links to its queries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from target_core.benchgen.build import pick_templates as pick_templates
from target_core.benchgen.draft import Draft, Pair, list_drafts, pair_rows
from target_core.benchgen.draft import default_draft_name as default_draft_name
from target_core.benchgen.draft_jobs import draft_report as draft_report
from target_core.benchgen.error_source_report import DEFINITIONS, ErrorSourceReport
from target_core.benchgen.error_source_report import TABLE_COLUMNS as TABLE_COLUMNS
from target_core.benchgen.error_sources import error_sources
from target_core.benchgen.instantiate import SampledQuery, SampleReport
from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR as EXAMPLE_TEMPLATES_DIR
from target_core.benchgen.templates import Template
from target_core.benchgen.templates import load_templates as load_templates
from target_core.config import Settings
from target_core.datasets import discover
from target_core.datasets.folder import find_databases, read_meta
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import TargetError
from target_core.read_models.links import query_link
from target_core.tasks import task_rules
from target_core.types import Dataset

PAPER_ACCEPTANCE = 0.9511
"""Seed 002's acceptance rate of its LLM-written questions."""


def sql_dataset_names(settings: Settings) -> list[str]:
    """Text-to-SQL datasets with SQLite databases to sample from, found without loading
    any (the builder's first view loaded them all): a folder whose dataset.json says
    task "sql" beside databases/<id>/<id>.sqlite, or a Spider folder (its errors show
    once chosen)."""
    names = []
    for name, entry in discover(settings).items():
        if entry.kind == "spider":
            names.append(name)
        elif entry.kind in ("demo", "folder"):
            try:
                is_sql = read_meta(Path(entry.location)).get("task") == "sql"
            except TargetError:
                continue  # it does not load: not offered, as in list_datasets' error row
            if is_sql and find_databases(Path(entry.location)):
                names.append(name)
    return names


def template_databases(templates: Sequence[Template], dataset: Dataset) -> list[str]:
    """The dataset's databases that some template is for."""
    return sorted({t.database for t in templates if t.database in dataset.databases})


def counts_frame(report: SampleReport) -> pd.DataFrame:
    """Draws per template: kept, error, empty, duplicate, first error (blank: none)."""
    frame = pd.DataFrame([{"template": t, **c.to_dict()} for t, c in report.counts.items()])
    if "first_error" in frame:
        frame["first_error"] = frame["first_error"].fillna("")
    return frame


def result_frame(item: SampledQuery) -> pd.DataFrame:
    """The sampled query's result preview as a table."""
    return pd.DataFrame([list(row) for row in item.result_preview],
                        columns=list(item.columns) or None)


def next_pair(queue: Sequence[Pair], current: Pair) -> Pair | None:
    """The pair to review after `current`: the next in the queue, else the first other."""
    following = [p for p in queue if p.pair_id > current.pair_id] or list(queue)
    return next((p for p in following if p.pair_id != current.pair_id), None)


def pair_by_id(pairs: Sequence[Pair], wanted: str | None) -> Pair:
    """The pair whose id is `wanted` (text from a link), else the first."""
    by_id = {p.pair_id: p for p in pairs}
    found = by_id.get(int(wanted)) if wanted and wanted.isdigit() else None
    return found or pairs[0]


TAB_SAMPLE, TAB_REVIEW, TAB_EXPORT = range(3)


def link_tab(draft: str | None, pair: str | None, run: str | None) -> int | None:
    """The tab a link's parameters name: a run's evaluation in Export, a draft or one of
    its pairs in Review; None when the link names neither (the session's tab stays)."""
    if run is not None:
        return TAB_EXPORT
    if draft is not None or pair is not None:
        return TAB_REVIEW
    return None


def pair_ids(workspace: str | Path, draft: str | None) -> list[str]:
    """The ids (as text) of every pair of `draft`; none when there is no such draft."""
    if draft is None or draft not in list_drafts(workspace):
        return []
    with Draft.open(workspace, draft) as opened:
        return [str(p.pair_id) for p in opened.pairs(None)]


JUDGE_TEXT = {True: "answerable", False: "not answerable", None: "could not judge"}


def pair_frame(pairs: Sequence[Pair]) -> pd.DataFrame:
    """The review list, one row per pair, without the SQL (the selected pair's is shown
    above the list, which then fits a 1,500-pixel screen); the judge column in words,
    blank where no judge ran (not a grey "None")."""
    frame = pd.DataFrame(pair_rows(pairs)).drop(columns=["sql"], errors="ignore")
    if not frame.empty:
        frame["judge"] = ["" if p.judge is None else JUDGE_TEXT[p.judge.passed] for p in pairs]
        frame["difficulty"] = frame["difficulty"].fillna("")
    return frame


def automatically_passed(pairs: Sequence[Pair]) -> int:
    return sum(p.automatic is True for p in pairs)


def evaluable_runs(store: RunStore) -> list[RunRecord]:
    """Text-to-SQL runs with a generator and stored queries."""
    return [r for r in store.list_runs() if r.n_done and r.config.generation is not None
            and task_rules(r.task).answers_sql]


def run_labels(runs: Sequence[RunRecord]) -> dict[str, str]:
    """run_id -> "RUN · DATASET · PIPELINE", for a picker."""
    return {r.run_id: f"{r.run_id} · {r.config.dataset} · {r.config.label}" for r in runs}


@dataclass(frozen=True)
class ErrorSourceView:
    report: ErrorSourceReport
    definitions: pd.DataFrame
    queries: pd.DataFrame
    """One row per query with its error source and an `open` link to the Query page."""


def error_source_view(store: RunStore, dataset: Dataset, run_id: str) -> ErrorSourceView:
    """The run split by error source (seed 002's Table 1); raises TargetError."""
    report = error_sources(store, dataset, run_id)
    rows = report.frame()
    rows.insert(0, "open", [query_link(run_id, q) for q in rows["query_id"]])
    rows[["difficulty", "alternative_kind", "detail"]] = rows[
        ["difficulty", "alternative_kind", "detail"]].fillna("")  # blank, not "None"
    definitions = pd.DataFrame([{"source": k, "definition": v} for k, v in DEFINITIONS.items()])
    return ErrorSourceView(report, definitions, rows)
