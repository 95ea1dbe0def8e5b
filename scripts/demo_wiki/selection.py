"""Failure modes and query selection: which tables and rows each mode may use, whether a
query's wording really exercises its mode, `Selector` (draws items per mode, spread over
tables and kinds, true and false statements balanced) and the query record it becomes."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .claims import Claim, Evidence, Item
from .items import Gen
from .model import DATABASE_ID, DEEP_ROW, Tab
from .text import content_words, tokens
from .values import cell_text

FAILURE_MODES: dict[str, str] = {
    "sibling": (
        "the gold table belongs to a family of 3-6 sibling tables with an identical header that "
        "differ only in their page or section title (a season, year, region, decade or TV "
        "season, e.g. '2003 Meridian Games medal table' vs '2007 Meridian Games medal table'). "
        "The query names that year or region, so only the title tells the gold table apart. "
        "A few sibling queries compare one entity across two siblings and have two gold tables "
        "(table_id is a list); `decisive` holds the distinguishing title words for the "
        "single-table ones."),
    "title-only": (
        "the decisive word of the query (a mountain range, country, band, cup, show, race or "
        "year; stored in `decisive`) occurs only in the gold table's page or section title, "
        "never in its header or cells, so views without the title cannot find it."),
    "paraphrase": (
        "the query is worded with synonyms and paraphrases ('How many people lived in X at the "
        "latest count?' for a 'Population (2021)' column) and shares at most one content word "
        "with the gold table's title, section title and header, so lexical retrievers "
        "struggle."),
    "deep-row": (
        "the evidence lies at data row 20 or later of a long table (30-80 rows), so views that "
        "serialize only the first rows, or the header only, miss it."),
}
KIND_ORDER: dict[str | None, tuple[str, ...]] = {
    None: ("lookup", "comparison", "lookup", "superlative", "lookup", "count", "comparison",
           "aggregate"),
    "sibling": ("lookup", "superlative", "comparison", "count", "lookup", "aggregate"),
    "title-only": ("superlative", "count", "superlative", "aggregate", "count"),
    "paraphrase": ("lookup", "comparison", "lookup", "superlative", "count"),
    "deep-row": ("lookup", "comparison", "lookup", "superlative"),
}
TITLE_ONLY_KINDS = ("superlative", "count", "aggregate")


def table_overlap(text: str, tab: Tab) -> int:
    """Content words shared by `text` and the table's title, section title and header."""
    return len(content_words(text) & content_words(tab.label_text))


def decisive_word(tab: Tab, text: str) -> str | None:
    """A word of the query that is in the table's titles but in none of its header or cells."""
    titled = set(tokens(f"{tab.title} {tab.section}"))
    said = set(tokens(text))
    inside = tab.cell_tokens
    for word in tab.decisive:
        low = word.lower()
        if low in titled and low in said and low not in inside:
            return word
    return None


def eligible(tab: Tab, mode: str | None) -> bool:
    if mode is None:
        return tab.family is None
    if mode == "sibling":
        return tab.family is not None
    if mode == "title-only":
        return tab.family is None and bool(tab.decisive)
    if mode == "deep-row":
        return tab.family is None and tab.long
    return True


def rows_for(tab: Tab, mode: str | None) -> range:
    if mode is None:
        return range(min(DEEP_ROW, len(tab.rows)))
    if mode == "deep-row":
        return range(DEEP_ROW, len(tab.rows))
    return range(len(tab.rows))


def rows_fit(rows: Sequence[int], mode: str | None) -> bool:
    """Ordinary queries stay in the first rows; deep-row queries only use rows beyond them."""
    if mode is None:
        return all(r < DEEP_ROW for r in rows)
    if mode == "deep-row":
        return all(r >= DEEP_ROW for r in rows)
    return True


def item_fits(item: Item, mode: str | None) -> bool:
    if mode == "title-only":
        return item.kind in TITLE_ONLY_KINDS
    return rows_fit(item.rows, mode)


def text_fits(text: str, tab: Tab, mode: str | None) -> tuple[bool, str | None]:
    """Whether the query text really exercises the failure mode (and its decisive word)."""
    if mode == "sibling":
        facet = tab.facet or ""
        return set(tokens(facet)) <= set(tokens(text)), facet
    if mode == "title-only":
        word = decisive_word(tab, text)
        return word is not None, word
    if mode == "paraphrase":
        return table_overlap(text, tab) <= 1, None
    return True, None


@dataclass
class Picked:
    item: Item
    mode: str | None
    text: str
    label: bool | None
    decisive: str | None
    evidence: Evidence


