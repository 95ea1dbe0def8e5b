"""Word lists for the demo-sql generator, kept apart so the generator reads as logic.

Lists, not sets: the generator samples from them with a seeded Random, and a set's
iteration order changes with PYTHONHASHSEED, which would break byte-identical output.
Names avoid apostrophes so gold SQL literals stay simple, and words are chosen so the
title-only failure mode holds: no cell contains a table-name word such as "loan", "play",
"goal", "stadium", "booking", "supplier", "prescription", "enrollment" or "leave".
"""

from __future__ import annotations

FIRST_NAMES: list[str] = [
    "Amara", "Ben", "Carmen", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Isabel", "Jamal",
    "Keiko", "Liam", "Maya", "Nikolai", "Olivia", "Priya", "Quentin", "Rosa", "Samuel", "Tara",
    "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zoe", "Aiden", "Beatriz", "Caleb", "Dana",
    "Emeka", "Fiona", "Gabriel", "Hana", "Ivan", "Julia", "Kofi", "Lucia", "Mateo", "Nadia",
    "Oscar", "Paula", "Rafael", "Sofia", "Tomas", "Ursula", "Victor", "Willa", "Xavier", "Yara",
    "Zain", "Adele", "Bruno", "Chloe", "Diego", "Esther", "Felix", "Greta", "Hugo", "Ingrid",
    "Jonas", "Kira", "Leo", "Mira", "Noah", "Odette", "Pablo", "Rhea", "Simon", "Thea",
    "Arjun", "Bianca", "Cyrus", "Daria", "Elias", "Freya", "Gideon", "Helena", "Idris", "Jade",
    "Kai", "Lena", "Marcus", "Nora", "Owen", "Petra", "Ruth", "Stefan", "Talia", "Vikram",
    "Wanda", "Yosef", "Alma", "Boris", "Clara", "Dante", "Eva", "Frank", "Gloria", "Henry",
]

LAST_NAMES: list[str] = [
    "Abbott", "Acosta", "Adeyemi", "Almeida", "Andersen", "Arslan", "Baker", "Banerjee",
    "Barros", "Becker", "Bianchi", "Blackwood", "Bose", "Brennan", "Castillo", "Chen", "Choi",
    "Cole", "Costa", "Dalton", "Das", "Delgado", "Dimitrov", "Dubois", "Duarte", "Eriksen",
    "Esposito", "Farouk", "Fernandes", "Fischer", "Fleming", "Garcia", "Goldberg", "Gomez",
    "Greco", "Haddad", "Hansen", "Harper", "Hayes", "Hoffman", "Hughes", "Ibrahim", "Ito",
    "Jansen", "Jensen", "Jimenez", "Kaur", "Keller", "Kim", "Kowalski", "Kruger", "Lambert",
    "Larsen", "Lee", "Lindqvist", "Lopez", "Lund", "Mahmoud", "Marino", "Martins", "Mbeki",
    "Mendes", "Meyer", "Moreau", "Morales", "Murphy", "Nakamura", "Nguyen", "Novak", "Nowak",
    "Okafor", "Olsen", "Ortiz", "Osei", "Park", "Patel", "Pereira", "Petrov", "Popescu",
    "Quinn", "Ramos", "Rao", "Reyes", "Richter", "Rossi", "Russo", "Saito", "Santos",
    "Schmidt", "Sato", "Shah", "Silva", "Sokolov", "Suzuki", "Tanaka", "Thompson", "Torres",
    "Tran", "Valdez", "Varga", "Vasquez", "Vogel", "Wagner", "Walsh", "Weber", "Wong",
    "Yamamoto", "Yilmaz", "Zhang", "Zielinski", "Ahmed", "Bauer", "Campbell", "Dunn", "Ellis",
    "Foster", "Gupta", "Holm", "Ivanova", "Jovanovic", "Kelly", "Lindgren", "Mason", "Nielsen",
    "Obi", "Reed", "Turner", "Ueda", "Vance", "Xu", "Yoon", "Zamora", "Horvat", "Moller",
    "Sandoval", "Chaudhry", "Fontaine", "Galli", "Hartmann", "Lowe", "Mensah", "Pham", "Rahman",
    "Soto", "Tiwari", "Wolff", "Okonkwo", "Bergstrom", "Castro", "Demir", "Egan", "Fitzgerald",
]

