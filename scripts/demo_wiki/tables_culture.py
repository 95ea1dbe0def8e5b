"""Table builders for elections, film awards, discographies, space missions and television
episodes. Each takes the dataset's `World` and returns its tables in build order."""

from __future__ import annotations

import random
from datetime import date, timedelta

from . import vocab as V
from .model import Tab
from .text import content_words
from .topics_culture import AWARDS, DISCO, ELECTION, SPACE, TV
from .values import Cell, big, signed
from .world import World, demonym, title_words


def dhondt(votes: list[int], seats: int) -> list[int]:
    won = [0] * len(votes)
    for _ in range(seats):
        best = max(range(len(votes)), key=lambda i: (votes[i] / (won[i] + 1), -i))
        won[best] += 1
    return won


def election_tables(w: World, n: int) -> list[Tab]:
    header = ["Party", "Leader", "Votes", "%", "Seats", "+/–"]
    rng = w.rng
    tabs = []
    for country in rng.sample(V.COUNTRIES, n):
        year = rng.randint(1990, 2022)
        title = f"{year} {demonym(country)} general election"
        parties = rng.sample(V.PARTIES, rng.randint(5, 9))
        leaders = {p: w.person() for p in parties}
        appeal = {p: rng.random() ** 1.5 + 0.05 for p in parties}
        newcomer = rng.choice(parties) if rng.random() < 0.5 else None
        for region in [w.place() for _ in range(rng.randint(3, 6))]:
            valid = rng.randint(150_000, 1_800_000)
            shares = {p: appeal[p] * rng.uniform(0.5, 1.6) for p in parties}
            total_share = sum(shares.values())
            votes = {p: max(800, round(valid * shares[p] / total_share)) for p in parties}
            order = sorted(parties, key=lambda p: (-votes[p], p))
            seats = dhondt([votes[p] for p in order], rng.randint(8, 40))
            cast = sum(votes.values())
            rows: list[list[Cell]] = [
                [p, leaders[p], big(votes[p]), round(100 * votes[p] / cast, 1), s,
                 None if p == newcomer else signed(rng.randint(-4, 4))]
                for p, s in zip(order, seats, strict=True)]
            ph = {"ctx": f"in {region} Region in the {title}", "ctx_para": f"in {region}",
                  "ent_para": "political group", "ents_para": "political groups",
                  "para_unique": "yes"}
            tabs.append(Tab(ELECTION, title, f"Results in {region} Region", header, rows, ph,
                            family=title, facet=region, decisive=(region,)))
    return tabs


def award_tables(w: World, n_families: int, n_single: int) -> list[Tab]:
    header = ["Category", "Winner", "Film", "Studio", "Nominations"]
    rng = w.rng
    tabs = []
    for i, country in enumerate(rng.sample(V.COUNTRIES, n_families + n_single)):
        kind = rng.choice(("Film Awards", "Academy Awards", "Screen Awards", "Critics' Awards"))
        festival = f"{demonym(country)} {kind}"
        extra = rng.sample(V.AWARD_CATEGORIES[2:], rng.randint(6, 11))
        categories = [c for c in V.AWARD_CATEGORIES if c in extra or c in V.AWARD_CATEGORIES[:2]]
        studios = [w.studio() for _ in range(6)]
        editions = rng.randint(3, 5) if i < n_families else 1
        start = rng.randint(1985, 2018)
        for year in range(start, start + editions):
            films = [(w.work_title(), rng.choice(studios), rng.randint(3, 13))
                     for _ in range(rng.randint(4, 7))]
            rows: list[list[Cell]] = []
            for category in categories:
                if category in ("Best Documentary", "Best Animated Feature"):
                    film = (w.work_title(), rng.choice(studios) if rng.random() < 0.5 else None,
                            rng.randint(1, 3))
                else:
                    film = rng.choices(films, [f[2] ** 1.5 for f in films])[0]
                sex = "f" if "Actress" in category else "m" if "Actor" in category else None
                rows.append([category, w.person(sex), film[0], film[1], film[2]])
            title = f"{year} {festival}"
            ph = {"ctx": f"at the {title}", "ctx_para": f"at the {year} ceremony in {country}"}
            tabs.append(Tab(AWARDS, title, "Winners", header, rows, ph,
                            family=festival if editions >= 3 else None, facet=str(year),
                            decisive=(demonym(country), str(year))))
    return tabs


