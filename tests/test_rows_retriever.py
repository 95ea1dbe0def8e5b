"""Row serialization (retrievers/rows.py): the row texts, a table scored by its best row,
search widened until k distinct tables, score_all in search's order, matched rows, the
cached and resumable index, a run through the runner, and the Query page of a rows run.

Most checks use a word-count embedder whose cosines can be worked by hand: each word of
VOCAB is one dimension, any other word ("is", numbers) is left out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from conftest import query_record, table_record
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.progress import Progress, no_progress
from target_core.retrievers import build_retriever
from target_core.retrievers.base import NotIndexedError, top_k_hits
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.rows import RowsRetriever, row_texts
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Table
from target_core.vectorstore import VectorStore

VOCAB = ("runner city time kipchoge berlin london oslo rome paris lima cairo kyiv tokyo "
         "mo ana li kim jo eva sam event race marathon sprint").split()
BARE = TableView(title=False, section_title=False)


class Words:
    """Counts of VOCAB words, L2-normalized: cos(q, r) = shared counts / (|q| |r|)."""

    spec = "words"
    dimension = len(VOCAB)
    max_tokens = 512
    last_truncated = 0
    backend = "numpy"

    def __init__(self, fail_after: int | None = None) -> None:
        self.embedded = 0
        self.fail_after = fail_after
        """Raise once this many documents are embedded (an interrupted run)."""

    def load(self) -> None:
        pass

    def fingerprint(self) -> str:
        return "words-v1"

    def embed(self, texts: Sequence[str], *, kind: str = "document",
              progress: Progress = no_progress) -> np.ndarray:
        if kind == "document":
            if self.fail_after is not None and self.embedded >= self.fail_after:
                raise KeyboardInterrupt("killed while embedding")
            self.embedded += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                if word in VOCAB:
                    out[row, VOCAB.index(word)] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _table(table_id: str, header: tuple[str, ...], rows: list[tuple[object, ...]],
           title: str = "") -> Table:
    return Table("wiki", table_id, header, tuple(tuple(r) for r in rows),
                 {"title": title} if title else {})


RUNS = ("runner", "city", "time")
# the 2019 races hold Kipchoge's Berlin row deep down (row 6); 2020 has both words, apart
RACES = [
    _table("races_2019", RUNS, [("mo", "oslo", "2:05"), ("ana", "rome", "2:07"),
                                ("li", "paris", "2:09"), ("kim", "lima", "2:10"),
                                ("jo", "cairo", "2:11"), ("eva", "kyiv", "2:12"),
                                ("kipchoge", "berlin", "2:01"), ("sam", "tokyo", "2:13")]),
    _table("races_2020", RUNS, [("kipchoge", "london", "2:02"), ("ana", "berlin", "2:06")]),
]


def _rows(corpus: list[Table], view: TableView, key: str, embedder: Words | None = None,
          store: VectorStore | None = None) -> RowsRetriever:
    retriever = RowsRetriever(embedder or Words(), store or VectorStore.ephemeral())
    retriever.index(retriever.prepare_texts(corpus, view), corpus_key=key)
    return retriever


def test_row_texts_follow_the_view() -> None:
    table = _table("t", ("name", "note", "year"), [("Orin", None, 1984), ("Vale\nEast", "", 0)],
                   title="Lakes")
    table = Table("wiki", "t", table.header, table.rows,
                  {"title": "Lakes", "section_title": "Largest"})
    assert row_texts(table, TableView()) == [
        "Title: Lakes | Section: Largest | name is Orin, year is 1984",
        "Title: Lakes | Section: Largest | name is Vale East, year is 0"]
    assert row_texts(table, TableView(rows=1, title=False, table_id=True)) == [
        "Section: Largest | Table: t | name is Orin, year is 1984"]
    # no visible row: one text of the header (TARGET embeds nothing for such a table)
    assert row_texts(table, TableView(rows=0, section_title=False)) == [
        "Title: Lakes | name, note, year"]
    empty = _table("e", ("a", "b"), [(None, "")])
    assert row_texts(empty, BARE) == ["(empty row)"]


def test_the_gold_tables_deep_row_wins_where_one_vector_of_two_rows_cannot() -> None:
    query = "kipchoge berlin"
    rows = _rows(RACES, BARE, "rows-deep")
    # races_2019: row 6 has runner, kipchoge, city, berlin, time: 2 / (√2 · √5) = 0.6325;
    # races_2020: each row shares one word: 1 / (√2 · √5) = 0.3162
    hits = rows.search([query], top_k=2)[0]
    assert [i for i, _ in hits] == [0, 1]
    assert [s for _, s in hits] == pytest.approx([2 / np.sqrt(10), 1 / np.sqrt(10)], abs=1e-5)
    # one vector per table of its first two rows: 2019's shows neither word, 2020's both
    two_rows = TableView(title=False, section_title=False, rows=2, format="csv")
    dense = DenseRetriever(Words(), VectorStore.ephemeral())
    dense.index(dense.prepare_texts(RACES, two_rows), corpus_key="dense-deep")
    assert [i for i, _ in dense.search([query], top_k=2)[0]] == [1, 0]
    assert dense.score_all(query)[0] == pytest.approx(0.0, abs=1e-6)


WIDE = [
    # event | marathon + 0..3 cities: cos with "marathon" = 1/√2, 1/√3, 1/√4, 1/√5
    _table("many", ("event",), [("marathon",), ("marathon oslo",), ("marathon oslo rome",),
                                ("marathon oslo rome lima",)]),
    # race | marathon + 5 cities: 1/√7
    _table("one", ("race",), [("marathon paris tokyo cairo kyiv london",)]),
    _table("none", ("race",), [("sprint",)]),
]


def test_search_widens_until_it_holds_more_than_k_tables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("target_core.retrievers.rows.FIRST_ROWS", 0)  # start at k + 1
    store = VectorStore.ephemeral()
    asked: list[int] = []
    query_rows = store.query

    def recording(collection, vectors, top_k, *, size=None):  # noqa: ANN001, ANN202
        asked.append(top_k)
        return query_rows(collection, vectors, top_k, size=size)

    store.query = recording  # type: ignore[method-assign]
    rows = _rows(WIDE, BARE, "rows-wide", store=store)
    hits = rows.search(["marathon"], top_k=2)[0]
    # n = k + 1 = 3 rows are all of "many"; n = 6 reaches "one" and "none": 3 tables
    assert asked == [3, 6]
    assert [i for i, _ in hits] == [0, 1]
    assert [s for _, s in hits] == pytest.approx([1 / np.sqrt(2), 1 / np.sqrt(7)], abs=1e-5)
    asked.clear()
    assert [i for i, _ in rows.search(["marathon"], top_k=5)[0]] == [0, 1, 2]
    assert asked == [6]  # k + 1 = 6 is every row: all three tables, nothing more to ask
    monkeypatch.setattr("target_core.retrievers.rows.FIRST_ROWS", 5)
    asked.clear()
    assert [i for i, _ in rows.search(["marathon"], top_k=2)[0]] == [0, 1]
    assert asked == [5, 6]  # the first 5 rows hold "many" and "one" only: 2 tables, not 3


def test_score_all_is_each_tables_best_row_in_searchs_order() -> None:
    rows = _rows(WIDE + RACES, BARE, "rows-score-all")
    assert rows.score_all("marathon")[:3] == pytest.approx(
        [1 / np.sqrt(2), 1 / np.sqrt(7), 0.0], abs=1e-5)
    for query in ("marathon", "kipchoge berlin", "oslo", "sprint race", "ana"):
        for k in (1, 2, 3, 5):
            searched = rows.search([query], top_k=k)[0]
            exact = top_k_hits(rows.score_all(query), k)
            assert [i for i, _ in searched] == [i for i, _ in exact], (query, k)
            assert [s for _, s in searched] == pytest.approx([s for _, s in exact], abs=1e-5)


def test_ties_at_the_cut_go_to_the_lower_table() -> None:
    # "ana" is in one row of each races table, with 4 other words each: both 1/√5
    rows = _rows(RACES, BARE, "rows-ties")
    assert rows.search(["ana"], top_k=1)[0] == [(0, pytest.approx(1 / np.sqrt(5), abs=1e-5))]


def test_matched_rows_name_the_deciding_row() -> None:
    rows = _rows(RACES, BARE, "rows-matched")
    got = rows.matched_rows("kipchoge berlin", [0, 1], per_table=2)
    # races_2019: row 6, then the rows sharing no word (0.0), the lower first
    assert [r for r, _ in got[0]] == [6, 0]
    assert got[0][0][1] == pytest.approx(2 / np.sqrt(10), abs=1e-5)
    assert [r for r, _ in got[1]] == [0, 1]  # a tie: the lower row first


def test_search_before_index_is_a_clear_error() -> None:
    with pytest.raises(NotIndexedError, match="rows:words"):
        RowsRetriever(Words(), VectorStore.ephemeral()).search(["x"], top_k=1)


def test_cached_index_embeds_nothing_and_an_interrupted_one_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("target_core.retrievers.chroma_base.EMBED_CHUNK", 4)
    texts = RowsRetriever(Words(), VectorStore.ephemeral()).prepare_texts(RACES, BARE)
    killed = Words(fail_after=4)  # the first chunk of 4 rows is stored, then it dies
    with pytest.raises(KeyboardInterrupt):
        RowsRetriever(killed, VectorStore.persistent(tmp_path / "chroma")).index(
            texts, corpus_key="resume")
    again = Words()
    info = RowsRetriever(again, VectorStore.persistent(tmp_path / "chroma")).index(
        texts, corpus_key="resume")
    assert (info.n_texts, info.details["rows"]) == (2, 10)
    assert (again.embedded, info.details["embedded"], info.details["cached"]) == (6, 6, 4)
    restarted = Words()
    retriever = RowsRetriever(restarted, VectorStore.persistent(tmp_path / "chroma"))
    info = retriever.index(texts, corpus_key="resume")
    assert restarted.embedded == 0 and info.details["cached"] == 10
    assert [i for i, _ in retriever.search(["kipchoge berlin"], top_k=1)[0]] == [0]


def _people(names: list[str]) -> list[list[str]]:
    departments = ["Accounts", "Sales", "Logistics", "Legal", "Support"]
    return [["name", "employee id", "department"]] + [
        [name, f"E{100 + i}", departments[i % len(departments)]] for i, name in enumerate(names)]


def test_a_rows_run_on_minilm_finds_the_deep_row_and_the_page_shows_it(
        write_dataset, tmp_path: Path) -> None:
    """A real model: three staff lists that look alike in their first rows; the person
    asked about is row 8 of the gold one. dense:minilm on the first two rows cannot tell
    them apart; rows:minilm finds the row, and the matched rows name it."""
    lists = {"staff_a": ["Ada Brook", "Ben Cole", "Cy Dunn", "Di Egan", "Ed Fry", "Flo Gray",
                         "Gus Hale", "Hal Ives", "Zephyrine Oakhollow", "Ivy Jay"],
             "staff_b": ["Jon Kerr", "Kit Lowe", "Lou Mead", "Max Nash", "Ned Orr"],
             "staff_c": ["Pam Quinn", "Rex Roy", "Sue Todd", "Tom Vale", "Una West"]}
    folder = write_dataset(
        corpus=[table_record(t, _people(names), title="Staff list") for t, names in
                lists.items()],
        queries=[query_record("q1", "staff_a",
                              query="Which department is Zephyrine Oakhollow in?")],
        meta={"name": "staff", "task": "qa"})
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    view = TableView(rows=2)
    rows_run = run_retrieval(RunConfig(str(folder), "rows", top_k=3, view=view),
                             settings=settings).run
    dense_run = run_retrieval(RunConfig(str(folder), "dense:minilm", top_k=3, view=view),
                              settings=settings).run
    store = RunStore.in_workspace(tmp_path / "ws")
    rows_result = store.get_result(rows_run.run_id, "q1")
    assert rows_result.ranked[0][0] == ("wiki", "staff_a")
    assert store.get_result(dense_run.run_id, "q1").ranked[0][0] != ("wiki", "staff_a")
    assert rows_run.text_example.split("\n")[0] == (
        "Title: Staff list | name is Ada Brook, employee id is E100, department is Accounts")
    assert rows_run.index_info["rows"] == 6  # two rows per table under the view
    # the view's rows limit applies: row 8 is not indexed under rows=2, so the full view
    full = run_retrieval(RunConfig(str(folder), "rows", top_k=3), settings=settings).run
    assert full.index_info["rows"] == 20 and full.index_info["embedded"] == 20

    from target_core.actions.query import matched_rows_view

    result = store.get_result(full.run_id, "q1")
    matched = matched_rows_view(full, result, "Which department is Zephyrine Oakhollow in?",
                                settings)
    assert matched is not None and matched[0].table == "wiki/staff_a"
    assert matched[0].rank == 1 and matched[0].gold
    assert matched[0].matched[0] == 8 and matched[0].rows["row"].iloc[0] == "9"
    assert "Zephyrine Oakhollow" in matched[0].rows["text"].iloc[0]
    assert list(matched[0].rows.columns) == ["row", "cosine", "name", "employee id",
                                             "department", "text"]
    assert matched[0].rows["name"].iloc[0] == "Zephyrine Oakhollow"
    assert matched_rows_view(dense_run, result, "x", settings) is None


def test_query_page_of_a_rows_run_shows_the_matched_rows(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("handmade-qa", "rows", top_k=2), settings=settings).run
    store = RunStore.in_workspace(tmp_path / "ws")
    query_id = store.query_metrics(run.run_id)[0][0]
    at = app(page="pages/query.py", run=run.run_id, query=query_id)
    assert "Matched rows" in [s.value for s in at.subheader]
    assert not at.error and not at.warning
    labels = [e.label for e in at.expander]
    result = store.get_result(run.run_id, query_id)
    first = f"{result.ranked[0][0][0]}/{result.ranked[0][0][1]}"
    assert any(first.replace("_", "\\_") in label or first in label for label in labels), labels
    frames = [d.value for d in at.dataframe]
    matched = [f for f in frames if list(f.columns[:2]) == ["row", "cosine"]]
    assert matched and all(len(f) >= 1 and f.columns[-1] == "text" for f in matched)
    assert "amber rows matched" in " ".join(c.value for c in at.caption)


def test_the_registry_builds_rows_with_minilm_by_default(tmp_path: Path) -> None:
    retriever = build_retriever("rows", load_settings(environ={
        "TARGET_WORKSPACE": str(tmp_path)}))
    assert isinstance(retriever, RowsRetriever) and retriever.spec == "rows:minilm"


def test_matched_cells_never_hide_the_row_and_cosine_columns() -> None:
    from target_core.read_models.matched_rows import matched_cells as _cells

    table = _table("t", ("row", "text", "x"), [("a", "b", 1), ("c", "d", 2)])
    cells = _cells(table, [1], taken=("row", "cosine", "text"))
    assert list(cells.columns) == ["row'", "text'", "x"]
    assert cells.iloc[0].tolist() == ["c", "d", 2]  # the second row, its cells as shown
