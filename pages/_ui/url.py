"""All URL state: the pages read and write their query parameters only through here,
so a link (?dataset=NAME&run=ID...) reopens a page as it was.

Two ways to keep widgets and the URL in step, one rule: the URL wins on a session's
first visit and whenever it changed since the page last wrote it (a link, the back
button); otherwise the widgets keep their own state, so the page's own echo in the URL
never resets them. url_selectbox does it for one selectbox; linked() and echo() for a
page that ties several parameters together (Compare).

Links never lie: a value that came from a link (see from_link) and names nothing that
exists, or a malformed number, stops the page with an error naming the parameter and
the value (stop); the page shows no other data in its place. Inside a session, a value
the page wrote earlier that no longer fits (the sidebar's dataset changed) is stale, not
a link: the widget falls back to its default. The checks themselves are
target_core.read_models.params.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, overload
from urllib.parse import urlencode

import streamlit as st

from pages._ui.text import plain
from target_core.read_models.params import ParamError, check_choice, parse_int

_WRITTEN = "_url-written"  # the query parameters as this session last wrote them
_FROM_LINK = "_url-from-link"
_STICKY = "_sticky-"  # + a name: the session's latest choice of a dataset or run
_FORM = "_form-"  # + a widget key: the form widget's last value (see form_field)
T = TypeVar("T")


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
    st.session_state[_WRITTEN] = st.query_params.to_dict()


def drop(name: str) -> None:
    """Remove the query parameter `name` (a stale value the page no longer shows)."""
    if name in st.query_params:
        del st.query_params[name]
    st.session_state[_WRITTEN] = st.query_params.to_dict()


def begin() -> None:
    """Note whether this run's query parameters came from a link: the session's first
    run, or parameters that differ from what the session last wrote (a link, the back
    button, a hand-edited address). shell.frame() calls it once per run."""
    st.session_state[_FROM_LINK] = st.query_params.to_dict() != st.session_state.get(_WRITTEN)


def from_link() -> bool:
    """Whether this run's query parameters came from a link (see begin)."""
    return bool(st.session_state.get(_FROM_LINK, True))


def stop(message: str) -> None:
    """Show `message` as the page's error and stop the page: no other data is shown."""
    st.error(plain(message), icon=":material/link_off:")
    st.stop()


def read_int(name: str, default: int, *, minimum: int | None = None,
             maximum: int | None = None) -> int:
    """The integer query parameter `name`, else `default`. A malformed or out-of-range
    value stops the page with an error naming it when it came from a link; a stale one
    (the range changed with another choice in this session) reads as `default`."""
    value = read(name)
    if value is None:
        return default
    try:
        return parse_int(name, value, minimum=minimum, maximum=maximum)
    except ParamError as exc:
        if not from_link():
            return default
        stop(str(exc))
        raise  # unreachable: st.stop() raises


def read_choice(name: str, known: Sequence[str], *, kind: str | None = None,
                among: str | None = None) -> str | None:
    """The query parameter `name` when it is one of `known`, None when absent. An unknown
    value stops the page when it came from a link; a stale one (written by this session
    for another choice) is dropped from the URL and read as absent."""
    value = read(name)
    if value is None or value in known:
        return value
    if not from_link():
        drop(name)
        return None
    try:
        return check_choice(name, value, known, kind=kind, among=among)
    except ParamError as exc:
        stop(str(exc))
        raise  # unreachable: st.stop() raises


def sticky(name: str) -> str | None:
    """The session's latest choice of `name` ("dataset", "run") on any page, if any: it
    follows the user across pages (the sidebar's links carry no parameters)."""
    value = st.session_state.get(_STICKY + name)
    return None if value is None else str(value)


def remember(name: str, value: object) -> None:
    """Note `value` as the session's latest choice of `name` (see sticky)."""
    st.session_state[_STICKY + name] = str(value)


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


