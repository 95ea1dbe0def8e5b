"""The two datasets: which tables each corpus holds, how many queries per failure mode, the
description written to dataset.json, and `build_plan` (corpus and query records in order)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .model import Tab
from .selection import FAILURE_MODES, Picked, Selector, query_record
from .tables_culture import award_tables, disco_tables, election_tables, space_tables, tv_tables
from .tables_places import city_tables, park_tables, peak_tables, river_tables, town_tables
from .tables_sport import cup_tables, cycling_tables, league_tables, marathon_tables, medal_tables
from .world import World

QA_SEED = 20240611
FACT_SEED = 20240612


@dataclass(frozen=True)
class Plan:
    name: str
    task: str
    seed: int
    quotas: Mapping[str | None, int]
    cross: int
    corpus: Callable[[World], list[Tab]]
    description: str


def qa_corpus(w: World) -> list[Tab]:
    return [*league_tables(w, 5), *cup_tables(w, 9), *election_tables(w, 8),
            *award_tables(w, 5, 4), *disco_tables(w, 54), *medal_tables(w, 4, 4),
            *peak_tables(w, 47, 13), *city_tables(w, 12), *town_tables(w, 26),
            *space_tables(w, 7), *park_tables(w, 24, 5), *marathon_tables(w, 5, 8, 5),
            *cycling_tables(w, 5, 4), *tv_tables(w, 18), *river_tables(w, 22, 7)]


def fact_corpus(w: World) -> list[Tab]:
    return [*league_tables(w, 4), *cup_tables(w, 7), *election_tables(w, 6),
            *award_tables(w, 4, 3), *disco_tables(w, 40), *medal_tables(w, 3, 3),
            *peak_tables(w, 34, 10), *city_tables(w, 9), *town_tables(w, 20),
            *space_tables(w, 6), *park_tables(w, 18, 4), *marathon_tables(w, 4, 6, 4),
            *cycling_tables(w, 4, 3), *tv_tables(w, 14), *river_tables(w, 17, 5)]


def _description(kind: str) -> str:
    modes = "\n".join(f"- `{mode}`: {text}" for mode, text in FAILURE_MODES.items())
    return (
        f"{kind} over a synthetic corpus of Wikipedia-style tables (database_id 'wiki', "
        "OTT-QA-style table ids: page title plus an index) on 14 topics: football league "
        "seasons and cup finals, general elections by region, film awards, band "
        "discographies, multi-sport medal tables, mountain peaks, city populations, space "
        "missions, national parks, marathon results, cycling race stages, television "
        "episodes and rivers. People, places and clubs are fictional; numbers are plausible "
        "for the topic. Every answer is computed from the gold table's own cells by "
        "scripts/demo_wiki/, so it is correct with respect to that table.\n\n"
        "Retrieval failure modes are built in on purpose. Each query carries `failure_mode` "
        "(null for about 40% ordinary queries), so you can filter a run by it:\n"
        f"{modes}\n\n"
        "Each query also carries `evidence`, the cells the answer rests on as "
        "[{\"row\": i, \"column\": \"Header\"}] with i a 0-based index into the data rows "
        "(two-table queries add \"table_id\"), plus `kind` (lookup, comparison, superlative, "
        "count, aggregate), `topic` and `difficulty` (easy, medium, hard by how many cells "
        "the answer combines).")


PLANS = (
    Plan("demo-qa", "qa", QA_SEED,
         {None: 104, "sibling": 36, "title-only": 36, "paraphrase": 36, "deep-row": 36}, 12,
         qa_corpus,
         _description("FeTaQA-style question answering: natural questions with a free-text, "
                      "full-sentence reference answer,")),
    Plan("demo-fact", "fact", FACT_SEED,
         {None: 144, "sibling": 48, "title-only": 54, "paraphrase": 54, "deep-row": 54}, 6,
         fact_corpus,
         _description("TabFact-style fact verification: declarative statements about one "
                      "table, labelled true or false (answer equals label; false statements "
                      "are checked perturbations such as a wrong number, a swapped entity, a "
                      "reversed comparison or a wrong superlative),")),
)


def assign_ids(tabs: Iterable[Tab]) -> None:
    """OTT-QA style: page title with underscores, then the table's index on that page."""
    per_page: dict[str, int] = {}
    for tab in tabs:
        per_page[tab.title] = per_page.get(tab.title, 0) + 1
        tab.table_id = f"{tab.title.replace(' ', '_')}_{per_page[tab.title]}"


def build_plan(plan: Plan) -> tuple[list[Tab], list[dict[str, Any]]]:
    tabs = plan.corpus(World(plan.seed))
    assign_ids(tabs)
    rng = random.Random(plan.seed * 7 + 1)
    selector = Selector(tabs, plan.task, rng)
    picked: list[Picked] = []
    for mode, quota in plan.quotas.items():
        picked += selector.pick(mode, quota)
    picked += selector.pick_cross(plan.cross)
    rng.shuffle(picked)
    prefix = plan.name.removeprefix("demo-")
    queries = [query_record(f"{prefix}-{i:04d}", p, plan.task)
               for i, p in enumerate(picked, start=1)]
    corpus = list(tabs)
    rng.shuffle(corpus)
    return corpus, queries
