"""Why a lexical retriever ranked one table above another: each query term's share of
each table's score, exactly as the retriever computed it.

The run's retriever is opened again over the run's texts (engine/reopen.py) and asked
for its own split of a score (`term_contributions`, next to each retriever's `scores`,
so the formula has one home): bm25, tfidf, ottqa:* and hybrid's bm25 side. The shares of
a table sum to its score. For hybrid, each side's score, normalised value, weight and
share of the fused score (retrievers/fusion.py `fusion_parts`) show which side decided.

Also: the terms only the other table has, and the query's words the gold table lacks
(the vocabulary gap), each with the gold table's nearest words by character 3-gram
similarity (GAP_METHOD).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from target_core.config import Settings
from target_core.engine.reopen import OpenedRun, open_run
from target_core.engine.results import QueryResult
from target_core.engine.store import RunRecord
from target_core.errors import TargetError
from target_core.retrievers.base import LexicalScoring, TermScore
from target_core.textproc import tokenize
from target_core.types import parse_table_ref, table_ref

NEAREST = 3
MIN_SIMILARITY = 0.4
GAP_METHOD = (f"nearest words: the gold table's words by character 3-gram Jaccard "
              f"similarity (words padded with a space), the best {NEAREST} at "
              f"≥ {MIN_SIMILARITY}")


def trigrams(word: str) -> set[str]:
    padded = f" {word} "
    return {padded[i:i + 3] for i in range(len(padded) - 2)}


def nearest_words(word: str, vocabulary: set[str], n: int = NEAREST) -> list[str]:
    """The `n` words of `vocabulary` most like `word` (GAP_METHOD), best first, ties
    alphabetical."""
    mine = trigrams(word)
    scored = []
    for other in vocabulary:
        theirs = trigrams(other)
        similarity = len(mine & theirs) / len(mine | theirs)
        if similarity >= MIN_SIMILARITY and other != word:
            scored.append((-similarity, other))
    return [w for _, w in sorted(scored)[:n]]


def _lexical_side(retriever: Any) -> tuple[LexicalScoring | None, Any]:
    """(the lexical retriever whose terms explain the score, the hybrid or None)."""
    from target_core.retrievers.hybrid import HybridRetriever

    if isinstance(retriever, HybridRetriever) and isinstance(retriever.lexical,
                                                             LexicalScoring):
        return retriever.lexical, retriever
    if isinstance(retriever, LexicalScoring):
        return retriever, None
    return None, None


def is_lexical(run: RunRecord, settings: Settings) -> bool:
    """The run's retriever scores by terms (bm25, tfidf, ottqa:*) or fuses such a side."""
    from target_core.retrievers import build_retriever

    try:
        probe = build_retriever(run.config.retriever, settings)
    except TargetError:  # an imported run's label, or a server not configured here
        return False
    return _lexical_side(probe)[0] is not None