TOWNS: list[str] = [
    "Ashford", "Bayside", "Brookhaven", "Cedar Falls", "Clearwater", "Eastport", "Elmwood",
    "Fairview", "Glenwood", "Greenville", "Harborview", "Hillcrest", "Kingsport", "Lakewood",
    "Maple Grove", "Millbrook", "Northgate", "Oak Ridge", "Pinehurst", "Riverton", "Rockport",
    "Silverton", "Springfield", "Stonebridge", "Westfield", "Willow Creek",
]

COUNTRIES: list[str] = [
    "United States", "Canada", "Mexico", "Brazil", "United Kingdom", "Ireland", "France",
    "Germany", "Spain", "Italy", "Netherlands", "Sweden", "Norway", "Poland", "Nigeria",
    "Kenya", "South Africa", "India", "Japan", "South Korea", "Australia", "New Zealand",
]

# --- university -----------------------------------------------------------------------

UNI_DEPARTMENTS: list[tuple[str, str, str]] = [  # name, course code prefix, building
    ("Computer Science", "CS", "Hopper Hall"),
    ("Mathematics", "MATH", "Noether Building"),
    ("Physics", "PHYS", "Curie Laboratory"),
    ("Chemistry", "CHEM", "Franklin Hall"),
    ("Biology", "BIO", "Darwin Center"),
    ("History", "HIST", "Tuchman Hall"),
    ("Economics", "ECON", "Keynes House"),
    ("Philosophy", "PHIL", "Arendt Hall"),
    ("Linguistics", "LING", "Sapir Building"),
    ("Mechanical Engineering", "ME", "Watt Engineering Complex"),
]

UNI_COURSES: dict[str, list[str]] = {
    "Computer Science": ["Introduction to Programming", "Data Structures", "Algorithms",
                         "Operating Systems", "Machine Learning"],
    "Mathematics": ["Calculus I", "Linear Algebra", "Probability Theory", "Real Analysis",
                    "Number Theory"],
    "Physics": ["Classical Mechanics", "Electromagnetism", "Quantum Mechanics", "Thermodynamics",
                "Astrophysics"],
    "Chemistry": ["General Chemistry", "Organic Chemistry", "Physical Chemistry",
                  "Biochemistry", "Analytical Chemistry"],
    "Biology": ["Cell Biology", "Genetics", "Ecology", "Microbiology", "Evolutionary Biology"],
    "History": ["World History", "Medieval Europe", "History of the Americas",
                "Modern East Asia", "Economic History"],
    "Economics": ["Microeconomics", "Macroeconomics", "Econometrics", "Game Theory",
                  "Development Economics"],
    "Philosophy": ["Introduction to Logic", "Ethics", "Philosophy of Mind", "Epistemology",
                   "Political Philosophy"],
    "Linguistics": ["Phonetics", "Syntax", "Semantics", "Sociolinguistics",
                    "Historical Linguistics"],
    "Mechanical Engineering": ["Statics", "Fluid Dynamics", "Heat Transfer", "Machine Design",
                               "Robotics"],
}

UNI_RANKS: list[tuple[str, int, int, int]] = [  # rank, weight, salary range
    ("Professor", 3, 125000, 190000),
    ("Associate Professor", 3, 98000, 140000),
    ("Assistant Professor", 3, 82000, 112000),
    ("Lecturer", 2, 60000, 86000),
]

GRADES: list[tuple[str, int]] = [("A", 18), ("A-", 14), ("B+", 14), ("B", 16), ("B-", 10),
                                 ("C+", 8), ("C", 8), ("D", 4), ("F", 3)]
TERMS: list[str] = ["Fall 2023", "Spring 2024", "Fall 2024"]

# --- hospital ---------------------------------------------------------------------------

