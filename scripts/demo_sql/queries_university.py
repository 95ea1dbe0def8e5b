"""Question templates of the university database, and how often each is used.

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
    usd,
    who,
)


def u_gpa_above(c: Ctx) -> Spec:
    g = c.rng.choice([3.4, 3.5, 3.6, 3.7, 3.8])
    q = c.say("How many students have a GPA above {g}?",
              "Count the students whose GPA is higher than {g}.",
              "What number of students hold a grade point average over {g}?", g=g)
    return Spec(q, f"SELECT COUNT(*) FROM students WHERE gpa > {g}", "easy")


def u_course_credits(c: Ctx) -> Spec:
    n = c.rng.choice([2, 3, 4, 5])
    q = c.say("Which courses are worth {n} credits?", "List the courses that carry {n} credits.",
              "Name every {n}-credit course.", n=n)
    return Spec(q, f"SELECT code, title FROM courses WHERE credits = {n}", "easy")


def u_course_teacher(c: Ctx) -> Spec:
    course = c.pick("courses", head=True)
    q = c.say("Who teaches {title}?", "Which instructor is responsible for {code} ({title})?",
              "Who is the instructor of the course {code}?", title=course["title"],
              code=course["code"])
    sql = ("SELECT i.first_name, i.last_name FROM courses AS c JOIN instructors AS i "
           f"ON c.instructor_id = i.instructor_id WHERE c.code = {lit(course['code'])}")
    return Spec(q, sql, "medium")


def u_entry_years(c: Ctx) -> Spec:
    q = c.say("How many students entered in each year?",
              "Break down the number of students by entry year.",
              "For every entry year, how many students started?")
    sql = "SELECT entry_year, COUNT(*) FROM students GROUP BY entry_year ORDER BY entry_year"
    return Spec(q, sql, "medium")


def u_top_course(c: Ctx) -> Spec:
    term = c.rng.choice(V.TERMS)
    q = c.say("Which course had the most students enrolled in {term}?",
              "What was the most popular course in {term}?", term=term)
    sql = ("SELECT c.title, COUNT(*) AS n FROM enrollments AS e JOIN courses AS c "
           f"ON e.course_id = c.course_id WHERE e.term = {lit(term)} "
           "GROUP BY c.course_id ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium")


def u_students_of(c: Ctx) -> Spec:
    t = c.pick("instructors", head=True)
    q = c.say("Which students take a course taught by {name}?",
              "List the students enrolled in any class that {name} teaches.", name=full_name(t))
    sql = ("SELECT DISTINCT s.first_name, s.last_name FROM students AS s "
           "JOIN enrollments AS e ON s.student_id = e.student_id "
           "JOIN courses AS c ON e.course_id = c.course_id "
           f"JOIN instructors AS i ON c.instructor_id = i.instructor_id WHERE {who(t, 'i')}")
    return Spec(q, sql, "hard")


def u_big_departments(c: Ctx) -> Spec:
    counts = Counter(t["dept_id"] for t in c.rows["instructors"])
    k = int(threshold(counts.values(), c.rng, (1, 3)))
    q = c.say("Which departments employ more than {k} instructors?",
              "Name the departments with over {k} instructors on staff.", k=k)
    sql = ("SELECT d.name, COUNT(*) FROM departments AS d JOIN instructors AS i "
           f"ON d.dept_id = i.dept_id GROUP BY d.dept_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def u_above_average(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("Which {d} majors have a GPA above the average of all students?",
              "List the {d} students whose GPA beats the overall average.", d=dept["name"])
    sql = ("SELECT s.first_name, s.last_name, s.gpa FROM students AS s JOIN departments AS d "
           f"ON s.major_id = d.dept_id WHERE d.name = {lit(dept['name'])} "
           "AND s.gpa > (SELECT AVG(gpa) FROM students)")
    return Spec(q, sql, "hard")


def u_multi_course(c: Ctx) -> Spec:
    q = c.say("Which instructors teach more than one course?",
              "Who is teaching several courses at once?")
    sql = ("SELECT i.first_name, i.last_name, COUNT(*) FROM instructors AS i JOIN courses AS c "
           "ON i.instructor_id = c.instructor_id GROUP BY i.instructor_id HAVING COUNT(*) > 1")
    return Spec(q, sql, "hard")


def u_outside_major(c: Ctx) -> Spec:
    term = c.rng.choice(V.TERMS)
    q = c.say("Which students took a course outside their own major in {term}?",
              "In {term}, which students enrolled in a course from a department other than "
              "their major?", term=term)
    sql = ("SELECT DISTINCT s.first_name, s.last_name FROM students AS s "
           "JOIN enrollments AS e ON s.student_id = e.student_id "
           "JOIN courses AS c ON e.course_id = c.course_id "
           f"WHERE e.term = {lit(term)} AND c.dept_id <> s.major_id")
    return Spec(q, sql, "hard")


def u_no_credit_level(c: Ctx) -> Spec:
    n = c.rng.choice([2, 5])
    q = c.say("Which departments offer no {n}-credit courses?",
              "List the departments that have no course worth {n} credits.", n=n)
    sql = ("SELECT name FROM departments EXCEPT SELECT d.name FROM departments AS d "
           f"JOIN courses AS c ON d.dept_id = c.dept_id WHERE c.credits = {n}")
    return Spec(q, sql, "hard")


def u_para_study(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("How many undergraduates are studying {d}?",
              "What is the headcount of undergraduates pursuing {d}?",
              "How many undergrads chose {d} as their field?", d=dept["name"])
    sql = ("SELECT COUNT(*) FROM students AS s JOIN departments AS d ON s.major_id = d.dept_id "
           f"WHERE d.name = {lit(dept['name'])}")
    return Spec(q, sql, "medium", PARA)


def u_para_earn(c: Ctx) -> Spec:
    x = c.rng.choice([120000, 150000, 170000])
    q = c.say("Which faculty make more than {x} a year?",
              "Which teaching staff earn over {x} annually?",
              "Who on the faculty is paid above {x}?", x=usd(x))
    return Spec(q, f"SELECT first_name, last_name FROM instructors WHERE salary > {x}", "easy",
                PARA)


def u_deep_gpa(c: Ctx) -> Spec:
    s, evidence = c.deep("students", "last_name")
    q = c.say("What is {n}'s GPA?", "What grade point average does {n} have?",
              "Look up the GPA of {n}.", n=full_name(s))
    return Spec(q, f"SELECT gpa FROM students WHERE {who(s)}", "easy", DEEP,
                {"evidence": evidence})


def u_deep_courses(c: Ctx) -> Spec:
    s, evidence = c.deep("students", "last_name")
    q = c.say("Which courses is {n} enrolled in?", "What classes has {n} signed up for?",
              n=full_name(s))
    sql = ("SELECT c.title, e.term FROM students AS s "
           "JOIN enrollments AS e ON s.student_id = e.student_id "
           f"JOIN courses AS c ON e.course_id = c.course_id WHERE {who(s, 's')}")
    return Spec(q, sql, "hard", DEEP, {"evidence": evidence})


def u_title_term(c: Ctx) -> Spec:
    term = c.rng.choice(V.TERMS)
    q = c.say("How many enrollments were recorded for {t}?", "Count the enrollments in {t}.",
              "What is the number of enrollments in {t}?", t=term)
    return Spec(q, f"SELECT COUNT(*) FROM enrollments WHERE term = {lit(term)}", "easy", TITLE,
                {"decisive": "enrollments"})


def u_title_grade(c: Ctx) -> Spec:
    grade = c.rng.choice(["A", "B", "C", "F"])
    q = c.say("How many enrollments ended with a final grade of {g}?",
              "How many enrollments were graded {g}?", g=grade)
    return Spec(q, f"SELECT COUNT(*) FROM enrollments WHERE grade = {lit(grade)}", "easy",
                TITLE, {"decisive": "enrollments"})


def u_title_busiest_term(c: Ctx) -> Spec:
    q = c.say("Which term had the most enrollments?",
              "In which term were enrollments highest?")
    sql = "SELECT term, COUNT(*) AS n FROM enrollments GROUP BY term ORDER BY n DESC LIMIT 1"
    return Spec(q, sql, "medium", TITLE, {"decisive": "enrollments"})


def u_sib_budget(c: Ctx) -> Spec:
    b = threshold((d["budget"] for d in c.rows["departments"]), c.rng, (2, 5))
    q = c.say("Which academic departments have a budget above {b}?",
              "List the faculties of study with budgets over {b}.",
              "Which departments of the college receive more than {b} in funding?", b=usd(b))
    return Spec(q, f"SELECT name, budget FROM departments WHERE budget > {b}", "easy", SIB)


def u_sib_building(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("Which academic department is housed in {b}?",
              "Which field of study has its home in {b}?", b=dept["building"])
    return Spec(q, f"SELECT name FROM departments WHERE building = {lit(dept['building'])}",
                "easy", SIB)


def u_sib_founded(c: Ctx) -> Spec:
    y = int(threshold((-d["founded_year"] for d in c.rows["departments"]), c.rng, (2, 5)))
    q = c.say("Which academic departments were founded before {y}?",
              "Which faculties of the college date from before {y}?", y=-y)
    return Spec(q, f"SELECT name, founded_year FROM departments WHERE founded_year < {-y}",
                "easy", SIB)


def u_sib_most_faculty(c: Ctx) -> Spec:
    q = c.say("Which academic department has the most teaching staff?",
              "Which field of study employs the largest teaching faculty?")
    sql = ("SELECT d.name, COUNT(*) AS n FROM departments AS d JOIN instructors AS i "
           "ON d.dept_id = i.dept_id GROUP BY d.dept_id ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium", SIB)


TEMPLATES: list[tuple[Template, int]] = [
    (u_gpa_above, 2), (u_course_credits, 2), (u_course_teacher, 2), (u_entry_years, 1),
    (u_top_course, 2), (u_students_of, 2), (u_big_departments, 1), (u_above_average, 2),
    (u_multi_course, 1), (u_outside_major, 1), (u_no_credit_level, 1),
    (u_para_study, 2), (u_para_earn, 2), (u_deep_gpa, 2), (u_deep_courses, 2),
    (u_title_term, 2), (u_title_grade, 1), (u_title_busiest_term, 1),
    (u_sib_budget, 1), (u_sib_building, 1), (u_sib_founded, 1), (u_sib_most_faculty, 1),
]
