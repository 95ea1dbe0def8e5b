"""A link's query parameters checked against what exists: a value is either known (or a
well-formed number in range) or the page says which parameter and value it cannot open,
with the closest known names. No Streamlit here: pages/_ui/url.py shows the messages."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from target_core.errors import TargetError

MAX_SHOWN = 10  # known names listed in a message; the rest are counted


class ParamError(TargetError):
    """A URL parameter whose value names nothing that exists, or is malformed."""

    def __init__(self, param: str, value: str, message: str) -> None:
        self.param = param
        self.value = value
        super().__init__(message)


def close_matches(value: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` known names similar to `value`, closest first (case-insensitive)."""
    lowered: dict[str, str] = {}
    for name in known:
        lowered.setdefault(name.lower(), name)
    found = difflib.get_close_matches(value.lower(), list(lowered), n=n, cutoff=0.5)
    if not found:  # a prefix or a fragment of a long id (run ids, table refs)
        found = [k for k in lowered if value.lower() and value.lower() in k][:n]
    return [lowered[f] for f in found]


def known_list(known: Sequence[str], limit: int = MAX_SHOWN) -> str:
    """`known` for a message: at most `limit` names, then "and N more"."""
    if not known:
        return "(none)"
    shown = ", ".join(f"'{k}'" for k in known[:limit])
    return shown + (f" and {len(known) - limit} more" if len(known) > limit else "")


def unknown_message(param: str, value: str, known: Sequence[str], *,
                    kind: str | None = None, among: str | None = None) -> str:
    """One paragraph: the parameter and its unknown value (a `kind`, default the
    parameter's name, not `among` the known ones), the closest known names, and up to
    MAX_SHOWN known names."""
    message = (f"Unknown {kind or param} '{value}' in the link (?{param}={value})"
               + (f": not among {among}." if among else "."))
    matches = close_matches(value, known)
    if matches:
        message += " Did you mean " + " or ".join(f"'{m}'" for m in matches) + "?"
    return message + f" Known ({len(known)}): {known_list(known)}."


def check_choice(param: str, value: str, known: Sequence[str], *,
                 kind: str | None = None, among: str | None = None) -> str:
    """`value` when it is one of `known`, else ParamError with unknown_message."""
    if value in known:
        return value
    raise ParamError(param, value, unknown_message(param, value, known, kind=kind,
                                                   among=among))


def parse_int(param: str, value: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """The integer `value` of parameter `param`, within [minimum, maximum] when given;
    else ParamError naming the parameter, the value and the allowed range."""
    text = value.strip()
    try:
        number = int(text)
    except ValueError:
        number = None
    if number is None or not text.lstrip("+-").isdigit():
        raise ParamError(param, value, f"Invalid {param} '{value}' in the link "
                         f"(?{param}={value}): not an integer; expected an integer"
                         f"{_range(minimum, maximum)}.")
    if (minimum is not None and number < minimum) or (maximum is not None
                                                      and number > maximum):
        raise ParamError(param, value, f"Invalid {param} '{value}' in the link "
                         f"(?{param}={value}): out of range; expected an integer"
                         f"{_range(minimum, maximum)}.")
    return number


def _range(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" of at least {minimum}"
    if maximum is not None:
        return f" of at most {maximum}"
    return ""
