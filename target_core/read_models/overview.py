"""The Overview page's read model: the leaderboard (TARGET's Table 2) as shown, with each
recall column's test against its best row, the recall@k curves (Figure 2) and the
headline metrics per slice of the queries' metadata."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from target_core.analysis.compare import named_by_content, run_names
from target_core.analysis.leaderboard import (
    Leaderboard,
    column_pairs,
    distinct_retrievals,
    headline_recall_columns,
    label_pair,
    latest_complete,
    leaderboard,
    recall_curves,
)
from target_core.analysis.memo import Memo, digest, run_state
from target_core.analysis.significance import TEST_NAMES, VsBest, significant_vs_best
from target_core.engine.store import RunRecord, RunStore
from target_core.figures.recall import recall_at_k_curves
from target_core.figures.style import Figure
from target_core.read_models.cells import number_format
from target_core.read_models.slices import SliceView, by_slice
from target_core.table_view import TableView
from target_core.tasks import task_rules
from target_core.tasks.base import GTR_COLUMNS
from target_core.wording import agreeing, counted

Significance = Callable[[Sequence[RunRecord]], dict[str, VsBest]]
"""significance(leaderboard runs) -> run_id -> VsBest; pages pass a cached one."""


@dataclass(frozen=True)
class LeaderboardView:
    board: Leaderboard
    shown: pd.DataFrame
    """Text cells, a "vs best" column (verdict) and a "p (Holm)" column (the p-values and
    the test) after each tested recall column."""
    bold: pd.DataFrame
    """Same shape as `shown`: True where the cell is the best of its column."""
    families: dict[str, int] = field(default_factory=dict)
    """dataset -> rows its "vs best" tests ran over (the best included): the rows shown."""

    @property
    def family_note(self) -> str | None:
        """What Holm adjusted over, e.g. "Holm over the 4 runs shown on demo-qa and the
        2 on demo-sql"; None without a test."""
        if not self.families:
            return None
        parts = [f"the {n} runs shown on {d}" if i == 0 else f"the {n} on {d}"
                 for i, (d, n) in enumerate(self.families.items())]
        joined = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        return f"Holm over {joined}"

    @property
    def empty(self) -> bool:
        return self.board.table.empty


def complete_runs(store: RunStore) -> list[RunRecord]:
    """The complete runs, same-content datasets under one name (a run made by folder
    path joins the column of its registered name)."""
    return named_by_content([r for r in store.list_runs() if r.status == "complete"])


def failed_runs_note(store: RunStore, limit: int = 5) -> str | None:
    """What the leaderboard leaves out because it failed (its numbers would measure the
    failure), newest first: None when no run failed."""
    from target_core.read_models.runs import run_label

    failed = store.list_runs(status="failed")
    if not failed:
        return None
    named = "; ".join(f"{run_label(r)} ({r.error or 'no reason recorded'})"
                      for r in failed[:limit])
    more = f"; and {len(failed) - limit} more" if len(failed) > limit else ""
    return (f"{counted(len(failed), 'failed run')} {agreeing(len(failed), 'is')} left out "
            f"of the leaderboard and the curves: {named}{more}.")


def row_choices(runs: Sequence[RunRecord]) -> tuple[list[str], list[str]]:
    """The retrievers (with generator and distractors, RunConfig.label) and the table
    views of `runs`: what the leaderboard's row filters offer."""
    return (sorted({r.config.label for r in runs}),
            sorted({r.config.view.label for r in runs}))


def select_runs(runs: Sequence[RunRecord], datasets: Sequence[str], tasks: Sequence[str],
                retrievers: Sequence[str] | None = None, views: Sequence[str] | None = None
                ) -> list[RunRecord]:
    """The runs of the rows the leaderboard shows; None for `retrievers` or `views`:
    every one. The "vs best" tests run over exactly these rows."""
    return [r for r in runs if r.config.dataset in datasets and r.task in tasks
            and (retrievers is None or r.config.label in retrievers)
            and (views is None or r.config.view.label in views)]


def display_table(board: Leaderboard) -> pd.DataFrame:
    """The leaderboard as text (cells.number_format), '–' where not run."""
    def fmt(column: pd.Series) -> pd.Series:
        spec = number_format(label_pair(column.name)[1])
        return column.map(lambda v: "–" if pd.isna(v) else format(v, spec))

    return board.table.apply(fmt)


