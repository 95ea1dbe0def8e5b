"""Question templates of the airline database, and how often each is used.

A template samples values with the Ctx and returns a Spec; framework.make_queries
resamples until the gold SQL returns rows and the failure mode holds.
"""

from __future__ import annotations

from collections import Counter

from .framework import (
    DEEP,
    PARA,
    SIB,
    TITLE,
    Ctx,
    Spec,
    Template,
    country_phrase,
    full_name,
    lit,
    threshold,
    who,
    with_article,
)

JOB_PLURALS = {"Captain": "captains", "First Officer": "first officers",
               "Flight Attendant": "flight attendants", "Gate Agent": "gate agents",
               "Mechanic": "mechanics"}


def a_status(c: Ctx) -> Spec:
    status = c.rng.choice(["Delayed", "Cancelled", "Diverted"])
    q = c.say("How many flights were {s}?", "Count the {s} flights.", s=status.lower())
    return Spec(q, f"SELECT COUNT(*) FROM flights WHERE status = {lit(status)}", "easy")


def a_busiest_route(c: Ctx) -> Spec:
    q = c.say("Which route has the most scheduled flights?",
              "Which origin and destination pair is flown most often?")
    sql = ("SELECT origin, destination, COUNT(*) AS n FROM flights "
           "GROUP BY origin, destination ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium")


def a_no_departures(c: Ctx) -> Spec:
    q = c.say("Which airports have no departing flights?",
              "Which airports never appear as the origin of a flight?")
    sql = "SELECT name FROM airports WHERE airport_code NOT IN (SELECT origin FROM flights)"
    return Spec(q, sql, "hard")


def a_inbound_only(c: Ctx) -> Spec:
    q = c.say("Which airport codes are flight destinations but never origins?",
              "List the airports that flights arrive at but never leave from, by code.")
    sql = "SELECT destination FROM flights EXCEPT SELECT origin FROM flights"
    return Spec(q, sql, "hard")


