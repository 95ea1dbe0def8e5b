"""`python -m demo_sql [OUT_ROOT]`, run from scripts/: write OUT_ROOT/demo-sql (default
data/demo under the repository root). scripts/build_demo_data.py builds every demo."""

from __future__ import annotations

import sys
from pathlib import Path

from . import NAME, build

REPO_ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out_root = Path(args[0]) if args else REPO_ROOT / "data" / "demo"
    build(out_root)
    print(f"wrote {out_root / NAME}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
