"""The one failure policy for every step whose work is LLM calls: a run's generations,
HySE's hypothetical tables, the summary retriever's summaries, the benchmark builder's
questions, a judge's ratings.

A step fails when all of its calls failed, or more than `max_share` of them did
(TARGET_MAX_FAILED_GENERATIONS, default 0.5): its numbers would measure the server, not
the pipeline. The reason counts the failures by class (llm.error_classes) and quotes the
first error whole, so the user sees what went wrong without opening anything:

    "3 of 3 hypothetical tables failed (connection 3); the first, query q1: cannot
    connect to 127.0.0.1:9 (model m): connection refused; check OPENAI_BASE_URL ..."

A failed step raises `LLMStepFailed` (a TargetError: the CLI exits non-zero with the
reason, a job is marked failed) before anything is stored as complete; failed calls are
never cached (llm.cache keeps successes only), so doing the step again asks only the
calls that failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from target_core.errors import TargetError
from target_core.llm.error_classes import classify_error

Failure = tuple[str, str, "str | None"]
"""(item id, error message, error class or None: read from the message)."""


class LLMStepFailed(TargetError):
    """A step's LLM calls failed beyond the policy; the message is the reason."""

    def __init__(self, reason: str, *, counts: dict[str, int] | None = None) -> None:
        super().__init__(reason)
        self.counts = counts or {}


@dataclass(frozen=True)
class Tally:
    """The outcome of one step's calls, as stored with its run (index info)."""

    calls: int
    failed: int
    classes: dict[str, int]
    first_error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"calls": self.calls, "failed": self.failed, "classes": dict(self.classes),
                "first_error": self.first_error}


def tally(failures: Sequence[Failure], n_calls: int) -> Tally:
    classes = Counter(kind or classify_error(error) for _, error, kind in failures)
    first = f"{failures[0][0]}: {failures[0][1]}" if failures else None
    return Tally(n_calls, len(failures), dict(classes.most_common()), first)


def failure_reason(failures: Sequence[Failure], n_calls: int, max_share: float, *,
                   calls: str = "generations", item: str = "query") -> str | None:
    """Why a step counts as failed, or None when it passes (module docstring).

    `failures` are the failed calls out of `n_calls`; `calls` names them in the reason
    ("generations", "hypothetical tables", "summaries") and `item` what an id is."""
    n_failed = len(failures)
    if not n_calls or not n_failed:
        return None
    if n_failed < n_calls and n_failed <= max_share * n_calls:
        return None
    kinds = ", ".join(f"{kind} {count}" for kind, count in tally(failures, n_calls)
                      .classes.items())
    share = ("" if n_failed == n_calls else
             f", more than the {max_share:.0%} TARGET_MAX_FAILED_GENERATIONS allows")
    item_id, error, _ = failures[0]
    return (f"{n_failed} of {n_calls} {calls} failed ({kinds}){share}; "
            f"the first, {item} {item_id}: {error}")


def enforce(failures: Sequence[Failure], n_calls: int, max_share: float, *,
            calls: str, item: str) -> Tally:
    """The step's tally; raises LLMStepFailed when `failure_reason` says it failed."""
    reason = failure_reason(failures, n_calls, max_share, calls=calls, item=item)
    if reason is not None:
        raise LLMStepFailed(reason, counts=tally(failures, n_calls).classes)
    return tally(failures, n_calls)


def llm_call_notes(index_info: Mapping[str, Any]) -> list[str]:
    """One sentence per step with failed calls in a run's index info (its "llm_calls"
    records, retrievers/llm_calls.py), e.g. "HySE: 2 of 5 hypothetical tables failed and
    fell back to the query (connection 2); first: query q3: cannot connect ..."; [] when
    none failed (or the run made no LLM calls)."""
    notes = []
    steps = index_info.get("llm_calls")
    for record in steps.values() if isinstance(steps, Mapping) else ():
        if not record.get("failed"):
            continue
        classes = ", ".join(f"{kind} {n}" for kind, n in record.get("classes", {}).items())
        notes.append(f"{record['title']}: {record['failed']} of {record['calls']} "
                     f"{record['what']} failed and {record['fallback']} ({classes}); "
                     f"first: {record['item']} {record['first_error']}")
    return notes
