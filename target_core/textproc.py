"""Tokenization for lexical retrieval and overlap analysis: one definition, used everywhere.

Lower-cased word and number tokens (Unicode-aware), English stop words removed. BM25,
TF-IDF and the failure analysis must agree on what a "word" is, so they share this.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

TOKENIZER_VERSION = 1
"""Bump when `tokenize` changes what it returns: lexical indexes saved on disk
(retrievers/index_files.py) carry it, and older ones are built again."""

STOPWORDS = frozenset("""
a an the of in on at to for by with from and or but as is was were are be been being
did do does has have had which what who whom whose when where how many much more most
than that this these those it its their there any all each per into over after before
during between not no yes i me my we our you your he she his her they them s
""".split())


def tokenize(text: str) -> list[str]:
    """Lower-cased word/number tokens of `text` without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?![\w])")


def _number_text(token: str) -> str:
    """One spelling per number: "3.40" -> "3.4", "2019.0" -> "2019", "1,000" -> "1000"."""
    plain = token.replace(",", "")
    try:
        value = float(plain)
    except ValueError:
        return token
    return f"{value:g}" if abs(value) < 1e15 else plain


def match_tokens(text: str) -> set[str]:
    """What a query and a table cell are matched on when words are highlighted: words of
    at least two characters that are not stop words (as `tokenize`), and numbers as
    whole tokens ("3.4" matches 3.4 or 3.40, never 3.35 nor the 3 in "3 rooms" unless
    the query says 3)."""
    numbers = {_number_text(m.group(0)) for m in _NUMBER.finditer(text)}
    words = {t for t in tokenize(text) if len(t) >= 2 and not t.isdigit()}
    return words | numbers
