"""Questions for sampled SQL, offline: the template question writer (a labelled baseline,
no model) and the round-trip check that a question mentions what its SQL uses.

The writer fills a template's question patterns (``"questions"`` in the template, the
same ``{placeholder}`` names as its SQL) with words for each binding: an aggregation
becomes "total", "average", ...; a column its name in words; a value itself; a time
reference its description (target_core.benchgen.timeref.describe). A template without
patterns gets one plain question built from its bindings.

The round-trip check passes when the question contains every filter value, the words of
every column binding (a crude singular is enough: "orders" matches "order") and the
time reference as described; what is missing is listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from target_core.benchgen.instantiate import SampledQuery
from target_core.benchgen.templates import Template
from target_core.benchgen.timeref import TimeRange, describe
from target_core.textproc import tokenize

WRITER_LABEL = "template (offline baseline, no model)"
AGGREGATION_WORDS = {"SUM": "total", "COUNT": "number of", "AVG": "average",
                     "MIN": "lowest", "MAX": "highest"}
ORDER_WORDS = {"ASC": "lowest first", "DESC": "highest first"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class WrittenQuestion:
    text: str
    style: str
    """Which phrasing: "pattern 1", "pattern 2", ... or "plain"."""
    writer: str = WRITER_LABEL


ROUND_TRIP_METHOD = "round-trip (mentions every value, column and time reference)"


@dataclass(frozen=True)
class Written:
    """What a question writer gave for one sampled query: its questions, or why none."""

    questions: list[WrittenQuestion]
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    """An automatic check of one question against its SQL.

    `passed` is None when the check could not be made (e.g. the judge's call failed);
    `missing` lists what the round trip did not find; `reason` is the judge's words.
    """

    passed: bool | None
    missing: list[str] = field(default_factory=list)
    method: str = ROUND_TRIP_METHOD
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "missing": list(self.missing), "method": self.method,
                "reason": self.reason}


class QuestionWriter(Protocol):
    """Writes questions for a sampled query (the template writer, an LLM writer)."""

    spec: str
    label: str
    concurrency: int
    """How many items the builder may write at once (1: one at a time)."""

    def write(self, item: SampledQuery, template: Template) -> Written: ...


class Judge(Protocol):
    """Checks that a question is answered by its SQL (round trip, an LLM judge)."""

    spec: str
    label: str

    def judge(self, question: str, item: SampledQuery, template: Template) -> Verdict: ...


def column_words(sql_text: str) -> str:
    """'"orders"."total_amount"' -> 'total amount' (the column, in words)."""
    name = sql_text.replace('"', "").rsplit(".", 1)[-1]
    return name.replace("_", " ").strip()


def binding_words(item: SampledQuery, template: Template) -> dict[str, str]:
    """Each placeholder's binding as words for a question."""
    words: dict[str, str] = {}
    for p in template.placeholders:
        value = item.bindings.get(p.name)
        if p.type == "aggregation":
            words[p.name] = AGGREGATION_WORDS.get(str(value), str(value).lower())
        elif p.type in ("column", "group_by"):
            words[p.name] = column_words(str(value))
        elif p.type == "order":
            words[p.name] = ORDER_WORDS.get(str(value), str(value).lower())
        elif p.type == "time" and item.time:
            words[p.name] = describe(TimeRange.from_dict(item.time))
        else:
            words[p.name] = str(value)
    return words


def _fill(pattern: str, words: Mapping[str, str]) -> str:
    text = _PLACEHOLDER.sub(lambda m: words.get(m.group(1), m.group(0)), pattern)
    return re.sub(r"\s+", " ", text).strip()


def _plain(template: Template, words: Mapping[str, str]) -> str:
    by_type: dict[str, list[str]] = {}
    for p in template.placeholders:
        by_type.setdefault(p.type, []).append(words[p.name])
    what = " ".join([*by_type.get("aggregation", []), *by_type.get("column", [])])
    parts = [f"What is the {what}" if what else "How many rows are there"]
    if "value" in by_type:
        parts.append("for " + " and ".join(by_type["value"]))
    if "group_by" in by_type:
        parts.append("per " + " and ".join(by_type["group_by"]))
    parts += by_type.get("time", [])
    return " ".join(parts) + "?"


def write_questions(item: SampledQuery, template: Template) -> list[WrittenQuestion]:
    """One question per pattern of the template (or one plain question)."""
    words = binding_words(item, template)
    patterns: Sequence[str] = getattr(template, "questions", ()) or ()
    if not patterns:
        return [WrittenQuestion(_plain(template, words), "plain")]
    return [WrittenQuestion(_fill(p, words), f"pattern {i}")
            for i, p in enumerate(patterns, start=1)]


def _stem(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") else token


def _mentions(question: str, needed: str) -> bool:
    have = {_stem(t) for t in tokenize(question.replace(",", ""))}
    want = {_stem(t) for t in tokenize(needed.replace(",", ""))}
    return want <= have


def round_trip(question: str, item: SampledQuery, template: Template) -> Verdict:
    """Does `question` mention every value, column and time reference of `item`?"""
    words = binding_words(item, template)
    missing = []
    for p in template.placeholders:
        if p.type in ("value", "column", "group_by", "time") and not _mentions(
                question, words[p.name]):
            missing.append(f"{p.name} ({words[p.name]})")
    return Verdict(passed=not missing, missing=missing)


class TemplateWriter:
    """The offline baseline writer: the template's question patterns, filled in."""

    spec = "template"
    label = WRITER_LABEL
    concurrency = 1

    def write(self, item: SampledQuery, template: Template) -> Written:
        return Written(write_questions(item, template))


class RoundTripJudge:
    """The offline check: the question mentions what the SQL uses (no model)."""

    spec = "round-trip"
    label = ROUND_TRIP_METHOD

    def judge(self, question: str, item: SampledQuery, template: Template) -> Verdict:
        return round_trip(question, item, template)
