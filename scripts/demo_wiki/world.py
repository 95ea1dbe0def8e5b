"""`World`: the fictional names of one dataset (places, people, clubs, titles, bands), drawn
from one seeded Random and never handed out twice."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from . import vocab as V
from .text import STOPWORDS


class World:
    """A seeded Random plus every name handed out so far, so no two entities share a name
    (a place that names a mountain range never turns up as a town or a club)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._used: set[str] = set(V.COUNTRIES)

    def fresh(self, make: Callable[[], str]) -> str:
        for _ in range(5000):
            name = make()
            if name not in self._used:
                self._used.add(name)
                return name
        raise RuntimeError("ran out of fresh names; extend vocab.py")

    def place(self) -> str:
        rng = self.rng

        def make() -> str:
            middle = rng.choice(V.PLACE_MID) if rng.random() < 0.45 else ""
            return rng.choice(V.PLACE_START) + middle + rng.choice(V.PLACE_END)
        return self.fresh(make)

    def person(self, sex: str | None = None) -> str:
        """A new full name; `sex` ("f" or "m") where a table implies it (a men's race)."""
        first = {"f": V.FEMALE_NAMES, "m": V.MALE_NAMES}.get(sex or "", V.FIRST_NAMES)
        return self.fresh(lambda: f"{self.rng.choice(first)} {self.rng.choice(V.SURNAMES)}")

    def club(self) -> str:
        place = self.place()
        if self.rng.random() < 0.8:
            return f"{place} {self.rng.choice(V.CLUB_SUFFIXES)}"
        return f"{self.rng.choice(V.CLUB_PREFIXES)} {place}"

    def venue(self) -> str:
        return self.rng.choice(("{} Stadium", "{} Park", "Stadion {}", "{} Arena")).format(
            self.place())

    def work_title(self) -> str:
        """A title for a film, album, episode or show."""
        rng = self.rng

        def make() -> str:
            adj, noun, other = rng.choice(V.ADJECTIVES), *rng.sample(V.NOUNS, 2)
            return rng.choice((f"{adj} {noun}", f"The {adj} {noun}", f"{noun} and {other}",
                               f"The {noun}", f"{noun} of the {other}", f"{adj} {other}s"))
        return self.fresh(make)

    def band(self) -> str:
        rng = self.rng
        style = rng.random()
        if style < 0.35:
            return self.fresh(lambda: f"The {rng.choice(V.ADJECTIVES)} "
                                      f"{rng.choice(V.PLURAL_NOUNS)}")
        if style < 0.55:
            free = [b for b in V.BAND_WORDS if b not in self._used]
            if free:
                return self.fresh(lambda: rng.choice(free))
        if style < 0.8:
            return self.person()
        return self.place()

    def peak(self) -> str:
        return self.rng.choice(V.PEAK_PATTERNS).format(self.place())

    def studio(self) -> str:
        return f"{self.place()} {self.rng.choice(V.STUDIO_WORDS)}"


def demonym(country: str) -> str:
    return country + "n"


def title_words(text: str) -> tuple[str, ...]:
    """Candidate decisive words of a name: its content words, longest first."""
    words = [w for w in re.findall(r"[^\W_]+", text) if w.lower() not in STOPWORDS]
    return tuple(sorted(dict.fromkeys(words), key=lambda w: (-len(w), w)))
