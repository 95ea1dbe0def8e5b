"""Question templates of the music streaming database, and how often each is used.

A template samples values with the Ctx and returns a Spec; framework.make_queries
resamples until the gold SQL returns rows and the failure mode holds.
"""

from __future__ import annotations

from .framework import (
    DEEP,
    PARA,
    SIB,
    TITLE,
    Ctx,
    Spec,
    Template,
    country_phrase,
    lit,
)


def m_artist_country(c: Ctx) -> Spec:
    country = c.pick("artists")["country"]
    q = c.say("How many artists come from {c}?", "How many artists are from {c}?",
              c=country_phrase(country))
    return Spec(q, f"SELECT COUNT(*) FROM artists WHERE country = {lit(country)}", "easy")


def m_longest(c: Ctx) -> Spec:
    n = c.rng.choice([3, 5])
    q = c.say("What are the {n} longest tracks?", "List the {n} tracks with the longest duration.",
              n=n)
    return Spec(q, f"SELECT title, duration_sec FROM tracks ORDER BY duration_sec DESC LIMIT {n}",
                "medium")


def m_label_albums(c: Ctx) -> Spec:
    label = c.pick("albums")["label"]
    q = c.say("Which albums were released on {l}?", "List the albums on the {l} label.",
              l=label)
    return Spec(q, f"SELECT title, release_year FROM albums WHERE label = {lit(label)}", "easy")


def m_explicit(c: Ctx) -> Spec:
    q = c.say("How many tracks are marked explicit?", "Count the explicit tracks.")
    return Spec(q, "SELECT COUNT(*) FROM tracks WHERE explicit = 1", "easy")


def m_prolific(c: Ctx) -> Spec:
    q = c.say("Which artists have released more than one album?",
              "List the artists with several albums.")
    sql = ("SELECT ar.name, COUNT(*) FROM artists AS ar JOIN albums AS al "
           "ON ar.artist_id = al.artist_id GROUP BY ar.artist_id HAVING COUNT(*) > 1")
    return Spec(q, sql, "hard")


def m_shared_countries(c: Ctx) -> Spec:
    q = c.say("Which countries are home to both artists and members?",
              "In which countries do we have artists as well as members?")
    return Spec(q, "SELECT country FROM artists INTERSECT SELECT country FROM members", "hard")


def m_genre_tracks(c: Ctx) -> Spec:
    genre = c.pick("artists")["genre"]
    q = c.say("How many tracks are there by {g} artists?",
              "How many tracks in the catalogue come from {g} artists?", g=genre)
    sql = ("SELECT COUNT(*) FROM tracks AS t JOIN albums AS al ON t.album_id = al.album_id "
           f"JOIN artists AS ar ON al.artist_id = ar.artist_id WHERE ar.genre = {lit(genre)}")
    return Spec(q, sql, "hard")


def m_artist_listeners(c: Ctx) -> Spec:
    artist = c.pick("artists", head=True)["name"]
    q = c.say("Which members listened to {a}?", "Which members have streamed a track by {a}?",
              a=artist)
    sql = ("SELECT DISTINCT m.username FROM members AS m JOIN plays AS p "
           "ON m.member_id = p.member_id JOIN tracks AS t ON p.track_id = t.track_id "
           "JOIN albums AS al ON t.album_id = al.album_id "
           f"JOIN artists AS ar ON al.artist_id = ar.artist_id WHERE ar.name = {lit(artist)}")
    return Spec(q, sql, "hard")


def m_sib_plan(c: Ctx) -> Spec:
    plan = c.pick("members")["plan"]
    q = c.say("How many subscribers are on the {p} plan?",
              "How many listeners use the {p} streaming plan?", p=plan)
    return Spec(q, f"SELECT COUNT(*) FROM members WHERE plan = {lit(plan)}", "easy", SIB)


def m_sib_joined(c: Ctx) -> Spec:
    year = c.pick("members")["join_date"][:4]
    q = c.say("How many subscribers signed up in {y}?", "How many listeners joined in {y}?",
              y=year)
    return Spec(q, f"SELECT COUNT(*) FROM members WHERE join_date LIKE '{year}-%'", "easy", SIB)


def m_sib_young(c: Ctx) -> Spec:
    y = c.rng.choice([1995, 2000, 2003])
    q = c.say("How many subscribers were born after {y}?",
              "How many listeners have a birth year later than {y}?", y=y)
    return Spec(q, f"SELECT COUNT(*) FROM members WHERE birth_year > {y}", "easy", SIB)


