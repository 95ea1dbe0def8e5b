"""Word lists for the demo_wiki generator: the raw material for fictional but plausible names.

Everything here is a tuple, so the generator's choices depend only on its seeded Random and
on the order written below (never on set or dict iteration).
"""

from __future__ import annotations

# Place names are PLACE_START [+ PLACE_MID] + PLACE_END ("Tar" + "now" -> "Tarnow",
# "Kes" + "el" + "mere" -> "Keselmere"): about 31,000 combinations.
PLACE_START = (
    "Tar", "Kes", "Bren", "Hol", "Vel", "Mor", "Dun", "Ash", "Cal", "Dor", "Fen", "Gal", "Har",
    "Ist", "Jor", "Kal", "Lin", "Mar", "Nor", "Ost", "Pel", "Quen", "Ros", "Sel", "Tor", "Ul",
    "Var", "Wes", "Yar", "Zel", "Bel", "Cor", "Ald", "Bran", "Cras", "Eld", "Fal", "Grim",
    "Hest", "Ivor", "Lor", "Mel", "Nev", "Oren", "Per", "Rav", "Sar", "Tal", "Ven", "Wil",
    "Av", "Brin", "Carn", "Drav", "Em", "Gorm", "Hal", "Kir", "Lud", "Mir",
)
PLACE_END = (
    "now", "sel", "nock", "ford", "mere", "wick", "holm", "stad", "burg", "ton", "dale",
    "vik", "grad", "ova", "ena", "ac", "ley", "more", "heim", "by", "field", "gate", "wyn",
    "ard", "ost", "ek", "ino", "stein", "rup", "avo", "borg", "lund", "ice", "ovo", "era",
    "is", "ath", "um", "ona", "ern",
)

PLACE_MID = ("a", "e", "i", "o", "en", "er", "an", "el", "ar", "or", "in", "am")

# Fictional countries; the demonym is the name plus "n" (Valdoria -> Valdorian).
COUNTRIES = (
    "Valdoria", "Kestria", "Norvania", "Marrovia", "Orlenia", "Castrea", "Brevonia", "Lunevia",
    "Ostravia", "Dravonia", "Sorrenia", "Tarvonia", "Velmaria", "Galdonia", "Rhovania",
    "Istrenia", "Morvania", "Quellaria", "Zandoria", "Ashvaria", "Belmora", "Cordania",
    "Elvaria", "Fenmora", "Harvonia", "Jorvania", "Kalvoria", "Lindoria", "Pellavia",
    "Serravia", "Tessaria", "Umbravia", "Varnesia", "Wyndoria", "Aurenia", "Bastoria",
)

FEMALE_NAMES = (
    "Lena", "Anika", "Sofia", "Ilse", "Mira", "Elin", "Nadia", "Clara", "Ivana", "Hanna",
    "Freya", "Katya", "Greta", "Leila", "Alma", "Yara", "Ines", "Dana", "Rosa", "Vera", "Petra",
    "Tilda", "Olga", "Lucia", "Maja", "Zofia", "Esme", "Noor", "Agata", "Livia", "Selma", "Ada",
    "Irena", "Nora", "Edda", "Britta", "Pia", "Runa", "Thea", "Lotte",
)
MALE_NAMES = (
    "Tomas", "Marek", "Jonas", "Pavel", "Rafael", "Oskar", "Viktor", "Emil", "Luca", "Dario",
    "Anton", "Mateo", "Nils", "Bruno", "Stefan", "Felix", "Hugo", "Milan", "Aron", "Kasimir",
    "Elias", "Sander", "Janek", "Ruben", "Teodor", "Adrian", "Gustav", "Ciril", "Henrik",
    "Tobias", "Dmitri", "Leon", "Casper", "Matias", "Samir", "Orlo", "Valter", "Konrad", "Jakub",
    "Amadeo",
)
FIRST_NAMES = FEMALE_NAMES + MALE_NAMES
SURNAMES = (
    "Varga", "Reyes", "Orel", "Kovac", "Lindqvist", "Ferreira", "Halloran", "Marek", "Novak",
    "Brandt", "Castell", "Dumont", "Eriksen", "Falk", "Gallo", "Horvath", "Ivanek", "Jansen",
    "Kaur", "Laine", "Moreau", "Nyberg", "Ostrova", "Petrescu", "Quist", "Rasmussen", "Sorel",
    "Tamm", "Ulrich", "Vance", "Weiss", "Yilmaz", "Zeller", "Abbas", "Bergman", "Cerny",
    "Dahl", "Esposito", "Fontaine", "Grieg", "Haas", "Ibsen", "Jovanic", "Keller", "Lund",
    "Mancini", "Nieminen", "Oakes", "Pires", "Rossi", "Sandoval", "Tarkan", "Ueda", "Vidal",
    "Wolfe", "Aalto", "Bianchi", "Coelho", "Drummond", "Engel", "Forsberg", "Grant", "Hedlund",
    "Ilic", "Juarez", "Kowal", "Lorentz", "Mikkelsen", "Navarro", "Okafor", "Paulsen",
    "Radic", "Strand", "Toivonen", "Urban", "Valko", "Winther", "Zamora", "Albrecht", "Bauer",
    "Carvalho", "Delacroix", "Eklund", "Ferraro", "Gunnarsson", "Holm", "Ivarsson", "Kallio",
    "Lazar", "Molnar", "Nordin", "Olesen", "Pavlou", "Renner", "Sauer", "Thorsen", "Vesely",
    "Wagner", "Kristof", "Lehto", "Mora", "Sato", "Tomic", "Berg",
)

CLUB_SUFFIXES = ("FC", "United", "City", "Athletic", "Rovers", "Wanderers", "Albion", "SC",
                 "Town", "Sporting")
