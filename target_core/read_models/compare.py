"""The Compare page's read model: which runs can be compared (complete runs of one
dataset), the shared cutoffs, and one comparison with its per-query outcomes, names and
flipped-query tables with links to each run's Query page.

Runs are grouped by their dataset's content (fingerprint), so runs made with a folder
path and with the dataset's name (or two names of one content) are listed together,
under the name the user chose. Runs that differ
only in their prompt set are a prompt-set comparison: each is named by its set. QA runs
also get GTR's Figure 3: per query, answer quality against reply length in tokens."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import pandas as pd

from target_core.analysis.compare import RunComparison, compare_runs, dataset_label, run_names
from target_core.analysis.memo import Memo, run_scores, run_state
from target_core.analysis.report import DEFINITIONS as DEFINITIONS
from target_core.analysis.report import flipped_table
from target_core.analysis.report import headline_table as headline_table
from target_core.analysis.report import paired_tests_table as paired_tests_table
from target_core.analysis.significance import outcomes_frame
from target_core.engine.store import RunRecord, RunStore
from target_core.errors import UnknownNameError
from target_core.figures.compare import (
    ci_forest,
    quality_figure,
    rank_scatter,
    win_tie_loss_bars,
)
from target_core.figures.style import Figure
from target_core.metrics.gtr import SAS_LABEL
from target_core.metrics.retrieval import STANDARD_KS, default_ks
from target_core.read_models.links import query_link
from target_core.read_models.slices import SliceView, by_slice
from target_core.run_config import DEFAULT_PROMPT_SET, RunConfig

T = TypeVar("T")


@dataclass(frozen=True)
class CompareChoices:
    """Complete runs by dataset (newest first), for the pickers: one entry per dataset
    content, under its name (`dataset_label`); an older content of a name is
    "NAME (FINGERPRINT)"."""

    by_dataset: dict[str, list[RunRecord]]

    @property
    def eligible(self) -> list[str]:
        """Datasets with at least two complete runs."""
        return sorted(name for name, runs in self.by_dataset.items() if len(runs) >= 2)

    def run(self, run_id: str) -> RunRecord | None:
        return next((r for runs in self.by_dataset.values() for r in runs
                     if r.run_id == run_id), None)

    def dataset_of(self, run_ids: Sequence[str]) -> str | None:
        """The dataset (its key here) of the first of `run_ids` that is a complete run."""
        return next((name for r in run_ids for name, runs in self.by_dataset.items()
                     if any(run.run_id == r for run in runs)), None)

    def labels(self, dataset: str) -> dict[str, str]:
        """run_id -> its picker label; a run started with another spelling of the
        dataset (a folder path) says so."""
        return {r.run_id: f"{r.config.label} · {r.config.view.label} · k={r.config.top_k} "
                          + (f"· {r.config.dataset} " if r.config.dataset != dataset else "")
                          + f"· {r.run_id}" for r in self.by_dataset.get(dataset, [])}

    def default_runs(self, dataset: str) -> list[str]:
        """The two newest runs, the older one first (the baseline)."""
        return [r.run_id for r in reversed(self.by_dataset.get(dataset, [])[:2])]

    def shared_ks(self, run_ids: Sequence[str]) -> list[int]:
        """The cutoffs every one of the runs reports."""
        runs = [run for r in run_ids if (run := self.run(r))]
        if not runs:
            return []
        return sorted(set.intersection(*(set(default_ks(r.config.top_k)) for r in runs)))

    def default_k(self, run_ids: Sequence[str]) -> int | None:
        """The largest standard cutoff (1, 3, 5, 10) they share, else their largest."""
        ks = self.shared_ks(run_ids)
        standard = [k for k in ks if k in STANDARD_KS]
        if standard:
            return standard[-1]
        return ks[-1] if ks else None


def compare_choices(store: RunStore, chosen: str | None = None) -> CompareChoices:
    """The complete runs grouped by dataset content; a group holding runs made with the
    name `chosen` (the one the user asked for) is listed under it, whichever name or
    path its newest run was made with."""
    by_content: dict[str, list[RunRecord]] = {}
    for record in store.list_runs(status="complete"):  # newest first
        by_content.setdefault(record.dataset_fingerprint, []).append(record)
    by_dataset: dict[str, list[RunRecord]] = {}
    for fingerprint, runs in by_content.items():  # the newest content keeps the name
        name = dataset_label(runs, chosen)
        by_dataset[name if name not in by_dataset else f"{name} ({fingerprint[:8]})"] = runs
    return CompareChoices(by_dataset)


@dataclass(frozen=True)
class CompareView:
    comparison: RunComparison
    runs: list[RunRecord]
    outcomes: pd.DataFrame
    """One row per query, a group of columns per run (analysis.significance)."""
    names: dict[str, str]
    """run_id -> a short distinct name."""
    flipped: dict[str, pd.DataFrame]
    """Compared run id -> its flipped queries vs the baseline, with `open baseline` and
    `open compared` links to the Query page."""
    prompt_sets: tuple[str, ...] = ()
    """The runs' prompt sets, in run order, when they differ only in it (else empty)."""
    derived: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)
    """What was built from this view (figures, slices, qualities): a view is kept while
    its runs are unchanged (`compare_view`), and so is all of this."""

    def remember(self, key: Hashable, make: Callable[[], T]) -> T:
        """make(), once per key for this view."""
        if key not in self.derived:
            self.derived[key] = make()
        return cast(T, self.derived[key])

    @property
    def heading(self) -> str:
        """What the comparison is, e.g. "Prompt sets: appendix-d (baseline) vs
        target-code"; empty unless the runs differ only in their prompt set."""
        if not self.prompt_sets:
            return ""
        sets = list(dict.fromkeys(self.prompt_sets))
        return f"Prompt sets: {sets[0]} (baseline) vs {', '.join(sets[1:])}"

    @property
    def file_stem(self) -> str:
        return f"compare-{self.comparison.dataset}-{'-vs-'.join(r.run_id for r in self.runs)}"


