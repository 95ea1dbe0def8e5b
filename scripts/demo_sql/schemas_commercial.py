"""CREATE TABLE statements of the commercial databases: retail_store, airline,
music_streaming and football_league (see schemas_public.py for the other four).
"""

from __future__ import annotations

# Table names repeat across databases on purpose (departments, employees, customers,
# members) with similar but different columns: the "sibling" failure mode needs them.
# Some primary keys are deliberately not named after their table (stay_id, rx_id, pnr,
# checkout_id, listen_id, event_id, venue_id, vendor_id, record_id), so the table name is
# the only place its word occurs: the "title-only" failure mode needs that.

RETAIL_STORE: list[str] = [
    """CREATE TABLE departments (
    dept_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    floor_area_sqm INTEGER NOT NULL,
    PRIMARY KEY (dept_id)
)""",
    """CREATE TABLE employees (
    employee_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    position TEXT NOT NULL,
    dept_id INTEGER NOT NULL,
    hourly_wage REAL NOT NULL,
    start_date TEXT NOT NULL,
    PRIMARY KEY (employee_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id)
)""",
    """CREATE TABLE customers (
    customer_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    loyalty_tier TEXT NOT NULL,
    signup_date TEXT NOT NULL,
    PRIMARY KEY (customer_id)
)""",
    """CREATE TABLE suppliers (
    vendor_id INTEGER NOT NULL,
    company TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    contact_email TEXT NOT NULL,
    rating REAL NOT NULL,
    PRIMARY KEY (vendor_id)
)""",
    """CREATE TABLE products (
    product_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    dept_id INTEGER NOT NULL,
    vendor_id INTEGER NOT NULL,
    unit_price REAL NOT NULL,
    stock_qty INTEGER NOT NULL,
    PRIMARY KEY (product_id),
    FOREIGN KEY (dept_id) REFERENCES departments (dept_id),
    FOREIGN KEY (vendor_id) REFERENCES suppliers (vendor_id)
)""",
    """CREATE TABLE orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    employee_id INTEGER NOT NULL,
    order_date TEXT NOT NULL,
    payment_method TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (order_id),
    FOREIGN KEY (customer_id) REFERENCES customers (customer_id),
    FOREIGN KEY (employee_id) REFERENCES employees (employee_id)
)""",
    """CREATE TABLE order_items (
    order_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    PRIMARY KEY (order_id, product_id),
    FOREIGN KEY (order_id) REFERENCES orders (order_id),
    FOREIGN KEY (product_id) REFERENCES products (product_id)
)""",
]

AIRLINE: list[str] = [
    """CREATE TABLE airports (
    airport_code TEXT NOT NULL,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    PRIMARY KEY (airport_code)
)""",
    """CREATE TABLE aircraft (
    tail_number TEXT NOT NULL,
    model TEXT NOT NULL,
    seats INTEGER NOT NULL,
    year_built INTEGER NOT NULL,
    PRIMARY KEY (tail_number)
)""",
    """CREATE TABLE flights (
    flight_id INTEGER NOT NULL,
    flight_number TEXT NOT NULL,
    origin TEXT NOT NULL,
    destination TEXT NOT NULL,
    tail_number TEXT NOT NULL,
    departure_date TEXT NOT NULL,
    departure_time TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (flight_id),
    FOREIGN KEY (origin) REFERENCES airports (airport_code),
    FOREIGN KEY (destination) REFERENCES airports (airport_code),
    FOREIGN KEY (tail_number) REFERENCES aircraft (tail_number)
)""",
    """CREATE TABLE customers (
    customer_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    ff_tier TEXT NOT NULL,
    joined_on TEXT NOT NULL,
    PRIMARY KEY (customer_id)
)""",
    """CREATE TABLE bookings (
    pnr TEXT NOT NULL,
    customer_id INTEGER NOT NULL,
    flight_id INTEGER NOT NULL,
    fare_class TEXT NOT NULL,
    seat TEXT NOT NULL,
    price REAL NOT NULL,
    booked_on TEXT NOT NULL,
    PRIMARY KEY (pnr),
    FOREIGN KEY (customer_id) REFERENCES customers (customer_id),
    FOREIGN KEY (flight_id) REFERENCES flights (flight_id)
)""",
    """CREATE TABLE employees (
    employee_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    job_title TEXT NOT NULL,
    base_airport TEXT NOT NULL,
    hire_date TEXT NOT NULL,
    salary REAL NOT NULL,
    PRIMARY KEY (employee_id),
    FOREIGN KEY (base_airport) REFERENCES airports (airport_code)
)""",
]