CLUB_PREFIXES = ("Dynamo", "Real", "Olympic", "Racing", "Union")
LEAGUE_NAMES = ("First Division", "Premier League", "Super League", "National League",
                "Championship")

PARTIES = (
    "Social Democratic Party", "Conservative Party", "Liberal Party", "Green Party",
    "Farmers' Union", "People's Alliance", "Labour Party", "Centre Party",
    "Christian Democrats", "Left Alliance", "Reform Movement", "Regionalist League",
    "Workers' Front", "Progress Bloc", "Civic Platform", "Pirate Party", "Unity List",
    "Coastal Federation",
)

AWARD_CATEGORIES = (
    "Best Picture", "Best Director", "Best Actor", "Best Actress", "Best Supporting Actor",
    "Best Supporting Actress", "Best Screenplay", "Best Cinematography", "Best Editing",
    "Best Original Score", "Best Production Design", "Best Costume Design",
    "Best Documentary", "Best Animated Feature",
)

ADJECTIVES = (
    "Silent", "Golden", "Broken", "Distant", "Hollow", "Crimson", "Frozen", "Velvet", "Quiet",
    "Burning", "Pale", "Wild", "Hidden", "Restless", "Bitter", "Northern", "Endless", "Gentle",
    "Iron", "Paper", "Secret", "Last", "Wandering", "Electric", "Lonely", "Bright", "Savage",
    "Little", "Glass", "Painted",
)
NOUNS = (
    "Harbour", "Winter", "Orchard", "River", "Lantern", "Mirror", "Garden", "Horizon",
    "Shadow", "Station", "Meadow", "Empire", "Signal", "Tide", "Compass", "Ember", "Island",
    "Kingdom", "Letter", "Machine", "Season", "Summer", "Thunder", "Voyage", "Window",
    "Cathedral", "Canyon", "Feather", "Lighthouse", "Procession", "Frontier", "Echo",
    "Avalanche", "Carousel", "Monsoon", "Satellite",
)
PLURAL_NOUNS = (
    "Harrows", "Lanterns", "Foxes", "Sparrows", "Pilots", "Mariners", "Strangers", "Wolves",
    "Ravens", "Drifters", "Saints", "Tigers", "Comets", "Ghosts", "Seasons", "Architects",
    "Hounds", "Owls", "Echoes", "Monarchs", "Rivals", "Sirens", "Magpies", "Orchids",
)
BAND_WORDS = (
    "Glasshouse", "Mordavia", "Kettleburn", "Saltmarsh", "Halcyon", "Nightjar", "Brimstone",
    "Quiverfall", "Lowtide", "Starling", "Copperline", "Driftwood", "Moonrake", "Thornbury",
    "Wolfsbane", "Ironweed", "Paperhouse", "Silvergate", "Amberlight", "Blackwater",
)
RECORD_LABELS = (
    "Northlight Records", "Harbour Records", "Blue Anchor", "Meridian Music", "Kestrel Records",
    "Oakfield Sound", "Red Lantern Records", "Polestar", "Greywood Records", "Sundial Music",
    "Vantage Records", "Tidewater", "Eastbank Records", "Lowland Sound",
)
STUDIO_WORDS = ("Pictures", "Films", "Studios", "Film Company", "Productions", "Cinema")

GAMES = ("Meridian Games", "Boreal Games", "Austral Games", "Occidental Games",
         "Equinox Games", "Solstice Games", "Lakeland Games", "Continental Games")

RANGE_SUFFIXES = ("Mountains", "Range", "Alps", "Highlands")
PEAK_PATTERNS = ("Mount {}", "{} Peak", "{}horn", "Piz {}", "{} Dome", "Cerro {}", "{}kogel",
                 "Monte {}", "{} Spitze", "{} Needle")

MISSION_WORDS = (
    "Lumen", "Kestrel", "Aster", "Nimbus", "Corvid", "Halo", "Sable", "Tern", "Zenith",
    "Vireo", "Ardent", "Cinder", "Petrel", "Solace", "Quill", "Lyre", "Fathom", "Beacon",
    "Gyre", "Talon", "Wren", "Skylark", "Marten", "Ibis",
)
ROCKET_WORDS = ("Talon", "Aquila", "Strela", "Pyre", "Heron", "Arrow", "Orca", "Vesper",
                "Kite", "Lance", "Tempest", "Bastion")
ROMAN = ("I", "II", "III", "IV", "V", "VI")
DESTINATIONS_EARLY = ("Low Earth orbit", "Low Earth orbit", "Suborbital flight", "Lunar flyby",
                      "Lunar orbit", "Geostationary orbit")
DESTINATIONS_LATE = ("Low Earth orbit", "Low Earth orbit", "Geostationary orbit", "Polar orbit",
                     "Lunar orbit", "Lunar surface", "Mars orbit", "Mars surface", "Venus orbit",
                     "Jupiter flyby", "Sun–Earth L1")
OUTCOMES = ("Success", "Success", "Success", "Success", "Success", "Partial failure",
            "Failure", "Launch failure")

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")

STAGE_TYPES = ("Flat stage", "Flat stage", "Hilly stage", "Mountain stage", "Mountain stage",
               "Individual time trial")

SEAS = ("Amber Sea", "Grey Sea", "Northern Ocean", "Strait of Merrow", "Gulf of Tessel",
        "Sea of Orun", "Western Ocean", "Bay of Kallen")

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                "seventeen", "eighteen", "nineteen", "twenty")
ORDINAL_WORDS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
                 "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                 "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
                 "twentieth", "twenty-first", "twenty-second", "twenty-third",
                 "twenty-fourth")
