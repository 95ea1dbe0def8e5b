"""Row generators of the public-service databases: university, hospital, public_library
and city_hr. Each takes its own seeded Random and returns {table: [row, ...]} with the
columns in schema order.
"""

from __future__ import annotations

import random

from . import vocab as V
from .values import Row, Rows, distinct_people, money, plus_days, random_day, weighted_choice


def gen_university(rng: random.Random) -> Rows:
    departments = [{"dept_id": i, "name": name, "building": building,
                    "budget": float(rng.randrange(900, 6000, 25) * 1000),
                    "founded_year": rng.randint(1885, 1990)}
                   for i, (name, _, building) in enumerate(V.UNI_DEPARTMENTS, 1)]
    instructors = []
    for i, (first, last) in enumerate(distinct_people(rng, 45), 1):
        rank, _, low, high = weighted_choice(rng, V.UNI_RANKS)
        instructors.append({
            "instructor_id": i, "first_name": first, "last_name": last,
            "dept_id": i if i <= len(departments) else rng.randint(1, len(departments)),
            "rank": rank, "salary": money(rng, low, high, 500),
            "hire_date": random_day(rng, "1994-07-01", "2024-08-15")})
    students = [{"student_id": 1000 + i, "first_name": first, "last_name": last,
                 "major_id": rng.randint(1, len(departments)),
                 "entry_year": rng.randint(2019, 2024),
                 "gpa": round(min(4.0, max(1.7, rng.gauss(3.1, 0.45))), 2),
                 "hometown": rng.choice(V.TOWNS)}
                for i, (first, last) in enumerate(distinct_people(rng, 160), 1)]
    courses = []
    for dept, (name, prefix, _) in zip(departments, V.UNI_DEPARTMENTS, strict=True):
        staff = [t["instructor_id"] for t in instructors if t["dept_id"] == dept["dept_id"]]
        for level, title in enumerate(V.UNI_COURSES[name], 1):
            courses.append({"course_id": len(courses) + 1,
                            "code": f"{prefix}{level * 100 + rng.randint(1, 60)}",
                            "title": title, "dept_id": dept["dept_id"],
                            "credits": rng.choice([2, 3, 3, 4, 4, 5]),
                            "instructor_id": rng.choice(staff)})
    grades = [(g, w) for g, w in V.GRADES]
    enrollments: dict[tuple[int, int, str], Row] = {}
    while len(enrollments) < 300:
        key = (rng.choice(students)["student_id"], rng.choice(courses)["course_id"],
               rng.choice(V.TERMS))
        enrollments.setdefault(key, {"student_id": key[0], "course_id": key[1],
                                     "term": key[2], "grade": weighted_choice(rng, grades)[0]})
    return {"departments": departments, "instructors": instructors, "students": students,
            "courses": courses, "enrollments": list(enrollments.values())}


def gen_hospital(rng: random.Random) -> Rows:
    names = list(V.HOSPITAL_DEPARTMENTS)
    departments = [{"dept_id": i, "name": name, "floor": rng.randint(1, 7),
                    "phone_ext": str(rng.randint(2000, 7999))}
                   for i, name in enumerate(names, 1)]
    roles = {role: (low, high) for role, _, low, high in V.HOSPITAL_ROLES}
    employees = []
    for i, (first, last) in enumerate(distinct_people(rng, 90), 1):
        # The first ten are one physician per department, so every ward has an attending.
        role = "Physician" if i <= len(names) else weighted_choice(rng, V.HOSPITAL_ROLES)[0]
        employees.append({
            "employee_id": i, "first_name": first, "last_name": last, "role": role,
            "dept_id": i if i <= len(names) else rng.randint(1, len(names)),
            "hire_date": random_day(rng, "2004-01-01", "2024-10-31"), "shift": rng.choice(V.SHIFTS),
            "salary": money(rng, *roles[role], 100)})
    patients = [{"patient_id": 5000 + i, "first_name": first, "last_name": last,
                 "birth_date": random_day(rng, "1932-01-01", "2022-12-31"), "sex": rng.choice("FM"),
                 "blood_type": weighted_choice(rng, V.BLOOD_TYPES)[0], "city": rng.choice(V.TOWNS)}
                for i, (first, last) in enumerate(distinct_people(rng, 140), 1)]
    doctors = {d["dept_id"]: [e["employee_id"] for e in employees
                              if e["dept_id"] == d["dept_id"]
                              and e["role"] in ("Physician", "Surgeon")] for d in departments}
    admissions = []
    for i in range(1, 201):
        dept = rng.choice(departments)
        admit = random_day(rng, "2022-01-01", "2024-12-20")
        admissions.append({
            "stay_id": 20000 + i, "patient_id": rng.choice(patients)["patient_id"],
            "dept_id": dept["dept_id"], "attending_id": rng.choice(doctors[dept["dept_id"]]),
            "admit_date": admit,
            "discharge_date": None if rng.random() < 0.06 else plus_days(admit, rng.randint(1, 21)),
            "diagnosis": rng.choice(V.HOSPITAL_DEPARTMENTS[dept["name"]])})
    prescriptions = []
    for i in range(1, 261):
        drug, doses, per_day = rng.choice(V.DRUGS)
        days = rng.choice([3, 5, 7, 10, 14, 30])
        prescriptions.append({"rx_id": i, "stay_id": rng.choice(admissions)["stay_id"],
                              "drug": drug, "dose_mg": rng.choice(doses), "days_supply": days,
                              "cost": round(per_day * days * rng.uniform(0.8, 1.6) + 4, 2)})
    return {"departments": departments, "employees": employees, "patients": patients,
            "admissions": admissions, "prescriptions": prescriptions}


