"""Row generators of the commercial databases: retail_store, airline, music_streaming and
football_league. Each takes its own seeded Random and returns {table: [row, ...]} with
the columns in schema order.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from . import vocab as V
from .values import (
    MAX_ROWS,
    Row,
    Rows,
    distinct_people,
    money,
    plus_days,
    random_day,
    weighted_choice,
)


def gen_retail_store(rng: random.Random) -> Rows:
    names = list(V.RETAIL_PRODUCTS)
    departments = [{"dept_id": i, "name": name, "floor_area_sqm": rng.randrange(80, 900, 10)}
                   for i, name in enumerate(names, 1)]
    employees = []
    for i, (first, last) in enumerate(distinct_people(rng, 60), 1):
        position, _, low, high = weighted_choice(rng, V.RETAIL_POSITIONS)
        employees.append({"employee_id": i, "first_name": first, "last_name": last,
                          "position": position, "dept_id": rng.randint(1, len(names)),
                          "hourly_wage": money(rng, low, high, 0.25),
                          "start_date": random_day(rng, "2012-03-01", "2024-11-30")})
    customers = []
    for i, (first, last) in enumerate(distinct_people(rng, 120), 1):
        customers.append({"customer_id": i, "first_name": first, "last_name": last,
                          "email": f"{first.lower()}.{last.lower()}{i}@mail.example",
                          "city": rng.choice(V.TOWNS[:12]),
                          "loyalty_tier": weighted_choice(rng, V.LOYALTY_TIERS)[0],
                          "signup_date": random_day(rng, "2016-01-01", "2024-06-30")})
    companies: dict[str, None] = {}
    while len(companies) < 15:
        companies[f"{rng.choice(V.VENDOR_PREFIXES)} {rng.choice(V.VENDOR_SUFFIXES)}"] = None
    suppliers = [{"vendor_id": i, "company": company, "country": rng.choice(V.COUNTRIES[:12]),
                  "contact_email": f"sales@{company.split()[0].lower()}{i}.example",
                  "rating": round(rng.uniform(2.5, 5.0), 1)}
                 for i, company in enumerate(companies, 1)]
    catalogue = [(dept["dept_id"], name, price) for dept in departments
                 for name, price in V.RETAIL_PRODUCTS[dept["name"]]]
    rng.shuffle(catalogue)  # catalogue order, not department order, so rows mix departments
    products = [{"product_id": 100 + i, "name": name, "dept_id": dept_id,
                 "vendor_id": rng.choice(suppliers)["vendor_id"],
                 "unit_price": round(price * rng.choice([0.9, 1.0, 1.0, 1.1]), 2),
                 "stock_qty": rng.randint(0, 250)}
                for i, (dept_id, name, price) in enumerate(catalogue, 1)]
    tills = [e["employee_id"] for e in employees if e["position"] in ("Cashier",
                                                                       "Sales Associate")]
    orders = [{"order_id": 7000 + i, "customer_id": rng.choice(customers)["customer_id"],
               "employee_id": rng.choice(tills),
               "order_date": random_day(rng, "2024-01-01", "2024-12-31"),
               "payment_method": weighted_choice(rng, V.PAYMENT_METHODS)[0],
               "status": weighted_choice(rng, V.ORDER_STATUSES)[0]} for i in range(1, 201)]
    items: dict[tuple[int, int], Row] = {}
    for order in orders:
        for product in rng.sample(products, rng.choice([1, 1, 1, 2, 2])):
            key = (order["order_id"], product["product_id"])
            items[key] = {"order_id": key[0], "product_id": key[1],
                          "quantity": rng.choice([1, 1, 1, 2, 2, 3, 4])}
    return {"departments": departments, "employees": employees, "customers": customers,
            "suppliers": suppliers, "products": products, "orders": orders,
            "order_items": list(items.values())[:MAX_ROWS]}


def gen_airline(rng: random.Random) -> Rows:
    airports = [{"airport_code": c, "name": n, "city": city, "country": country}
                for c, n, city, country in V.AIRPORTS]
    tails: dict[str, None] = {}
    while len(tails) < 18:
        tails[f"N{rng.randint(100, 989)}{rng.choice('ABCDEFGHJKLMNPRSTUVWXYZ')}A"] = None
    aircraft = []
    for tail in tails:
        model, seats = rng.choice(V.AIRCRAFT_MODELS)
        aircraft.append({"tail_number": tail, "model": model, "seats": seats,
                         "year_built": rng.randint(2003, 2023)})
    codes = [a["airport_code"] for a in airports]
    origins = [c for c in codes if c not in V.ARRIVAL_ONLY_AIRPORTS]
    routes: dict[tuple[str, str], str] = {}
    while len(routes) < 32:
        origin, destination = rng.choice(origins), rng.choice(codes)
        if origin != destination and (origin, destination) not in routes:
            routes[(origin, destination)] = f"TA{100 + 7 * len(routes) + rng.randint(0, 6)}"
    route_list = list(routes.items())
    flights = []
    for i in range(1, 151):
        (origin, destination), number = rng.choice(route_list)
        tail = rng.choice(aircraft)["tail_number"]
        day = random_day(rng, "2024-03-01", "2024-10-31")
        hour, minute = rng.randint(5, 22), rng.choice([0, 15, 30, 45])
        flights.append({"flight_id": i, "flight_number": number, "origin": origin,
                        "destination": destination, "tail_number": tail, "departure_date": day,
                        "departure_time": f"{hour:02d}:{minute:02d}",
                        "status": weighted_choice(rng, V.FLIGHT_STATUSES)[0]})
    customers = []
    for i, (first, last) in enumerate(distinct_people(rng, 150), 1):
        customers.append({"customer_id": 300 + i, "first_name": first, "last_name": last,
                          "email": f"{first[0].lower()}{last.lower()}{i}@fly.example",
                          "country": rng.choice(V.COUNTRIES),
                          "ff_tier": weighted_choice(rng, V.FLYER_TIERS)[0],
                          "joined_on": random_day(rng, "2010-01-01", "2024-01-31")})
    bookings: dict[str, Row] = {}
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    while len(bookings) < 300:
        pnr = "".join(rng.choice(alphabet) for _ in range(6))
        flight = rng.choice(flights)
        fare, _, low, high = weighted_choice(rng, V.FARE_CLASSES)
        row = rng.randint(1, 6) if fare in ("Business", "First") else rng.randint(7, 42)
        bookings.setdefault(pnr, {
            "pnr": pnr, "customer_id": rng.choice(customers)["customer_id"],
            "flight_id": flight["flight_id"], "fare_class": fare,
            "seat": f"{row}{rng.choice('ABCDEF')}", "price": money(rng, low, high, 0.5),
            "booked_on": plus_days(flight["departure_date"], -rng.randint(1, 120))})
    employees = []
    for i, (first, last) in enumerate(distinct_people(rng, 60), 1):
        job, _, low, high = weighted_choice(rng, V.AIRLINE_JOBS)
        employees.append({"employee_id": i, "first_name": first, "last_name": last,
                          "job_title": job, "base_airport": rng.choice(origins[:10]),
                          "hire_date": random_day(rng, "2001-01-01", "2024-09-30"),
                          "salary": money(rng, low, high, 100)})
    return {"airports": airports, "aircraft": aircraft, "flights": flights,
            "customers": customers, "bookings": list(bookings.values()),
            "employees": employees}


def gen_music_streaming(rng: random.Random) -> Rows:
    names: dict[str, None] = {}
    while len(names) < 30:
        if rng.random() < 0.5:
            names[f"The {rng.choice(V.BAND_ADJECTIVES)} {rng.choice(V.BAND_NOUNS)}"] = None
        else:
            names[f"{rng.choice(V.FIRST_NAMES)} {rng.choice(V.LAST_NAMES)}"] = None
    artists = [{"artist_id": i, "name": name, "country": rng.choice(V.COUNTRIES[:14]),
                "genre": rng.choice(V.MUSIC_GENRES), "debut_year": rng.randint(1978, 2020)}
               for i, name in enumerate(names, 1)]
    album_titles: dict[str, None] = {}
    while len(album_titles) < 60:
        album_titles[f"{rng.choice(V.ALBUM_ADJECTIVES)} {rng.choice(V.ALBUM_NOUNS)}"] = None
    albums = []
    for i, title in enumerate(album_titles, 1):
        artist = artists[i - 1] if i <= len(artists) else rng.choice(artists)
        albums.append({"album_id": i, "title": title, "artist_id": artist["artist_id"],
                       "release_year": rng.randint(artist["debut_year"], 2024),
                       "label": rng.choice(V.RECORD_LABELS)})
    song_titles: dict[str, None] = {}
    while len(song_titles) < 240:
        song_titles[f"{rng.choice(V.SONG_ADJECTIVES)} {rng.choice(V.SONG_NOUNS)}"] = None
    titles = list(song_titles)
    tracks = [{"track_id": i, "title": title, "album_id": albums[(i - 1) // 4]["album_id"],
               "duration_sec": rng.randint(125, 430), "explicit": int(rng.random() < 0.2)}
              for i, title in enumerate(titles, 1)]
    users: dict[str, None] = {}
    while len(users) < 100:
        users[f"{rng.choice(V.USERNAME_WORDS)}_{rng.choice(V.FIRST_NAMES).lower()}"
              f"{rng.randint(1, 99)}"] = None
    members = [{"member_id": i, "username": user, "country": rng.choice(V.COUNTRIES[:14]),
                "plan": weighted_choice(rng, V.STREAMING_PLANS)[0],
                "join_date": random_day(rng, "2015-01-01", "2024-05-31"),
                "birth_year": rng.randint(1955, 2008)}
               for i, user in enumerate(users, 1)]
    plays = []
    for i in range(1, 301):
        track = rng.choice(tracks[:200])  # tracks of the newest albums are rarely streamed
        plays.append({"listen_id": 900000 + i, "member_id": rng.choice(members)["member_id"],
                      "track_id": track["track_id"],
                      "listened_on": random_day(rng, "2024-06-01", "2024-08-31"),
                      "seconds_listened": rng.randint(30, track["duration_sec"])})
    return {"artists": artists, "albums": albums, "tracks": tracks, "members": members,
            "plays": plays}


def _scorer(rng: random.Random, squad: list[Row]) -> Row:
    weights = {"Goalkeeper": 0, "Defender": 1, "Midfielder": 3, "Forward": 6}
    return rng.choices(squad, weights=[weights[p["position"]] for p in squad])[0]


def gen_football_league(rng: random.Random) -> Rows:
    stadiums = [{"venue_id": i, "name": name, "city": town,
                 "capacity": rng.randrange(12000, 62000, 250), "opened_year": rng.randint(1889,
                                                                                        2012)}
                for i, (name, (town, _)) in enumerate(zip(V.VENUES, V.FOOTBALL_TEAMS,
                                                          strict=True), 1)]
    managers = distinct_people(rng, len(V.FOOTBALL_TEAMS))
    teams = [{"team_id": i, "name": f"{town} {suffix}", "city": town, "venue_id": i,
              "founded_year": rng.randint(1872, 1960), "manager": f"{first} {last}"}
             for i, ((town, suffix), (first, last)) in enumerate(zip(V.FOOTBALL_TEAMS,
                                                                     managers, strict=True), 1)]
    people = iter(distinct_people(rng, 18 * len(teams)))
    players, squads = [], {}
    for team in teams:
        numbers = rng.sample(range(1, 40), 18)
        squad = []
        for position, count in V.SQUAD_SHAPE:
            for _ in range(count):
                first, last = next(people)
                squad.append({"player_id": len(players) + len(squad) + 1, "first_name": first,
                              "last_name": last, "team_id": team["team_id"],
                              "position": position,
                              "birth_date": random_day(rng, "1988-01-01", "2006-12-31"),
                              "shirt_number": numbers[len(squad)],
                              "nationality": rng.choice(V.FOOTBALL_NATIONALITIES)})
        players += squad
        squads[team["team_id"]] = squad
    fixtures = [(h["team_id"], a["team_id"]) for h in teams for a in teams if h is not a]
    rng.shuffle(fixtures)
    matches, goals = [], []
    kickoff = date(2023, 8, 12)
    for i, (home, away) in enumerate(fixtures, 1):
        day = (kickoff + timedelta(days=7 * ((i - 1) // 5) + rng.choice([0, 0, 1]))).isoformat()
        scores = {home: min(rng.choices(range(6), [24, 34, 24, 11, 5, 2])[0], 5),
                  away: min(rng.choices(range(6), [34, 34, 20, 8, 3, 1])[0], 5)}
        capacity = stadiums[home - 1]["capacity"]
        matches.append({"match_id": i, "match_date": day, "home_team_id": home,
                        "away_team_id": away, "home_score": scores[home],
                        "away_score": scores[away],
                        "attendance": int(capacity * rng.uniform(0.55, 1.0))})
        for team_id in (home, away):
            for minute in sorted(rng.randint(1, 94) for _ in range(scores[team_id])):
                goals.append({"event_id": 100 + len(goals) + 1, "match_id": i,
                              "player_id": _scorer(rng, squads[team_id])["player_id"],
                              "minute": minute, "kind": weighted_choice(rng, V.SCORING_KINDS)[0]})
    return {"stadiums": stadiums, "teams": teams, "players": players, "matches": matches,
            "goals": goals}