_VIEWS: Memo[CompareView] = Memo(8)


def compare_view(store: RunStore, run_ids: Sequence[str], k: int | None = None,
                 dataset: str | None = None) -> CompareView:
    """Compare `run_ids` (the first is the baseline) at k, naming their dataset
    `dataset` (the name the user chose) when given; raises TargetError. The view is
    kept while its runs are unchanged (analysis.memo): a revisit does no work."""
    if len(run_ids) < 2 or len(set(run_ids)) != len(run_ids):
        return _compare_view(store, run_ids, k, dataset)  # raises CompareError
    states = tuple(run_state(store, store.get_run(r)) for r in run_ids)
    return _VIEWS.get((states, k, dataset),
                      lambda: _compare_view(store, run_ids, k, dataset))


def _compare_view(store: RunStore, run_ids: Sequence[str], k: int | None,
                  dataset: str | None) -> CompareView:
    comparison = compare_runs(store, run_ids, k=k)
    if dataset is not None:
        comparison = replace(comparison, dataset=dataset)
    outcomes = outcomes_frame(store, run_ids, comparison.k)
    runs = [store.get_run(r) for r in run_ids]
    names = run_names(runs)
    prompt_sets = only_prompt_sets_differ(runs)
    if prompt_sets:  # the label names a set only when it is not the default: name each
        names = {r.run_id: f"{_default_prompts(r.config).label} · {s} prompts"
                 + (f" ({r.run_id})" if prompt_sets.count(s) > 1 else "")
                 for r, s in zip(runs, prompt_sets, strict=True)}
    flipped = {}
    for pair in comparison.pairs:
        table = flipped_table(pair, names)
        table["open baseline"] = [query_link(pair.baseline, q) for q in table["query_id"]]
        table["open compared"] = [query_link(pair.other, q) for q in table["query_id"]]
        flipped[pair.other] = table
    return CompareView(comparison, runs, outcomes, names, flipped, prompt_sets)


@dataclass(frozen=True)
class CompareFigures:
    forest: Figure
    """Means with confidence intervals (figures.compare.ci_forest)."""
    bars: Figure
    """Win / tie / loss against the baseline."""
    scatters: dict[str, Figure]
    """Compared run id -> gold ranks against the baseline's."""


def compare_figures(view: CompareView) -> CompareFigures:
    """The page's figures of `view`, built once per view (shared: do not modify them)."""
    def build() -> CompareFigures:
        comparison, names = view.comparison, view.names
        return CompareFigures(
            ci_forest(comparison, names=names), win_tie_loss_bars(comparison, names=names),
            {p.other: rank_scatter(view.outcomes, p.baseline, p.other, names=names)
             for p in comparison.pairs})
    return view.remember("figures", build)


