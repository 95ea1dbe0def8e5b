"""Question templates of the football league database, and how often each is used.

A template samples values with the Ctx and returns a Spec; framework.make_queries
resamples until the gold SQL returns rows and the failure mode holds.
"""

from __future__ import annotations

from collections import Counter

from .framework import (
    DEEP,
    PARA,
    TITLE,
    Ctx,
    Spec,
    Template,
    full_name,
    lit,
    threshold,
    who,
)

KIND_PHRASES = {"penalty": "from the penalty spot", "header": "with a header",
                "free kick": "from a free kick"}


def f_biggest_crowd(c: Ctx) -> Spec:
    q = c.say("Which match drew the largest crowd?", "Which match had the highest attendance?")
    sql = "SELECT match_id, match_date, attendance FROM matches ORDER BY attendance DESC LIMIT 1"
    return Spec(q, sql, "medium")


def f_draws(c: Ctx) -> Spec:
    q = c.say("How many matches ended in a draw?", "How many matches finished level?")
    return Spec(q, "SELECT COUNT(*) FROM matches WHERE home_score = away_score", "easy")


def f_big_wins(c: Ctx) -> Spec:
    k = c.rng.choice([3, 4])
    q = c.say("How many matches did the home side win by {k} or more?",
              "Count the matches with a home win margin of at least {k}.", k=k)
    return Spec(q, f"SELECT COUNT(*) FROM matches WHERE home_score - away_score >= {k}", "easy")


def f_home_wins(c: Ctx) -> Spec:
    team = c.pick("teams")["name"]
    q = c.say("How many home games did {t} win?", "How many times did {t} win at home?", t=team)
    sql = ("SELECT COUNT(*) FROM matches AS m JOIN teams AS t ON m.home_team_id = t.team_id "
           f"WHERE t.name = {lit(team)} AND m.home_score > m.away_score")
    return Spec(q, sql, "medium")


def f_nationality(c: Ctx) -> Spec:
    nat = c.pick("players")["nationality"]
    q = c.say("How many {n} players are there?", "Count the players of {n} nationality.", n=nat)
    return Spec(q, f"SELECT COUNT(*) FROM players WHERE nationality = {lit(nat)}", "easy")


def f_squad_shape(c: Ctx) -> Spec:
    team = c.pick("teams")["name"]
    q = c.say("How many players does {t} have in each position?",
              "Break down the {t} squad by position.", t=team)
    sql = ("SELECT p.position, COUNT(*) FROM players AS p JOIN teams AS t "
           f"ON p.team_id = t.team_id WHERE t.name = {lit(team)} GROUP BY p.position")
    return Spec(q, sql, "medium")


