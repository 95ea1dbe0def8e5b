"""check_retriever: run a retriever through the contract on a tiny in-memory corpus and
say, in words, what is missing or wrong before a real run finds it.

    >>> import target_core
    >>> print(target_core.check_retriever("py:examples/target_style_retriever.py:KeywordRetriever"))
    py:examples/target_style_retriever.py:KeywordRetriever (TARGET's custom retriever shape): OK
      note: no scores: a gold table outside its list shows as "not ranked" ...

Four tables, three questions; nothing is downloaded and nothing is written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from target_core.config import Settings, load_settings
from target_core.errors import TargetError
from target_core.registry import CheckReport, PluginError
from target_core.retrievers.base import Hits, Retriever
from target_core.table_view import TableView
from target_core.types import Table, TableKey

SHAPES = {"protocol": "this project's Retriever protocol",
          "target": "TARGET's custom retriever shape",
          "standard": "TARGET's standard embedding retriever shape"}

CHECK_TABLES: tuple[Table, ...] = (
    Table("geo", "lakes", ("lake", "depth_m", "country"),
          (("Lake Baikal", 1642, "Russia"), ("Lake Tanganyika", 1470, "Tanzania")),
          {"title": "Deepest lakes of the world"}),
    Table("sport", "marathon", ("runner", "time", "year"),
          (("Eliud Kipchoge", "2:01:09", 2022), ("Kelvin Kiptum", "2:00:35", 2023)),
          {"title": "Marathon world records"}),
    Table("geo", "rivers", ("river", "length_km", "continent"),
          (("Nile", 6650, "Africa"), ("Amazon", 6400, "South America")),
          {"title": "Longest rivers"}),
    Table("food", "cheeses", ("cheese", "milk", "country"),
          (("Roquefort", "sheep", "France"), ("Gouda", "cow", "Netherlands")),
          {"title": "Cheeses by milk"}),
)
"""A corpus small enough to read: each question below names its table's words."""

CHECK_QUERIES: tuple[tuple[str, TableKey], ...] = (
    ("How deep is Lake Baikal?", ("geo", "lakes")),
    ("Who set the marathon world record in 2023?", ("sport", "marathon")),
    ("How long is the Nile river?", ("geo", "rivers")),
)
TOP_K = 2


def check_retriever(retriever: str | object, *, settings: Settings | None = None
                    ) -> CheckReport:
    """Check a retriever spec (any registered one, `py:...` included) or an object of
    either accepted shape against the contract the engine relies on: it indexes the
    tables, returns at most k hits per query as valid (index, score) pairs best first,
    gives the same hits twice, and (optionally) scores every table. Never raises for
    what it finds: the report lists it (`report.ok`, `report.raise_for_problems()`)."""
    problems: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    built, subject = _build(retriever, settings, problems)
    if built is None:
        return CheckReport(subject, tuple(problems))
    shape = getattr(built, "shape", "")
    if shape:
        subject += f" ({SHAPES[shape]})"
    queries = [q for q, _ in CHECK_QUERIES]
    try:
        texts = built.prepare_texts(CHECK_TABLES, TableView())
        built.index(texts, corpus_key="check")
        first = built.search(queries, top_k=TOP_K)
        warnings += _check_returned(built)
        again = built.search(queries, top_k=TOP_K)
        top1 = built.search(queries, top_k=1)
    except TargetError as exc:
        return CheckReport(subject, (str(exc),))
    except Exception as exc:  # a registered retriever's own bug: say it, do not raise
        return CheckReport(subject, (f"{type(exc).__name__}: {exc}",))
    problems += _check_results(first, again)
    if not any(first):
        warnings.append("no question retrieved any table (each names its table's words)")
    else:
        found = sum(gold in {CHECK_TABLES[i].key for i, _ in hits}
                    for (_, gold), hits in zip(CHECK_QUERIES, first, strict=True))
        notes.append(f"found the gold table of {found} of {len(queries)} questions in "
                     f"its top {TOP_K} (a sanity check, not a requirement)")
    if any(one[:1] != hits[:1] for one, hits in zip(top1, first, strict=True)):
        warnings.append("the top 1 is not the first hit of the top 2: runs at different "
                        "k would disagree (ties broken differently?)")
    problems_scores, notes_scores = _check_scores(built, queries, first)
    problems += problems_scores
    notes += notes_scores
    return CheckReport(subject, tuple(problems), tuple(warnings), tuple(notes))


