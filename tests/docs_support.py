"""The documentation's pages (docs/, built by mkdocs.yml), for the tests that check facts
in them: each fact is checked on the page that states it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """One page's Markdown, by its path under docs/ ('settings.md', 'data/index.md')."""
    return (DOCS / name).read_text(encoding="utf-8")


def all_pages() -> str:
    """Every page, one after the other (for a fact whose page may move)."""
    return "\n\n".join(path.read_text(encoding="utf-8")
                       for path in sorted(DOCS.rglob("*.md")))


def anchors(text: str) -> set[str]:
    """The anchors MkDocs gives a page's headings (Python-Markdown's toc slugify)."""
    from markdown.extensions.toc import slugify

    fence = False
    found = set()
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (match := re.match(r"^#{1,6} (.+)$", line)):
            found.add(slugify(match.group(1), "-"))
    return found