HOSPITAL_DEPARTMENTS: dict[str, list[str]] = {  # department -> typical diagnoses
    "Cardiology": ["Atrial fibrillation", "Heart failure", "Myocardial infarction",
                   "Hypertensive crisis"],
    "Pediatrics": ["Bronchiolitis", "Appendicitis", "Asthma exacerbation", "Dehydration"],
    "Oncology": ["Breast cancer", "Lymphoma", "Lung cancer", "Leukemia"],
    "Neurology": ["Ischemic stroke", "Epilepsy", "Migraine", "Multiple sclerosis"],
    "Orthopedics": ["Hip fracture", "Torn ACL", "Spinal stenosis", "Knee replacement"],
    "Emergency Medicine": ["Concussion", "Severe allergic reaction", "Laceration",
                           "Food poisoning"],
    "Radiology": ["Pulmonary embolism", "Kidney stones", "Bowel obstruction", "Pneumothorax"],
    "Maternity": ["Preeclampsia", "Normal delivery", "Cesarean delivery",
                  "Gestational diabetes"],
    "Intensive Care": ["Sepsis", "Respiratory failure", "Diabetic ketoacidosis",
                       "Multi-organ failure"],
    "General Surgery": ["Gallstones", "Hernia", "Diverticulitis", "Pancreatitis"],
}

HOSPITAL_ROLES: list[tuple[str, int, int, int]] = [  # role, weight, salary range
    ("Nurse", 40, 62000, 98000),
    ("Physician", 14, 180000, 290000),
    ("Surgeon", 8, 260000, 420000),
    ("Technician", 14, 48000, 76000),
    ("Pharmacist", 6, 115000, 150000),
    ("Administrator", 10, 55000, 95000),
]

SHIFTS: list[str] = ["Day", "Day", "Night", "Rotating"]
BLOOD_TYPES: list[tuple[str, int]] = [("O+", 37), ("A+", 30), ("B+", 9), ("AB+", 4),
                                      ("O-", 7), ("A-", 6), ("B-", 2), ("AB-", 1)]

DRUGS: list[tuple[str, list[int], float]] = [  # drug, doses in mg, cost per day
    ("Amoxicillin", [250, 500], 0.9), ("Lisinopril", [10, 20], 0.4),
    ("Metformin", [500, 1000], 0.3), ("Atorvastatin", [20, 40], 0.6),
    ("Ibuprofen", [200, 400, 600], 0.2), ("Omeprazole", [20, 40], 0.5),
    ("Warfarin", [2, 5], 0.7), ("Prednisone", [5, 10, 20], 0.3),
    ("Furosemide", [20, 40], 0.3), ("Ondansetron", [4, 8], 1.8),
    ("Levetiracetam", [500, 750], 2.4), ("Ceftriaxone", [1000, 2000], 9.5),
    ("Morphine", [5, 10], 3.2), ("Heparin", [5000], 6.1), ("Acetaminophen", [500, 1000], 0.1),
]

# --- retail store -----------------------------------------------------------------------