def significance_of(store: RunStore, run_ids: Sequence[str]) -> dict[str, VsBest]:
    """The leaderboard's tests for the runs `run_ids` (as leaderboard_significance_ids
    lists them): what a page caches by those ids."""
    return significant_vs_best(store, [store.get_run(r) for r in run_ids])


def leaderboard_significance_ids(runs: Sequence[RunRecord]) -> tuple[str, ...]:
    """The run ids the leaderboard's tests depend on (a cache key: complete runs never
    change)."""
    return tuple(sorted(r.run_id for r in latest_complete(runs)))


def leaderboard_view(store: RunStore, runs: Sequence[RunRecord],
                     significance: Significance | None = None) -> LeaderboardView:
    """The leaderboard of `runs` with, after each recall column that has a test, a "vs
    best" column (the verdict at the Holm-adjusted p and the test) and a "p (Holm)"
    column (unadjusted p, then adjusted), and the bold mask widened to match. The tests'
    family is the rows of `runs`: the rows shown."""
    board = leaderboard(runs)
    shown, bold = display_table(board), board.best.copy()
    if board.table.empty:
        return LeaderboardView(board, shown, bold)
    tested = (significance or (lambda rs: significant_vs_best(store, rs)))(
        latest_complete(runs))
    families: dict[str, int] = {}
    for dataset, metric in headline_recall_columns(board):
        found = [tested.get(board.runs.get((dataset, *row), "")) for row in board.table.index]
        if all(t is None for t in found):
            continue
        families[dataset] = max(t.n_rows for t in found if t is not None)
        at = column_pairs(shown).index((dataset, metric)) + 1
        for offset, (name, cells) in enumerate((
                ("vs best", ["–" if t is None else verdict(t) for t in found]),
                ("p (Holm)", ["–" if t is None else p_detail(t) for t in found]))):
            shown.insert(at + offset, (dataset, f"{metric} {name}"), cells)
            bold.insert(at + offset, (dataset, f"{metric} {name}"), False)
    return LeaderboardView(board, shown, bold, families)


@dataclass(frozen=True)
class CurvesView:
    figure: Figure
    paper_cutoff: int
    """The k at which TARGET's Table 2 reports this dataset's task."""


def curves_view(store: RunStore, runs: Sequence[RunRecord], dataset: str) -> CurvesView:
    """Recall@k curves of the newest complete run of each retrieval on `dataset`."""
    latest = [r for r in latest_complete(runs) if r.config.dataset == dataset]
    curves = recall_curves(store, distinct_retrievals(latest))
    cutoff = task_rules(latest[0].task).table2_cutoff if latest else 10
    return CurvesView(recall_at_k_curves(curves), cutoff)


def slice_view(store: RunStore, runs: Sequence[RunRecord], dataset: str,
               metadata: pd.DataFrame, field: str) -> SliceView:
    """The headline metrics per value of the query metadata `field` (a column of
    analysis.slices.metadata_frame of the dataset's queries) for the newest complete run
    of each configuration on `dataset`."""
    latest = [r for r in latest_complete(runs) if r.config.dataset == dataset]
    values = (digest([*map(str, metadata.index), *map(str, metadata[field])])
              if field in metadata.columns else "")
    key = ("slices", dataset, field, values,
           *(part for run in latest for part in run_state(store, run)))
    return _SLICES.get(key, lambda: by_slice(store, latest, metadata, field,
                                             run_names(latest)))


_SLICES: Memo[SliceView] = Memo(16)
"""Slice views by their runs' states, field and its values: a revisit does no work."""


def newest_dataset(runs: Sequence[RunRecord]) -> str | None:
    """The dataset of the newest run: the one the Overview opens on; None without runs."""
    return max(runs, key=lambda r: r.created_at).config.dataset if runs else None


def is_view_variant(run: RunRecord) -> bool:
    """An ablation's or a haystack's run: a table view other than the default, or
    distractor tables in the corpus."""
    return run.config.haystack is not None or run.config.view != TableView()


def _family(run: RunRecord) -> tuple[str, str, str]:
    generation = run.config.generation
    return (run.config.dataset, run.config.retriever,
            "" if generation is None else repr(sorted(generation.to_dict().items())))


