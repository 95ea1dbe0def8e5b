"""How counts are written (target_core.wording): no page says "1 rows"."""

from __future__ import annotations

import pytest

from target_core.wording import agreeing, counted, plural


@pytest.mark.parametrize(("noun", "many"), [
    ("row", "rows"), ("query", "queries"), ("index", "indexes"), ("day", "days"),
    ("pass", "passes"), ("match", "matches"), ("extra entry", "extra entries")])
def test_plural(noun: str, many: str) -> None:
    assert plural(noun.rpartition(" ")[2]) == many.rpartition(" ")[2]
    assert counted(2, noun) == f"2 {many}"
    assert counted(1, noun) == f"1 {noun}"


def test_zero_is_plural_and_verbs_agree() -> None:
    assert counted(0, "failed run") == "0 failed runs"
    assert [agreeing(n, "is") for n in (0, 1, 2)] == ["are", "is", "are"]
    assert agreeing(3, "has") == "have" and agreeing(1, "was") == "was"