def m_sib_plan_track(c: Ctx) -> Spec:
    p = c.pick("plays")
    member = next(m for m in c.rows["members"] if m["member_id"] == p["member_id"])
    track = next(t for t in c.rows["tracks"] if t["track_id"] == p["track_id"])
    q = c.say('Which {p}-plan subscribers streamed "{t}"?',
              'Which listeners on the {p} plan have streamed "{t}"?', p=member["plan"],
              t=track["title"])
    sql = ("SELECT DISTINCT m.username FROM members AS m JOIN plays AS p "
           "ON m.member_id = p.member_id JOIN tracks AS t ON p.track_id = t.track_id "
           f"WHERE m.plan = {lit(member['plan'])} AND t.title = {lit(track['title'])}")
    return Spec(q, sql, "hard", SIB)


def m_title_track_plays(c: Ctx) -> Spec:
    track_id = c.pick("plays")["track_id"]
    track = next(t for t in c.rows["tracks"] if t["track_id"] == track_id)
    q = c.say('How many plays did "{t}" get?', 'How many plays has "{t}" racked up?',
              t=track["title"])
    sql = ("SELECT COUNT(*) FROM plays AS p JOIN tracks AS t ON p.track_id = t.track_id "
           f"WHERE t.title = {lit(track['title'])}")
    return Spec(q, sql, "medium", TITLE, {"decisive": "plays"})


def m_title_day(c: Ctx) -> Spec:
    day = c.pick("plays")["listened_on"]
    q = c.say("How many plays were logged on {d}?", "How many plays happened on {d}?", d=day)
    return Spec(q, f"SELECT COUNT(*) FROM plays WHERE listened_on = {lit(day)}", "easy", TITLE,
                {"decisive": "plays"})


def m_title_top_user(c: Ctx) -> Spec:
    q = c.say("Which user account has the most plays?", "Whose account racked up the most plays?")
    sql = ("SELECT m.username, COUNT(*) AS n FROM members AS m JOIN plays AS p "
           "ON m.member_id = p.member_id GROUP BY m.member_id ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium", TITLE, {"decisive": "plays"})


def m_para_songs(c: Ctx) -> Spec:
    n = c.rng.choice([5, 6, 7])
    q = c.say("Which songs run longer than {n} minutes?", "Which songs go on for over {n} "
              "minutes?", n=n)
    return Spec(q, f"SELECT title FROM tracks WHERE duration_sec > {n * 60}", "easy", PARA)


def m_para_records(c: Ctx) -> Spec:
    artist = c.pick("artists", head=True)["name"]
    q = c.say("Which records did {a} put out?", "What LPs has {a} made?", a=artist)
    sql = ("SELECT al.title FROM albums AS al JOIN artists AS ar ON al.artist_id = ar.artist_id "
           f"WHERE ar.name = {lit(artist)}")
    return Spec(q, sql, "medium", PARA)


def m_deep_length(c: Ctx) -> Spec:
    t, evidence = c.deep("tracks", "title")
    q = c.say('How long is "{t}" in seconds?', 'What is the running time of "{t}"?',
              t=t["title"])
    return Spec(q, f"SELECT duration_sec FROM tracks WHERE title = {lit(t['title'])}", "easy",
                DEEP, {"evidence": evidence})


def m_deep_album(c: Ctx) -> Spec:
    t, evidence = c.deep("tracks", "title")
    q = c.say('Which album is "{t}" on?', 'On which album does "{t}" appear?', t=t["title"])
    sql = ("SELECT al.title FROM tracks AS t JOIN albums AS al ON t.album_id = al.album_id "
           f"WHERE t.title = {lit(t['title'])}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


def m_deep_artist(c: Ctx) -> Spec:
    t, evidence = c.deep("tracks", "title")
    q = c.say('Who performs "{t}"?', 'Which artist recorded "{t}"?', t=t["title"])
    sql = ("SELECT ar.name FROM tracks AS t JOIN albums AS al ON t.album_id = al.album_id "
           f"JOIN artists AS ar ON al.artist_id = ar.artist_id WHERE t.title = {lit(t['title'])}")
    return Spec(q, sql, "hard", DEEP, {"evidence": evidence})


TEMPLATES: list[tuple[Template, int]] = [
    (m_artist_country, 2), (m_longest, 1), (m_label_albums, 2), (m_explicit, 1),
    (m_prolific, 1), (m_shared_countries, 1), (m_genre_tracks, 2),
    (m_artist_listeners, 2),
    (m_sib_plan, 2), (m_sib_joined, 1), (m_sib_young, 1), (m_sib_plan_track, 1),
    (m_title_track_plays, 2), (m_title_day, 1), (m_title_top_user, 1),
    (m_para_songs, 2), (m_para_records, 2),
    (m_deep_length, 1), (m_deep_album, 2), (m_deep_artist, 1),
]