def explain_lexical(run: RunRecord, settings: Settings, query: str, result: QueryResult,
                    tables: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The lexical explanation of `tables` (explain.py's two, gold first) for `query` in
    `run`; None when the run's retriever is not lexical. A run that cannot be opened
    again (its dataset changed) gives {"retriever", "error"}."""
    if not is_lexical(run, settings):
        return None
    try:
        opened = open_run(run, settings)
    except TargetError as exc:
        return {"retriever": run.config.retriever, "error": str(exc)}
    lexical, hybrid = _lexical_side(opened.retriever)
    if lexical is None:
        return None
    keys = [parse_table_ref(t["table"]) for t in tables]
    missing = [table_ref(k) for k in keys if k not in opened.position]
    if missing:
        return {"retriever": run.config.retriever,
                "error": f"not among the run's indexed texts: {', '.join(missing)}"}
    indices = [opened.position[k] for k in keys]
    with opened.lock:
        splits = [lexical.term_contributions(query, i, opened.texts[i]) for i in indices]
        scores = lexical.scores(query)
        fusion = None if hybrid is None else [
            hybrid.fusion_parts(query, i, top_k=run.config.top_k,
                                fusion=_run_fusion(hybrid, run, result)) for i in indices]
    stored = {table_ref(k): s for k, s in result.ranked}
    rows = _table_rows(tables, splits, [float(scores[i]) for i in indices], stored,
                       fusion)
    section = {"retriever": run.config.retriever,
               "scorer": lexical.spec, "formula": getattr(lexical, "formula", ""),
               "tables": rows, "terms": _term_rows(splits),
               "only_other": _only_other(splits),
               "gap": _gap(splits[0], opened.texts[indices[0]]),
               "notes": _notes(splits, opened, indices)}
    if fusion is not None:
        section["fusion"] = _fusion_summary(rows, fusion)
    return section


def _table_rows(tables: list[dict[str, Any]], splits: list[list[TermScore]],
                lexical_scores: list[float], stored: dict[str, float],
                fusion: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    rows = []
    for i, table in enumerate(tables):
        row = {"table": table["table"], "role": table["role"], "rank": table["rank"],
               "sum": sum(t.contribution for t in splits[i]),
               "lexical_score": lexical_scores[i]}
        if fusion is not None:
            row["fused"] = fusion[i]["fused"]
        row["stored_score"] = stored.get(table["table"])
        rows.append(row)
    return rows


def _term_rows(splits: list[list[TermScore]]) -> list[dict[str, Any]]:
    """One row per query term: each table's share and factors, side by side."""
    return [{"term": parts[0].term, "contributions": [p.contribution for p in parts],
             "parts": [p.parts for p in parts]}
            for parts in zip(*splits, strict=True)]


def _only_other(splits: list[list[TermScore]]) -> list[str]:
    """Terms that add to the other table's score and not to the gold's."""
    return [gold.term for gold, other in zip(splits[0], splits[1], strict=True)
            if other.contribution > 0 and gold.contribution == 0]


def _gap(gold: list[TermScore], text: str) -> dict[str, Any]:
    """The query's words (single tokens) the gold table's text lacks, each with the
    gold's nearest words."""
    vocabulary = set(tokenize(text))
    lacking = [t.term for t in gold if " " not in t.term and not t.parts.get("tf")]
    return {"method": GAP_METHOD,
            "missing": [{"term": term, "nearest": nearest_words(term, vocabulary)}
                        for term in lacking]}


def _notes(splits: list[list[TermScore]], opened: OpenedRun, indices: list[int]
           ) -> list[str]:
    """Hash collisions and TARGET's length pairing (ottqa), in words."""
    notes = []
    for parts, index in zip(splits, indices, strict=True):
        name = table_ref(opened.tables[index].key)
        for term in parts:
            grams = term.parts.get("ngrams") or []
            if len(grams) > 1:
                notes.append(f"hash collision: the query's n-grams {', '.join(grams)} "
                             f"share bucket {term.parts['bucket']}")
            foreign = [g for g in term.parts.get("table_ngrams") or [] if g not in grams]
            if foreign and term.parts.get("tf"):
                notes.append(f"hash collision: in {name}, '{term.term}' matches the "
                             f"table's n-gram(s) {', '.join(foreign)} (bucket "
                             f"{term.parts['bucket']})")
        lengths = sorted({t.parts["paired_len"] for t in parts
                          if t.parts.get("paired_with", index) != index})
        if lengths:
            span = f"{lengths[0]:g}" + (f"–{lengths[-1]:g}" if len(lengths) > 1 else "")
            notes.append(f"TARGET's length pairing: {name}'s matching n-gram weights use "
                         f"other tables' lengths ({span} n-grams) instead of its own "
                         f"({parts[0].parts['doc_len']:g})")
    return list(dict.fromkeys(notes))


def _run_fusion(hybrid: Any, run: RunRecord, result: QueryResult) -> Any:
    """The fusion the query was retrieved with: a tuned run's fold weights (stored in
    its index_info), else None (the spec's own)."""
    if hybrid.options.tune is None:
        return None
    folds = run.index_info.get("cv_fold_of_query") or []
    weights = run.index_info.get("cv_fold_weights") or []
    if result.position >= len(folds):
        return None
    return replace(hybrid.options.fusion, weights=tuple(weights[folds[result.position]]))


def _fusion_summary(rows: list[dict[str, Any]], fusion: list[dict[str, Any]]
                    ) -> dict[str, Any]:
    """Each side's share per table, and which side gave the other table its lead."""
    sides = ("lexical", "dense")
    leads = [{"side": side, "lead": fusion[1]["components"][i]["share"]
              - fusion[0]["components"][i]["share"]} for i, side in enumerate(sides)]
    decided = max(leads, key=lambda lead: lead["lead"])
    return {"method": fusion[0]["method"],
            "tables": [{"table": row["table"], **parts} for row, parts in
                       zip(rows, fusion, strict=True)],
            "sides": list(sides), "leads": leads,
            "decided_by": decided["side"] if decided["lead"] > 0 else None}
