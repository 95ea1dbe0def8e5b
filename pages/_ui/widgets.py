"""The pages' shared widgets: the sidebar's dataset and run pickers, the table-view
picker, and the few helpers around them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from pages._ui import resources, url
from pages._ui.url import remember, sticky, url_selectbox
from target_core.errors import TargetError
from target_core.read_models.params import check_choice, parse_int
from target_core.read_models.resources import DatasetLookup
from target_core.read_models.runs import run_label
from target_core.table_view import (
    FORMATS,
    SCHEMA_CONTEXT,
    TEXT_FORMATS,
    VIEW_PRESETS,
    TableView,
    parse_view_context,
)
from target_core.types import Dataset

T = TypeVar("T")

def pick_dataset() -> str | None:
    """The sidebar's dataset selector, kept in the URL as ?dataset=NAME; without the
    parameter it opens the dataset the user chose last on any page."""
    try:
        names = resources.dataset_names()
    except TargetError as exc:
        st.sidebar.error(str(exc))
        return None
    if not names:
        st.sidebar.warning("No datasets found. Add one on the Datasets page.")
        return None
    return url_selectbox("Dataset", names, param="dataset", key="dataset", where=st.sidebar,
                         default="demo-qa", kind="dataset", stick="dataset")


def pick_run(runs: list, key: str) -> str:
    """The sidebar's run selector over `runs` (RunRecords, newest first), kept in the URL
    as ?run=ID. Without the parameter it opens the run the user chose last, or when the
    user has since picked another dataset, that dataset's newest run. Choosing a run
    makes its dataset the current one."""
    labels = {r.run_id: run_label(r) for r in runs}
    dataset_of = {r.run_id: r.config.dataset for r in runs}
    chosen_dataset, chosen_run = sticky("dataset"), sticky("run")
    if chosen_dataset and dataset_of.get(chosen_run or "") != chosen_dataset:
        newest = next((r.run_id for r in runs if r.config.dataset == chosen_dataset), None)
        if newest:
            remember("run", newest)
    run_id = url_selectbox("Run", list(labels), param="run", key=key, where=st.sidebar,
                           format_func=labels.get, kind="run", stick="run")
    remember("dataset", dataset_of[run_id])
    return run_id


def dataset_or_stop(name: str | None) -> Dataset:
    """Load the dataset, or show the error and stop the page."""
    return _opened_or_stop(name, resources.load_by_name)


def lookup_or_stop(name: str | None) -> Dataset | DatasetLookup:
    """The dataset's lookup (a large corpus read table by table, see
    resources.lookup_by_name), or show the error and stop the page."""
    return _opened_or_stop(name, resources.lookup_by_name)


def _opened_or_stop(name: str | None, open_dataset: Callable[[str], T]) -> T:
    if name is None:
        st.info("Pick a dataset in the sidebar.")
        st.stop()
    try:
        return open_dataset(name)
    except TargetError as exc:
        st.error(f"Cannot load dataset '{name}': {exc}")
        st.stop()


def grid_height(n_rows: int, max_rows: int = 10, row_px: int = 35) -> int:
    """Pixel height for a dataframe showing up to `max_rows` rows without empty filler."""
    return 38 + row_px * max(1, min(n_rows, max_rows))


def view_picker(key: str, default: str = "default", *, in_url: bool = False) -> TableView:
    """Widgets for a TableView: a preset, then adjustable title, rows, format and the
    context keys added to the text (schema-aware views). `in_url`: the choices are kept
    in the URL and the session (?view=PRESET&title=on&section=off&table_id=off&rows=all|
    header|N&format=F&view_context=K&view_context=...), see url.form_field."""
    presets = list(VIEW_PRESETS)
    field = _url_field if in_url else _no_field
    field("view", f"{key}-preset", lambda v: check_choice("view", v, presets, kind="view"))
    preset = st.selectbox("Table view preset", presets, index=presets.index(default),
                          key=f"{key}-preset",
                          help="How a table becomes text for retrievers and prompts.")
    base = VIEW_PRESETS[preset]
    cols = st.columns(5)
    toggles = {}
    for col, (param, label, suffix, value) in zip(cols, [
            ("title", "Page title", "title", base.title),
            ("section", "Section title", "section", base.section_title),
            ("table_id", "Table id", "tid", base.table_id)], strict=False):
        field(param, f"{key}-{preset}-{suffix}", functools.partial(_on_off, param))
        toggles[param] = col.toggle(label, value, key=f"{key}-{preset}-{suffix}")
    modes = ["all rows", "first N rows", "header only"]
    mode_index = 0 if base.rows is None else (2 if base.rows == 0 else 1)
    field("rows", f"{key}-{preset}-rows", _rows_mode)
    mode = cols[3].selectbox("Rows", modes, index=mode_index, key=f"{key}-{preset}-rows")
    formats = list(dict.fromkeys([*TEXT_FORMATS, base.format]))
    field("format", f"{key}-{preset}-format",
          lambda v: check_choice("format", v, list(FORMATS), kind="format"))
    fmt = cols[4].selectbox("Format", formats, index=formats.index(base.format),
                            key=f"{key}-{preset}-format")
    rows: int | None = None if mode == "all rows" else 0
    if mode == "first N rows":
        field("rows", f"{key}-{preset}-n", _rows_n)
        rows = int(st.number_input("N rows", min_value=1, max_value=100_000,
                                   value=base.rows or 20, key=f"{key}-{preset}-n"))
    field("view_context", f"{key}-{preset}-context", str, many=True)
    context = st.multiselect(
        "Schema context", list(dict.fromkeys([*SCHEMA_CONTEXT, *base.context])),
        default=list(base.context), key=f"{key}-{preset}-context", accept_new_options=True,
        help="Keys of each table's context added to its text: primary and foreign keys, "
             "column descriptions (as BIRD's), or type any other key (e.g. database).")
    if in_url:
        url.form_echo("view", f"{key}-preset", preset)
        for param, suffix in (("title", "title"), ("section", "section"), ("table_id", "tid")):
            url.form_echo(param, f"{key}-{preset}-{suffix}",
                          "on" if toggles[param] else "off")
        url.form_echo("rows", f"{key}-{preset}-rows",
                      "all" if rows is None else "header" if rows == 0 else str(rows))
        if rows:
            url.form_echo("rows", f"{key}-{preset}-n", str(rows))
        url.form_echo("format", f"{key}-{preset}-format", fmt)
        url.form_echo("view_context", f"{key}-{preset}-context", list(context))
    return TableView(title=toggles["title"], section_title=toggles["section"],
                     table_id=toggles["table_id"], rows=rows, format=fmt,
                     context=parse_view_context(",".join(context)))


def _url_field(param: str, key: str, parse: Callable[[str], object], *,
               many: bool = False) -> None:
    url.form_field(param, key, parse, many=many)


def _no_field(param: str, key: str, parse: Callable[[str], object], *,
              many: bool = False) -> None:
    """view_picker outside the URL: no seeding."""


def _on_off(param: str, value: str) -> bool:
    return check_choice(param, value, ["on", "off"]) == "on"


def _rows_mode(value: str) -> str:
    if value in ("all", "header"):
        return "all rows" if value == "all" else "header only"
    parse_int("rows", value, minimum=1, maximum=100_000)  # else: all, header or N
    return "first N rows"


def _rows_n(value: str) -> int | None:
    return None if value in ("all", "header") else parse_int("rows", value, minimum=1,
                                                             maximum=100_000)