def f_top_scorers(c: Ctx) -> Spec:
    counts = Counter(g["player_id"] for g in c.rows["goals"])
    k = int(threshold(counts.values(), c.rng, (2, 6)))
    q = c.say("Which players scored more than {k} goals?",
              "List the players with over {k} goals to their name.", k=k)
    sql = ("SELECT p.first_name, p.last_name, COUNT(*) FROM players AS p JOIN goals AS g "
           f"ON p.player_id = g.player_id GROUP BY p.player_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def f_silent_forwards(c: Ctx) -> Spec:
    team = c.pick("teams")["name"]
    q = c.say("Which {t} forwards have not scored?",
              "List the forwards at {t} who have yet to score.", t=team)
    sql = ("SELECT p.first_name, p.last_name FROM players AS p JOIN teams AS t "
           f"ON p.team_id = t.team_id WHERE t.name = {lit(team)} AND p.position = 'Forward' "
           "AND p.player_id NOT IN (SELECT player_id FROM goals)")
    return Spec(q, sql, "hard")


def f_venue_scorers(c: Ctx) -> Spec:
    venue = c.pick("stadiums")["name"]
    q = c.say("Who has scored at {v}?", "List the players who found the net at {v}.", v=venue)
    sql = ("SELECT DISTINCT p.first_name, p.last_name FROM goals AS g "
           "JOIN players AS p ON g.player_id = p.player_id "
           "JOIN matches AS m ON g.match_id = m.match_id "
           "JOIN teams AS t ON m.home_team_id = t.team_id "
           f"JOIN stadiums AS s ON t.venue_id = s.venue_id WHERE s.name = {lit(venue)}")
    return Spec(q, sql, "hard")


def f_crowd_pullers(c: Ctx) -> Spec:
    k = c.rng.choice([25000, 30000, 35000])
    q = c.say("Which teams average a home attendance above {k}?",
              "Which clubs draw more than {k} fans per home match on average?", k=f"{k:,}")
    sql = ("SELECT t.name, AVG(m.attendance) FROM teams AS t JOIN matches AS m "
           f"ON t.team_id = m.home_team_id GROUP BY t.team_id HAVING AVG(m.attendance) > {k}")
    return Spec(q, sql, "hard")


def f_title_kind(c: Ctx) -> Spec:
    kind = c.rng.choice(list(KIND_PHRASES))
    q = c.say("How many goals were scored {k}?", "How many goals came {k}?", k=KIND_PHRASES[kind])
    return Spec(q, f"SELECT COUNT(*) FROM goals WHERE kind = {lit(kind)}", "easy", TITLE,
                {"decisive": "goals"})


def f_title_late(c: Ctx) -> Spec:
    m = c.rng.choice([80, 85, 90])
    q = c.say("How many goals were scored after the {m}th minute?",
              "How many goals came later than minute {m}?", m=m)
    return Spec(q, f"SELECT COUNT(*) FROM goals WHERE minute > {m}", "easy", TITLE,
                {"decisive": "goals"})


def f_title_top(c: Ctx) -> Spec:
    q = c.say("Who has scored the most goals?", "Who is the league's leading scorer of goals?")
    sql = ("SELECT p.first_name, p.last_name, COUNT(*) AS n FROM goals AS g JOIN players AS p "
           "ON g.player_id = p.player_id GROUP BY p.player_id ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium", TITLE, {"decisive": "goals"})


def f_title_capacity(c: Ctx) -> Spec:
    cap = c.rng.choice([30000, 40000, 50000])
    q = c.say("How many stadiums can seat more than {k} fans?",
              "How many stadiums have a capacity above {k}?", k=f"{cap:,}")
    return Spec(q, f"SELECT COUNT(*) FROM stadiums WHERE capacity > {cap}", "easy", TITLE,
                {"decisive": "stadiums"})


def f_title_home_ground(c: Ctx) -> Spec:
    team = c.pick("teams")["name"]
    q = c.say("Which stadium does {t} play in?", "What is the name of the {t} stadium?", t=team)
    sql = ("SELECT s.name FROM teams AS t JOIN stadiums AS s ON t.venue_id = s.venue_id "
           f"WHERE t.name = {lit(team)}")
    return Spec(q, sql, "medium", TITLE, {"decisive": "stadium"})


def f_title_oldest(c: Ctx) -> Spec:
    q = c.say("Which stadium is the oldest?", "Which stadium opened first?")
    sql = "SELECT name, opened_year FROM stadiums ORDER BY opened_year LIMIT 1"
    return Spec(q, sql, "medium", TITLE, {"decisive": "stadium"})


def f_para_roster(c: Ctx) -> Spec:
    team = c.pick("teams")["name"]
    q = c.say("Who is on the {t} roster?", "Who lines up for {t}?", t=team)
    sql = ("SELECT p.first_name, p.last_name FROM players AS p JOIN teams AS t "
           f"ON p.team_id = t.team_id WHERE t.name = {lit(team)}")
    return Spec(q, sql, "medium", PARA)


def f_para_keepers(c: Ctx) -> Spec:
    team = c.pick("teams")["name"]
    q = c.say("Who guards the net for {t}?", "Who keeps goal for {t}?", t=team)
    sql = ("SELECT p.first_name, p.last_name FROM players AS p JOIN teams AS t "
           f"ON p.team_id = t.team_id WHERE t.name = {lit(team)} AND p.position = 'Goalkeeper'")
    return Spec(q, sql, "medium", PARA)


def f_para_born(c: Ctx) -> Spec:
    y = c.rng.choice([2003, 2004, 2005])
    q = c.say("Which footballers were born after {y}?", "Which squad members are younger than "
              "the class of {y}?", y=y)
    return Spec(q, f"SELECT first_name, last_name FROM players WHERE birth_date > '{y}-12-31'",
                "easy", PARA)


def f_deep_shirt(c: Ctx) -> Spec:
    p, evidence = c.deep("players", "last_name")
    q = c.say("What shirt number does {n} wear?", "Which number is on {n}'s shirt?", n=full_name(p))
    return Spec(q, f"SELECT shirt_number FROM players WHERE {who(p)}", "easy", DEEP,
                {"evidence": evidence})


def f_deep_club(c: Ctx) -> Spec:
    p, evidence = c.deep("players", "last_name")
    q = c.say("Which club does {n} play for?", "Which team is {n} on?", n=full_name(p))
    sql = ("SELECT t.name FROM players AS p JOIN teams AS t ON p.team_id = t.team_id "
           f"WHERE {who(p, 'p')}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


def f_deep_goals(c: Ctx) -> Spec:
    p, evidence = c.deep("players", "last_name")
    q = c.say("How many goals has {n} scored?", "What is {n}'s goal tally?", n=full_name(p))
    sql = ("SELECT COUNT(*) FROM players AS p JOIN goals AS g ON p.player_id = g.player_id "
           f"WHERE {who(p, 'p')}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


TEMPLATES: list[tuple[Template, int]] = [
    (f_biggest_crowd, 1), (f_draws, 1), (f_big_wins, 1), (f_home_wins, 2),
    (f_nationality, 2), (f_squad_shape, 1), (f_top_scorers, 1), (f_silent_forwards, 1),
    (f_venue_scorers, 2), (f_crowd_pullers, 2),
    (f_title_kind, 2), (f_title_late, 1), (f_title_top, 1), (f_title_capacity, 1),
    (f_title_home_ground, 1), (f_title_oldest, 1),
    (f_para_roster, 2), (f_para_keepers, 1), (f_para_born, 1),
    (f_deep_shirt, 2), (f_deep_club, 1), (f_deep_goals, 1),
]
