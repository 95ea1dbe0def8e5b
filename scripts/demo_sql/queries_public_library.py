"""Question templates of the public library database, and how often each is used.

A template samples values with the Ctx and returns a Spec; framework.make_queries
resamples until the gold SQL returns rows and the failure mode holds.
"""

from __future__ import annotations

from collections import Counter

from . import vocab as V
from .framework import (
    DEEP,
    PARA,
    SIB,
    TITLE,
    Ctx,
    Spec,
    Template,
    full_name,
    lit,
    threshold,
    who,
    with_article,
)


def l_genre_count(c: Ctx) -> Spec:
    genre = c.pick("books")["genre"]
    q = c.say("How many {g} books are in the collection?", "Count the books in the {g} genre.",
              g=genre)
    return Spec(q, f"SELECT COUNT(*) FROM books WHERE genre = {lit(genre)}", "easy")


def l_top_genre(c: Ctx) -> Spec:
    q = c.say("Which genre has the most books?", "What is the best-stocked genre?")
    sql = "SELECT genre, COUNT(*) AS n FROM books GROUP BY genre ORDER BY n DESC LIMIT 1"
    return Spec(q, sql, "medium")


def l_prolific_authors(c: Ctx) -> Spec:
    counts = Counter(b["author_id"] for b in c.rows["books"])
    k = int(threshold(counts.values(), c.rng, (2, 5)))
    q = c.say("Which authors have more than {k} books in the collection?",
              "List the authors with over {k} titles on the shelves.", k=k)
    sql = ("SELECT a.first_name, a.last_name, COUNT(*) FROM authors AS a JOIN books AS b "
           f"ON a.author_id = b.author_id GROUP BY a.author_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def l_never_out(c: Ctx) -> Spec:
    q = c.say("Which books have never been checked out?",
              "List the books that nobody has ever checked out.")
    sql = "SELECT title FROM books WHERE book_id NOT IN (SELECT book_id FROM loans)"
    return Spec(q, sql, "hard")


def l_branch_books(c: Ctx) -> Spec:
    branch = c.pick("branches")
    q = c.say("How many books are shelved at the {b} branch?",
              "How many books does the {b} branch hold?", b=branch["name"])
    sql = ("SELECT COUNT(*) FROM books AS b JOIN branches AS br ON b.branch_id = br.branch_id "
           f"WHERE br.name = {lit(branch['name'])}")
    return Spec(q, sql, "medium")


def l_late_returns(c: Ctx) -> Spec:
    q = c.say("Which members returned a book after its due date?",
              "Who brought a book back late?")
    sql = ("SELECT DISTINCT m.first_name, m.last_name FROM members AS m JOIN loans AS l "
           "ON m.member_id = l.member_id WHERE l.returned_on > l.due_date")
    return Spec(q, sql, "medium")


def l_author_readers(c: Ctx) -> Spec:
    a = c.pick("authors", head=True)
    q = c.say("Which members have borrowed books by {n}?",
              "Who has checked out a book written by {n}?", n=full_name(a))
    sql = ("SELECT DISTINCT m.first_name, m.last_name FROM members AS m "
           "JOIN loans AS l ON m.member_id = l.member_id JOIN books AS b ON l.book_id = b.book_id "
           f"JOIN authors AS a ON b.author_id = a.author_id WHERE {who(a, 'a')}")
    return Spec(q, sql, "hard")


def l_big_branches(c: Ctx) -> Spec:
    q = c.say("Which branches hold more books than the average branch?",
              "List the branches with an above-average number of books.")
    sql = ("SELECT br.name, COUNT(*) FROM branches AS br JOIN books AS b "
           "ON br.branch_id = b.branch_id GROUP BY br.branch_id "
           "HAVING COUNT(*) > (SELECT COUNT(*) * 1.0 / COUNT(DISTINCT branch_id) FROM books)")
    return Spec(q, sql, "hard")


def l_sib_type(c: Ctx) -> Spec:
    kind = c.pick("members")["membership_type"]
    q = c.say("How many patrons hold {k} card?", "How many card holders have {k} membership?",
              k=with_article(kind.lower()))
    return Spec(q, f"SELECT COUNT(*) FROM members WHERE membership_type = {lit(kind)}", "easy",
                SIB)


def l_sib_joined(c: Ctx) -> Spec:
    year = c.pick("members")["join_date"][:4]
    q = c.say("How many patrons got their reader card in {y}?",
              "How many card holders signed up at a branch in {y}?", y=year)
    return Spec(q, f"SELECT COUNT(*) FROM members WHERE join_date LIKE '{year}-%'", "easy", SIB)


def l_sib_home_branch(c: Ctx) -> Spec:
    branch = c.pick("branches")
    q = c.say("How many patrons have {b} as their home branch?",
              "How many card holders call the {b} branch home?", b=branch["name"])
    sql = ("SELECT COUNT(*) FROM members AS m JOIN branches AS b ON m.home_branch_id = "
           f"b.branch_id WHERE b.name = {lit(branch['name'])}")
    return Spec(q, sql, "medium", SIB)


def l_title_outstanding(c: Ctx) -> Spec:
    q = c.say("How many loans are still outstanding?", "How many loans have not been returned "
              "yet?")
    return Spec(q, "SELECT COUNT(*) FROM loans WHERE returned_on IS NULL", "easy", TITLE,
                {"decisive": "loans"})


def l_title_month(c: Ctx) -> Spec:
    month = c.rng.randint(1, 12)
    q = c.say("How many loans were made in {m} 2024?", "How many loans started in {m} 2024?",
              m=V.MONTHS[month - 1])
    sql = f"SELECT COUNT(*) FROM loans WHERE checkout_date LIKE '2024-{month:02d}-%'"
    return Spec(q, sql, "easy", TITLE, {"decisive": "loans"})


def l_title_late(c: Ctx) -> Spec:
    q = c.say("How many loans came back after the due date?",
              "How many loans were returned late?")
    return Spec(q, "SELECT COUNT(*) FROM loans WHERE returned_on > due_date", "easy", TITLE,
                {"decisive": "loans"})


def l_title_top_member(c: Ctx) -> Spec:
    q = c.say("Which member has the most loans?", "Who holds the record for the most loans?")
    sql = ("SELECT m.first_name, m.last_name, COUNT(*) AS n FROM members AS m JOIN loans AS l "
           "ON m.member_id = l.member_id GROUP BY m.member_id ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium", TITLE, {"decisive": "loans"})


def l_para_borrowed(c: Ctx) -> Spec:
    b = c.pick("books", head=True)
    q = c.say('Who borrowed "{t}"?', 'Which readers took out "{t}"?', t=b["title"])
    sql = ("SELECT DISTINCT m.first_name, m.last_name FROM members AS m "
           "JOIN loans AS l ON m.member_id = l.member_id JOIN books AS b ON l.book_id = b.book_id "
           f"WHERE b.title = {lit(b['title'])}")
    return Spec(q, sql, "hard", PARA)


def l_para_written(c: Ctx) -> Spec:
    a = c.pick("authors", head=True)
    q = c.say("Which novels did {n} write?", "What has {n} written?", n=full_name(a))
    sql = ("SELECT b.title FROM books AS b JOIN authors AS a ON b.author_id = a.author_id "
           f"WHERE {who(a, 'a')}")
    return Spec(q, sql, "medium", PARA)


def l_deep_author(c: Ctx) -> Spec:
    b, evidence = c.deep("books", "title")
    q = c.say('Who wrote "{t}"?', 'Who is the author of "{t}"?', t=b["title"])
    sql = ("SELECT a.first_name, a.last_name FROM books AS b JOIN authors AS a "
           f"ON b.author_id = a.author_id WHERE b.title = {lit(b['title'])}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


def l_deep_year(c: Ctx) -> Spec:
    b, evidence = c.deep("books", "title")
    q = c.say('When was "{t}" published?', 'In what year did "{t}" come out?', t=b["title"])
    return Spec(q, f"SELECT published_year FROM books WHERE title = {lit(b['title'])}", "easy",
                DEEP, {"evidence": evidence})


def l_deep_home(c: Ctx) -> Spec:
    m, evidence = c.deep("members", "last_name")
    q = c.say("Which branch is {n}'s home branch?", "Where is {n} registered as a member?",
              n=full_name(m))
    sql = ("SELECT b.name FROM members AS m JOIN branches AS b ON m.home_branch_id = b.branch_id "
           f"WHERE {who(m, 'm')}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


TEMPLATES: list[tuple[Template, int]] = [
    (l_genre_count, 2), (l_top_genre, 1), (l_prolific_authors, 1), (l_never_out, 1),
    (l_branch_books, 2), (l_late_returns, 1), (l_author_readers, 2), (l_big_branches, 1),
    (l_sib_type, 2), (l_sib_joined, 1), (l_sib_home_branch, 2),
    (l_title_outstanding, 1), (l_title_month, 1), (l_title_late, 1),
    (l_title_top_member, 1), (l_para_borrowed, 2), (l_para_written, 2),
    (l_deep_author, 2), (l_deep_year, 1), (l_deep_home, 1),
]
