"""TableView serialization: exact expected text for each format and option."""

from __future__ import annotations

import json

import pytest

from target_core.errors import ConfigError, UnknownNameError
from target_core.serialize import (
    _markdown,
    _markdown_cell,
    cell_text,
    table_text,
    texts_fingerprint,
)
from target_core.table_view import VIEW_PRESETS, TableView
from target_core.types import Table

TABLE = Table(
    database_id="wiki", table_id="Lakes_0",
    header=("Lake", "Depth"),
    rows=(("Vessa", 48), ("Orin | North", None), ("Tamm", 1.5), ("Ulla", True)),
    context={"title": "Lakes of Norland", "section_title": "Largest"},
)


def test_markdown_with_title_and_all_rows() -> None:
    assert table_text(TABLE, TableView()) == (
        "Title: Lakes of Norland\n"
        "Section: Largest\n"
        "| Lake | Depth |\n"
        "| --- | --- |\n"
        "| Vessa | 48 |\n"
        "| Orin \\| North |  |\n"
        "| Tamm | 1.5 |\n"
        "| Ulla | true |"
    )


def test_no_title_first_two_rows_csv() -> None:
    view = TableView(title=False, section_title=False, rows=2, format="csv")
    assert table_text(TABLE, view) == "Lake,Depth\nVessa,48\nOrin | North,"


def test_header_only_keeps_header_and_title() -> None:
    view = TableView(rows=0)
    assert table_text(TABLE, view) == ("Title: Lakes of Norland\nSection: Largest\n"
                                       "| Lake | Depth |\n| --- | --- |")


def test_json_format() -> None:
    text = table_text(TABLE, TableView(section_title=False, rows=3, format="json"))
    assert json.loads(text) == {"title": "Lakes of Norland", "columns": ["Lake", "Depth"],
                                "rows": [["Vessa", 48], ["Orin | North", None], ["Tamm", 1.5]]}


def test_target_ottqa_preset_is_table_id_section_and_header_names() -> None:
    assert table_text(TABLE, VIEW_PRESETS["target-ottqa"]) == (
        "Section: Largest\nTable: Lakes_0\nLake,Depth")


def test_csv_quotes_commas_and_newlines() -> None:
    table = Table("d", "t", ("a", "b"), (("x, y", "line\nbreak"),), {})
    assert table_text(table, TableView(format="csv")) == 'a,b\n"x, y","line\nbreak"'


def test_markdown_flattens_newlines() -> None:
    table = Table("d", "t", ("a",), (("line\nbreak",),), {})
    assert table_text(table, TableView()).splitlines()[-1] == "| line break |"


def test_missing_title_is_not_printed() -> None:
    table = Table("d", "t", ("a",), ((1,),), {})
    assert table_text(table, TableView()) == "| a |\n| --- |\n| 1 |"


def test_cell_text() -> None:
    assert [cell_text(v) for v in (None, True, False, 3, 2.5, "x")] == [
        "", "true", "false", "3", "2.5", "x"]


def test_view_validation() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'markdown'"):
        TableView(format="markdwn")
    with pytest.raises(ConfigError):
        TableView(rows=-1)


def test_view_key_label_and_round_trip() -> None:
    view = TableView(title=False, rows=100, format="csv")
    assert view.key == "no-title+section+no-table-id+rows:100+csv"
    assert TableView.from_dict(view.to_dict()) == view
    assert VIEW_PRESETS["header-only"].label == "header-only"
    assert view.label == "csv, section, 100 rows"
    with pytest.raises(UnknownNameError):
        TableView.preset("nope")


def test_texts_fingerprint_is_order_and_boundary_sensitive() -> None:
    assert texts_fingerprint(["ab", "c"]) != texts_fingerprint(["a", "bc"])
    assert texts_fingerprint(["a", "b"]) != texts_fingerprint(["b", "a"])
    assert texts_fingerprint(["a", "b"]) == texts_fingerprint(["a", "b"])


def _markdown_per_cell(header, rows) -> str:
    """The per-cell rendering, as it was before the joined fast path: the reference."""
    lines = ["| " + " | ".join(_markdown_cell(h) for h in header) + " |",
             "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


@pytest.mark.parametrize("rows", [
    [],
    [["a|b", "c\\d"], ["x\ny", None]],
    [[True, 1.5], [False, -2]],
    [["unit\x1fseparator", "x"], ["record\x1eseparator", "y"]],
    [["\x1f", "\x1e"]],
    [["", ""], ["|", "\\|"]],
])
def test_markdown_fast_path_equals_per_cell_rendering(rows) -> None:
    # texts name Chroma collections and cached vectors: they must not change by a byte
    assert _markdown(["h|1", "h2"], rows) == _markdown_per_cell(["h|1", "h2"], rows)


def test_markdown_of_every_demo_table_is_unchanged() -> None:
    from target_core.datasets import load_dataset

    for name in ("demo-qa", "demo-fact", "demo-sql"):
        for table in load_dataset(name).tables:
            for rows in (table.rows, table.rows[:2]):
                assert _markdown(table.header, rows) == _markdown_per_cell(table.header, rows)
