"""How counts are written in sentences: "1 row", "2 rows", "1 query", "3 queries", "1 index",
"2 indexes". One rule, so that no page writes "1 rows"."""

from __future__ import annotations

VERBS = {"is": "are", "was": "were", "has": "have"}
"""Verbs that agree with a count: the singular form, then the plural."""


def plural(noun: str) -> str:
    """`noun`'s plural: -y after a consonant -> -ies; -s, -x, -ch, -sh -> +es; else +s."""
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless n is 1: counted(1, "row") == "1 row"; a phrase's
    last word is the noun: counted(2, "failed run") == "2 failed runs"."""
    head, _, last = noun.rpartition(" ")
    word = last if n == 1 else plural(last)
    return f"{n} {head + ' ' if head else ''}{word}"


def agreeing(n: int, verb: str) -> str:
    """`verb` (a key of VERBS: "is", "was", "has") as a count of `n` takes it."""
    return verb if n == 1 else VERBS[verb]