RETAIL_PRODUCTS: dict[str, list[tuple[str, float]]] = {  # department -> (product, price)
    "Electronics": [("Wireless Earbuds", 79.0), ("4K Television", 549.0),
                    ("Bluetooth Speaker", 59.0), ("USB-C Charger", 24.0), ("Smartwatch", 199.0),
                    ("Laptop Stand", 39.0), ("Portable SSD", 119.0), ("Webcam", 69.0),
                    ("Gaming Mouse", 49.0)],
    "Grocery": [("Organic Coffee Beans", 14.5), ("Olive Oil", 11.0), ("Basmati Rice", 6.5),
                ("Dark Chocolate Bar", 3.25), ("Almond Milk", 3.75), ("Maple Syrup", 9.5),
                ("Green Tea", 5.0), ("Pasta Sauce", 4.25), ("Granola", 5.75)],
    "Garden": [("Garden Hose", 34.0), ("Pruning Shears", 22.0), ("Potting Soil", 8.5),
               ("Tomato Seeds", 2.75), ("Watering Can", 15.0), ("Patio Umbrella", 89.0),
               ("Bird Feeder", 19.0), ("Lawn Sprinkler", 27.0), ("Raised Bed Kit", 129.0)],
    "Toys": [("Building Blocks Set", 45.0), ("Jigsaw Puzzle", 16.0),
             ("Remote Control Car", 55.0), ("Plush Bear", 18.0), ("Board Game", 29.0),
             ("Art Easel", 49.0), ("Kite", 12.0), ("Doll House", 99.0), ("Science Kit", 35.0)],
    "Clothing": [("Denim Jacket", 65.0), ("Wool Scarf", 28.0), ("Running Shoes", 95.0),
                 ("Rain Boots", 42.0), ("Cotton T-Shirt", 12.0), ("Winter Coat", 149.0),
                 ("Baseball Cap", 18.0), ("Hiking Socks", 14.0), ("Leather Belt", 32.0)],
    "Home Goods": [("Ceramic Mug Set", 26.0), ("Bath Towel", 15.0), ("Table Lamp", 44.0),
                   ("Throw Pillow", 21.0), ("Cast Iron Skillet", 38.0), ("Scented Candle", 13.0),
                   ("Wall Clock", 29.0), ("Storage Basket", 19.0), ("Bed Sheets", 54.0)],
    "Sporting Goods": [("Yoga Mat", 25.0), ("Tennis Racket", 79.0), ("Camping Tent", 159.0),
                       ("Bicycle Helmet", 48.0), ("Dumbbell Pair", 36.0), ("Soccer Ball", 22.0),
                       ("Fishing Rod", 64.0), ("Sleeping Bag", 72.0), ("Water Bottle", 16.0)],
    "Pharmacy": [("Vitamin D Tablets", 8.0), ("Sunscreen SPF 50", 12.5),
                 ("Hand Sanitizer", 3.5), ("First Aid Kit", 24.0), ("Allergy Relief", 11.0),
                 ("Cough Syrup", 9.0), ("Bandages", 4.5), ("Thermometer", 15.0),
                 ("Lip Balm", 2.5)],
    "Books": [("Cookbook", 28.0), ("World Atlas", 35.0), ("Mystery Novel", 15.0),
              ("Picture Book", 12.0), ("Travel Guide", 22.0), ("Poetry Anthology", 19.0),
              ("Graphic Novel", 24.0), ("Dictionary", 30.0), ("Sketchbook", 10.0)],
    "Hardware": [("Cordless Drill", 119.0), ("Claw Hammer", 21.0), ("Screwdriver Set", 27.0),
                 ("Tape Measure", 11.0), ("Duct Tape", 6.0), ("LED Bulb", 4.0),
                 ("Extension Cord", 17.0), ("Paint Roller", 9.0), ("Step Ladder", 69.0)],
}

RETAIL_POSITIONS: list[tuple[str, int, float, float]] = [  # position, weight, hourly wage
    ("Cashier", 30, 14.0, 18.5), ("Sales Associate", 30, 15.0, 20.0),
    ("Stock Clerk", 20, 14.5, 19.0), ("Department Lead", 12, 21.0, 28.0),
    ("Store Manager", 3, 32.0, 42.0),
]
LOYALTY_TIERS: list[tuple[str, int]] = [("Bronze", 50), ("Silver", 30), ("Gold", 15),
                                        ("Platinum", 5)]
PAYMENT_METHODS: list[tuple[str, int]] = [("Credit Card", 45), ("Debit Card", 25),
                                          ("Cash", 15), ("Mobile Wallet", 12),
                                          ("Gift Card", 3)]
ORDER_STATUSES: list[tuple[str, int]] = [("Completed", 88), ("Returned", 7), ("Pending", 5)]
VENDOR_PREFIXES: list[str] = [
    "Bluewater", "Northwind", "Summit", "Redwood", "Silverline", "Granite", "Harbor",
    "Evergreen", "Keystone", "Pioneer", "Sunrise", "Atlas", "Meridian", "Crescent", "Lakeshore",
]
VENDOR_SUFFIXES: list[str] = ["Trading Co.", "Wholesale", "Distributors", "Imports",
                              "Goods Ltd.", "Merchants"]

