"""CREATE TABLE statements of the public-service databases: university, hospital,
public_library and city_hr (see schemas_commercial.py for the other four).
"""

from __future__ import annotations

# Table names repeat across databases on purpose (departments, employees, customers,
# members) with similar but different columns: the "sibling" failure mode needs them.
# Some primary keys are deliberately not named after their table (stay_id, rx_id, pnr,
# checkout_id, listen_id, event_id, venue_id, vendor_id, record_id), so the table name is
# the only place its word occurs: the "title-only" failure mode needs that.

UNIVERSITY: list[str] = [
    """CREATE TABLE departments (
    dept_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    building TEXT NOT NULL,
    budget REAL NOT NULL,
    founded_year INTEGER NOT NULL,
    PRIMARY KEY (dept_id)
)""",
    """CREATE TABLE instructors (
    instructor_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    dept_id INTEGER NOT NULL,
    rank TEXT NOT NULL,
    salary REAL NOT NULL,
    hire_date TEXT NOT NULL,
    PRIMARY KEY (instructor_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id)
)""",
    """CREATE TABLE students (
    student_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    major_id INTEGER NOT NULL,
    entry_year INTEGER NOT NULL,
    gpa REAL NOT NULL,
    hometown TEXT NOT NULL,
    PRIMARY KEY (student_id),
    FOREIGN KEY (major_id) REFERENCES departments (dept_id)
)""",
    """CREATE TABLE courses (
    course_id INTEGER NOT NULL,
    code TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    dept_id INTEGER NOT NULL,
    credits INTEGER NOT NULL,
    instructor_id INTEGER NOT NULL,
    PRIMARY KEY (course_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id),
    FOREIGN KEY (instructor_id) REFERENCES instructors (instructor_id)
)""",
    """CREATE TABLE enrollments (
    student_id INTEGER NOT NULL,
    course_id INTEGER NOT NULL,
    term TEXT NOT NULL,
    grade TEXT NOT NULL,
    PRIMARY KEY (student_id, course_id, term),
    FOREIGN KEY (student_id) REFERENCES students (student_id),
    FOREIGN KEY (course_id) REFERENCES courses (course_id)
)""",
]

HOSPITAL: list[str] = [
    """CREATE TABLE departments (
    dept_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    floor INTEGER NOT NULL,
    phone_ext TEXT NOT NULL,
    PRIMARY KEY (dept_id)
)""",
    """CREATE TABLE employees (
    employee_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    role TEXT NOT NULL,
    dept_id INTEGER NOT NULL,
    hire_date TEXT NOT NULL,
    shift TEXT NOT NULL,
    salary REAL NOT NULL,
    PRIMARY KEY (employee_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id)
)""",
    """CREATE TABLE patients (
    patient_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    sex TEXT NOT NULL,
    blood_type TEXT NOT NULL,
    city TEXT NOT NULL,
    PRIMARY KEY (patient_id)
)""",
    """CREATE TABLE admissions (
    stay_id INTEGER NOT NULL,
    patient_id INTEGER NOT NULL,
    dept_id INTEGER NOT NULL,
    attending_id INTEGER NOT NULL,
    admit_date TEXT NOT NULL,
    discharge_date TEXT,
    diagnosis TEXT NOT NULL,
    PRIMARY KEY (stay_id),
    FOREIGN KEY (patient_id) REFERENCES patients (patient_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id),
    FOREIGN KEY (attending_id) REFERENCES employees (employee_id)
)""",
    """CREATE TABLE prescriptions (
    rx_id INTEGER NOT NULL,
    stay_id INTEGER NOT NULL,
    drug TEXT NOT NULL,
    dose_mg INTEGER NOT NULL,
    days_supply INTEGER NOT NULL,
    cost REAL NOT NULL,
    PRIMARY KEY (rx_id),
    FOREIGN KEY (stay_id) REFERENCES admissions (stay_id)
)""",
]

PUBLIC_LIBRARY: list[str] = [
    """CREATE TABLE branches (
    branch_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    neighborhood TEXT NOT NULL,
    opened_year INTEGER NOT NULL,
    PRIMARY KEY (branch_id)
)""",
    """CREATE TABLE authors (
    author_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    nationality TEXT NOT NULL,
    birth_year INTEGER NOT NULL,
    PRIMARY KEY (author_id)
)""",
    """CREATE TABLE books (
    book_id INTEGER NOT NULL,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL,
    genre TEXT NOT NULL,
    published_year INTEGER NOT NULL,
    isbn TEXT NOT NULL UNIQUE,
    branch_id INTEGER NOT NULL,
    PRIMARY KEY (book_id),
    FOREIGN KEY (author_id) REFERENCES authors (author_id),
    FOREIGN KEY (branch_id) REFERENCES branches (branch_id)
)""",
    """CREATE TABLE members (
    member_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    membership_type TEXT NOT NULL,
    join_date TEXT NOT NULL,
    home_branch_id INTEGER NOT NULL,
    PRIMARY KEY (member_id),
    FOREIGN KEY (home_branch_id) REFERENCES branches (branch_id)
)""",
    """CREATE TABLE loans (
    checkout_id INTEGER NOT NULL,
    book_id INTEGER NOT NULL,
    member_id INTEGER NOT NULL,
    checkout_date TEXT NOT NULL,
    due_date TEXT NOT NULL,
    returned_on TEXT,
    PRIMARY KEY (checkout_id),
    FOREIGN KEY (book_id) REFERENCES books (book_id),
    FOREIGN KEY (member_id) REFERENCES members (member_id)
)""",
]

CITY_HR: list[str] = [
    """CREATE TABLE departments (
    dept_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    director TEXT NOT NULL,
    annual_budget REAL NOT NULL,
    PRIMARY KEY (dept_id)
)""",
    """CREATE TABLE positions (
    position_id INTEGER NOT NULL,
    title TEXT NOT NULL UNIQUE,
    pay_grade TEXT NOT NULL,
    min_salary REAL NOT NULL,
    max_salary REAL NOT NULL,
    PRIMARY KEY (position_id)
)""",
    """CREATE TABLE employees (
    employee_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    dept_id INTEGER NOT NULL,
    position_id INTEGER NOT NULL,
    hire_date TEXT NOT NULL,
    salary REAL NOT NULL,
    employment_type TEXT NOT NULL,
    PRIMARY KEY (employee_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id),
    FOREIGN KEY (position_id) REFERENCES positions (position_id)
)""",
    """CREATE TABLE leave_requests (
    request_id INTEGER NOT NULL,
    employee_id INTEGER NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL,
    category TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (request_id),
    FOREIGN KEY (employee_id) REFERENCES employees (employee_id)
)""",
    """CREATE TABLE certifications (
    record_id INTEGER NOT NULL,
    employee_id INTEGER NOT NULL,
    credential TEXT NOT NULL,
    issued_on TEXT NOT NULL,
    expires_on TEXT NOT NULL,
    PRIMARY KEY (record_id),
    FOREIGN KEY (employee_id) REFERENCES employees (employee_id)
)""",
]
