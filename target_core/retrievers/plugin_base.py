"""What every `py:` retriever adapter shares (retrievers/plugin.py, target_plugin.py):
the class, its spec and code fingerprint, its errors named as its own, its results
checked."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from typing import Any

from target_core.registry import PluginError, split_options
from target_core.retrievers.base import Hits, Retriever


def call_with(fn: Callable[..., Any], *args: Any, **options: Any) -> Any:
    """fn(*args, **options), leaving out the keyword options fn does not take (a user's
    index() need not accept `progress`)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return fn(*args, **options)
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        names = {p.name for p in params}
        options = {k: v for k, v in options.items() if k in names}
    return fn(*args, **options)


class PluginAdapter(Retriever):
    """What every adapter shares: the spec, the class, the code fingerprint, run errors."""

    shape = ""

    def __init__(self, obj: Any, *, spec: str, code: str | None) -> None:
        self.obj = obj
        self.spec = spec
        self.code = code
        self.n_texts: int | None = None

    @property
    def name(self) -> str:
        return type(self.obj).__name__

    def fail(self, method: str, problem: str) -> PluginError:
        return PluginError(f"retriever '{self.spec}': {self.name}.{method} {problem}")

    def index_key(self, corpus_key: str) -> str:
        """The texts' key joined with the class's code fingerprint and, when the spec
        gives constructor arguments, a digest of them: an index a class persists under
        it is never reused for other code or other arguments."""
        options = split_options(self.spec)[1]
        parts = [corpus_key, self.code or "",
                 hashlib.sha256(options.encode()).hexdigest()[:12] if options else ""]
        return "-".join(p for p in parts if p)

    def details(self) -> dict[str, Any]:
        """Recorded with the run. `ranks_beyond_k` False: a gold table outside the hits
        has no rank (the Query page says why)."""
        remote = getattr(self.obj, "remote_details", None)  # a pyenv: class (remote.py)
        return {"plugin": self.name, "shape": self.shape, "code": self.code or "",
                "ranks_beyond_k": callable(getattr(self.obj, "score_all", None)),
                **(remote() if callable(remote) else {})}

    def call(self, method: str, *args: Any, **options: Any) -> Any:
        """The class's `method`, its exceptions (other than ours) named as its own."""
        try:
            return call_with(getattr(self.obj, method), *args, **options)
        except PluginError:
            raise
        except Exception as exc:
            raise self.fail(method, f"raised {type(exc).__name__}: {exc}") from exc

    def check_hits(self, method: str, hits: Hits, top_k: int) -> Hits:
        scores = [s for _, s in hits]
        if any(a < b for a, b in zip(scores, scores[1:], strict=False)):
            raise self.fail(method, f"returned hits not best first (scores {scores[:5]}...)")
        indexes = [i for i, _ in hits]
        if len(set(indexes)) != len(indexes):
            raise self.fail(method, f"returned a table twice: {indexes}")
        return hits[:top_k]


def describe(value: Any) -> str:
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__
