"""Question templates of the hospital database, and how often each is used.

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
    full_name,
    lit,
    threshold,
    who,
)

ROLE_PLURALS = {"Nurse": "nurses", "Physician": "physicians", "Surgeon": "surgeons",
                "Technician": "technicians", "Pharmacist": "pharmacists",
                "Administrator": "administrators"}


def h_blood_type(c: Ctx) -> Spec:
    bt = c.pick("patients")["blood_type"]
    q = c.say("How many patients have blood type {bt}?",
              "Count the patients whose blood group is {bt}.", bt=bt)
    return Spec(q, f"SELECT COUNT(*) FROM patients WHERE blood_type = {lit(bt)}", "easy")


def h_open_stays(c: Ctx) -> Spec:
    q = c.say("How many admissions have no discharge date yet?",
              "How many admissions are still open, with no discharge recorded?")
    return Spec(q, "SELECT COUNT(*) FROM admissions WHERE discharge_date IS NULL", "easy")


def h_diagnoses_of(c: Ctx) -> Spec:
    p = c.pick("patients", head=True)
    q = c.say("What diagnoses has {n} received?", "Why has {n} been admitted?",
              "List the admission dates and diagnoses for patient {n}.", n=full_name(p))
    sql = ("SELECT a.admit_date, a.diagnosis FROM patients AS p JOIN admissions AS a "
           f"ON p.patient_id = a.patient_id WHERE {who(p, 'p')}")
    return Spec(q, sql, "medium")


def h_busy_departments(c: Ctx) -> Spec:
    counts = Counter(a["dept_id"] for a in c.rows["admissions"])
    k = int(threshold(counts.values(), c.rng, (1, 4)))
    q = c.say("Which departments admitted more than {k} patients?",
              "Name the departments with over {k} admissions.", k=k)
    sql = ("SELECT d.name, COUNT(*) FROM departments AS d JOIN admissions AS a "
           f"ON d.dept_id = a.dept_id GROUP BY d.dept_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def h_readmitted(c: Ctx) -> Spec:
    k = c.rng.choice([1, 2])
    times = {1: "once", 2: "twice"}[k]
    q = c.say("Which patients have been admitted more than {t}?",
              "List the patients with more than {k} admissions.", t=times, k=k)
    sql = ("SELECT p.first_name, p.last_name, COUNT(*) FROM patients AS p JOIN admissions AS a "
           f"ON p.patient_id = a.patient_id GROUP BY p.patient_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def h_surgical_diagnoses(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("Which diagnoses in {d} were handled by a surgeon?",
              "For admissions to {d}, which diagnoses had a surgeon as the attending?",
              d=dept["name"])
    sql = ("SELECT DISTINCT a.diagnosis FROM admissions AS a JOIN departments AS d "
           "ON a.dept_id = d.dept_id JOIN employees AS e ON a.attending_id = e.employee_id "
           f"WHERE d.name = {lit(dept['name'])} AND e.role = 'Surgeon'")
    return Spec(q, sql, "hard")


def h_costlier_drugs(c: Ctx) -> Spec:
    drug = c.pick("prescriptions")["drug"]
    q = c.say("Which drugs cost more on average per prescription than {d}?",
              "List the drugs whose average prescription cost is above that of {d}.", d=drug)
    sql = ("SELECT drug, AVG(cost) FROM prescriptions GROUP BY drug HAVING AVG(cost) > "
           f"(SELECT AVG(cost) FROM prescriptions WHERE drug = {lit(drug)})")
    return Spec(q, sql, "hard")


def h_surgeons_or_ward(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("Which employees are surgeons or work in {d}?",
              "List everyone who is either a surgeon or on the {d} staff.", d=dept["name"])
    sql = ("SELECT first_name, last_name FROM employees WHERE role = 'Surgeon' UNION "
           "SELECT e.first_name, e.last_name FROM employees AS e JOIN departments AS d "
           f"ON e.dept_id = d.dept_id WHERE d.name = {lit(dept['name'])}")
    return Spec(q, sql, "hard")


def h_patient_drugs(c: Ctx) -> Spec:
    p = c.pick("patients", head=True)
    q = c.say("Which medications was {n} given?", "What drugs were prescribed to {n}?",
              n=full_name(p))
    sql = ("SELECT r.drug, r.dose_mg FROM patients AS p JOIN admissions AS a "
           "ON p.patient_id = a.patient_id JOIN prescriptions AS r ON a.stay_id = r.stay_id "
           f"WHERE {who(p, 'p')}")
    return Spec(q, sql, "hard")


def h_sib_shift(c: Ctx) -> Spec:
    e = c.pick("employees", where=lambda r: r["role"] in ("Nurse", "Technician", "Physician"))
    q = c.say("How many {r} work {s} shifts?", "How many {r} are on the {s} shift?",
              r=ROLE_PLURALS[e["role"]], s=e["shift"].lower())
    sql = (f"SELECT COUNT(*) FROM employees WHERE role = {lit(e['role'])} "
           f"AND shift = {lit(e['shift'])}")
    return Spec(q, sql, "easy", SIB)


def h_sib_ward_staff(c: Ctx) -> Spec:
    e = c.pick("employees", where=lambda r: r["role"] in ("Nurse", "Technician"))
    dept = c.rows["departments"][e["dept_id"] - 1]
    q = c.say("How many {r} are assigned to the {d} ward?", "How many {r} staff the {d} unit?",
              r=ROLE_PLURALS[e["role"]], d=dept["name"])
    sql = ("SELECT COUNT(*) FROM employees AS e JOIN departments AS d ON e.dept_id = d.dept_id "
           f"WHERE d.name = {lit(dept['name'])} AND e.role = {lit(e['role'])}")
    return Spec(q, sql, "medium", SIB)


def h_sib_role_pay(c: Ctx) -> Spec:
    q = c.say("What is the average salary of each clinical role?",
              "How much does each kind of clinical staff earn on average?")
    sql = ("SELECT role, ROUND(AVG(salary), 2) FROM employees WHERE role <> 'Administrator' "
           "GROUP BY role")
    return Spec(q, sql, "medium", SIB)


def h_para_ward(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("How many people work in the {d} ward?", "What is the headcount of the {d} unit?",
              "How many staff serve in {d}?", d=dept["name"])
    sql = ("SELECT COUNT(*) FROM employees AS e JOIN departments AS d ON e.dept_id = d.dept_id "
           f"WHERE d.name = {lit(dept['name'])}")
    return Spec(q, sql, "medium", PARA)


def h_para_doctors(c: Ctx) -> Spec:
    town = c.pick("patients", head=True)["city"]
    q = c.say("Which doctors looked after someone from {t}?",
              "Which clinicians treated people living in {t}?", t=town)
    sql = ("SELECT DISTINCT e.first_name, e.last_name FROM employees AS e "
           "JOIN admissions AS a ON a.attending_id = e.employee_id "
           f"JOIN patients AS p ON a.patient_id = p.patient_id WHERE p.city = {lit(town)}")
    return Spec(q, sql, "hard", PARA)


def h_deep_birth(c: Ctx) -> Spec:
    p, evidence = c.deep("patients", "last_name")
    q = c.say("When was {n} born?", "What is {n}'s date of birth?", n=full_name(p))
    return Spec(q, f"SELECT birth_date FROM patients WHERE {who(p)}", "easy", DEEP,
                {"evidence": evidence})


def h_deep_stay(c: Ctx) -> Spec:
    a, evidence = c.deep("admissions", "stay_id")
    q = c.say("Who was the attending doctor for stay {s}?",
              "Which clinician was responsible for hospital stay {s}?", s=a["stay_id"])
    sql = ("SELECT e.first_name, e.last_name FROM admissions AS a JOIN employees AS e "
           f"ON a.attending_id = e.employee_id WHERE a.stay_id = {a['stay_id']}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


def h_deep_ward(c: Ctx) -> Spec:
    p, evidence = c.deep("patients", "last_name")
    q = c.say("Which departments has {n} been admitted to?", "Where in the hospital was {n} "
              "treated?", n=full_name(p))
    sql = ("SELECT DISTINCT d.name FROM patients AS p JOIN admissions AS a "
           "ON p.patient_id = a.patient_id JOIN departments AS d ON a.dept_id = d.dept_id "
           f"WHERE {who(p, 'p')}")
    return Spec(q, sql, "hard", DEEP, {"evidence": evidence})


def h_title_count(c: Ctx) -> Spec:
    drug = c.pick("prescriptions")["drug"]
    q = c.say("How many prescriptions were written for {d}?",
              "How many {d} prescriptions are on record?", d=drug)
    return Spec(q, f"SELECT COUNT(*) FROM prescriptions WHERE drug = {lit(drug)}", "easy",
                TITLE, {"decisive": "prescriptions"})


def h_title_costliest(c: Ctx) -> Spec:
    q = c.say("Which prescription was the most expensive?",
              "What is the priciest prescription on file?")
    sql = "SELECT rx_id, drug, cost FROM prescriptions ORDER BY cost DESC LIMIT 1"
    return Spec(q, sql, "medium", TITLE, {"decisive": "prescription"})


def h_title_long(c: Ctx) -> Spec:
    days = c.rng.choice([10, 14])
    q = c.say("How many prescriptions cover more than {d} days?",
              "Count the prescriptions longer than {d} days.", d=days)
    return Spec(q, f"SELECT COUNT(*) FROM prescriptions WHERE days_supply > {days}", "easy",
                TITLE, {"decisive": "prescriptions"})


def h_title_patients(c: Ctx) -> Spec:
    drug = c.pick("prescriptions")["drug"]
    q = c.say("Which patients received prescriptions for {d}?",
              "Who has been given a prescription for {d}?", d=drug)
    sql = ("SELECT DISTINCT p.first_name, p.last_name FROM prescriptions AS r "
           "JOIN admissions AS a ON r.stay_id = a.stay_id "
           f"JOIN patients AS p ON a.patient_id = p.patient_id WHERE r.drug = {lit(drug)}")
    word = "prescriptions" if "prescriptions" in q else "prescription"
    return Spec(q, sql, "hard", TITLE, {"decisive": word})


TEMPLATES: list[tuple[Template, int]] = [
    (h_blood_type, 2), (h_open_stays, 1), (h_diagnoses_of, 2), (h_busy_departments, 1),
    (h_readmitted, 1), (h_surgical_diagnoses, 1), (h_costlier_drugs, 1),
    (h_surgeons_or_ward, 1), (h_patient_drugs, 1),
    (h_sib_shift, 2), (h_sib_ward_staff, 2), (h_sib_role_pay, 1),
    (h_para_ward, 2), (h_para_doctors, 2), (h_deep_birth, 2), (h_deep_stay, 1),
    (h_deep_ward, 1), (h_title_count, 2), (h_title_costliest, 1), (h_title_long, 1),
    (h_title_patients, 1),
]
