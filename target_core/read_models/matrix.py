"""The All runs page's read model: every query of a dataset against every configuration
run on it, one row per query and one column per run, the cell the rank by which the run
retrieved the query's gold tables, coloured by outcome at k and linked to that query in
that run; rows sorted by how much the runs disagree, filtered by a metadata field of the
queries and by outcome.

The cell is the query's last gold rank (QueryScore.last_rank): the rank by which every
gold table was retrieved, which for a query with one gold table is its rank. That is
the rank the one failure rule reads (tasks.failure.failed_at), so a cell is green exactly
when its run found the query at k, as on the Compare page's rank scatter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from target_core.analysis.compare import run_names
from target_core.analysis.leaderboard import latest_complete, no_retrieval
from target_core.analysis.memo import run_scores
from target_core.analysis.slices import MISSING, field_values, metadata_frame
from target_core.engine.store import RunRecord, RunStore
from target_core.read_models.links import query_links
from target_core.tasks import task_rules
from target_core.types import Query

OUTCOMES: dict[str, str] = {
    "any": "every query",
    "split": "found by some runs, missed by others",
    "some-missed": "missed by at least one run",
    "all-found": "found by every run",
    "all-missed": "missed by every run",
}
"""The outcome filter: name -> which queries it keeps (found: every gold table within k,
tasks.failure.FAILURE_RULE; only the runs that answered the query count)."""

CELL_KINDS: dict[str, tuple[str, str]] = {
    "top": ("rank 1: found first", "background-color: #15803d; color: #ffffff"),
    "found": ("found within k", "background-color: #bbf7d0; color: #14532d"),
    "missed": ("ranked, but beyond k", "background-color: #fed7aa; color: #7c2d12"),
    "unranked": ("a gold table not in the stored ranking",
                 "background-color: #fecaca; color: #7f1d1d"),
    "absent": ("the run did not answer this query", ""),
}
"""What a cell's colour says: kind -> (meaning, CSS)."""

UNRANKED_TEXT = "–"
"""A cell whose run never ranked some gold table: no number, still a link."""

NO_FILTER = ""


@dataclass(frozen=True)
class MatrixChoices:
    """What the page can show for one dataset: its runs and its queries' metadata."""

    dataset: str
    runs: list[RunRecord]
    """The newest complete run of each configuration, in the leaderboard's order."""
    names: dict[str, str]
    """run_id -> a short distinct column name (retriever → generator, view, k)."""
    metadata: pd.DataFrame
    """analysis.slices.metadata_frame of the dataset's queries."""
    questions: dict[str, str]

    @property
    def fields(self) -> list[str]:
        return list(self.metadata.columns)

    def values(self, field: str) -> list[str]:
        return field_values(self.metadata[[field]])[field] if field in self.fields else []

    @property
    def max_k(self) -> int:
        """The largest k every run can be judged at (the smallest top-k)."""
        return min((r.config.top_k for r in self.runs), default=10)

    @property
    def default_k(self) -> int:
        """TARGET's Table 2 cutoff for the task (10; 1 for text-to-SQL), within max_k."""
        if not self.runs:
            return 10
        return min(task_rules(self.runs[0].task).table2_cutoff, self.max_k)


def matrix_choices(store: RunStore, dataset: str, queries: Sequence[Query]) -> MatrixChoices:
    """The runs and metadata fields of `dataset` (its `queries`). Runs whose answers did
    not read their retrieval (no-context, oracle: leaderboard.no_retrieval) are left
    out: a column of nothing ranked, or a copy of another run's ranks."""
    runs = [run for run in latest_complete(store.list_runs(dataset=dataset, status="complete"))
            if not no_retrieval(run)]
    return MatrixChoices(dataset, runs, run_names(runs), metadata_frame(queries),
                         {q.query_id: q.query for q in queries})


@dataclass(frozen=True)
class RunMatrix:
    """One row per query (sorted by disagreement), one column per run."""

    k: int
    names: dict[str, str]
    """run_id -> its column."""
    frame: pd.DataFrame
    """query_id, found, missed, disagreement, spread, a rank column per run (Int64;
    <NA>: not ranked or not answered), question, then the metadata fields."""
    kinds: pd.DataFrame
    """A CELL_KINDS key per query (row) and run column."""
    links: pd.DataFrame
    """The Query page's link per query and run column (None: the run did not answer)."""
    n_total: int
    """Queries before the filters."""

    @property
    def columns(self) -> list[str]:
        return list(self.names.values())

    @property
    def empty(self) -> bool:
        return self.frame.empty

    def display(self, limit: int | None = None) -> pd.DataFrame:
        """The frame as shown: a run's cells hold its links (display_styler shows ranks),
        found as "2/3"; the first `limit` rows."""
        shown = self.frame.head(limit) if limit else self.frame
        out = shown.drop(columns=["missed", "disagreement", "spread"]).copy()
        answered = shown["found"] + shown["missed"]
        out["found"] = shown["found"].astype(str) + "/" + answered.astype(str)
        for column in self.columns:
            out[column] = self.links.loc[shown.index, column]
        return out.set_index("query_id")

    def display_styler(self, limit: int | None = None) -> Styler:
        """display() with each run's cell showing its rank (UNRANKED_TEXT when not ranked,
        blank when not answered) on its CELL_KINDS colour."""
        shown = self.display(limit)
        ranks = self.frame.loc[self.frame.index[:len(shown)], self.columns]
        texts: dict[str, str] = {}
        for column in self.columns:
            for link, rank in zip(shown[column], ranks[column], strict=True):
                if link is not None:
                    texts[link] = UNRANKED_TEXT if pd.isna(rank) else str(int(rank))
        css = {kind: style for kind, (_, style) in CELL_KINDS.items()}
        colours = self.kinds.loc[ranks.index].replace(css)
        colours.index = shown.index

        def text_of(link: Any) -> str:
            return "" if link is None or (isinstance(link, float) and pd.isna(link)) \
                else texts.get(link, "")

        runs = pd.Index(self.columns)
        return (shown.style
                .format(text_of, subset=runs)
                .apply(lambda _: colours, axis=None, subset=runs))

    def csv(self) -> str:
        """Every row, ranks as integers (empty: not ranked or not answered)."""
        return self.frame.to_csv(index=False)


