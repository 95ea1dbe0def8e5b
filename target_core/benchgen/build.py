"""Make a draft: sample SQL from templates, write questions, check them (seed 002).

One call runs the whole automatic part of the workflow for a dataset's databases:
`sample_queries` keeps runnable, non-empty, distinct SQL; the writer (the template
baseline or an LLM) writes questions for each; every question gets the round-trip
check, and the judge's verdict too when the judge is not the round trip itself. The
result is saved as a draft (`draft.py`) for human review. Model calls for different
items run in parallel up to the writer's `concurrency`; `progress(done, total, what)` is
called after each item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

from target_core.benchgen.draft import Draft, check_name
from target_core.benchgen.instantiate import SampledQuery, SampleReport, sample_queries
from target_core.benchgen.questions import (
    Judge,
    QuestionWriter,
    RoundTripJudge,
    TemplateWriter,
    Verdict,
    Written,
    round_trip,
)
from target_core.benchgen.templates import Template
from target_core.config import Settings
from target_core.errors import ConfigError, UnknownNameError
from target_core.progress import Progress, no_progress
from target_core.types import Dataset

_Item = tuple[SampledQuery, Written, list[Verdict], list[Verdict | None]]
DEFAULT_MAX_FAILED = Settings.max_failed_generations


def pick_templates(templates: Sequence[Template], dataset: Dataset,
                   database: str | None = None) -> list[Template]:
    """The templates whose database is in `dataset` (only `database`'s when given)."""
    if not dataset.databases:
        raise ConfigError(f"dataset '{dataset.name}' has no SQLite databases to sample from")
    if database is not None:
        if database not in dataset.databases:
            raise UnknownNameError("database", database, dataset.databases)
        chosen = [t for t in templates if t.database == database]
        if not chosen:
            raise ConfigError(f"no template is for database '{database}'")
        return chosen
    chosen = [t for t in templates if t.database in dataset.databases]
    if not chosen:
        raise ConfigError(f"no template is for a database of dataset '{dataset.name}' "
                          f"(its databases: {', '.join(sorted(dataset.databases))})")
    return chosen


def write_and_check(item: SampledQuery, template: Template, writer: QuestionWriter,
                    judge: Judge) -> _Item:
    """The writer's questions for `item`, each with its round trip and judge verdict."""
    written = writer.write(item, template)
    checks = [round_trip(q.text, item, template) for q in written.questions]
    if isinstance(judge, RoundTripJudge):
        verdicts: list[Verdict | None] = [None] * len(checks)
    else:
        verdicts = [judge.judge(q.text, item, template) for q in written.questions]
    return item, written, checks, verdicts


def enforce_policy(items: Sequence[_Item], judge: Judge, max_failed: float) -> None:
    """The one failure policy (llm.policy) over the draft's LLM calls: one question
    writing per sampled query, one judgement per question when the judge is a model.
    Raises LLMStepFailed naming the classes and the first error when all, or more than
    `max_failed` of them, failed; a draft within the tolerance keeps its failures (the
    writer's error per item, an undecided verdict with its reason per pair)."""
    from target_core.llm.policy import enforce

    enforce([(item.template_id, written.error, None) for item, written, _, _ in items
             if written.error], len(items), max_failed, calls="question writings",
            item="template")
    if isinstance(judge, RoundTripJudge):
        return
    judged = [(q.text, v) for _, written, _, verdicts in items
              for q, v in zip(written.questions, verdicts, strict=True) if v is not None]
    enforce([(repr(text), v.reason or "no verdict", None) for text, v in judged
             if v.passed is None], len(judged), max_failed, calls="judgements",
            item="question")


def build_draft(dataset: Dataset, templates: Sequence[Template], *, workspace: str | Path,
                name: str, n: int, seed: int, reference_date: date | None = None,
                writer: QuestionWriter | None = None, judge: Judge | None = None,
                replace: bool = False, progress: Progress = no_progress,
                extra_meta: Mapping[str, Any] | None = None,
                max_failed: float = DEFAULT_MAX_FAILED) -> tuple[Draft, SampleReport]:
    """Sample, write, check and save a draft named `name` in the workspace. A draft
    whose LLM calls failed beyond `max_failed` (TARGET_MAX_FAILED_GENERATIONS) is not
    saved: LLMStepFailed (`enforce_policy`); a rerun asks only the failed calls again
    (the response cache keeps successes)."""
    check_name(name)
    writer = writer or TemplateWriter()
    judge = judge or RoundTripJudge()
    report = sample_queries(templates, dataset.databases, n=n, seed=seed,
                            reference_date=reference_date)
    by_id = {t.id: t for t in templates}
    total = len(report.queries)
    done = 0
    workers = max(1, writer.concurrency)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(write_and_check, item, by_id[item.template_id], writer, judge)
                   for item in report.queries]
        items = []
        for future in futures:
            items.append(future.result())
            done += 1
            progress(done, total, "writing questions")
    enforce_policy(items, judge, max_failed)
    meta = {"dataset": dataset.name, "n": n, "seed": seed,
            "reference_date": reference_date.isoformat() if reference_date else None,
            "writer": writer.label, "writer_spec": writer.spec, "judge": judge.label,
            "judge_spec": judge.spec, "counts": {k: c.to_dict() for k, c in
                                                 report.counts.items()},
            **(extra_meta or {})}
    draft = Draft.create(workspace, name, templates=templates, items=items, meta=meta,
                         replace=replace)
    return draft, report


def sample_draft(settings: Settings, dataset: Dataset, templates: Sequence[Template], *,
                 database: str | None, name: str, n: int, seed: int,
                 reference_date: date | None, writer_spec: str, judge_spec: str,
                 templates_label: str, workspace: str | Path | None = None,
                 replace: bool = False, progress: Progress = no_progress
                 ) -> tuple[Draft, SampleReport, QuestionWriter, Judge]:
    """The whole automatic part, for the page and the CLI: keep the templates for the
    dataset's databases (or one database), build the writer and judge from their specs
    (one response cache in the workspace), then `build_draft` into `workspace` (default:
    the settings') under the settings' failure share."""
    from target_core.benchgen.llm import make_judge, make_writer
    from target_core.llm.cache import ResponseCache

    chosen = pick_templates(templates, dataset, database)
    cache = ResponseCache.in_workspace(settings.workspace)
    writer = make_writer(writer_spec, settings, dataset.databases, cache=cache)
    judge = make_judge(judge_spec, settings, dataset.databases, cache=cache)
    draft, report = build_draft(
        dataset, chosen, workspace=workspace or settings.workspace, name=name, n=n, seed=seed,
        reference_date=reference_date, writer=writer, judge=judge, replace=replace,
        progress=progress, extra_meta={"templates": templates_label},
        max_failed=settings.max_failed_generations)
    return draft, report, writer, judge