MUSIC_STREAMING: list[str] = [
    """CREATE TABLE artists (
    artist_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    genre TEXT NOT NULL,
    debut_year INTEGER NOT NULL,
    PRIMARY KEY (artist_id)
)""",
    """CREATE TABLE albums (
    album_id INTEGER NOT NULL,
    title TEXT NOT NULL,
    artist_id INTEGER NOT NULL,
    release_year INTEGER NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (album_id),
    FOREIGN KEY (artist_id) REFERENCES artists (artist_id)
)""",
    """CREATE TABLE tracks (
    track_id INTEGER NOT NULL,
    title TEXT NOT NULL,
    album_id INTEGER NOT NULL,
    duration_sec INTEGER NOT NULL,
    explicit INTEGER NOT NULL,
    PRIMARY KEY (track_id),
    FOREIGN KEY (album_id) REFERENCES albums (album_id)
)""",
    """CREATE TABLE members (
    member_id INTEGER NOT NULL,
    username TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    plan TEXT NOT NULL,
    join_date TEXT NOT NULL,
    birth_year INTEGER NOT NULL,
    PRIMARY KEY (member_id)
)""",
    """CREATE TABLE plays (
    listen_id INTEGER NOT NULL,
    member_id INTEGER NOT NULL,
    track_id INTEGER NOT NULL,
    listened_on TEXT NOT NULL,
    seconds_listened INTEGER NOT NULL,
    PRIMARY KEY (listen_id),
    FOREIGN KEY (member_id) REFERENCES members (member_id),
    FOREIGN KEY (track_id) REFERENCES tracks (track_id)
)""",
]

FOOTBALL_LEAGUE: list[str] = [
    """CREATE TABLE stadiums (
    venue_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    opened_year INTEGER NOT NULL,
    PRIMARY KEY (venue_id)
)""",
    """CREATE TABLE teams (
    team_id INTEGER NOT NULL,
    name TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    venue_id INTEGER NOT NULL,
    founded_year INTEGER NOT NULL,
    manager TEXT NOT NULL,
    PRIMARY KEY (team_id),
    FOREIGN KEY (venue_id) REFERENCES stadiums (venue_id)
)""",
    """CREATE TABLE players (
    player_id INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    team_id INTEGER NOT NULL,
    position TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    shirt_number INTEGER NOT NULL,
    nationality TEXT NOT NULL,
    PRIMARY KEY (player_id),
    FOREIGN KEY (team_id) REFERENCES teams (team_id)
)""",
    """CREATE TABLE matches (
    match_id INTEGER NOT NULL,
    match_date TEXT NOT NULL,
    home_team_id INTEGER NOT NULL,
    away_team_id INTEGER NOT NULL,
    home_score INTEGER NOT NULL,
    away_score INTEGER NOT NULL,
    attendance INTEGER NOT NULL,
    PRIMARY KEY (match_id),
    FOREIGN KEY (home_team_id) REFERENCES teams (team_id),
    FOREIGN KEY (away_team_id) REFERENCES teams (team_id)
)""",
    """CREATE TABLE goals (
    event_id INTEGER NOT NULL,
    match_id INTEGER NOT NULL,
    player_id INTEGER NOT NULL,
    minute INTEGER NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (event_id),
    FOREIGN KEY (match_id) REFERENCES matches (match_id),
    FOREIGN KEY (player_id) REFERENCES players (player_id)
)""",
]