def disco_tables(w: World, n: int) -> list[Tab]:
    rng = w.rng
    tabs = []
    for _ in range(n):
        band = w.band()
        count = rng.randint(4, 15)
        best = rng.randint(0, count - 1)
        label = rng.choice(V.RECORD_LABELS)
        year = rng.randint(1965, 2008)
        rows: list[list[Cell]] = []
        for j in range(count):
            peak: int | None = max(1, round(abs(j - best) * rng.uniform(3, 12)
                                            + rng.randint(1, 8)))
            if peak > 90 or (j == 0 and rng.random() < 0.3):
                peak = None
            cert, sales = _certification(rng, peak)
            rows.append([year, w.work_title(), label, peak, cert, sales])
            year += rng.randint(1, 4)
            if rng.random() < 0.25:
                label = rng.choice(V.RECORD_LABELS)
            if year > 2024:
                break
        header = ["Year", "Album", "Label", "Peak position", "Certification", "Sales"]
        keep = rng.choice((6, 6, 5, 4))
        header, rows = header[:keep], [r[:keep] for r in rows]
        single = len(content_words(band)) == 1
        ph = {"ctx": f"by {band}", "band": band, "ctx_para": f"by {band}" if single else "",
              "ent_para": "record", "ents_para": "records"}
        if single:
            ph["para_unique"] = "yes"
        tabs.append(Tab(DISCO, f"{band} discography", rng.choice(("Studio albums", "Albums")),
                        header, rows, ph, decisive=title_words(band)))
    return tabs


def _certification(rng: random.Random, peak: int | None) -> tuple[str | None, str | None]:
    if peak is None or peak > 25:
        return None, None
    if peak <= 3:
        cert = rng.choice(("Platinum", "2× Platinum", "Gold"))
    elif peak <= 10:
        cert = rng.choice(("Gold", "Gold", None))
    else:
        cert = rng.choice(("Silver", None, None))
    low, high = {"2× Platinum": (600, 1200), "Platinum": (300, 600), "Gold": (100, 300),
                 "Silver": (60, 100), None: (0, 0)}[cert]
    return cert, (big(rng.randint(low, high) * 1000) if cert else None)


def space_tables(w: World, n: int) -> list[Tab]:
    header = ["Mission", "Launch date", "Launch vehicle", "Destination", "Outcome", "Mass (kg)"]
    rng = w.rng
    words = list(V.MISSION_WORDS)
    rng.shuffle(words)
    tabs = []
    for country in rng.sample(V.COUNTRIES, n):
        agency = f"{demonym(country)} Space Agency"
        programs = {words.pop(): 0 for _ in range(rng.randint(2, 3))}
        first = rng.choice((1960, 1970, 1980, 1990))
        decades = list(range(first, min(2020, first + 10 * rng.randint(1, 5)), 10))
        for decade in decades:
            rockets = [f"{rng.choice(V.ROCKET_WORDS)} {rng.choice(V.ROMAN)}" for _ in range(2)]
            dates = sorted((rng.randint(decade, decade + 9), rng.randint(1, 12),
                            rng.randint(1, 28)) for _ in range(rng.randint(4, 14)))
            rows: list[list[Cell]] = []
            for year, month, day in dates:
                program = rng.choice(list(programs))
                programs[program] += 1
                places = V.DESTINATIONS_EARLY if year < 1980 else V.DESTINATIONS_LATE
                mass = None if rng.random() < 0.1 else rng.randint(80, 900 if year < 1975
                                                                   else 6500)
                rows.append([f"{program} {programs[program]}",
                             f"{day} {V.MONTHS[month - 1]} {year}", rng.choice(rockets),
                             rng.choice(places), rng.choice(V.OUTCOMES), mass])
            ph = {"ctx": f"launched by the {agency} in the {decade}s"}
            tabs.append(Tab(SPACE, f"List of {agency} missions", f"{decade}s", header, rows, ph,
                            family=agency if len(decades) >= 3 else None, facet=f"{decade}s",
                            decisive=(demonym(country), f"{decade}s")))
    return tabs


def tv_tables(w: World, n: int) -> list[Tab]:
    header = ["No. overall", "No. in season", "Title", "Directed by", "Written by",
              "Original air date", "Viewers (millions)"]
    rng = w.rng
    tabs = []
    for _ in range(n):
        show = w.work_title()
        seasons = rng.choice((1, 1, 2, 3, 3, 4))
        directors = [w.person() for _ in range(rng.randint(3, 7))]
        writers = [w.person() for _ in range(rng.randint(3, 7))]
        network = rng.random() < 0.5
        year = rng.randint(1994, 2018)
        audience = rng.uniform(2, 16)
        overall = 0
        for season in range(1, seasons + 1):
            day = date(year, 9 if network else rng.choice((1, 3)), rng.randint(1, 20))
            rows: list[list[Cell]] = []
            for number in range(1, (rng.randint(18, 24) if network else rng.randint(8, 13)) + 1):
                overall += 1
                viewers = None if rng.random() < 0.06 else round(
                    audience * rng.uniform(0.75, 1.15), 2)
                rows.append([overall, number, w.work_title(), rng.choice(directors),
                             rng.choice(writers),
                             f"{V.MONTHS[day.month - 1]} {day.day}, {day.year}", viewers])
                day += timedelta(days=7 if rng.random() < 0.85 else 14)
            audience *= rng.uniform(0.75, 1.05)
            year += 1
            ph = {"ctx": f"in season {season} of {show}", "show": show}
            tabs.append(Tab(TV, f"List of {show} episodes", f"Season {season}", header, rows, ph,
                            family=show if seasons >= 3 else None, facet=f"Season {season}",
                            decisive=title_words(show)))
    return tabs