@dataclass(frozen=True)
class FoldedRuns:
    runs: list[RunRecord]
    """The runs to show: every run but the view variants of a base run among them."""
    folded: dict[str, int] = field(default_factory=dict)
    """The base row's retriever label -> how many variant configurations it folds."""

    @property
    def hidden(self) -> int:
        return sum(self.folded.values())


def fold_variants(runs: Sequence[RunRecord]) -> FoldedRuns:
    """`runs` without the view variants (is_view_variant) of a configuration whose base
    run (default view, no distractors, same retriever and generator) is among them; a
    variant without its base stays, as the only row of its configuration."""
    bases = {_family(r): r for r in runs if not is_view_variant(r)}
    kept: list[RunRecord] = []
    hidden: dict[str, set[tuple[str, str | None, int]]] = {}
    for run in runs:
        base = bases.get(_family(run)) if is_view_variant(run) else None
        if base is None:
            kept.append(run)
        else:
            hidden.setdefault(base.config.label, set()).add(
                (run.config.view.key, run.config.haystack, run.config.top_k))
    return FoldedRuns(kept, {label: len(keys) for label, keys in hidden.items()})


def verdict(test: VsBest) -> str:
    """A "vs best" cell: "best", "≠ best" (Holm p < 0.05) or "n.s."; the p-values and the
    test have their own cell (p_detail)."""
    if test.is_best or test.p_holm is None:
        return "best"
    return "≠ best" if test.significant else "n.s."


SHORT_TEST_NAMES = {**TEST_NAMES, "randomization": "perm."}
"""The test in a "p (Holm)" cell: the paired randomization test is a permutation test,
"perm." (the header's help and "How to read this table" say so), which keeps the
leaderboard within a 1,500-pixel screen with two recall cutoffs."""


def p_detail(test: VsBest) -> str:
    """A "p (Holm)" cell: "p (Holm p) · test", e.g. "0.044 (0.154) · McNemar"; "–" for
    the best row."""
    if test.p_text == "–":
        return "–"
    return f"{test.p_text} · {SHORT_TEST_NAMES.get(test.test, test.test)}"


def dataset_table(view: LeaderboardView, dataset: str, folded: dict[str, int] | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The leaderboard's columns of `dataset` as a flat frame (columns "retriever",
    "view", then the metrics by name; `view` holds the runs of `dataset` only) and its
    bold mask; a base row that folds variants says how many in its view cell."""
    columns = [c for c in view.shown.columns if label_pair(c)[0] == dataset]
    if view.empty or not columns:
        return pd.DataFrame(), pd.DataFrame()
    shown, bold = view.shown.loc[:, columns], view.bold.loc[:, columns]
    shown.columns = bold.columns = [label_pair(c)[1] for c in columns]
    rows = [label_pair(i) for i in shown.index]
    names = [f"{variant} (+{folded[label]} variants)" if folded and folded.get(label)
             and variant.startswith(TableView().label) else variant for label, variant in rows]
    labels = pd.DataFrame({"retriever": [r for r, _ in rows], "view": names})
    shown = pd.concat([labels, shown.reset_index(drop=True)], axis=1)
    bold = pd.concat([pd.DataFrame(False, index=labels.index, columns=labels.columns),
                      bold.reset_index(drop=True)], axis=1)
    return shown, bold


def split_answer_extras(shown: pd.DataFrame, bold: pd.DataFrame
                        ) -> tuple[tuple[pd.DataFrame, pd.DataFrame],
                                   tuple[pd.DataFrame, pd.DataFrame]]:
    """dataset_table's frame and mask as (the Table 2 columns) and (GTR's answer metrics
    of the rows that have any, with the row labels); the second is empty without them."""
    extras = [c for c in shown.columns if c in GTR_COLUMNS]
    labels = ["retriever", "view"]
    main = (shown.drop(columns=extras), bold.drop(columns=extras))
    if not extras:
        return main, (pd.DataFrame(), pd.DataFrame())
    rows = (shown[extras] != "–").any(axis=1)  # row by row took 0.15 s of a page
    return main, (shown.loc[rows, labels + extras].reset_index(drop=True),
                  bold.loc[rows, labels + extras].reset_index(drop=True))
