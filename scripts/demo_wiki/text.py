"""Words and sentences: tokens and content words (how lexical overlap is judged), template
filling ({name} fields) and the tidying that turns a filled template into a question or a
sentence ("1 goals" -> "1 goal", a capital, a final full stop)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from . import vocab as V

STOPWORDS = frozenset((
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or",
    "but", "as", "is", "was", "were", "are", "be", "been", "being", "did", "do", "does", "has",
    "have", "had", "which", "what", "who", "whom", "whose", "when", "where", "how", "many",
    "much", "more", "most", "than", "that", "this", "these", "those", "it", "its", "their",
    "there", "s", "any", "all", "each", "per", "into", "over", "after", "before", "during",
    "between", "not", "no",
))
"""Function words ignored when measuring lexical overlap (tests/test_demo_wiki.py imports it)."""


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric runs: the unit in which "a word occurs in a table" is judged."""
    return re.findall(r"[^\W_]+", text.lower())


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> set[str]:
    """Tokens minus stopwords, with a plural "s" stripped so "parks" matches "park"."""
    return {_stem(w) for w in tokens(text) if w not in STOPWORDS}


_FIELD = re.compile(r"\{([^{}]+)\}")
_SINGULAR = {"points": "point", "goals": "goal", "matches": "match", "seats": "seat",
             "votes": "vote", "medals": "medal", "defeats": "defeat", "awards": "award",
             "stages": "stage", "albums": "album", "episodes": "episode", "copies": "copy",
             "finishes": "finish", "spectators": "spectator", "visitors": "visitor",
             "units": "unit", "ballots": "ballot", "places": "place", "finals": "final",
             "missions": "mission"}
_ONE = re.compile(r"(?<![\d.,])\b1 ((?:gold |silver |bronze |podium |league |first-place "
                  r"|second-place |third-place )?)(\w+)")


def fill(template: str, values: Mapping[str, Any]) -> str:
    """Substitute {name} fields (names may contain spaces or dashes, unlike str.format)."""
    return _FIELD.sub(lambda m: str(values[m.group(1)]), template)


def _fix_one(match: re.Match[str]) -> str:
    word = match.group(2)
    if word == "times":
        return "once"
    return f"1 {match.group(1)}{_SINGULAR.get(word, word)}"


def tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([?.,;:])", r"\1", text)
    return _ONE.sub(_fix_one, text)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def sentence(text: str) -> str:
    text = _capital(tidy(text))
    return text if text.endswith((".", "!", "?")) else text + "."


def question(text: str) -> str:
    text = _capital(tidy(text)).rstrip(".")
    return text if text.endswith("?") else text + "?"


def number_word(n: int) -> str:
    return V.NUMBER_WORDS[n] if 0 <= n < len(V.NUMBER_WORDS) else str(n)


def ordinal(text: str) -> str:
    if text.isdigit() and int(text) < len(V.ORDINAL_WORDS):
        return V.ORDINAL_WORDS[int(text)]
    return text


def join_names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
