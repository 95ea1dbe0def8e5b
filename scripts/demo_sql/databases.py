"""The eight demo databases in build order: each one's schema, row generator and question
templates. The order of GENERATORS fixes the order of the corpus and of the query ids."""

from __future__ import annotations

import random
from collections.abc import Callable

from . import (
    queries_airline,
    queries_city_hr,
    queries_football_league,
    queries_hospital,
    queries_music_streaming,
    queries_public_library,
    queries_retail_store,
    queries_university,
    schemas_commercial,
    schemas_public,
)
from .data_commercial import (
    gen_airline,
    gen_football_league,
    gen_music_streaming,
    gen_retail_store,
)
from .data_public import gen_city_hr, gen_hospital, gen_public_library, gen_university
from .framework import Template
from .values import Rows

SCHEMAS: dict[str, list[str]] = {
    "university": schemas_public.UNIVERSITY,
    "hospital": schemas_public.HOSPITAL,
    "retail_store": schemas_commercial.RETAIL_STORE,
    "airline": schemas_commercial.AIRLINE,
    "public_library": schemas_public.PUBLIC_LIBRARY,
    "music_streaming": schemas_commercial.MUSIC_STREAMING,
    "football_league": schemas_commercial.FOOTBALL_LEAGUE,
    "city_hr": schemas_public.CITY_HR,
}

GENERATORS: dict[str, Callable[[random.Random], Rows]] = {
    "university": gen_university,
    "hospital": gen_hospital,
    "retail_store": gen_retail_store,
    "airline": gen_airline,
    "public_library": gen_public_library,
    "music_streaming": gen_music_streaming,
    "football_league": gen_football_league,
    "city_hr": gen_city_hr,
}

TEMPLATES: dict[str, list[tuple[Template, int]]] = {
    "university": queries_university.TEMPLATES,
    "hospital": queries_hospital.TEMPLATES,
    "retail_store": queries_retail_store.TEMPLATES,
    "airline": queries_airline.TEMPLATES,
    "public_library": queries_public_library.TEMPLATES,
    "music_streaming": queries_music_streaming.TEMPLATES,
    "football_league": queries_football_league.TEMPLATES,
    "city_hr": queries_city_hr.TEMPLATES,
}
