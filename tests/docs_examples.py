"""The worked examples of docs/extending/*.md, as the tests that run them read them: a
page's Python code blocks, and a block executed as a module (so the page cannot rot)."""

from __future__ import annotations

import re
import types
from pathlib import Path

EXTENDING = Path(__file__).resolve().parent.parent / "docs" / "extending"


def code_blocks(page: Path, *, after: str | None = None, count: int | None = None
                ) -> list[str]:
    """The ```python blocks of `page` (those after the heading `after`, when given); with
    `count`, the page must show exactly that many."""
    text = page.read_text(encoding="utf-8")
    if after is not None:
        assert after in text, f"{page.name} lost its section {after!r}"
        text = text.split(after, 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks, f"{page.name} lost its worked example"
    if count is not None:
        assert len(blocks) == count, f"{page.name} shows {len(blocks)} code blocks, not {count}"
    return blocks


def page_module(name: str, code: str, page: Path) -> types.ModuleType:
    """`code` executed as the module `name` (its tracebacks point at `page`)."""
    module = types.ModuleType(name)
    module.__file__ = str(page)
    exec(compile(code, str(page), "exec"), module.__dict__)  # noqa: S102
    return module