def _build(retriever: str | object, settings: Settings | None, problems: list[str]
           ) -> tuple[Retriever | None, str]:
    from target_core.retrievers import build_retriever
    from target_core.retrievers.plugin import adapt_retriever

    if isinstance(retriever, str):
        try:
            return build_retriever(retriever, settings or load_settings()), retriever
        except TargetError as exc:
            problems.append(str(exc))
            return None, retriever
    subject = type(retriever).__name__
    try:
        return adapt_retriever(retriever, spec=f"py:<{subject} object>"), subject
    except PluginError as exc:
        problems.append(str(exc))
        return None, subject


def _check_returned(built: Retriever) -> list[str]:
    """What a TARGET-shaped class's lists held beyond their ranking: a table listed twice,
    more than top_k tables. Runs keep them and count them as TARGET does, which a run of
    any other retriever never has: a warning, per kind, naming the first question."""
    lists = getattr(built, "lists_as_returned", None)
    if not callable(lists):
        return []
    warnings = []
    returned = lists()
    repeats = [(q, keys) for (q, _), keys in zip(CHECK_QUERIES, returned, strict=False)
               if len(set(keys)) < len(keys)]
    if repeats:
        query, keys = repeats[0]
        twice = next(k for i, k in enumerate(keys) if k in keys[:i])
        warnings.append(f"retrieve listed a table more than once for {len(repeats)} of "
                        f"{len(returned)} questions (e.g. {list(twice)} for {query!r}): "
                        "ranks use its first place; recall_micro and capped_recall count "
                        "the list as returned, as TARGET does (the repeat adds to the "
                        "capped denominator, not to the overlap)")
    over = [(q, keys) for (q, _), keys in zip(CHECK_QUERIES, returned, strict=False)
            if len(keys) > TOP_K]
    if over:
        query, keys = over[0]
        warnings.append(f"retrieve returned more than top_k = {TOP_K} tables for "
                        f"{len(over)} of {len(returned)} questions ({len(keys)} for "
                        f"{query!r}): ranks stop at k; recall_micro and capped_recall "
                        "count every entry, as TARGET does")
    return warnings


def _check_results(first: list[Hits], again: list[Hits]) -> list[str]:
    problems = []
    if len(first) != len(CHECK_QUERIES):
        problems.append(f"search gave {len(first)} result lists for "
                        f"{len(CHECK_QUERIES)} questions")
    for (query, _), hits in zip(CHECK_QUERIES, first, strict=False):
        if len(hits) > TOP_K:
            problems.append(f"search gave {len(hits)} hits for {query!r} at top_k={TOP_K}")
    if first != again:
        problems.append("two identical searches gave different hits (results must be "
                        "deterministic: break ties by the lower index)")
    return problems


def _check_scores(built: Retriever, queries: list[str], first: list[Hits]
                  ) -> tuple[list[str], list[str]]:
    try:
        scores: Any = built.score_all(queries[0])
    except Exception as exc:
        return [f"score_all raised {type(exc).__name__}: {exc}"], []
    if scores is None:
        return [], ['no scores beyond the hits (score_all gives None): a gold table '
                    'outside the list shows as "not ranked" on the pages']
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(CHECK_TABLES),):
        return [f"score_all gave shape {scores.shape}, expected ({len(CHECK_TABLES)},)"], []
    problems = []
    for i, score in first[0]:
        if not np.isclose(scores[i], score):
            problems.append(f"score_all and search disagree on table {i}: {scores[i]} vs "
                            f"{score} (a gold table's rank beyond k would be wrong)")
    return problems, ["score_all scores every table: gold tables beyond k get their rank"]