def _default_prompts(config: RunConfig) -> RunConfig:
    if config.generation is None:
        return config
    return replace(config, generation=replace(config.generation,
                                              prompt_set=DEFAULT_PROMPT_SET))


def only_prompt_sets_differ(runs: Sequence[RunRecord]) -> tuple[str, ...]:
    """The runs' prompt sets in order when every run has a generator, their
    configurations are equal but for the prompt set, and the sets are not all one;
    else ()."""
    if any(r.config.generation is None for r in runs):
        return ()
    sets = tuple(r.config.generation.prompt_set for r in runs
                 if r.config.generation is not None)
    # the dataset's spelling (name or folder path) may differ: its content is the same
    same = len({json.dumps(_default_prompts(r.config).to_dict() | {"dataset": ""},
                           sort_keys=True) for r in runs}) == 1
    return sets if same and len(set(sets)) > 1 else ()


def compare_slices(store: RunStore, view: CompareView, metadata: pd.DataFrame, field: str
                   ) -> SliceView:
    """The compared runs' headline metrics per value of the query metadata `field` (a
    column of analysis.slices.metadata_frame of the dataset's queries); built once per
    view, field and metadata."""
    key = ("slice", field, tuple(metadata.columns),
           int(pd.util.hash_pandas_object(metadata, index=True).sum()))
    return view.remember(key, lambda: by_slice(store, view.runs, metadata, field,
                                               view.names))


# --- GTR's Figure 3: answer quality against reply length ------------------------------------

QUALITY_METRICS: dict[str, str] = {
    "rouge_l": "ROUGE-L F", "rougeL_p": "ROUGE-L P", "sas": SAS_LABEL,
    "truthfulness": "truthful (judge, 1/0)"}
"""Per-query answer qualities the scatter can plot (metrics.gtr), with their axis names."""


@dataclass(frozen=True)
class QualityScatter:
    """GTR's Figure 3 for the compared runs: one point per answered query and run."""

    metric: str
    points: pd.DataFrame
    """run, run_id, query_id, reply_tokens, value: the queries with both numbers."""
    figure: Figure

    @property
    def note(self) -> str:
        counts = self.points.groupby("run", sort=False).size()
        return ("Each point is one query's answer: its " + QUALITY_METRICS[self.metric]
                + " against its length in o200k tokens (GTR's Figure 3). Points: "
                + ", ".join(f"{run} {n}" for run, n in counts.items()) + ".")


def quality_metrics(store: RunStore, view: CompareView) -> list[str]:
    """The QUALITY_METRICS some compared run has per query beside reply_tokens (a QA
    run with answers; truthfulness only after `judge`), in QUALITY_METRICS' order."""
    def find() -> list[str]:
        present: set[str] = set()
        for run in view.runs:  # the scores compare_runs read, decoded once
            for score in run_scores(store, run).values():
                if "reply_tokens" in (metrics := score.metrics):
                    present |= set(metrics) & set(QUALITY_METRICS)
        return [m for m in QUALITY_METRICS if m in present]
    return view.remember("qualities", find)


def quality_scatter(store: RunStore, view: CompareView, metric: str) -> QualityScatter:
    """The scatter of `metric` (a key of QUALITY_METRICS) against reply tokens, one
    colour per run; an unknown metric raises UnknownNameError."""
    if metric not in QUALITY_METRICS:
        raise UnknownNameError("answer quality", metric, QUALITY_METRICS)
    return view.remember(("quality", metric), lambda: _quality_scatter(store, view, metric))


def _quality_scatter(store: RunStore, view: CompareView, metric: str) -> QualityScatter:
    rows = [{"run": view.names.get(run.run_id, run.run_id), "run_id": run.run_id,
             "query_id": s.query_id, "reply_tokens": s.metrics["reply_tokens"],
             "value": s.metrics[metric]}
            for run in view.runs for s in run_scores(store, run).values()
            if "reply_tokens" in s.metrics and metric in s.metrics]
    points = pd.DataFrame(rows, columns=["run", "run_id", "query_id", "reply_tokens", "value"])
    return QualityScatter(metric, points, quality_figure(points, QUALITY_METRICS[metric]))
