"""Dataset and model text shown through Markdown, made inert."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")


def plain(text: object) -> str:
    """Escape Markdown (and Streamlit's :color[] / emoji syntax) so text renders inert."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", "  \n")