class Selector:
    """Draws items per failure mode, spreading them over tables and kinds."""

    def __init__(self, tabs: list[Tab], task: str, rng: random.Random) -> None:
        self.tabs = tabs
        self.task = task
        self.rng = rng
        self.gen = Gen(rng)
        self.used: dict[str, int] = {}
        self.seen: set[str] = set()

    def labels(self, n: int) -> list[bool | None]:
        if self.task != "fact":
            return [None] * n
        labels: list[bool | None] = [i % 2 == 0 for i in range(n)]
        self.rng.shuffle(labels)
        return labels

    def realise(self, item: Item, mode: str | None, label: bool | None) -> Picked | None:
        tab = item.tabs[0]
        options: list[tuple[str, Claim, Evidence | None]]
        if label is None:
            options = [(item.question, item.claim, None)]
        elif label:
            options = [(item.statement, item.claim, None)]
        else:
            options = list(item.falsifiers)
            self.rng.shuffle(options)
        for text, claim, own in options:
            evidence = item.evidence if own is None else own
            if claim.holds() != (label is not False) or text in self.seen:
                continue
            if not rows_fit([r for _, r, _ in evidence], mode):
                continue
            ok, decisive = text_fits(text, tab, mode)
            if ok:
                self.seen.add(text)
                return Picked(item, mode, text, label, decisive, evidence)
        return None

    def pick(self, mode: str | None, quota: int) -> list[Picked]:
        pool = [t for t in self.tabs if eligible(t, mode)]
        self.rng.shuffle(pool)
        labels = self.labels(quota)
        kinds = KIND_ORDER[mode]
        chosen: list[Picked] = []
        for cap in range(1, 8):
            for tab in pool:
                if len(chosen) >= quota:
                    return chosen
                if self.used.get(tab.table_id, 0) >= cap:
                    continue
                picked = self.pick_one(tab, mode, kinds[len(chosen) % len(kinds)],
                                       labels[len(chosen)])
                if picked is not None:
                    chosen.append(picked)
                    self.used[tab.table_id] = self.used.get(tab.table_id, 0) + 1
        if len(chosen) < quota:
            raise RuntimeError(f"only {len(chosen)} of {quota} {mode} queries could be built")
        return chosen

    def pick_one(self, tab: Tab, mode: str | None, want: str, label: bool | None
                 ) -> Picked | None:
        items = [i for i in self.gen.candidates(tab, mode == "paraphrase", rows_for(tab, mode))
                 if item_fits(i, mode)]
        self.rng.shuffle(items)
        items.sort(key=lambda i: i.kind != want)
        for item in items:
            picked = self.realise(item, mode, label)
            if picked is not None:
                return picked
        return None

    def pick_cross(self, quota: int) -> list[Picked]:
        """Two-table sibling queries: one entity compared across two tables of a family."""
        families: dict[str, list[Tab]] = {}
        for tab in self.tabs:
            if tab.family is not None and tab.topic.cross:
                families.setdefault(tab.family, []).append(tab)
        names = sorted(families)
        labels = self.labels(quota)
        chosen: list[Picked] = []
        for _ in range(quota * 50):
            if len(chosen) >= quota:
                break
            family = families[self.rng.choice(names)]
            t1, t2 = self.rng.sample(family, 2)
            key = t1.topic.key
            shared = sorted({cell_text(c) for c in t1.column(key)}
                            & {cell_text(c) for c in t2.column(key)})
            measures = [m for m in t1.topic.measures if m.col in t1.header]
            if not shared or not measures:
                continue
            item = self.gen.cross(t1, t2, self.rng.choice(measures), self.rng.choice(shared))
            if item is None or not item.claim.holds():
                continue
            picked = self.realise(item, "sibling", labels[len(chosen)])
            if picked is not None and all(set(tokens(t.facet or "")) <= set(tokens(picked.text))
                                          for t in item.tabs):
                picked.decisive = None
                chosen.append(picked)
        if len(chosen) < quota:
            raise RuntimeError(f"only {len(chosen)} of {quota} two-table queries could be built")
        return chosen


def evidence_records(item: Item, evidence: Evidence) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, int, str]] = set()
    for tab, row, col in evidence:
        if (tab.table_id, row, col) in seen:
            continue
        seen.add((tab.table_id, row, col))
        entry: dict[str, Any] = {"row": row, "column": col}
        if len(item.tabs) > 1:
            entry = {"table_id": tab.table_id, **entry}
        out.append(entry)
    return out


def query_record(query_id: str, picked: Picked, task: str) -> dict[str, Any]:
    item = picked.item
    gold: str | list[str] = ([t.table_id for t in item.tabs] if len(item.tabs) > 1
                             else item.tabs[0].table_id)
    record: dict[str, Any] = {"query_id": query_id, "query": picked.text}
    if task == "fact":
        record["answer"] = picked.label
        record["label"] = picked.label
    else:
        record["answer"] = item.answer
    record.update({"table_id": gold, "database_id": DATABASE_ID, "difficulty": item.difficulty,
                   "failure_mode": picked.mode})
    if picked.decisive:
        record["decisive"] = picked.decisive
    record.update({"kind": item.kind, "topic": item.tabs[0].topic.name,
                   "evidence": evidence_records(item, picked.evidence)})
    return record
