"""What the real-browser tests share: scripts/screenshots.py (serve the app, drive
Debian's chromium) and the rule that chromium's absence skips them, except under CI
(CI=true), where it fails: `make test` installs chromium."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from jobs_support import wait_for_jobs

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
assert _spec is not None and _spec.loader is not None
screenshots = importlib.util.module_from_spec(_spec)
__all__ = ["require_chromium", "screenshots", "wait_for_jobs"]
_spec.loader.exec_module(screenshots)


def require_chromium() -> None:
    """Call at module level: skip (or, under CI, fail) without chromium."""
    if screenshots.CHROMIUM.exists():
        return
    if os.environ.get("CI"):
        pytest.fail("chromium is missing under CI: `make test` should have installed it",
                    pytrace=False)
    pytest.skip("chromium not installed (apt-get install chromium)", allow_module_level=True)

