"""The dense explanation (issue 27): where MiniLM's window cuts a long table, whether the
evidence lies beyond it, the failure category `evidence-beyond-window` counted, and the
Query page's section built from it. MiniLM's tokenizer and weights are the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from target_core.analysis.dense_window import (
    dense_embedder,
    evidence_cells,
    row_end,
    table_window,
    window_for,
)
from target_core.analysis.explain_dense import explain_dense
from target_core.analysis.failures import CATEGORIES, analyse_failures
from target_core.config import load_settings
from target_core.embeddings.minilm_weights import MAX_SEQ_LENGTH, find_model_dir, load_tokenizer
from target_core.engine.store import QueryResult, RunStore
from target_core.read_models.explain_dense import render_dense
from target_core.read_models.failures import window_share
from target_core.run_config import RunConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.types import Dataset, Query, Table

HEADER = ("Season", "Club", "League", "Apps", "Goals")
LONG = Table("football", "Career_of_Mira_Holt", HEADER,
             tuple((f"{1990 + i}-{91 + i}", f"Club number {i}", f"Division {i % 4}",
                    10 + i, i % 7) for i in range(40)),
             {"title": "Mira Holt career statistics"})
SHORT = Table("football", "Stadiums", ("Stadium", "Capacity"),
              (("Holt Arena", 12000), ("Mira Park", 8000)), {"title": "Football stadiums"})
ROW_30 = LONG.rows[29]
VIEW = TableView()


def _query(**kw: object) -> Query:
    fields = {"query_id": "q1", "query": "How many goals did Mira Holt score for Club "
              "number 29?", "answer": "She scored 1 goal.", "gold": (LONG.key,),
              "database_id": "football"} | kw
    return Query(**fields)  # type: ignore[arg-type]


ANNOTATED = _query(meta={"evidence": [{"row": 29, "column": "Goals"}]})
DATASET = Dataset("career", "qa", (LONG, SHORT), (ANNOTATED,))


def _tokens(text: str) -> int:
    """Word pieces of `text` with [CLS] and [SEP], untruncated (the reference count)."""
    tokenizer = load_tokenizer(find_model_dir())
    tokenizer.no_truncation()
    try:
        return len(tokenizer.encode(text.strip()).ids)
    finally:
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)


def test_window_cuts_a_long_table_after_the_row_the_tokenizer_says() -> None:
    window = window_for("minilm", load_settings())
    assert window is not None and window.limit == 256
    where = table_window(window, LONG, VIEW, ANNOTATED)
    n = where.rows_seen
    assert where.cut_at is not None and where.rows_total == 40 and 0 < n < 29
    # the reference: the first n rows fit the window, n + 1 rows do not
    assert _tokens(table_text(LONG, VIEW.with_(rows=n))) <= 256
    assert _tokens(table_text(LONG, VIEW.with_(rows=n + 1))) > 256
    assert where.tokens == _tokens(table_text(LONG, VIEW))
    assert row_end(LONG, VIEW, n) <= where.cut_at < row_end(LONG, VIEW, n + 1)
    assert where.cut_label.startswith(f"cut after row {n} of 40 (")
    assert [(c.row, c.column, p) for c, p in where.evidence] == [(29, "Goals", "beyond")]
    assert where.verdict == "beyond"
    # a row the embedder read: inside; a short table: read whole
    early = _query(meta={"evidence": [{"row": 0, "column": "Club"}]})
    assert table_window(window, LONG, VIEW, early).verdict == "inside"
    assert table_window(window, SHORT, VIEW, None).cut_at is None


@pytest.mark.parametrize("view", [TableView(format="csv"), TableView(format="json"),
                                  TableView(title=False, format="target-markdown", rows=35)])
def test_row_ends_in_every_format(view: TableView) -> None:
    window = window_for("minilm", load_settings())
    assert window is not None
    where = table_window(window, LONG, view, ANNOTATED)
    n = where.rows_seen
    assert 0 < n < 29 and where.rows_total == (35 if view.rows else 40)
    assert row_end(LONG, view, n) <= where.cut_at < row_end(LONG, view, n + 1)  # type: ignore[operator]


def test_evidence_from_the_answer_or_the_sql_without_an_annotation() -> None:
    by_answer = _query(answer=ROW_30[1])  # "Club number 29": only row 30 holds it
    assert [(c.row, c.source) for c in evidence_cells(by_answer, LONG)] == [(29, "answer")]
    by_sql = _query(sql="SELECT Goals FROM t WHERE Club = 'Club number 29'")
    cells = {(c.row, c.column, c.source) for c in evidence_cells(by_sql, LONG)}
    assert cells == {(-1, "Goals", "sql"), (-1, "Club", "sql"), (29, "Club", "sql")}
    window = window_for("minilm", load_settings())
    assert window is not None
    assert table_window(window, LONG, VIEW, by_sql).verdict == "beyond"  # header read, row not


def test_dense_families_only() -> None:
    assert dense_embedder("dense:minilm") == "minilm"
    assert dense_embedder("hybrid:minilm:method=rrf,k=60") == "minilm"
    assert dense_embedder("bm25") is None and dense_embedder("rows") is None


def _dense_run(store: RunStore, retriever: str = "dense:minilm") -> str:
    run, _ = store.start_run(RunConfig(DATASET.name, retriever, view=VIEW, top_k=1),
                             dataset_fingerprint=DATASET.fingerprint, task="qa",
                             n_queries=1, versions={})
    store.save_results(run.run_id, [QueryResult(
        query_id="q1", position=0, ranked=[(SHORT.key, 0.5), (LONG.key, 0.4)],
        gold=[LONG.key], gold_ranks={LONG.key: 2}, metrics={"hit@1": 0.0}, ms=1.0)])
    store.finish_run(run.run_id, {})
    return run.run_id


def test_category_counted_for_dense_runs_only(tmp_path: Path) -> None:
    assert "evidence-beyond-window" in CATEGORIES
    store = RunStore(tmp_path / "runs.sqlite")
    dense = _dense_run(store)
    report = analyse_failures(store, DATASET, dense)
    assert report.counts["evidence-beyond-window"] == 1
    why = report.cases[0].evidence["evidence-beyond-window"]
    assert "row 30 (Goals)" in why and "cut after row" in why
    assert window_share(report, store.get_run(dense)) == (
        "1 of 1 failed queries (100%) have their evidence beyond minilm's input window")
    lexical = _dense_run(store, "bm25")
    report = analyse_failures(store, DATASET, lexical)
    assert report.counts["evidence-beyond-window"] == 0
    assert window_share(report, store.get_run(lexical)) is None


def test_dense_section_explains_and_renders(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.get_run(_dense_run(store))
    tables = [{"table": "football/Career_of_Mira_Holt", "role": "gold", "rank": 2},
              {"table": "football/Stadiums", "role": "winner", "rank": 1}]
    section = explain_dense(run, DATASET, ANNOTATED, tables, load_settings())
    assert section is not None and section["window"] == 256
    gold, winner = section["tables"]
    assert gold["evidence_verdict"] == "beyond" and winner["cut_at"] is None
    assert gold["text_seen"] == table_text(LONG, VIEW)[:gold["cut_at"]]
    sim = gold["similarity"]
    assert sim["rows_embedded"] == 40 and not sim["capped"]
    assert all(-1 <= r["cosine"] <= 1 for r in sim["rows"])
    assert sim["rows"][sim["best_row"] - 1]["cosine"] == max(r["cosine"] for r in sim["rows"])
    assert abs(sim["table"] - winner["similarity"]["table"]) > 1e-6
    shown = render_dense(section)
    assert shown is not None and "256 tokens" in shown.caption
    assert list(shown.overview["evidence"]) == ["beyond the cut", "none found"]
    rows = shown.tables[0].rows
    assert len(rows) == 42 and list(rows["row"][:2]) == ["whole text (indexed)",
                                                         "title + header"]
    assert rows["read"].iloc[2] and not rows["read"].iloc[-1]
    assert list(shown.tables[0].evidence["where"]) == ["beyond"]
    assert render_dense(None) is None
    bm25 = store.get_run(_dense_run(store, "bm25"))
    assert explain_dense(bm25, DATASET, ANNOTATED, tables, load_settings()) is None


def test_query_and_failures_pages_show_the_dense_explanation(app, tmp_path: Path) -> None:
    from target_core.engine.runner import run_retrieval
    from tests.conftest import write_jsonl

    folder = tmp_path / "career"
    folder.mkdir()
    write_jsonl(folder / "corpus.jsonl", [
        {"database_id": t.database_id, "table_id": t.table_id,
         "table": [list(t.header), *map(list, t.rows)], "context": dict(t.context)}
        for t in (LONG, SHORT)])
    write_jsonl(folder / "queries.jsonl", [{  # worded like the stadiums: gold ranked 2nd
        "query_id": "q1", "query": "Which football stadium has the largest capacity?",
        "answer": "1", "table_id": LONG.table_id, "database_id": "football",
        "evidence": [{"row": 29, "column": "Goals"}]}])
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    run = run_retrieval(RunConfig(str(folder), "dense:minilm", top_k=1),
                        settings=settings).run
    at = app("pages/query.py", run=run.run_id, query="q1")
    at.toggle(key="why-on").set_value(True).run()  # off until asked
    assert not at.error
    assert "What the embedder saw" in [m.value.strip("*") for m in at.markdown]
    overview = next(d.value for d in at.dataframe
                    if list(d.value.columns) == ["table", "role", "rank", "tokens", "cut",
                                                 "evidence"])
    assert list(overview["evidence"]) == ["beyond the cut", "none found"]
    assert overview["cut"].iloc[0].startswith("cut after row ")
    labels = [e.label.replace("\\", "") for e in at.expander]  # plain() escapes
    assert any(label.startswith("★ gold football/Career_of_Mira_Holt · rank 2 · cut after")
               for label in labels), labels
    failures = app("pages/failures.py", run=run.run_id, k="1")
    assert not failures.error
    assert any("1 of 1 failed queries (100%) have their evidence beyond minilm" in c.value
               for c in failures.caption)
