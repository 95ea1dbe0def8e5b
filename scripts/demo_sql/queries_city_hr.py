"""Question templates of the city HR database, and how often each is used.

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


def c_hired_in(c: Ctx) -> Spec:
    year = c.pick("employees")["hire_date"][:4]
    q = c.say("How many employees were hired in {y}?", "How many people joined the workforce "
              "in {y}?", y=year)
    return Spec(q, f"SELECT COUNT(*) FROM employees WHERE hire_date LIKE '{year}-%'", "easy")


def c_pay_by_type(c: Ctx) -> Spec:
    q = c.say("What is the average salary for each employment type?",
              "Compare the average salary of full-time, part-time and seasonal employees.")
    sql = ("SELECT employment_type, ROUND(AVG(salary), 2) FROM employees "
           "GROUP BY employment_type")
    return Spec(q, sql, "medium")


def c_grade(c: Ctx) -> Spec:
    grade = c.pick("positions")["pay_grade"]
    q = c.say("Which positions are on pay grade {g}?", "List the job titles in grade {g}.",
              g=grade)
    return Spec(q, f"SELECT title FROM positions WHERE pay_grade = {lit(grade)}", "easy")


def c_biggest_position(c: Ctx) -> Spec:
    q = c.say("Which position has the most employees?", "What is the most common job title?")
    sql = ("SELECT p.title, COUNT(*) AS n FROM employees AS e JOIN positions AS p "
           "ON e.position_id = p.position_id GROUP BY p.position_id ORDER BY n DESC LIMIT 1")
    return Spec(q, sql, "medium")


def c_rich_departments(c: Ctx) -> Spec:
    q = c.say("Which departments pay an average salary above the overall average?",
              "In which departments is the mean salary higher than across all employees?")
    sql = ("SELECT d.name, AVG(e.salary) FROM departments AS d JOIN employees AS e "
           "ON d.dept_id = e.dept_id GROUP BY d.dept_id "
           "HAVING AVG(e.salary) > (SELECT AVG(salary) FROM employees)")
    return Spec(q, sql, "hard")


def c_never_off(c: Ctx) -> Spec:
    dept = c.pick("departments")["name"]
    q = c.say("Which employees in {d} have never requested leave?",
              "Who in {d} has not filed a single leave request?", d=dept)
    sql = ("SELECT e.first_name, e.last_name FROM employees AS e JOIN departments AS d "
           f"ON e.dept_id = d.dept_id WHERE d.name = {lit(dept)} "
           "AND e.employee_id NOT IN (SELECT employee_id FROM leave_requests)")
    return Spec(q, sql, "hard")


def c_certified_and_off(c: Ctx) -> Spec:
    status = c.rng.choice(["Approved", "Pending"])
    q = c.say("Which employees hold a certification and have an {s} leave request?",
              "Who is certified and also has a leave request that is {s}?", s=status.lower())
    sql = ("SELECT e.first_name, e.last_name FROM employees AS e JOIN certifications AS c "
           "ON e.employee_id = c.employee_id INTERSECT SELECT e.first_name, e.last_name "
           "FROM employees AS e JOIN leave_requests AS l ON e.employee_id = l.employee_id "
           f"WHERE l.status = {lit(status)}")
    return Spec(q, sql, "hard")


def c_fulltime_depts(c: Ctx) -> Spec:
    counts = Counter(e["dept_id"] for e in c.rows["employees"]
                     if e["employment_type"] == "Full-time")
    k = int(threshold(counts.values(), c.rng, (1, 4)))
    q = c.say("Which departments have more than {k} full-time employees?",
              "List the departments with over {k} full-time staff.", k=k)
    sql = ("SELECT d.name, COUNT(*) FROM departments AS d JOIN employees AS e "
           "ON d.dept_id = e.dept_id WHERE e.employment_type = 'Full-time' "
           f"GROUP BY d.dept_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def c_sib_kind(c: Ctx) -> Spec:
    kind = c.rng.choice(["Seasonal", "Part-time"])
    q = c.say("How many {k} staff are on the municipal payroll?",
              "How many municipal workers are employed on a {k} basis?", k=kind.lower())
    return Spec(q, f"SELECT COUNT(*) FROM employees WHERE employment_type = {lit(kind)}", "easy",
                SIB)


def c_sib_hired_after(c: Ctx) -> Spec:
    year = c.rng.choice([2015, 2018, 2020, 2022])
    q = c.say("How many municipal workers were hired after {y}?",
              "How many civil servants has the municipality taken on since {y}?", y=year)
    return Spec(q, f"SELECT COUNT(*) FROM employees WHERE hire_date > '{year}-12-31'", "easy",
                SIB)


def c_sib_dept_pay(c: Ctx) -> Spec:
    dept = c.pick("departments")["name"]
    q = c.say("What is the average salary of municipal staff in {d}?",
              "What do civil servants in {d} earn on average?", d=dept)
    sql = ("SELECT AVG(e.salary) FROM employees AS e JOIN departments AS d "
           f"ON e.dept_id = d.dept_id WHERE d.name = {lit(dept)}")
    return Spec(q, sql, "medium", SIB)


def c_sib_budget(c: Ctx) -> Spec:
    b = threshold((d["annual_budget"] for d in c.rows["departments"]), c.rng, (2, 5))
    q = c.say("Which municipal departments have an annual budget above {b}?",
              "Which public service departments are funded with more than {b} a year?",
              b=usd(b))
    return Spec(q, f"SELECT name, annual_budget FROM departments WHERE annual_budget > {b}",
                "easy", SIB)


def c_sib_director(c: Ctx) -> Spec:
    dept = c.pick("departments")["name"]
    q = c.say("Who runs {d} for the municipality?", "Who is the municipal director of {d}?",
              d=dept)
    return Spec(q, f"SELECT director FROM departments WHERE name = {lit(dept)}", "easy", SIB)


def c_title_status(c: Ctx) -> Spec:
    status = c.rng.choice(["Approved", "Pending", "Denied"])
    q = c.say("How many leave requests are {s}?", "How many requests for leave were {s}?",
              s=status.lower())
    return Spec(q, f"SELECT COUNT(*) FROM leave_requests WHERE status = {lit(status)}", "easy",
                TITLE, {"decisive": "leave"})


def c_title_category(c: Ctx) -> Spec:
    category = c.rng.choice(["Parental", "Bereavement", "Jury Duty"])
    q = c.say("Who took {k} leave?", "Which employees went on {k} leave?", k=category.lower())
    sql = ("SELECT e.first_name, e.last_name, l.start_date FROM employees AS e "
           "JOIN leave_requests AS l ON e.employee_id = l.employee_id "
           f"WHERE l.category = {lit(category)}")
    return Spec(q, sql, "medium", TITLE, {"decisive": "leave"})


def c_title_month(c: Ctx) -> Spec:
    month = c.rng.randint(1, 12)
    q = c.say("How many periods of leave start in {m} 2024?",
              "How many leave requests begin in {m} 2024?", m=V.MONTHS[month - 1])
    sql = f"SELECT COUNT(*) FROM leave_requests WHERE start_date LIKE '2024-{month:02d}-%'"
    return Spec(q, sql, "easy", TITLE, {"decisive": "leave"})


def c_title_expire(c: Ctx) -> Spec:
    year = c.pick("certifications")["expires_on"][:4]
    q = c.say("How many certifications expire in {y}?", "How many certifications lapse in {y}?",
              y=year)
    return Spec(q, f"SELECT COUNT(*) FROM certifications WHERE expires_on LIKE '{year}-%'",
                "easy", TITLE, {"decisive": "certifications"})


def c_title_holders(c: Ctx) -> Spec:
    credential = c.pick("certifications")["credential"]
    q = c.say("Who holds a {k} certification?", "Which employees have the {k} certification?",
              k=credential)
    sql = ("SELECT e.first_name, e.last_name FROM employees AS e JOIN certifications AS c "
           f"ON e.employee_id = c.employee_id WHERE c.credential = {lit(credential)}")
    return Spec(q, sql, "medium", TITLE, {"decisive": "certification"})


def c_para_headcount(c: Ctx) -> Spec:
    dept = c.pick("departments")["name"]
    q = c.say("What is the headcount of {d}?", "How many people work for {d}?", d=dept)
    sql = ("SELECT COUNT(*) FROM employees AS e JOIN departments AS d ON e.dept_id = d.dept_id "
           f"WHERE d.name = {lit(dept)}")
    return Spec(q, sql, "medium", PARA)


def c_para_ceiling(c: Ctx) -> Spec:
    q = c.say("Who is compensated above the ceiling for their role?",
              "Which staff earn beyond the top of their band?")
    sql = ("SELECT e.first_name, e.last_name, e.salary, p.max_salary FROM employees AS e "
           "JOIN positions AS p ON e.position_id = p.position_id WHERE e.salary > p.max_salary")
    return Spec(q, sql, "medium", PARA)


def c_para_top_earner(c: Ctx) -> Spec:
    dept = c.pick("departments")["name"]
    q = c.say("Who earns the most in {d}?", "Who is the best-compensated person in {d}?", d=dept)
    sql = ("SELECT e.first_name, e.last_name, e.salary FROM employees AS e JOIN departments AS d "
           f"ON e.dept_id = d.dept_id WHERE d.name = {lit(dept)} ORDER BY e.salary DESC LIMIT 1")
    return Spec(q, sql, "medium", PARA)


def c_deep_hired(c: Ctx) -> Spec:
    e, evidence = c.deep("employees", "last_name")
    q = c.say("When was {n} hired?", "On what date did {n} start work?", n=full_name(e))
    return Spec(q, f"SELECT hire_date FROM employees WHERE {who(e)}", "easy", DEEP,
                {"evidence": evidence})


def c_deep_position(c: Ctx) -> Spec:
    e, evidence = c.deep("employees", "last_name")
    q = c.say("What job does {n} hold?", "What is {n}'s job title?", n=full_name(e))
    sql = ("SELECT p.title FROM employees AS e JOIN positions AS p "
           f"ON e.position_id = p.position_id WHERE {who(e, 'e')}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


def c_deep_dept(c: Ctx) -> Spec:
    e, evidence = c.deep("employees", "last_name")
    q = c.say("Which department does {n} work in?", "Where does {n} work?", n=full_name(e))
    sql = ("SELECT d.name FROM employees AS e JOIN departments AS d ON e.dept_id = d.dept_id "
           f"WHERE {who(e, 'e')}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


TEMPLATES: list[tuple[Template, int]] = [
    (c_hired_in, 2), (c_pay_by_type, 1), (c_grade, 1), (c_biggest_position, 1),
    (c_rich_departments, 1), (c_never_off, 2), (c_certified_and_off, 1),
    (c_fulltime_depts, 1),
    (c_sib_kind, 2), (c_sib_hired_after, 1), (c_sib_dept_pay, 2), (c_sib_budget, 1),
    (c_sib_director, 1),
    (c_title_status, 2), (c_title_category, 1), (c_title_month, 1), (c_title_expire, 1),
    (c_title_holders, 1),
    (c_para_headcount, 2), (c_para_ceiling, 1), (c_para_top_earner, 1),
    (c_deep_hired, 2), (c_deep_position, 1), (c_deep_dept, 1),
]