def a_frequent_customers(c: Ctx) -> Spec:
    counts = Counter(b["customer_id"] for b in c.rows["bookings"])
    k = int(threshold(counts.values(), c.rng, (2, 5)))
    q = c.say("Which customers have more than {k} bookings?",
              "List the customers who booked over {k} times.", k=k)
    sql = ("SELECT c.first_name, c.last_name, COUNT(*) FROM customers AS c JOIN bookings AS b "
           f"ON c.customer_id = b.customer_id GROUP BY c.customer_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def a_route_flights(c: Ctx) -> Spec:
    f = c.pick("flights", head=True)
    q = c.say("Which flights operate from {o} to {d}?", "List the flights from {o} to {d}.",
              o=f["origin"], d=f["destination"])
    sql = ("SELECT flight_number, departure_date FROM flights "
           f"WHERE origin = {lit(f['origin'])} AND destination = {lit(f['destination'])}")
    return Spec(q, sql, "easy")


def a_flight_model(c: Ctx) -> Spec:
    f = c.pick("flights", head=True)
    q = c.say("What aircraft model flew {n} on {d}?", "Which plane type operated {n} on {d}?",
              n=f["flight_number"], d=f["departure_date"])
    sql = ("SELECT a.model FROM flights AS f JOIN aircraft AS a ON f.tail_number = a.tail_number "
           f"WHERE f.flight_number = {lit(f['flight_number'])} "
           f"AND f.departure_date = {lit(f['departure_date'])}")
    return Spec(q, sql, "medium")


def a_model_passengers(c: Ctx) -> Spec:
    model = c.pick("aircraft")["model"]
    q = c.say("Which customers flew on {m}?", "Who has a booking on a flight operated by {m}?",
              m=with_article(model))
    sql = ("SELECT DISTINCT c.first_name, c.last_name FROM customers AS c "
           "JOIN bookings AS b ON c.customer_id = b.customer_id "
           "JOIN flights AS f ON b.flight_id = f.flight_id "
           f"JOIN aircraft AS a ON f.tail_number = a.tail_number WHERE a.model = {lit(model)}")
    return Spec(q, sql, "hard")


def a_fuller_flights(c: Ctx) -> Spec:
    q = c.say("Which flights have more bookings than the average flight?",
              "List the flights that sold more seats than the average per flight.")
    sql = ("SELECT f.flight_number, f.departure_date, COUNT(*) FROM flights AS f "
           "JOIN bookings AS b ON f.flight_id = b.flight_id GROUP BY f.flight_id "
           "HAVING COUNT(*) > (SELECT COUNT(*) * 1.0 / COUNT(DISTINCT flight_id) FROM bookings)")
    return Spec(q, sql, "hard")


def a_sib_hired(c: Ctx) -> Spec:
    e = c.pick("employees")
    year = int(e["hire_date"][:4]) - 1
    q = c.say("How many {j} were hired after {y}?", "How many {j} joined the crew after {y}?",
              j=JOB_PLURALS[e["job_title"]], y=year)
    sql = (f"SELECT COUNT(*) FROM employees WHERE job_title = {lit(e['job_title'])} "
           f"AND hire_date > '{year}-12-31'")
    return Spec(q, sql, "easy", SIB)


def a_sib_base(c: Ctx) -> Spec:
    e = c.pick("employees")
    town = next(a["city"] for a in c.rows["airports"] if a["airport_code"] == e["base_airport"])
    q = c.say("How many {j} are based in {t}?", "How many {j} have {t} as their home base?",
              j=JOB_PLURALS[e["job_title"]], t=town)
    sql = ("SELECT COUNT(*) FROM employees AS e JOIN airports AS a "
           f"ON e.base_airport = a.airport_code WHERE a.city = {lit(town)} "
           f"AND e.job_title = {lit(e['job_title'])}")
    return Spec(q, sql, "medium", SIB)


def a_sib_tier(c: Ctx) -> Spec:
    tier = c.pick("customers")["ff_tier"]
    q = c.say("How many customers hold {t} frequent-flyer status?",
              "How many travellers are {t} members of the frequent flyer programme?", t=tier)
    return Spec(q, f"SELECT COUNT(*) FROM customers WHERE ff_tier = {lit(tier)}", "easy", SIB)


def a_sib_fare_country(c: Ctx) -> Spec:
    b = c.pick("bookings")
    cust = next(x for x in c.rows["customers"] if x["customer_id"] == b["customer_id"])
    q = c.say("Which frequent flyers from {c} reserved {f} seat?",
              "Which travellers from {c} bought {f} ticket?", c=country_phrase(cust["country"]),
              f=with_article(b["fare_class"]))
    sql = ("SELECT DISTINCT c.first_name, c.last_name FROM customers AS c JOIN bookings AS b "
           f"ON c.customer_id = b.customer_id WHERE c.country = {lit(cust['country'])} "
           f"AND b.fare_class = {lit(b['fare_class'])}")
    return Spec(q, sql, "medium", SIB)


def a_title_seats(c: Ctx) -> Spec:
    s = c.rng.choice([150, 200, 250])
    q = c.say("Which aircraft have more than {s} seats?", "List the aircraft with over {s} seats.",
              s=s)
    return Spec(q, f"SELECT tail_number, model FROM aircraft WHERE seats > {s}", "easy", TITLE,
                {"decisive": "aircraft"})


def a_title_built(c: Ctx) -> Spec:
    y = c.rng.choice([2008, 2010, 2012])
    q = c.say("Which aircraft were built before {y}?", "Which aircraft date from before {y}?",
              y=y)
    return Spec(q, f"SELECT tail_number, model, year_built FROM aircraft WHERE year_built < {y}",
                "easy", TITLE, {"decisive": "aircraft"})


def a_title_fare_count(c: Ctx) -> Spec:
    fare = c.rng.choice(["Business", "First", "Premium Economy"])
    q = c.say("How many bookings were made in {f} class?", "Count the {f} class bookings.",
              f=fare)
    return Spec(q, f"SELECT COUNT(*) FROM bookings WHERE fare_class = {lit(fare)}", "easy",
                TITLE, {"decisive": "bookings"})


def a_title_fare_price(c: Ctx) -> Spec:
    fare = c.rng.choice(["Economy", "Business", "First"])
    q = c.say("What is the average price of {f} booking?",
              "On average, what does {f} booking cost?", f=with_article(fare))
    return Spec(q, f"SELECT AVG(price) FROM bookings WHERE fare_class = {lit(fare)}", "easy",
                TITLE, {"decisive": "booking"})


def a_title_flight_count(c: Ctx) -> Spec:
    f = c.pick("flights", head=True)
    q = c.say("How many bookings does flight {n} on {d} have?",
              "How many bookings were taken for {n} departing {d}?",
              n=f["flight_number"], d=f["departure_date"])
    sql = ("SELECT COUNT(*) FROM bookings AS b JOIN flights AS f ON b.flight_id = f.flight_id "
           f"WHERE f.flight_number = {lit(f['flight_number'])} "
           f"AND f.departure_date = {lit(f['departure_date'])}")
    return Spec(q, sql, "medium", TITLE, {"decisive": "bookings"})


def a_para_trips(c: Ctx) -> Spec:
    origin = c.pick("flights")["origin"]
    town = next(a["city"] for a in c.rows["airports"] if a["airport_code"] == origin)
    q = c.say("How many trips took off from {t}?", "How many planes left {t}?", t=town)
    sql = ("SELECT COUNT(*) FROM flights AS f JOIN airports AS a ON f.origin = a.airport_code "
           f"WHERE a.city = {lit(town)}")
    return Spec(q, sql, "medium", PARA)


def a_para_travellers(c: Ctx) -> Spec:
    f = c.pick("flights", head=True)
    town = next(a["city"] for a in c.rows["airports"] if a["airport_code"] == f["destination"])
    q = c.say("Who is travelling to {t} on {d}?", "Which passengers head to {t} on {d}?",
              t=town, d=f["departure_date"])
    sql = ("SELECT c.first_name, c.last_name FROM customers AS c "
           "JOIN bookings AS b ON c.customer_id = b.customer_id "
           "JOIN flights AS f ON b.flight_id = f.flight_id "
           f"JOIN airports AS a ON f.destination = a.airport_code WHERE a.city = {lit(town)} "
           f"AND f.departure_date = {lit(f['departure_date'])}")
    return Spec(q, sql, "hard", PARA)


def a_deep_email(c: Ctx) -> Spec:
    cust, evidence = c.deep("customers", "last_name")
    q = c.say("What is the email address of {n}?", "How can {n} be reached by email?",
              n=full_name(cust))
    return Spec(q, f"SELECT email FROM customers WHERE {who(cust)}", "easy", DEEP,
                {"evidence": evidence})


def a_deep_pnr(c: Ctx) -> Spec:
    b, evidence = c.deep("bookings", "pnr")
    q = c.say("Which flight is reservation {p} for?", "What flight does record locator {p} "
              "belong to?", p=b["pnr"])
    sql = ("SELECT f.flight_number, f.departure_date FROM bookings AS b JOIN flights AS f "
           f"ON b.flight_id = f.flight_id WHERE b.pnr = {lit(b['pnr'])}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


def a_deep_seat(c: Ctx) -> Spec:
    b, evidence = c.deep("bookings", "pnr")
    q = c.say("Which seat goes with record locator {p}?", "What seat was assigned under "
              "reservation {p}?", p=b["pnr"])
    return Spec(q, f"SELECT seat FROM bookings WHERE pnr = {lit(b['pnr'])}", "easy", DEEP,
                {"evidence": evidence})


TEMPLATES: list[tuple[Template, int]] = [
    (a_status, 2), (a_busiest_route, 1), (a_no_departures, 1), (a_inbound_only, 1),
    (a_frequent_customers, 1), (a_route_flights, 2), (a_flight_model, 2),
    (a_model_passengers, 2), (a_fuller_flights, 1),
    (a_sib_hired, 2), (a_sib_base, 2), (a_sib_tier, 2), (a_sib_fare_country, 1),
    (a_title_seats, 1), (a_title_built, 1), (a_title_fare_count, 1),
    (a_title_fare_price, 1), (a_title_flight_count, 1),
    (a_para_trips, 2), (a_para_travellers, 2),
    (a_deep_email, 2), (a_deep_pnr, 1), (a_deep_seat, 1),
]
