"""Table builders for mountain peaks, cities, towns, national parks and rivers. Each takes the
dataset's `World` and returns its tables in build order."""

from __future__ import annotations

import random
from collections.abc import Sequence

from . import vocab as V
from .model import Tab
from .topics_places import CITIES, PARKS, PEAKS, RIVERS, TOWNS
from .values import Cell, big
from .world import World, demonym


def peak_tables(w: World, n: int, n_long: int) -> list[Tab]:
    rng = w.rng
    tabs = []
    for i in range(n):
        place = w.place()
        name = f"{place} {rng.choice(V.RANGE_SUFFIXES)}"
        size = rng.randint(30, 60) if i < n_long else rng.randint(5, 20)
        top = rng.randint(1800, 7400)
        provinces = [w.place() for _ in range(rng.randint(1, 3))]
        rows: list[list[Cell]] = []
        elevation = top
        for rank in range(1, size + 1):
            prominence = rng.randint(30, max(60, min(elevation // 2, 2400)))
            if rank == 1:
                prominence = max(prominence, elevation // 3)
            ascent = None if rng.random() < 0.12 else min(
                2010, 1800 + round(150 * elevation / top) + rng.randint(-40, 40))
            rows.append([rank, w.peak(), elevation, prominence, ascent, rng.choice(provinces)])
            elevation -= rng.randint(1, max(3, top // 60))
            if elevation < 400:
                break
        header = ["Rank", "Peak", "Elevation (m)", "Prominence (m)", "First ascent", "Province"]
        header, rows = _drop_columns(rng, header, rows, (("Province",), ("Rank", "First ascent")))
        ph = {"ctx": f"in the {name}", "ctx_para": f"in the {place} massif",
              "ent_para": "summit", "ents_para": "summits", "para_unique": "yes"}
        section = rng.choice(("Principal peaks", "Highest peaks", "List of peaks"))
        tabs.append(Tab(PEAKS, name, section, header, rows, ph, decisive=(place,)))
    return tabs


def _drop_columns(rng: random.Random, header: list[str], rows: list[list[Cell]],
                  options: Sequence[tuple[str, ...]]) -> tuple[list[str], list[list[Cell]]]:
    """Half the time keep every column, otherwise drop one of `options` (header variety)."""
    if rng.random() < 0.5:
        return header, rows
    drop = rng.choice(list(options))
    keep = [i for i, h in enumerate(header) if h not in drop]
    return [header[i] for i in keep], [[r[i] for i in keep] for r in rows]


def _populations(rng: random.Random, count: int, top: int, floor: int) -> list[int]:
    alpha = rng.uniform(0.7, 1.05)
    values = sorted((max(floor, round(top / (j + 1) ** alpha * rng.uniform(0.88, 1.12)))
                     for j in range(count)), reverse=True)
    for j in range(1, len(values)):
        if values[j] >= values[j - 1]:
            values[j] = values[j - 1] - rng.randint(1, 900)
    return values


def city_tables(w: World, n: int) -> list[Tab]:
    rng = w.rng
    tabs = []
    for country in rng.sample(V.COUNTRIES, n):
        provinces = [w.place() for _ in range(rng.randint(5, 12))]
        pops = _populations(rng, rng.randint(30, 80), rng.randint(400_000, 3_500_000), 14_000)
        rows: list[list[Cell]] = []
        for rank, pop in enumerate(pops, start=1):
            old = round(pop / (1 + rng.uniform(-0.1, 0.22)))
            change = f"{100 * (pop - old) / old:+.1f}%".replace("-", "−")
            area = round(max(5.0, pop / rng.uniform(400, 6000)), 1)
            rows.append([rank, w.place(), rng.choice(provinces), big(pop), big(old), change,
                         area])
        header = ["Rank", "City", "Province", "Population (2021)", "Population (2011)",
                  "Change", "Area (km²)"]
        header, rows = _drop_columns(rng, header, rows,
                                     (("Area (km²)",), ("Population (2011)", "Change")))
        dem = demonym(country)
        ph = {"ctx": f"in {country}", "ctx_para": "", "ent_para": f"{dem} town",
              "ents_para": f"{dem} towns", "para_unique": "yes"}
        tabs.append(Tab(CITIES, f"List of cities in {country}", "Cities by population", header,
                        rows, ph, decisive=(country,)))
    return tabs


def town_tables(w: World, n: int) -> list[Tab]:
    rng = w.rng
    tabs = []
    for _ in range(n):
        province = w.place()
        districts = [w.place() for _ in range(rng.randint(3, 6))]
        pops = _populations(rng, rng.randint(8, 25), rng.randint(30_000, 400_000), 2_000)
        rows: list[list[Cell]] = [
            [rank, w.place(), rng.choice(districts), big(pop),
             round(max(2.0, pop / rng.uniform(300, 4000)), 1)]
            for rank, pop in enumerate(pops, start=1)]
        header = ["Rank", "Town", "District", "Population", "Area (km²)"]
        ph = {"ctx": f"in {province} Province", "ctx_para": "",
              "ent_para": f"settlement in {province}", "ents_para": f"settlements in {province}",
              "para_unique": "yes"}
        tabs.append(Tab(TOWNS, f"List of towns in {province} Province", "Largest towns", header,
                        rows, ph, decisive=(province,)))
    return tabs


def park_tables(w: World, n: int, n_long: int) -> list[Tab]:
    rng = w.rng
    tabs = []
    for i, country in enumerate(rng.sample(V.COUNTRIES, n)):
        provinces = [w.place() for _ in range(rng.randint(4, 9))]
        size = rng.randint(30, 45) if i < n_long else rng.randint(6, 22)
        names = sorted(f"{w.place()} National Park" for _ in range(size))
        rows: list[list[Cell]] = [
            [name, rng.choice(provinces), rng.randint(1895, 2018), int(10 ** rng.uniform(1.3, 3.9)),
             None if rng.random() < 0.15 else big(int(10 ** rng.uniform(3.7, 6.4)) // 100 * 100)]
            for name in names]
        header = ["Name", "Province", "Established", "Area (km²)", "Annual visitors"]
        header, rows = _drop_columns(rng, header, rows, (("Annual visitors",),))
        dem = demonym(country)
        ph = {"ctx": f"in {country}", "ctx_para": "", "ent_para": f"{dem} nature reserve",
              "ents_para": f"{dem} nature reserves", "para_unique": "yes"}
        tabs.append(Tab(PARKS, f"National parks of {country}", "List of parks", header, rows, ph,
                        decisive=(country,)))
    return tabs


def river_tables(w: World, n: int, n_long: int) -> list[Tab]:
    rng = w.rng
    tabs = []
    for i, country in enumerate(rng.sample(V.COUNTRIES, n)):
        size = rng.randint(30, 60) if i < n_long else rng.randint(8, 25)
        length = rng.randint(300, 2800)
        outlets = [*rng.sample(V.SEAS, 2), f"Lake {w.place()}"]
        rows: list[list[Cell]] = []
        for j in range(size):
            basin = int(length ** 1.7 * rng.uniform(0.5, 2.5))
            discharge = None if rng.random() < 0.15 else max(1, int(basin * rng.uniform(
                0.004, 0.03)))
            mouth = (rng.choice(rows)[0] if j and rng.random() < 0.4 else rng.choice(outlets))
            rows.append([f"{w.place()} River", length, big(basin), discharge, mouth])
            length -= rng.randint(1, max(2, length // 12))
            if length < 20:
                break
        header = ["River", "Length (km)", "Drainage basin (km²)", "Average discharge (m³/s)",
                  "Mouth"]
        header, rows = _drop_columns(rng, header, rows, (("Average discharge (m³/s)",),))
        dem = demonym(country)
        ph = {"ctx": f"in {country}", "ctx_para": "", "ent_para": f"{dem} waterway",
              "ents_para": f"{dem} waterways", "para_unique": "yes"}
        tabs.append(Tab(RIVERS, f"List of rivers of {country}", "Rivers by length", header,
                        rows, ph, decisive=(country,)))
    return tabs
