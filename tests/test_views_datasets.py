"""Dataset browsing logic: frames, search, evidence cells, failure-mode filters."""

from __future__ import annotations

import pandas as pd

from target_core.datasets.folder import load_folder
from target_core.read_models.dataset_sizes import dataset_summary
from target_core.read_models.datasets import (
    evidence_cells,
    evidence_rows,
    failure_modes,
    filter_by_failure_mode,
    highlight_cells,
    queries_with_gold,
    render_views,
    search,
    table_frame,
)
from target_core.table_view import VIEW_PRESETS, TableView
from target_core.tokens import get_counter
from target_core.types import Query, Table, parse_table_ref, table_ref

TABLE = Table("wiki", "T_0", ("Name", "Score", "Name"), (("a", 1, "x"), ("b", 2, "y")),
              {"title": "T"})


def _query(evidence: object) -> Query:
    return Query("q", "?", "a", (("wiki", "T_0"),), "wiki", meta={"evidence": evidence})


def test_summary_counts_and_columns(handmade_dir, tmp_path) -> None:
    dataset = load_folder(handmade_dir)
    counter = get_counter("no-such-encoding", 1.0)
    summary = dataset_summary(dataset, TableView(), tmp_path, counter)
    assert (summary.n_tables, summary.n_queries, summary.n_databases) == (4, 3, 0)
    assert list(summary.tables["rows"]) == [3, 2, 2, 0]
    assert summary.tables["tokens"].min() > 0
    assert summary.queries["failure_mode"].tolist()[::2] == ["", ""]  # blank, not None
    assert summary.queries.loc[1, "failure_mode"] == "sibling"
    assert summary.queries.loc[2, "gold"] == ("wiki/2019_Norland_Marathon_0, "
                                              "wiki/2020_Norland_Marathon_0")
    header_only = dataset_summary(dataset, VIEW_PRESETS["header-only"], tmp_path, counter)
    assert (header_only.tables["tokens"] < summary.tables["tokens"]).sum() == 3  # 4th: no rows


def test_search_needs_every_term() -> None:
    frame = pd.DataFrame({"a": ["Lakes of Norland", "Marathon 2019", "Marathon 2020"]})
    assert list(search(frame, "marathon 2020", ["a"])["a"]) == ["Marathon 2020"]
    assert len(search(frame, "  ", ["a"])) == 3
    assert search(frame, "(", ["a"]).empty  # regex characters are literal


def test_table_ref_round_trip() -> None:
    assert table_ref(("db", "a/b")) == "db/a/b"
    assert parse_table_ref("db/a/b") == ("db", "a/b")


def test_evidence_cells() -> None:
    assert evidence_cells(_query([{"row": 1, "column": "Score"}]), TABLE) == {(1, 1)}
    assert evidence_cells(_query([{"row": 0, "column": "Name"}]), TABLE) == {(0, 0)}
    other = [{"row": 0, "column": "Score", "table_id": "Other"}]
    assert evidence_cells(_query(other), TABLE) == set()
    bad = [{"row": 9, "column": "Score"}, {"row": 0, "column": "Nope"}, "junk"]
    assert evidence_cells(_query(bad), TABLE) == set()
    assert evidence_cells(_query(None), TABLE) == set()


def test_highlight_marks_only_the_cells() -> None:
    frame = table_frame(TABLE)
    assert list(frame.columns) == ["Name", "Score", "Name'"]
    html = highlight_cells(frame, {(1, 1)}).to_html()
    assert html.count("background-color: #fde68a") == 1


def test_evidence_rows_keep_row_numbers() -> None:
    frame, marked = evidence_rows(TABLE, {(1, 1)})
    assert list(frame.index) == [2] and frame.iloc[0, 0] == "b"
    assert marked == {(0, 1)}


def test_failure_mode_filter() -> None:
    frame = pd.DataFrame({"query_id": ["1", "2", "3"],
                          "failure_mode": ["sibling", "", "deep-row"]})
    assert failure_modes(frame) == ["deep-row", "sibling", "ordinary"]
    assert list(filter_by_failure_mode(frame, "ordinary")["query_id"]) == ["2"]
    assert list(filter_by_failure_mode(frame, "sibling")["query_id"]) == ["1"]
    assert len(filter_by_failure_mode(frame, None)) == 3
    assert failure_modes(frame.drop(columns="failure_mode")) == []


def test_render_views_and_gold_lookup(handmade_dir) -> None:
    dataset = load_folder(handmade_dir)
    table = dataset.table(("wiki", "2020_Norland_Marathon_0"))
    rendered = render_views(table, [TableView(), VIEW_PRESETS["header-only"]],
                            get_counter("no-such-encoding", 1.0))
    assert [r.label for r in rendered] == ["default", "header-only"]
    assert rendered[0].tokens > rendered[1].tokens
    assert queries_with_gold(dataset, table.key) == ["q2", "q3"]


def test_table_frame_shows_numbers_by_type() -> None:
    """Regression: a whole-number column with an empty cell showed as 1984.000000, then
    its empty cell as a grey "None" (Streamlit draws a missing integer so): a column of
    whole numbers stays integers, one with a gap is text with the gap blank."""
    table = Table("d", "t", ("year", "score", "note", "rank"),
                  ((1984, 3.35, None, 1), (None, 2.0, True, 2), (2001, 7, "x", 3)))
    frame = table_frame(table)
    assert frame["year"].tolist() == ["1984", "", "2001"]
    assert not frame.isna().any().any()
    assert str(frame["rank"].dtype) == "Int64" and frame["rank"].tolist() == [1, 2, 3]
    assert frame["score"].tolist() == ["3.35", "2.0", "7"]  # mixed: the cells' own text
    assert frame["note"].tolist() == ["", "true", "x"]  # empty cells blank, not None