# --- airline ----------------------------------------------------------------------------

AIRPORTS: list[tuple[str, str, str, str]] = [  # code, name, city, country
    ("JFK", "John F. Kennedy International", "New York", "United States"),
    ("LAX", "Los Angeles International", "Los Angeles", "United States"),
    ("SFO", "San Francisco International", "San Francisco", "United States"),
    ("SEA", "Seattle-Tacoma International", "Seattle", "United States"),
    ("DEN", "Denver International", "Denver", "United States"),
    ("ATL", "Hartsfield-Jackson Atlanta International", "Atlanta", "United States"),
    ("BOS", "Logan International", "Boston", "United States"),
    ("MIA", "Miami International", "Miami", "United States"),
    ("YYZ", "Toronto Pearson International", "Toronto", "Canada"),
    ("YVR", "Vancouver International", "Vancouver", "Canada"),
    ("MEX", "Mexico City International", "Mexico City", "Mexico"),
    ("LHR", "Heathrow", "London", "United Kingdom"),
    ("DUB", "Dublin", "Dublin", "Ireland"),
    ("CDG", "Charles de Gaulle", "Paris", "France"),
    ("AMS", "Schiphol", "Amsterdam", "Netherlands"),
    ("FRA", "Frankfurt am Main", "Frankfurt", "Germany"),
    ("MAD", "Adolfo Suarez Madrid-Barajas", "Madrid", "Spain"),
    ("NRT", "Narita International", "Tokyo", "Japan"),
    ("GRU", "Guarulhos International", "Sao Paulo", "Brazil"),
    ("SYD", "Kingsford Smith", "Sydney", "Australia"),
]
ARRIVAL_ONLY_AIRPORTS: list[str] = ["GRU", "SYD"]  # served inbound only in the demo schedule

AIRCRAFT_MODELS: list[tuple[str, int]] = [  # model, seats
    ("Airbus A320neo", 180), ("Airbus A321", 220), ("Boeing 737-800", 189),
    ("Boeing 787-9", 290), ("Embraer E175", 76), ("Airbus A350-900", 325),
    ("Boeing 777-300ER", 396), ("Bombardier CRJ900", 90),
]
FLIGHT_STATUSES: list[tuple[str, int]] = [("On Time", 70), ("Delayed", 20), ("Cancelled", 7),
                                          ("Diverted", 3)]
FARE_CLASSES: list[tuple[str, int, float, float]] = [  # fare class, weight, price range
    ("Economy", 60, 120.0, 650.0), ("Premium Economy", 18, 450.0, 1100.0),
    ("Business", 16, 1200.0, 4200.0), ("First", 6, 3500.0, 9000.0),
]
FLYER_TIERS: list[tuple[str, int]] = [("Blue", 55), ("Silver", 25), ("Gold", 14),
                                      ("Platinum", 6)]
AIRLINE_JOBS: list[tuple[str, int, int, int]] = [  # job title, weight, salary range
    ("Captain", 10, 180000, 310000), ("First Officer", 10, 95000, 170000),
    ("Flight Attendant", 24, 42000, 78000), ("Gate Agent", 10, 36000, 52000),
    ("Mechanic", 8, 60000, 98000),
]

# --- public library ---------------------------------------------------------------------

LIBRARY_BRANCHES: list[tuple[str, str]] = [  # branch name, neighborhood
    ("Central", "Downtown"), ("Eastside", "Riverbend"), ("Harbor Point", "Waterfront"),
    ("Maplewood", "Maplewood"), ("North Hills", "Hilltop"), ("Riverside", "Mill District"),
    ("Old Town", "Historic Quarter"), ("Westgate", "University Heights"),
]
BOOK_GENRES: list[str] = ["Mystery", "Science Fiction", "Fantasy", "Romance",
                          "Historical Fiction", "Biography", "Poetry", "Thriller",
                          "Young Adult", "Travel"]
