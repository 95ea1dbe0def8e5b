"""Table builders for the sports topics: league seasons, cup finals, medal tables, marathons
and cycling stages. Each takes the dataset's `World` and returns its tables in build order."""

from __future__ import annotations

import random
from datetime import date, timedelta

from . import vocab as V
from .model import Tab
from .topics_sport import CUP, CYCLING, LEAGUE, MARATHON, MEDALS
from .values import Cell, big, hms
from .world import World, demonym


def league_rows(rng: random.Random, clubs: list[str], strength: dict[str, float]
                ) -> list[list[Cell]]:
    played = 2 * (len(clubs) - 1)
    stats = []
    for club in clubs:
        form = min(1.0, max(0.0, strength[club] + rng.uniform(-0.15, 0.15)))
        won = min(played, max(0, round(played * (0.12 + 0.55 * form) + rng.uniform(-2, 2))))
        drawn = round((played - won) * rng.uniform(0.2, 0.45))
        lost = played - won - drawn
        scored = max(0, round(won * 1.9 + drawn * 1.0 + lost * 0.55 + rng.uniform(-4, 4)))
        conceded = max(0, round(lost * 1.8 + drawn * 1.0 + won * 0.5 + rng.uniform(-4, 4)))
        stats.append((3 * won + drawn, scored - conceded, scored, club, won, drawn, lost, conceded))
    stats.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
    return [[pos, club, played, won, drawn, lost, scored, conceded, pts]
            for pos, (pts, _, scored, club, won, drawn, lost, conceded)
            in enumerate(stats, start=1)]


def league_tables(w: World, n: int) -> list[Tab]:
    header = ["Pos", "Club", "Pld", "W", "D", "L", "GF", "GA", "Pts"]
    tabs = []
    for country in w.rng.sample(V.COUNTRIES, n):
        league = f"{demonym(country)} {w.rng.choice(V.LEAGUE_NAMES)}"
        size = w.rng.choice((10, 12, 14, 16, 18))
        pool = [w.club() for _ in range(size + 3)]
        strength = {club: w.rng.random() for club in pool}
        start = w.rng.randint(1994, 2014)
        for year in range(start, start + w.rng.randint(3, 6)):
            season = f"{year}–{(year + 1) % 100:02d}"
            title = f"{season} {league}"
            rows = league_rows(w.rng, w.rng.sample(pool, size), strength)
            ph = {"ctx": f"in the {title}", "ctx_para": f"in the campaign that began in {year}",
                  "ent_para": "side", "ents_para": "sides"}
            tabs.append(Tab(LEAGUE, title, "League table", header, rows, ph, family=league,
                            facet=season, decisive=(str(year),)))
    return tabs


