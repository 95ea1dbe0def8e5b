"""Dataset and model text shown through Markdown, made inert."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")


def plain(text: object) -> str:
    """Escape Markdown (and Streamlit's :color[] / emoji syntax) so text renders inert."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", "  \n")


def code(text: object) -> str:
    """`text` as an inline code span: shown verbatim (Markdown escapes are literal inside
    one, so plain() there would show its backslashes: "concert\\_singer"). The fence is
    one backtick longer than the longest run of backticks in the text."""
    text = str(text).replace("\n", " ")
    runs = re.findall(r"`+", text)
    fence = "`" * (max((len(r) for r in runs), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
