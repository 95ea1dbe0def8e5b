"""Job kinds as data: what a job of each kind is called, where it leads and what its
worker does. The job table (engine/jobs.py), the worker (engine/workers.py), the CLI's
`worker` command, the links (read_models/links.py) and the sidebar read these entries;
none of them branches on a kind's name.

Adding a job kind is one new module (its task, e.g. target_core/engine/export_job.py)
and one `JOB_KINDS.register(JobKind(...))` at the end of this file
(docs/extending/job-kind.md).

A kind names its task as "module:function", imported when a worker starts
(`JobKind.load_task`), not as a function object: a kind's work may live above the
engine (a draft's is benchgen's), and the engine must not import upward
(tests/test_architecture.py); the name also keeps the dashboard, which lists jobs of
every kind, from importing any kind's work.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from target_core.config import Settings
from target_core.errors import ConfigError, UnknownNameError
from target_core.progress import UNCOUNTED, Progress
from target_core.registry import DuplicateNameError
from target_core.run_config import RunConfig

JobTask = Callable[[Any, Settings, Progress], dict[str, Any]]
"""A job kind's work in the worker: task(job, settings, progress) does the job (an
engine.job_record.Job), reporting progress (which raises Cancelled on a cancel), and returns
the job columns to set when it is done (run_id, done, total, result as JSON)."""
SpecText = Callable[[dict[str, Any]], str]
"""Text read from a job's spec (its kind's parameters as stored)."""


def spec_text(template: str) -> SpecText:
    """A SpecText filling `template`'s {fields} from the spec: "draft {name}"."""
    return lambda spec: template.format(**spec)


@dataclass(frozen=True)
class Lead:
    """Where a job leads, as data for read_models/links.py: the link's text, the page
    and its URL parameters, each (parameter, field): the field "run_id" is the run the
    job filled, any other a key of the job's spec."""

    text: str
    page: str
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class JobKind:
    """One kind of job."""

    name: str
    description: str
    """One line: what a job of this kind does."""
    label: SpecText
    """What tells two jobs apart, dataset included (the sidebar, `run --detach`)."""
    pipeline: SpecText
    """What the job does, without its dataset (the `jobs` listing)."""
    task: str
    """"module:function" of its JobTask, imported by the worker (module docstring)."""
    done: Lead
    """Where a finished job leads (when every field of its parameters is set)."""
    open: Lead
    """Where an unfinished job leads: the page that launched it."""
    runs_config: bool = False
    """Its spec is a RunConfig's dict: a job of the same configuration is the same job
    (JobStore.active_like), and it counts among the runs under way."""
    uncounted: frozenset[str] = frozenset()
    """Progress steps reported with done == total that are no count, shown by name."""

    def load_task(self) -> JobTask:
        """The task function `task` names; a ConfigError when it cannot be imported."""
        module, _, function = self.task.partition(":")
        try:
            found = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"job kind '{self.name}': its task {self.task} cannot be "
                              f"loaded ({exc})") from exc
        return found


class JobKinds:
    """Job kinds by name, in registration order; a name is registered once."""

    def __init__(self) -> None:
        self._kinds: dict[str, JobKind] = {}

    def register(self, kind: JobKind) -> JobKind:
        if kind.name in self._kinds:
            raise DuplicateNameError("job kind", kind.name)
        self._kinds[kind.name] = kind
        return kind

    def get(self, name: str) -> JobKind:
        """The kind called `name`; UnknownNameError (suggesting the closest) if none."""
        try:
            return self._kinds[name]
        except KeyError:
            raise UnknownNameError("job kind", name, self._kinds) from None

    def names(self) -> list[str]:
        return list(self._kinds)

    def __iter__(self) -> Iterator[JobKind]:
        return iter(self._kinds.values())

    def __contains__(self, name: object) -> bool:
        return name in self._kinds


def _run_label(spec: dict[str, Any]) -> str:
    config = RunConfig.from_dict(spec)  # ablation variants differ only in their view
    return f"{config.label} on {config.dataset} · {config.view.label}"


RUN_QUERIES = Lead("queries", "query", (("run", "run_id"),))
RUN_PAGE = Lead("run page", "run", (("dataset", "dataset"),))

JOB_KINDS = JobKinds()
JOB_KINDS.register(JobKind(
    "run", "retrieval (and generation) of a RunConfig, resuming its stored run",
    _run_label, lambda spec: RunConfig.from_dict(spec).label,
    "target_core.engine.workers:run_task", RUN_QUERIES, RUN_PAGE,
    runs_config=True, uncounted=UNCOUNTED))
JOB_KINDS.register(JobKind(
    "draft", "the Benchmark builder's sampling and question writing",
    spec_text("questions for draft {name} on {dataset}"), spec_text("draft {name}"),
    "target_core.benchgen.draft_jobs:draft_task",
    Lead("review", "benchmark_builder", (("draft", "name"),)),
    Lead("builder", "benchmark_builder")))
JOB_KINDS.register(JobKind(
    "judge", "truthfulness of a stored run's answers, rated by a judge (experiments.judge)",
    spec_text("truthfulness of run {run_id} by {judge}"), spec_text("judge {judge}"),
    "target_core.experiments.judge:judge_task", RUN_QUERIES, RUN_PAGE))
