"""target_core.read_models.params: a link's values checked without Streamlit."""

from __future__ import annotations

import pytest

from target_core.errors import TargetError
from target_core.read_models.params import (
    MAX_SHOWN,
    ParamError,
    check_choice,
    close_matches,
    known_list,
    parse_int,
    unknown_message,
)


def test_a_known_value_passes() -> None:
    assert check_choice("dataset", "demo-qa", ["demo-qa", "demo-sql"]) == "demo-qa"


def test_an_unknown_value_names_parameter_value_and_closest() -> None:
    with pytest.raises(ParamError) as caught:
        check_choice("dataset", "demo-q", ["demo-qa", "demo-sql", "handmade-qa"],
                     kind="dataset")
    error = caught.value
    assert isinstance(error, TargetError)
    assert (error.param, error.value) == ("dataset", "demo-q")
    message = str(error)
    assert message.startswith("Unknown dataset 'demo-q' in the link (?dataset=demo-q).")
    assert "Did you mean 'demo-qa'" in message
    assert "Known (3): 'demo-qa', 'demo-sql', 'handmade-qa'." in message


def test_nothing_close_suggests_nothing() -> None:
    message = unknown_message("run", "zzz", ["20250101-aaaa", "20250102-bbbb"])
    assert "Did you mean" not in message and "Known (2)" in message


def test_a_fragment_of_a_long_id_is_suggested() -> None:
    assert close_matches("bbbb", ["20250101-aaaa", "20250102-bbbb"]) == ["20250102-bbbb"]


def test_close_matches_ignore_case_and_keep_the_known_spelling() -> None:
    assert close_matches("DEMO-QA", ["demo-qa"]) == ["demo-qa"]


def test_long_lists_are_cut_with_a_count() -> None:
    known = [f"run-{i:03d}" for i in range(250)]
    listed = known_list(known)
    assert listed.count("'run-") == MAX_SHOWN and listed.endswith(f"and {250 - MAX_SHOWN} more")
    assert "run-249" not in unknown_message("run", "nonexistent", known)
    assert known_list([]) == "(none)"


@pytest.mark.parametrize("text, expected", [("10", 10), ("0", 0), (" 7 ", 7), ("+3", 3)])
def test_integers_parse(text: str, expected: int) -> None:
    assert parse_int("top_k", text, minimum=0, maximum=100) == expected


@pytest.mark.parametrize("text", ["abc", "", "1e3", "2.5", "0x10", "--1"])
def test_a_malformed_integer_names_parameter_and_value(text: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_int("top_k", text, minimum=1, maximum=100)
    assert str(caught.value) == (f"Invalid top_k '{text}' in the link (?top_k={text}): not an "
                                 "integer; expected an integer from 1 to 100.")


@pytest.mark.parametrize("text, bounds, expected", [
    ("-5", {"minimum": 0}, "out of range; expected an integer of at least 0."),
    ("101", {"minimum": 1, "maximum": 100}, "out of range; expected an integer from 1 to 100."),
    ("9", {"maximum": 8}, "out of range; expected an integer of at most 8."),
])
def test_out_of_range(text: str, bounds: dict, expected: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_int("limit", text, **bounds)
    assert str(caught.value) == f"Invalid limit '{text}' in the link (?limit={text}): {expected}"


def test_no_bounds_accepts_any_integer() -> None:
    assert parse_int("seed", "-12") == -12
