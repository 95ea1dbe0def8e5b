"""TARGET Explorer's library. The names below are loaded on first use, so importing a
submodule (target_core.types) stays light.

    import target_core
    print(target_core.check_retriever("py:my_retriever.py:MyRetriever"))
"""

from __future__ import annotations

from typing import Any

_LAZY = {"check_retriever": "target_core.retrievers.check",
         "check_generator": "target_core.generators.check"}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'target_core' has no attribute {name!r}")
