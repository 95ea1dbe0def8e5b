"""The Benchmark builder's sampling as a job: sampling SQL, writing questions (an LLM may
take minutes) and checking them work in a worker process (target_core.engine.workers),
so leaving the page or restarting the server loses nothing.

`launch_draft` checks what it can before anything starts (the dataset, the templates,
the draft's name, the writer and judge specs), keeps uploaded templates in the workspace
under their content hash (the worker reads them after the page is gone) and starts the
job; `draft_task` is the worker's work. A finished job's `result` holds the draft's name,
its question counts and the per-template sampling counts that the page shows.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from target_core.benchgen.build import pick_templates, sample_draft
from target_core.benchgen.draft import check_name, list_drafts
from target_core.benchgen.instantiate import SampleReport, TemplateCounts
from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, Template, load_templates
from target_core.config import Settings
from target_core.engine.job_record import Job
from target_core.engine.jobs import JobStore
from target_core.engine.workers import spawn_worker
from target_core.errors import ConfigError
from target_core.progress import Progress


@dataclass(frozen=True)
class DraftSpec:
    """What sample_draft needs, as a job stores it."""

    dataset: str
    name: str
    templates: str | None
    """A templates file kept in the workspace, or None for the bundled examples."""
    templates_label: str
    database: str | None
    n: int
    seed: int
    reference_date: str | None
    """ISO date, or None: each template's own (the day after its latest date)."""
    writer: str
    judge: str
    replace: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DraftSpec:
        return cls(**data)


def keep_upload(settings: Settings, file_name: str, content: bytes) -> Path:
    """An uploaded templates file, kept as workspace/uploads/HASH.SUFFIX (the same file
    uploaded twice is kept once)."""
    suffix = Path(file_name).suffix.lower()
    digest = hashlib.sha256(content).hexdigest()[:16]
    path = Path(settings.workspace) / "uploads" / f"{digest}{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_bytes(content)
    return path


def _templates(spec: DraftSpec) -> list[Template]:
    return load_templates(spec.templates or EXAMPLE_TEMPLATES_DIR)


def launch_draft(spec: DraftSpec, settings: Settings) -> Job:
    """Check `spec` and start its job; raises TargetError (nothing started) for an
    unknown dataset or database, bad templates, a draft name taken (without replace) or
    a writer or judge spec that cannot be built."""
    from target_core.benchgen.llm import make_judge, make_writer
    from target_core.datasets import load_dataset

    check_name(spec.name)
    if spec.name in list_drafts(settings.workspace) and not spec.replace:
        raise ConfigError(f"a draft named '{spec.name}' exists; pick another name or "
                          "replace it")
    dataset = load_dataset(spec.dataset, settings)
    pick_templates(_templates(spec), dataset, spec.database)
    make_writer(spec.writer, settings, dataset.databases)
    make_judge(spec.judge, settings, dataset.databases)
    job = JobStore.in_workspace(settings.workspace).create_job("draft", spec.to_dict())
    spawn_worker(job, settings)
    return JobStore.in_workspace(settings.workspace).get(job.job_id)


def draft_task(job: Job, settings: Settings, progress: Progress) -> dict[str, Any]:
    """The worker's work for a draft job: sample, write and check, save the draft."""
    from target_core.datasets import load_dataset

    spec = DraftSpec.from_dict(job.spec)
    dataset = load_dataset(spec.dataset, settings)
    draft, report, _, _ = sample_draft(
        settings, dataset, _templates(spec), database=spec.database, name=spec.name,
        n=spec.n, seed=spec.seed,
        reference_date=date.fromisoformat(spec.reference_date) if spec.reference_date
        else None,
        writer_spec=spec.writer, judge_spec=spec.judge, templates_label=spec.templates_label,
        replace=spec.replace, progress=progress)
    with draft:
        summary = draft.summary()
    result = {"draft": draft.name, "queries": len(report.queries), "questions": summary.total,
              "automatic_passed": summary.automatic_passed,
              "counts": {t: c.to_dict() for t, c in report.counts.items()}}
    return {"result": json.dumps(result), "done": len(report.queries),
            "total": len(report.queries)}


def draft_report(job: Job) -> SampleReport | None:
    """A finished draft job's per-template counts as a SampleReport (no queries)."""
    if job.result is None:
        return None
    return SampleReport(queries=(), counts={t: TemplateCounts(**c)
                                            for t, c in job.result["counts"].items()})
