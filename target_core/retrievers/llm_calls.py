"""The LLM calls a retriever makes before it searches (HySE's hypothetical tables, the
summary retriever's summaries), judged by the one failure policy (llm.policy) and
recorded with the run.

A retriever reports each step as `LLMCalls`: how many calls, which failed (item id,
error, class). The runner applies the policy: a step whose calls all failed, or more
than TARGET_MAX_FAILED_GENERATIONS of them, fails the run before any query is stored
(a summary step before anything is embedded). Within the tolerance the run completes
and its index info holds, under "llm_calls", one record per step:

    {"hyse": {"title": "HySE", "calls": 5, "failed": 2, "classes": {"connection": 2},
              "first_error": "q3: cannot connect ...", "what": "hypothetical tables",
              "item": "query", "fallback": "fell back to the query",
              "failed_items": {"q3": "connection", "q4": "connection"}}}

`llm_call_notes` (llm/policy.py) words it for `show` and the Run page. Failed calls are not cached
(llm.cache keeps successes), so running the configuration again asks only those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from target_core.llm.error_classes import classify_error
from target_core.llm.policy import Failure, LLMStepFailed, failure_reason, tally
from target_core.llm.policy import llm_call_notes as llm_call_notes  # runner, show, tests

MAX_LISTED = 100
"""Failed items named one by one in a record; the counts cover the rest."""


@dataclass(frozen=True)
class LLMCalls:
    """One step's LLM calls in a run and the ones that failed."""

    step: str
    """Its key under the index info's "llm_calls" ("hyse", "summary")."""
    title: str
    """How notes name it ("HySE", "Summaries")."""
    what: str
    """What one call makes, plural ("hypothetical tables", "summaries")."""
    item: str
    """What a failure's id names ("query", "table")."""
    fallback: str
    """What a failed call's item got instead ("fell back to the query")."""
    n_calls: int
    failures: tuple[Failure, ...] = ()

    def named(self, names: Mapping[str, str]) -> LLMCalls:
        """The same calls with failure ids renamed by `names` (a query's text -> its id)."""
        return replace(self, failures=tuple((names.get(i, i), e, c)
                                            for i, e, c in self.failures))

    def enforce(self, max_share: float) -> None:
        """Raise LLMStepFailed ("HySE: 5 of 5 hypothetical tables failed ...") when the
        policy says the step failed."""
        reason = failure_reason(self.failures, self.n_calls, max_share, calls=self.what,
                                item=self.item)
        if reason is not None:
            raise LLMStepFailed(f"{self.title}: {reason}",
                                counts=tally(self.failures, self.n_calls).classes)

    def record(self) -> dict[str, Any]:
        """What the run's index info keeps (module docstring)."""
        return tally(self.failures, self.n_calls).to_dict() | {
            "title": self.title, "what": self.what, "item": self.item,
            "fallback": self.fallback,
            "failed_items": {i: c or classify_error(e)
                             for i, e, c in self.failures[:MAX_LISTED]}}



def llm_calls_info(steps: Sequence[LLMCalls]) -> dict[str, Any]:
    """The index info's "llm_calls" entry for a run's steps ({} without any)."""
    return {"llm_calls": {s.step: s.record() for s in steps}} if steps else {}