def url_selectbox(label: str, options: Sequence[T], *, param: str, key: str,
                  where: object = None, default: T | None = None, widget: str = "selectbox",
                  kind: str | None = None, among: str | None = None, follow: bool = True,
                  stick: str | None = None, **kwargs: object) -> T:
    """A selectbox (or another single-choice `widget`, e.g. "radio") kept in the URL as
    ?param=VALUE.

    A link's value wins (from_link); one that is not among `options` stops the page with
    an error naming it (`kind` names what it is, default `param`; `among` what `options`
    are, e.g. "the queries of run X"), and a link without the
    parameter opens the default. Inside a session the widget keeps its own state; a new
    widget (its key depends on another choice) takes the URL's value when it is valid
    and `follow` is true, else its default: follow=False for a parameter that belongs to
    that other choice (the Query page's table belongs to its query). Putting the URL
    value in the widget key instead would make a new widget on every change and lose
    every second choice.

    `stick` names a choice that follows the user across pages (see sticky): a visit
    without the parameter (the sidebar's page links) opens the session's latest choice
    of it when it is among `options`, and the widget's value becomes that choice.
    """
    by_text = {str(o): o for o in options}
    url = read(param)
    echoed = _echo_key(key)
    fallback = default if default in options else options[0]
    followed = sticky(stick) if stick else None
    if url is None and followed in by_text and from_link():
        st.session_state[key] = by_text[followed]
    if from_link() and url is not None and url != st.session_state.get(echoed):
        if url not in by_text:
            try:
                check_choice(param, url, list(by_text), kind=kind, among=among)
            except ParamError as exc:
                stop(str(exc))
        st.session_state[key] = by_text[url]
    elif from_link() and url is None and not follow:
        st.session_state[key] = fallback
    elif (follow and url is not None and url != st.session_state.get(echoed)
          and url in by_text):
        st.session_state[key] = by_text[url]
    elif st.session_state.get(key) not in options:
        st.session_state[key] = fallback
    value: T = getattr(where or st, widget)(label, options, key=key, **kwargs)
    write(**{param: str(value)})
    st.session_state[echoed] = str(value)
    if stick:
        remember(stick, value)
    return value


def form_field(param: str, key: str, parse: Callable[[str], object], *,
               many: bool = False) -> None:
    """Before a form widget `key` is drawn, give it its value from ?param=VALUE or the
    session, so the form is a view (the Run page): call form_echo after drawing it.

    A URL value the page did not write itself (a link, the back button) wins: `parse`
    turns it into the widget's value (each item when `many`: ?param=a&param=b) and
    raises ParamError for a bad one, which stops the page naming it when it came from a
    link (a stale one is dropped); a `parse` that returns None leaves the widget alone.
    Otherwise the widget keeps its state, and one Streamlit forgot while the user was on
    another page (it drops the state of widgets not drawn) gets back its last value."""
    values = st.query_params.get_all(param)
    if values and values != st.session_state.get(_echo_key(f"form-{param}")):
        try:
            parsed = [parse(v) for v in values] if many else parse(values[-1])
        except ParamError as exc:
            if from_link():
                stop(str(exc))
            drop(param)
        else:
            if parsed is not None:
                st.session_state[key] = parsed
                return
    if key not in st.session_state and _FORM + key in st.session_state:
        st.session_state[key] = st.session_state[_FORM + key]


def form_echo(param: str, key: str, text: str | list[str]) -> None:
    """After drawing form widget `key`: its value in the URL as `text` (a list: the
    parameter repeated) and in the session (see form_field)."""
    values = [text] if isinstance(text, str) else list(text)
    st.query_params[param] = values
    st.session_state[_WRITTEN] = st.query_params.to_dict()
    st.session_state[_echo_key(f"form-{param}")] = values
    st.session_state[_FORM + key] = st.session_state.get(key)


def query_url(run_id: str, query_id: str) -> str:
    """The Query page's link to one query of one run (relative to the app's root)."""
    return "query?" + urlencode({"run": run_id, "query": query_id})


def missing_runs(param: str, known: Sequence[str] = ()) -> None:
    """On a page that has no runs to show: name the run(s) a link asked for (?run=ID,
    ?runs=A,B) that are not in this workspace, as an error above the page's hint."""
    absent = [r for r in read_list(param) if r not in known]
    if absent:
        which = f"run {absent[0]} is" if len(absent) == 1 else f"runs {', '.join(absent)} are"
        text = f"{which} not in this workspace (?{param}={read(param)})."
        st.error(plain(f"No runs yet: {text}" if not known else text[0].upper() + text[1:]),
                 icon=":material/link_off:")