def _book_titles(rng: random.Random, n: int) -> list[str]:
    titles: dict[str, None] = {}
    while len(titles) < n:
        pattern = rng.randrange(3)
        if pattern == 0:
            title = f"The {rng.choice(V.TITLE_ADJECTIVES)} {rng.choice(V.TITLE_NOUNS)}"
        elif pattern == 1:
            title = f"The {rng.choice(V.TITLE_NOUNS)} of {rng.choice(V.TITLE_PLACES)}"
        else:
            noun = rng.choice(V.TITLE_NOUNS)
            title = f"{rng.choice(V.TITLE_ADJECTIVES)} {noun}{'es' if noun.endswith('s') else 's'}"
        titles[title] = None
    return list(titles)


def gen_public_library(rng: random.Random) -> Rows:
    branches = [{"branch_id": i, "name": name, "neighborhood": hood,
                 "opened_year": rng.randint(1905, 2015)}
                for i, (name, hood) in enumerate(V.LIBRARY_BRANCHES, 1)]
    authors = [{"author_id": i, "first_name": first, "last_name": last,
                "nationality": rng.choice(V.NATIONALITIES), "birth_year": rng.randint(1920, 1995)}
               for i, (first, last) in enumerate(distinct_people(rng, 40), 1)]
    books = []
    for i, title in enumerate(_book_titles(rng, 160), 1):
        author = rng.choice(authors)
        books.append({"book_id": i, "title": title, "author_id": author["author_id"],
                      "genre": rng.choice(V.BOOK_GENRES),
                      "published_year": rng.randint(author["birth_year"] + 24, 2024),
                      "isbn": f"978-{rng.randint(0, 1)}-{rng.randint(1000, 9999)}-"
                              f"{rng.randint(1000, 9999)}-{i % 10}",
                      "branch_id": rng.choice(branches)["branch_id"]})
    members = [{"member_id": 40000 + i, "first_name": first, "last_name": last,
                "membership_type": weighted_choice(rng, V.MEMBERSHIP_TYPES)[0],
                "join_date": random_day(rng, "2008-01-01", "2024-06-30"),
                "home_branch_id": rng.choice(branches)["branch_id"]}
               for i, (first, last) in enumerate(distinct_people(rng, 120), 1)]
    lendable = books[:140]  # the last twenty have never left the shelf
    loans = []
    for i in range(1, 301):
        start = random_day(rng, "2024-01-02", "2024-12-15")
        returned = None if rng.random() < 0.1 else plus_days(start, rng.randint(2, 30))
        loans.append({"checkout_id": i, "book_id": rng.choice(lendable)["book_id"],
                      "member_id": rng.choice(members)["member_id"], "checkout_date": start,
                      "due_date": plus_days(start, 21), "returned_on": returned})
    return {"branches": branches, "authors": authors, "books": books, "members": members,
            "loans": loans}


def gen_city_hr(rng: random.Random) -> Rows:
    directors = distinct_people(rng, len(V.CITY_DEPARTMENTS))
    departments = [{"dept_id": i, "name": name, "director": f"{first} {last}",
                    "annual_budget": float(rng.randrange(2, 90) * 250000)}
                   for i, (name, (first, last)) in enumerate(zip(V.CITY_DEPARTMENTS, directors,
                                                                 strict=True), 1)]
    positions = [{"position_id": i, "title": title, "pay_grade": grade,
                  "min_salary": float(low), "max_salary": float(high)}
                 for i, (title, grade, low, high, _) in enumerate(V.CITY_POSITIONS, 1)]
    by_dept = {d["name"]: [p for p, spec in zip(positions, V.CITY_POSITIONS, strict=True)
                           if d["name"] in spec[4]] for d in departments}
    staff = directors + distinct_people(rng, 190)
    employees = []
    for i, (first, last) in enumerate(staff, 1):
        dept = departments[i - 1] if i <= len(departments) else rng.choice(departments)
        position = positions[0] if i <= len(departments) else rng.choice(by_dept[dept["name"]])
        salary = money(rng, position["min_salary"], position["max_salary"], 100)
        if i % 37 == 0:  # grandfathered contracts, paid above the top of the band
            salary = round(position["max_salary"] * 1.06, 2)
        kind = weighted_choice(rng, V.EMPLOYMENT_TYPES)[0]
        employees.append({"employee_id": 1000 + i, "first_name": first, "last_name": last,
                          "dept_id": dept["dept_id"], "position_id": position["position_id"],
                          "hire_date": random_day(rng, "1998-01-01", "2024-10-31"),
                          "salary": salary,
                          "employment_type": "Full-time" if i <= len(departments) else kind})
    leave = []
    for i in range(1, 151):
        start = random_day(rng, "2024-01-02", "2024-12-20")
        category = weighted_choice(rng, V.ABSENCE_CATEGORIES)[0]
        length = rng.randint(40, 90) if category == "Parental" else rng.randint(1, 10)
        leave.append({"request_id": i, "employee_id": rng.choice(employees)["employee_id"],
                      "start_date": start, "end_date": plus_days(start, length),
                      "category": category, "status": weighted_choice(rng, V.REQUEST_STATUSES)[0]})
    certifications = []
    for i in range(1, 81):
        credential, years = rng.choice(V.CREDENTIALS)
        issued = random_day(rng, "2019-01-01", "2024-09-30")
        certifications.append({"record_id": 300 + i,
                               "employee_id": rng.choice(employees)["employee_id"],
                               "credential": credential, "issued_on": issued,
                               "expires_on": plus_days(issued, 365 * years)})
    return {"departments": departments, "positions": positions, "employees": employees,
            "leave_requests": leave, "certifications": certifications}
