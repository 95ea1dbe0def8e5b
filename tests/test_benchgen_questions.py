"""Template questions for sampled SQL (target_core.benchgen.questions).

The shipped templates carry question patterns; every question written for SQL sampled
from them on the demo databases must pass the offline round-trip check. Hand-built
cases pin down what the check accepts (plural/singular, thousands separators) and
what it rejects (a missing value or time reference).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from target_core.benchgen.instantiate import SampledQuery, sample_queries
from target_core.benchgen.questions import (
    _plain,
    binding_words,
    round_trip,
    write_questions,
)
from target_core.benchgen.templates import (
    EXAMPLE_TEMPLATES_DIR,
    Template,
    TemplateError,
    load_templates,
    parse_template,
)
from target_core.benchgen.timeref import resolve
from target_core.config import load_settings
from target_core.datasets import load_dataset


def _template(sql: str, placeholders: dict[str, Any], questions: list[str] | None = None
              ) -> Template:
    record: dict[str, Any] = {"id": "t", "database": "db", "sql": sql,
                              "placeholders": placeholders}
    if questions is not None:
        record["questions"] = questions
    return parse_template(record)


def _item(bindings: dict[str, Any], time: dict[str, str] | None = None) -> SampledQuery:
    return SampledQuery(template_id="t", database="db", sql="SELECT 1", difficulty=None,
                        bindings=bindings, time=time, reference_date=None,
                        result_preview=(), n_rows=1)


# --- the shipped templates -------------------------------------------------------------


def test_every_shipped_template_has_question_patterns() -> None:
    templates = load_templates(EXAMPLE_TEMPLATES_DIR)
    assert templates
    for t in templates:
        assert len(t.questions) >= 2, t.id


def test_shipped_questions_round_trip_on_demo_databases(tmp_path: Path) -> None:
    templates = load_templates(EXAMPLE_TEMPLATES_DIR)
    by_id = {t.id: t for t in templates}
    databases = load_dataset("demo-sql", load_settings(tmp_path / "ws")).databases
    report = sample_queries(templates, databases, n=5, seed=0)
    assert {q.template_id for q in report.queries} == set(by_id)
    for item in report.queries:
        template = by_id[item.template_id]
        written = write_questions(item, template)
        assert len(written) == len(template.questions)
        for q in written:
            assert "{" not in q.text and "}" not in q.text, q.text
            check = round_trip(q.text, item, template)
            assert check.passed, (item.template_id, q.text, check.missing)


# --- binding words, the plain question and the round-trip check ------------------------


FILTER = {"col": {"type": "column", "table": "orders", "choices": ["payment_methods"]},
          "val": {"type": "value", "column_from": "col"}}


def test_missing_value_fails_and_is_listed() -> None:
    template = _template("SELECT COUNT(*) FROM orders WHERE {col} = {val}", FILTER)
    item = _item({"col": '"orders"."payment_methods"', "val": "Gift card"})
    assert binding_words(item, template) == {"col": "payment methods", "val": "Gift card"}
    check = round_trip("How many orders were paid by payment method?", item, template)
    assert not check.passed
    assert check.missing == ["val (Gift card)"]


def test_plural_and_singular_column_words_match() -> None:
    template = _template("SELECT COUNT(*) FROM orders WHERE {col} = {val}", FILTER)
    item = _item({"col": '"orders"."payment_methods"', "val": "Gift card"})
    # column "payment_methods", question says "payment method"
    assert round_trip("Orders by payment method Gift card", item, template).passed
    # and the plain question of the writer passes too
    words = binding_words(item, template)
    plain = _plain(template, words)
    assert plain == "What is the payment methods for Gift card?"
    assert round_trip(plain, item, template).passed
    assert [q.style for q in write_questions(item, template)] == ["plain"]


@pytest.mark.parametrize(("value", "question"), [
    (1000, "Products priced at 1,000 or more"),
    ("1,000", "Products priced at 1000 or more"),
    (1250000, "Products priced at 1,250,000 or more"),
])
def test_thousands_separators_match(value: Any, question: str) -> None:
    template = _template("SELECT name FROM products WHERE unit_price >= {price}",
                         {"price": {"type": "value", "column": "products.unit_price"}})
    item = _item({"price": value})
    assert round_trip(question, item, template).passed


def test_time_description_is_required() -> None:
    template = _template(
        "SELECT COUNT(*) FROM orders WHERE status = {status} AND {period}",
        {"status": {"type": "value", "column": "orders.status"},
         "period": {"type": "time", "column": "orders.order_date",
                    "expressions": ["2024-12"]}},
        ["How many {status} orders were placed {period}?"])
    time_range = resolve("2024-12", date(2025, 1, 1))
    item = _item({"status": "Pending", "period": "2024-12"}, time_range.to_dict())
    words = binding_words(item, template)
    assert words["period"] == "in December 2024"
    [written] = write_questions(item, template)
    assert written.text == "How many Pending orders were placed in December 2024?"
    assert written.style == "pattern 1"
    assert round_trip(written.text, item, template).passed
    check = round_trip("How many Pending orders were placed?", item, template)
    assert not check.passed
    assert check.missing == ["period (in December 2024)"]
    # another month is not the same time reference
    assert not round_trip("How many Pending orders were placed in November 2024?",
                          item, template).passed


# --- pattern checks on load ------------------------------------------------------------


def test_pattern_with_undeclared_placeholder_is_rejected() -> None:
    with pytest.raises(TemplateError, match=r"field 'questions\[0\]'.*'\{region\}'") as err:
        _template("SELECT COUNT(*) FROM orders WHERE status = {status}",
                  {"status": {"type": "value", "column": "orders.status"}},
                  ["How many {status} orders in {region}?", "{status} orders"])
    assert err.value.field == "questions[0]"
