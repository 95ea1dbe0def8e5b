"""Regenerate the bundled demo datasets under data/demo/ (deterministic; output committed).

    python scripts/build_demo_data.py [OUT_ROOT]

demo-qa and demo-fact come from scripts/demo_wiki.py, demo-sql from scripts/demo_sql.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parent
DEFAULT_OUT = SCRIPTS.parent / "data" / "demo"
BUILDERS = ("demo_wiki", "demo_sql")


def load_builder(name: str) -> ModuleType:
    """Import scripts/<name>.py by path (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build_all(out_root: Path) -> None:
    out_root.mkdir(parents=True, exist_ok=True)
    for name in BUILDERS:
        load_builder(name).build(out_root)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    build_all(out)
    print(f"demo datasets written to {out}")