TITLE_ADJECTIVES: list[str] = [
    "Silent", "Hidden", "Broken", "Crimson", "Distant", "Forgotten", "Golden", "Hollow",
    "Iron", "Lonely", "Midnight", "Northern", "Paper", "Quiet", "Restless", "Scarlet",
    "Secret", "Shattered", "Silver", "Wandering", "Winter", "Burning", "Glass", "Sunken",
]
TITLE_NOUNS: list[str] = [
    "Harbor", "Garden", "Lantern", "Orchard", "River", "Tower", "Mirror", "Compass", "Archive",
    "Voyage", "Cartographer", "Lighthouse", "Kingdom", "Promise", "Meadow", "Storm",
    "Letter", "Island", "Empire", "Bridge", "Clockmaker", "Forest", "Station", "Sparrow",
]
TITLE_PLACES: list[str] = ["Avalon", "Marrakesh", "Ashgrove", "Kestrel Bay", "the Steppe",
                           "Lisbon", "Vienna", "Samarkand", "the Fens", "Old Quebec"]
MEMBERSHIP_TYPES: list[tuple[str, int]] = [("Adult", 55), ("Student", 20), ("Senior", 15),
                                           ("Child", 10)]
NATIONALITIES: list[str] = ["American", "British", "Irish", "French", "German", "Nigerian",
                            "Japanese", "Brazilian", "Canadian", "Indian", "Swedish", "Mexican",
                            "Spanish", "Ghanaian", "Danish"]

# --- music streaming --------------------------------------------------------------------

BAND_ADJECTIVES: list[str] = ["Velvet", "Neon", "Electric", "Paper", "Midnight", "Golden",
                              "Wild", "Crystal", "Lunar", "Static"]
BAND_NOUNS: list[str] = ["Foxes", "Harbors", "Lights", "Echoes", "Pilots", "Comets", "Tigers",
                         "Saints", "Waves", "Ghosts"]
MUSIC_GENRES: list[str] = ["Indie Rock", "Pop", "Hip Hop", "Jazz", "Electronic", "Folk",
                           "Soul", "Metal", "Country", "Classical"]
RECORD_LABELS: list[str] = ["Harbor Lights Records", "Static Bloom", "Northern Sky Music",
                            "Greyhound Audio", "Paper Moon Records", "Kettle Drum Recordings"]
ALBUM_ADJECTIVES: list[str] = ["Blue", "Late", "Quiet", "Second", "Open", "Distant", "Low",
                               "Bright", "Pale", "Twin"]
ALBUM_NOUNS: list[str] = ["Hours", "Season", "Transmission", "Country", "Frequencies",
                          "Weather", "Atlas", "Machines", "Currents", "Postcards"]
SONG_ADJECTIVES: list[str] = [
    "Golden", "Neon", "Summer", "Broken", "Electric", "Silent", "Velvet", "Paper", "Midnight",
    "Lonely", "Wild", "Crystal", "Fading", "Burning", "Northern", "Hollow", "Sweet", "Restless",
    "Endless", "Drifting",
]
SONG_NOUNS: list[str] = [
    "Hearts", "Rain", "Lights", "Roads", "Dreams", "Skies", "Waves", "Fire", "Echoes", "Stars",
    "Rivers", "Shadows", "Letters", "Streets", "Gardens", "Tides", "Signals", "Mirrors",
    "Horizons", "Ghosts",
]
STREAMING_PLANS: list[tuple[str, int]] = [("Free", 40), ("Premium", 35), ("Family", 15),
                                          ("Student", 10)]
USERNAME_WORDS: list[str] = ["beat", "vinyl", "tune", "groove", "echo", "bass", "riff",
                             "chord", "synth", "drum", "mixtape", "melody"]

# --- football league --------------------------------------------------------------------

