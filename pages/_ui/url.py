"""All URL state: the pages read and write their query parameters only through here,
so a link (?dataset=NAME&run=ID...) reopens a page as it was.

Two ways to keep widgets and the URL in step, one rule: the URL wins on a session's
first visit and whenever it changed since the page last wrote it (a link, the back
button); otherwise the widgets keep their own state, so the page's own echo in the URL
never resets them. url_selectbox does it for one selectbox; linked() and echo() for a
page that ties several parameters together (Compare).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import overload
from urllib.parse import urlencode

import streamlit as st


@overload
def read(name: str) -> str | None: ...
@overload
def read(name: str, default: str) -> str: ...
def read(name: str, default: str | None = None) -> str | None:
    """The query parameter `name` (its last value when repeated), else `default`."""
    return st.query_params.get(name, default)


def read_list(name: str) -> list[str]:
    """A comma-separated query parameter as its non-empty items (?runs=a,b -> [a, b])."""
    return [item for item in (read(name) or "").split(",") if item]


def write(**values: object) -> None:
    """Set query parameters (as text); a None value leaves its parameter as it is."""
    st.query_params.update({name: str(v) for name, v in values.items() if v is not None})


def _echo_key(key: str) -> str:
    return f"_url-{key}"


def linked(names: Sequence[str], *, key: str) -> tuple[dict[str, str | None], bool]:
    """The URL's values of `names`, and whether they came from a link: true on the
    session's first visit and whenever they differ from what echo(key=key) last wrote."""
    values = {name: read(name) for name in names}
    return values, st.session_state.get(_echo_key(key)) != values


def echo(values: Mapping[str, str | None], *, key: str) -> None:
    """Write `values` to the URL and remember them, so linked(key=key) on the next run
    tells the page's own echo from a link."""
    write(**values)
    st.session_state[_echo_key(key)] = dict(values)


def url_selectbox(label: str, options: list, *, param: str, key: str,
                  where: object = None, default: object = None, widget: str = "selectbox",
                  **kwargs: object) -> object:
    """A selectbox (or another single-choice `widget`, e.g. "radio") kept in the URL as
    ?param=VALUE.

    The URL wins on a session's first visit and whenever it changed since this widget
    last wrote it (a link, the back button); otherwise the widget keeps its own state.
    Putting the URL value in the widget key instead would make a new widget on every
    change and lose every second choice.
    """
    by_text = {str(o): o for o in options}
    url = read(param)
    echoed = _echo_key(key)
    if (url is not None and url != st.session_state.get(echoed) and url in by_text) \
            or st.session_state.get(key) not in options:
        fallback = default if default in options else options[0]
        st.session_state[key] = by_text.get(url, fallback) if url is not None else fallback
    value = getattr(where or st, widget)(label, options, key=key, **kwargs)
    write(**{param: str(value)})
    st.session_state[echoed] = str(value)
    return value


def query_url(run_id: str, query_id: str) -> str:
    """The Query page's link to one query of one run (relative to the app's root)."""
    return "query?" + urlencode({"run": run_id, "query": query_id})
