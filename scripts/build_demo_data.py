"""Regenerate the bundled demo datasets under data/demo/ (deterministic; output committed).

    python scripts/build_demo_data.py [OUT_ROOT]

demo-qa and demo-fact come from the package scripts/demo_wiki/, demo-sql from the package
scripts/demo_sql/, demo-docs and demo-mixed (documents.jsonl, made from demo-qa's tables,
so built after it) from scripts/demo_docs/.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parent
DEFAULT_OUT = SCRIPTS.parent / "data" / "demo"
BUILDERS = ("demo_wiki", "demo_sql", "demo_docs")


def load_builder(name: str) -> ModuleType:
    """Import scripts/<name> by name, a module or a package alike, with scripts/ on sys.path
    (scripts/ itself is not a package)."""
    for path in (SCRIPTS, SCRIPTS.parent):  # the builders, and target_core for SQL rules
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    return importlib.import_module(name)


def build_all(out_root: Path) -> None:
    out_root.mkdir(parents=True, exist_ok=True)
    for name in BUILDERS:
        load_builder(name).build(out_root)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    build_all(out)
    print(f"demo datasets written to {out}")