def cup_score(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.12:
        goals, pens = rng.randint(0, 2), rng.randint(3, 5)
        return f"{goals}–{goals} ({pens}–{rng.randint(max(0, pens - 3), pens - 1)} p)"
    high = rng.choice((1, 1, 1, 2, 2, 2, 3, 3, 4, 5))
    score = f"{high}–{rng.randint(0, high - 1)}"
    return score + " (a.e.t.)" if roll > 0.92 else score


def cup_tables(w: World, n: int) -> list[Tab]:
    header = ["Year", "Winner", "Score", "Runner-up", "Venue", "Attendance"]
    rng = w.rng
    tabs = []
    for country in rng.sample(V.COUNTRIES, n):
        cup = f"{demonym(country)} Cup"
        clubs = [w.club() for _ in range(rng.randint(12, 20))]
        weights = [rng.random() ** 2 + 0.05 for _ in clubs]
        venues = [w.venue() for _ in range(rng.randint(3, 5))]
        end = rng.randint(2008, 2023)
        rows: list[list[Cell]] = []
        for year in range(end - rng.randint(30, 80) + 1, end + 1):
            winner = rng.choices(clubs, weights)[0]
            runner = rng.choices([c for c in clubs if c != winner],
                                 [wt for c, wt in zip(clubs, weights, strict=True)
                                  if c != winner])[0]
            venue = venues[0] if rng.random() < 0.65 else rng.choice(venues[1:])
            crowd = None if year < 1960 and rng.random() < 0.5 else big(
                rng.randint(180, 920) * 100 + rng.randint(0, 99))
            rows.append([year, winner, cup_score(rng), runner, venue, crowd])
        ph = {"ctx": f"in the history of the {cup}", "cup": cup}
        tabs.append(Tab(CUP, f"List of {cup} finals", "Finals", header, rows, ph,
                        decisive=(demonym(country), "Cup")))
    return tabs


def medal_tables(w: World, n_families: int, n_single: int) -> list[Tab]:
    header = ["Rank", "Nation", "Gold", "Silver", "Bronze", "Total"]
    rng = w.rng
    used: set[int] = set()
    tabs = []
    for i, games in enumerate(rng.sample(V.GAMES, n_families + n_single)):
        editions = rng.randint(3, 5) if i < n_families else 1
        years = _free_years(rng, used, editions, 4, 1950, 2022)
        pool = rng.sample(V.COUNTRIES, rng.randint(14, 30))
        strength = [rng.random() ** 2 + 0.02 for _ in pool]
        for year in years:
            picked = sorted(rng.sample(range(len(pool)), rng.randint(8, min(len(pool), 28))))
            nations = [pool[j] for j in picked]
            weights = [strength[j] for j in picked]
            events = rng.randint(30, 150)
            medals = {nation: [0, 0, 0] for nation in nations}
            for colour in range(3):
                for nation in rng.choices(nations, weights, k=events):
                    medals[nation][colour] += 1
            ranked = sorted((n for n in nations if sum(medals[n])),
                            key=lambda n: (-medals[n][0], -medals[n][1], -medals[n][2], n))
            rows: list[list[Cell]] = [[r, n, *medals[n], sum(medals[n])]
                                      for r, n in enumerate(ranked, start=1)]
            title = f"{year} {games} medal table"
            ph = {"ctx": f"at the {year} {games}", "ctx_para": f"in {year}",
                  "ent_para": "country", "ents_para": "countries", "para_unique": "yes"}
            tabs.append(Tab(MEDALS, title, "Medal table", header, rows, ph,
                            family=games if editions >= 3 else None, facet=str(year),
                            decisive=(games.split()[0], str(year))))
    return tabs


def _free_years(rng: random.Random, used: set[int], count: int, step: int, low: int,
                high: int) -> list[int]:
    """`count` years `step` apart, none already used by another race or games (so "in 2004"
    names a single table of the topic)."""
    starts = list(range(low, high - step * (count - 1) + 1))
    rng.shuffle(starts)
    for start in starts:
        years = [start + step * j for j in range(count)]
        if not any(y in used for y in years):
            used.update(years)
            return years
    raise RuntimeError("no free years left")


def marathon_tables(w: World, n_families: int, n_single: int, n_long: int) -> list[Tab]:
    header = ["Position", "Athlete", "Country", "Time", "Notes"]
    rng = w.rng
    tabs = []
    for i in range(n_families + n_single):
        city = w.place()
        race = f"{city} Marathon"
        editions = rng.randint(3, 5) if i < n_families else 1
        long = i >= n_families and i - n_families < n_long
        start = rng.randint(1995, 2022 - editions)
        countries = rng.sample(V.COUNTRIES, rng.randint(6, 12))
        sections = ["Men's race"] + (["Women's race"] if rng.random() < 0.5 else [])
        pages: dict[int, list[Tab]] = {}
        for section in sections:
            sex = section.split()[0].lower()
            pool = [(w.person("m" if sex == "men's" else "f"), rng.choice(countries))
                    for _ in range(70 if long else rng.randint(25, 40))]
            record = None
            for year in range(start, start + editions):
                runners = rng.sample(pool, rng.randint(30, 60) if long else rng.randint(8, 20))
                clock = rng.randint(7470, 7920) if sex == "men's" else rng.randint(8280, 8880)
                rows: list[list[Cell]] = []
                for pos, (athlete, country) in enumerate(runners, start=1):
                    note = None
                    if pos == 1 and (record is None or clock < record):
                        note, record = "CR", clock
                    elif rng.random() < 0.08:
                        note = "PB"
                    rows.append([pos, athlete, country, hms(clock), note])
                    clock += rng.randint(1, 40 + 6 * pos)
                title = f"{year} {race}"
                ph = {"ctx": f"in the {sex} race at the {title}",
                      "race": f"the {sex} race at the {title}", "ctx_para": f"in {year}",
                      "ent_para": "competitor", "ents_para": "competitors"}
                pages.setdefault(year, []).append(Tab(
                    MARATHON, title, section, header, rows, ph,
                    family=f"{race}, {section}" if editions >= 3 else None, facet=str(year),
                    decisive=(city, str(year))))
        tabs.extend(t for year in sorted(pages) for t in pages[year])
    return tabs


def cycling_tables(w: World, n_families: int, n_single: int) -> list[Tab]:
    header = ["Stage", "Date", "Course", "Distance (km)", "Type", "Winner"]
    rng = w.rng
    used: set[int] = set()
    tabs = []
    for i in range(n_families + n_single):
        place = w.place()
        race = f"Tour of {place}"
        editions = rng.randint(3, 6) if i < n_families else 1
        towns = [w.place() for _ in range(rng.randint(10, 16))]
        riders = [w.person() for _ in range(rng.randint(20, 35))]
        weights = [rng.random() ** 2 + 0.05 for _ in riders]
        for year in _free_years(rng, used, editions, 1, 1960, 2023):
            rows = _stages(rng, towns, riders, weights)
            title = f"{year} {race}"
            ph = {"ctx": f"of the {title}", "ctx_para": f"of the race held in {year}",
                  "ent_para": "leg", "ents_para": "legs", "para_unique": "yes"}
            tabs.append(Tab(CYCLING, title, "Stages", header, rows, ph,
                            family=race if editions >= 3 else None, facet=str(year),
                            decisive=(place, str(year))))
    return tabs


def _stages(rng: random.Random, towns: list[str], riders: list[str], weights: list[float]
            ) -> list[list[Cell]]:
    day = date(2001, rng.randint(4, 9), rng.randint(1, 12))
    here = rng.choice(towns)
    rows: list[list[Cell]] = []
    for stage in range(1, rng.randint(6, 21) + 1):
        kind = "Individual time trial" if stage == 1 and rng.random() < 0.3 else rng.choice(
            V.STAGE_TYPES)
        if kind == "Individual time trial":
            course, distance = here, round(rng.uniform(8, 48), 1)
        else:
            there = rng.choice([t for t in towns if t != here])
            course, here = f"{here} – {there}", there
            low, high = {"Flat stage": (150, 225), "Hilly stage": (140, 200)}.get(kind, (120, 190))
            distance = round(rng.uniform(low, high), 1)
        when = f"{day.day} {V.MONTHS[day.month - 1]}"
        rows.append([stage, when, course, distance, kind, rng.choices(riders, weights)[0]])
        day += timedelta(days=2 if rng.random() < 0.15 else 1)
    return rows
