"""`python -m demo_wiki [OUT_ROOT]`, run from scripts/: write OUT_ROOT/demo-qa and
OUT_ROOT/demo-fact (default data/demo under the repository root).
scripts/build_demo_data.py builds every demo."""

from __future__ import annotations

import sys
from pathlib import Path

from . import PLANS, build

REPO_ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out_root = Path(args[0]) if args else REPO_ROOT / "data" / "demo"
    build(out_root)
    for plan in PLANS:
        print(f"wrote {out_root / plan.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