FOOTBALL_TEAMS: list[tuple[str, str]] = [  # home town, suffix
    ("Ashford", "Rovers"), ("Bayside", "United"), ("Kingsport", "Athletic"),
    ("Millbrook", "Wanderers"), ("Northgate", "Albion"), ("Riverton", "Harriers"),
    ("Stonebridge", "Rangers"), ("Westfield", "Town"), ("Harborview", "Dynamos"),
    ("Oak Ridge", "Villa"),
]
VENUES: list[str] = ["Riverside Park", "Kingsway Arena", "The Hollow", "Victoria Ground",
                     "Mill Lane", "Harbour Road", "Beacon Field", "Crown Meadow",
                     "Ironworks Park", "Northbank Arena"]
SQUAD_SHAPE: list[tuple[str, int]] = [("Goalkeeper", 2), ("Defender", 6), ("Midfielder", 6),
                                      ("Forward", 4)]
FOOTBALL_NATIONALITIES: list[str] = ["English", "Scottish", "Irish", "French", "Spanish",
                                     "Brazilian", "Nigerian", "Dutch", "German", "Portuguese",
                                     "Ghanaian", "Japanese", "American", "Argentine", "Danish"]
SCORING_KINDS: list[tuple[str, int]] = [("open play", 70), ("header", 15), ("penalty", 10),
                                        ("free kick", 5)]

# --- city HR ----------------------------------------------------------------------------

CITY_DEPARTMENTS: list[str] = [
    "Parks and Recreation", "Public Works", "Fire Department", "Police Department",
    "Water Utility", "City Clerk", "Transportation", "Library Services", "Finance",
    "Planning and Zoning",
]
CITY_POSITIONS: list[tuple[str, str, int, int, list[str]]] = [  # title, grade, range, depts
    ("Department Director", "G12", 110000, 160000, []),
    ("Firefighter", "G6", 52000, 78000, ["Fire Department"]),
    ("Fire Captain", "G9", 78000, 105000, ["Fire Department"]),
    ("Police Officer", "G7", 56000, 85000, ["Police Department"]),
    ("Police Sergeant", "G9", 80000, 108000, ["Police Department"]),
    ("Park Ranger", "G5", 42000, 62000, ["Parks and Recreation"]),
    ("Maintenance Worker", "G4", 36000, 52000, ["Parks and Recreation", "Public Works",
                                                "Water Utility", "Transportation"]),
    ("Civil Engineer", "G10", 82000, 118000, ["Public Works", "Transportation",
                                              "Water Utility", "Planning and Zoning"]),
    ("Water Treatment Operator", "G6", 48000, 70000, ["Water Utility"]),
    ("Bus Driver", "G5", 40000, 60000, ["Transportation"]),
    ("Librarian", "G7", 50000, 72000, ["Library Services"]),
    ("Accountant", "G8", 60000, 88000, ["Finance", "City Clerk"]),
    ("Records Clerk", "G4", 34000, 50000, ["City Clerk", "Finance", "Police Department",
                                           "Library Services"]),
    ("Urban Planner", "G9", 70000, 98000, ["Planning and Zoning"]),
    ("Dispatcher", "G5", 42000, 61000, ["Fire Department", "Police Department"]),
]
EMPLOYMENT_TYPES: list[tuple[str, int]] = [("Full-time", 76), ("Part-time", 14),
                                           ("Seasonal", 10)]
ABSENCE_CATEGORIES: list[tuple[str, int]] = [("Vacation", 50), ("Sick", 28), ("Parental", 8),
                                             ("Bereavement", 6), ("Jury Duty", 8)]
REQUEST_STATUSES: list[tuple[str, int]] = [("Approved", 70), ("Pending", 18), ("Denied", 12)]
CREDENTIALS: list[tuple[str, int]] = [  # credential, years valid
    ("First Aid/CPR", 2), ("Commercial Driver License", 4), ("Hazmat Operations", 3),
    ("Professional Engineer", 5), ("Water Treatment Grade II", 3),
    ("Emergency Medical Technician", 2), ("Crisis Negotiation", 3), ("Arborist", 3),
    ("CPA License", 5),
]

MONTHS: list[str] = ["January", "February", "March", "April", "May", "June", "July", "August",
                     "September", "October", "November", "December"]
