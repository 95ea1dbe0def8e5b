"""Tokenization for lexical retrieval and overlap analysis: one definition, used everywhere.

Lower-cased word and number tokens (Unicode-aware), English stop words removed. BM25,
TF-IDF and the failure analysis must agree on what a "word" is, so they share this.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset("""
a an the of in on at to for by with from and or but as is was were are be been being
did do does has have had which what who whom whose when where how many much more most
than that this these those it its their there any all each per into over after before
during between not no yes i me my we our you your he she his her they them s
""".split())


def tokenize(text: str) -> list[str]:
    """Lower-cased word/number tokens of `text` without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]
