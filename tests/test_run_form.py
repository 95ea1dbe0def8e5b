"""The Run page's form is a view (issue 28): its choices live in the URL and in the
session, so leaving and coming back, or opening a link, restores them; a bad value in a
link stops the page with an error naming it and no Launch button."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def _leave_and_come_back(at: AppTest) -> None:
    """Another page, then Run through the sidebar (its links carry no parameters)."""
    for page in ("pages/overview.py", "pages/failures.py", "pages/run.py"):
        at.query_params.clear()
        at.switch_page(page)
        at.run()
        assert not at.exception, (page, at.exception)


def test_choices_survive_leaving_and_coming_back(app) -> None:
    at = app(page="pages/run.py", dataset="demo-sql")
    at.number_input(key="run-k").set_value(5)
    at.number_input(key="run-limit").set_value(50).run()
    at.number_input(key="run-seed").set_value(3)
    at.multiselect(key="run-specs").set_value(["bm25"])
    at.selectbox(key="run-preset").set_value("header-only")
    at.selectbox(key="run-generator").set_value("heuristic")
    at.radio(key="run-context").set_value("oracle")
    at.run()
    assert at.query_params["k"] == "5" and at.query_params["limit"] == "50"
    assert at.query_params["view"] == "header-only"
    _leave_and_come_back(at)
    assert at.number_input(key="run-k").value == 5
    assert at.number_input(key="run-limit").value == 50
    assert at.number_input(key="run-seed").value == 3
    assert at.multiselect(key="run-specs").value == ["bm25"]
    assert at.selectbox(key="run-preset").value == "header-only"
    assert at.selectbox(key="run-generator").value == "heuristic"
    assert at.radio(key="run-context").value == "oracle"
    assert at.query_params["k"] == "5"  # and the URL says so again


def test_a_link_restores_the_form(app) -> None:
    at = app(page="pages/run.py", dataset="demo-qa", k="7", limit="12", seed="4",
             retriever="tfidf", view="target-ottqa", rows="header", generator="heuristic",
             context="none", budget="5000")
    assert not at.error, at.error
    assert at.number_input(key="run-k").value == 7
    assert at.number_input(key="run-limit").value == 12
    assert at.number_input(key="run-seed").value == 4
    assert at.multiselect(key="run-specs").value == ["tfidf"]
    assert at.selectbox(key="run-preset").value == "target-ottqa"
    assert at.selectbox(key="run-target-ottqa-format").value == "csv"
    assert at.selectbox(key="run-target-ottqa-rows").value == "header only"
    assert at.selectbox(key="run-generator").value == "heuristic"
    assert at.radio(key="run-context").value == "none"
    assert at.number_input(key="run-budget").value == 5000


def test_a_link_with_first_n_rows_and_toggles(app) -> None:
    at = app(page="pages/run.py", dataset="demo-qa", rows="7", title="off",
             table_id="on", format="json")
    assert not at.error, at.error
    assert at.selectbox(key="run-default-rows").value == "first N rows"
    assert at.number_input(key="run-default-n").value == 7
    assert at.toggle(key="run-default-title").value is False
    assert at.toggle(key="run-default-tid").value is True
    assert at.selectbox(key="run-default-format").value == "json"


@pytest.mark.parametrize(("param", "value"), [
    ("k", "-4"), ("k", "abc"), ("k", "1001"), ("limit", "99999"), ("seed", "x"),
    ("retriever", "nonexistent"), ("view", "nonexistent"), ("rows", "some"),
    ("title", "maybe"), ("format", "xml"), ("generator", "nonexistent"),
    ("context", "everything"), ("budget", "5"), ("prompt_set", "nonexistent"),
])
def test_a_bad_value_in_a_link_is_named_and_nothing_launches(app, param: str,
                                                            value: str) -> None:
    at = app(page="pages/run.py", dataset="demo-qa", **{param: value})
    assert len(at.error) == 1, at.error
    assert f"?{param}={value}" in at.error[0].value.replace("\\", "")
    assert not [b for b in at.button if b.label == "Launch"]