def _run_cells(store: RunStore, run: RunRecord, k: int
               ) -> tuple[dict[str, int | None], dict[str, str]]:
    """query_id -> last gold rank, and -> cell kind, for one run."""
    ranks, kinds = {}, {}
    for score in run_scores(store, run).values():
        ranks[score.query_id] = score.last_rank
        if score.failed_at(k):
            kinds[score.query_id] = "unranked" if score.last_rank is None else "missed"
        else:
            kinds[score.query_id] = "top" if score.last_rank == 1 else "found"
    return ranks, kinds


def run_matrix(store: RunStore, choices: MatrixChoices, *, k: int, field: str = NO_FILTER,
               value: str = NO_FILTER, outcome: str = "any") -> RunMatrix:
    """The queries × runs matrix of `choices` at k, filtered and sorted.

    Disagreement of a query = min(found, missed) over the runs that answered it: how many
    runs would have to change their outcome at k for all of them to agree (0: they
    agree; largest when they split evenly). Rows are sorted by disagreement, then by the
    spread of their ranks (largest minus smallest last gold rank across the runs, a gold
    table not ranked counting as one past the deepest rank stored for any query), both
    descending, then in the dataset's query order. The filters keep the queries whose
    `field` has `value` (a metadata field; NO_FILTER: all) and whose outcome is
    `outcome` (an OUTCOMES key). Rows are the queries that at least one run answered.
    """
    names = {r.run_id: choices.names[r.run_id] for r in choices.runs}
    columns = list(names.values())
    order = {qid: i for i, qid in enumerate(choices.metadata.index)}
    rank_columns: dict[str, dict[str, int | None]] = {}
    kind_columns: dict[str, dict[str, str]] = {}
    for run in choices.runs:
        rank_columns[names[run.run_id]], kind_columns[names[run.run_id]] = _run_cells(
            store, run, k)
    answered = sorted(dict.fromkeys(q for ranks in rank_columns.values() for q in ranks),
                      key=lambda q: order.get(q, len(order)))
    kinds = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in kind_columns.items()},
                         index=answered, columns=columns).fillna("absent")
    ranks = pd.DataFrame({c: pd.Series(v, dtype="Float64") for c, v in rank_columns.items()},
                         index=answered, columns=columns)
    found = kinds.isin(["top", "found"]).sum(axis=1)
    missed = kinds.isin(["missed", "unranked"]).sum(axis=1)
    deepest = ranks.max().max() if ranks.notna().any().any() else 0
    filled = ranks.mask(kinds == "unranked", deepest + 1)
    spread = (filled.max(axis=1) - filled.min(axis=1)).fillna(0).astype(float)
    frame = pd.concat([pd.DataFrame({"query_id": answered, "found": found,
                                     "missed": missed, "disagreement": found.clip(upper=missed),
                                     "spread": spread, "_order": [order.get(q, len(order))
                                                                  for q in answered]},
                                    index=answered), ranks.astype("Int64")], axis=1)
    frame["question"] = [choices.questions.get(q, "") for q in answered]
    fields = {c: c if c not in frame.columns else f"{c} (field)"
              for c in choices.metadata.columns}  # a field named like a run or "found"
    frame = frame.join(choices.metadata.rename(columns=fields))
    frame[list(fields.values())] = frame[list(fields.values())].fillna(MISSING)
    n_total = len(frame)
    keep = _outcome_mask(frame["found"], frame["missed"], outcome)
    if field:
        if field not in choices.metadata.columns:
            raise ValueError(f"unknown field {field!r}: one of {', '.join(choices.fields)}")
        keep &= frame[fields[field]] == value
    frame = frame[keep].sort_values(["disagreement", "spread", "_order"],
                                    ascending=[False, False, True], kind="stable")
    rows = frame.index
    kinds = kinds.loc[rows]
    links = pd.DataFrame({name: query_links(run_id, [
        q if kind != "absent" else None for q, kind in zip(rows, kinds[name], strict=True)])
        for run_id, name in names.items()}, index=rows, columns=columns, dtype=object)
    return RunMatrix(k, names, frame.drop(columns="_order").reset_index(drop=True),
                     kinds.reset_index(drop=True), links.reset_index(drop=True), n_total)


def _outcome_mask(found: pd.Series, missed: pd.Series, outcome: str) -> pd.Series:
    masks: Mapping[str, pd.Series] = {
        "any": found >= 0, "split": (found > 0) & (missed > 0), "some-missed": missed > 0,
        "all-found": missed == 0, "all-missed": found == 0}
    if outcome not in masks:
        raise ValueError(f"unknown outcome {outcome!r}: one of {', '.join(OUTCOMES)}")
    return masks[outcome]


def cell_legend() -> str:
    """The colours in words, for a caption."""
    return "; ".join(f"{kind}: {meaning}" for kind, (meaning, _) in CELL_KINDS.items())
