"""Text corpora (GTR, Algorithm 1): documents.jsonl cut into passages, gold naming a
document or a character span, the document-level metric rule, passages through every
retriever, the heuristic generator and the Query page; the demo sets' generator."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from target_core.config import load_settings
from target_core.datasets.chunking import (
    ChunkSettings,
    Document,
    chunk_document,
    chunk_spans,
    document_table,
)
from target_core.datasets.folder import load_folder
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore, config_key
from target_core.errors import ConfigError, DatasetError
from target_core.generators.context import fit_table
from target_core.generators.heuristic_qa import answer_question
from target_core.metrics.documents import ranked_units, unit_rank
from target_core.metrics.retrieval import QueryOutcome, per_query_metrics
from target_core.run_config import GenerationConfig, RunConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import get_counter

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
DOCS, MIXED = FIXTURES / "docs-tiny", FIXTURES / "mixed-tiny"
SMALL = ChunkSettings(120, 30)


def _settings(tmp_path: Path, **env: str):
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "TARGET_DATASETS": f"{DOCS}:{MIXED}", **env})


# --- chunking ---------------------------------------------------------------------------

def test_chunks_by_hand() -> None:
    text = "aaa bbb ccc ddd eee"  # words at 0, 4, 8, 12, 16
    # size 7: "aaa bbb" [0, 7); the next starts 3 back (4, a word start): "bbb ccc" ...
    assert chunk_spans(text, ChunkSettings(7, 3)) == [(0, 7), (4, 11), (8, 15), (12, 19)]
    # no overlap: the next chunk starts after the space at 7
    assert chunk_spans(text, ChunkSettings(7, 0)) == [(0, 7), (8, 15), (16, 19)]
    # a cut inside a word moves back to the last space: 9 would split "ccc" -> [0, 7)
    assert chunk_spans(text, ChunkSettings(9, 0)) == [(0, 7), (8, 15), (16, 19)]
    # overlap 5 from end 7 lands at 2, inside "aaa": moved on to the word start 4
    assert chunk_spans(text, ChunkSettings(7, 5))[:2] == [(0, 7), (4, 11)]
    # a text no longer than the size is one chunk; surrounding whitespace left out
    assert chunk_spans("  short text \n", ChunkSettings(50, 10)) == [(2, 12)]
    # a word longer than the size is cut
    assert chunk_spans("abcdefghijkl mn", ChunkSettings(5, 2)) == [(0, 5), (5, 10), (10, 15)]
    assert chunk_spans("   ", ChunkSettings(5, 2)) == []


def test_chunk_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="overlap"):
        ChunkSettings(100, 100)
    with pytest.raises(ConfigError, match="size"):
        ChunkSettings(0, 0)
    with pytest.raises(ConfigError, match="TARGET_CHUNK_OVERLAP=300 must be less than "
                                          "TARGET_CHUNK_SIZE=300"):
        load_settings(environ={"TARGET_CHUNK_SIZE": "300", "TARGET_CHUNK_OVERLAP": "300"})


def test_chunks_are_passage_tables_with_offsets() -> None:
    document = Document("Doc", "A title", "aaa bbb ccc ddd eee")
    chunks = chunk_document(document, ChunkSettings(7, 3))
    assert [c.key for c in chunks] == [("documents", f"Doc#{n}") for n in (1, 2, 3, 4)]
    assert [c.rows[0][0] for c in chunks] == ["aaa bbb", "bbb ccc", "ccc ddd", "ddd eee"]
    second = chunks[1]
    assert second.header == ("text",) and second.title == "A title"
    assert dict(second.context) == {"kind": "passage", "title": "A title",
                                    "document_id": "Doc", "chunk": 2, "start": 4, "end": 11}
    joined = document_table({c.key: c for c in chunks}, ("documents", "Doc"))
    assert joined is not None and joined.rows[0][0] == document.text


def test_span_gold_is_the_chunks_overlapping_it() -> None:
    dataset = load_folder(DOCS, chunking=SMALL)
    text = json.loads((DOCS / "documents.jsonl").read_text().splitlines()[2])["text"]
    belmora = {t.table_id: t for t in dataset.tables if t.table_id.startswith("Belmora")}
    # at 120/30 the river's chunks are [0, 117), [90, 210), [180, 293)
    assert [(t.context["start"], t.context["end"]) for t in belmora.values()] == \
        [(0, 117), (90, 210), (180, 293)]
    assert all(t.rows[0][0] == text[t.context["start"]:t.context["end"]]
               for t in belmora.values())
    # the span [114, 152) "The river was dammed at Perona in 1961" starts in chunk 1 (< 117)
    # and lies in chunk 2: both are gold, chunk 3 (from 180) is not
    assert text[114:152] == "The river was dammed at Perona in 1961"
    assert dataset.query("d3").gold == (("documents", "Belmora_River#1"),
                                        ("documents", "Belmora_River#2"))
    assert dataset.query("d1").gold == (("documents", "Karsk_Mountains"),)
    # at the default size each document is one chunk: the span is that chunk
    assert load_folder(DOCS).query("d3").gold == (("documents", "Belmora_River#1"),)


def test_mixed_gold_names_a_table_and_a_document() -> None:
    dataset = load_folder(MIXED)
    assert dataset.query("m1").gold == (("wiki", "Belmora_dams_1"),
                                        ("documents", "Belmora_River"))
    assert dataset.query("t1").gold == (("wiki", "Tarwick_Marathon_winners_1"),)
    assert len(dataset.tables) == 3 + 4 and dataset.tables[0].database_id == "wiki"
    assert dataset.chunking == "1000 chars, overlap 200"


# --- loading errors name the file and line ----------------------------------------------

def _folder(tmp_path: Path, documents: list[str], queries: list[dict], corpus=None) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "documents.jsonl").write_text("".join(line + "\n" for line in documents))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    if corpus is not None:
        (folder / "corpus.jsonl").write_text("".join(json.dumps(t) + "\n" for t in corpus))
    return folder


GOOD = json.dumps({"id": "a", "title": "A", "text": "Alpha beta gamma."})
QUERY = {"query_id": "q", "query": "alpha?", "answer": "x", "document_id": "a"}


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "b", "text": ', "documents.jsonl, line 2: malformed JSON"),
    ('{"id": "b"}', "line 2, field 'text': required field is missing"),
    ('{"id": "b", "text": "  "}', "line 2, field 'text': must be a non-empty string"),
    ('{"text": "x"}', "line 2, field 'id': required field is missing"),
    ('{"id": "b#1", "text": "x"}', "line 2, field 'id': a document id may not hold '#'"),
    ('{"id": "a", "text": "x"}', "line 2, field 'id': duplicate document id 'a'; first "
                                 "defined at line 1"),
    ('{"id": "b", "title": 3, "text": "x"}', "line 2, field 'title': must be a string"),
    ('["b"]', "line 2: a document line must be a JSON object"),
])
def test_bad_document_lines(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(DatasetError) as info:
        load_folder(_folder(tmp_path, [GOOD, line], [QUERY]))
    assert message in str(info.value)


@pytest.mark.parametrize(("query", "message"), [
    (QUERY | {"document_id": "zzz"}, "queries.jsonl, line 1, field 'document_id': document "
                                     "'zzz' is not in documents.jsonl"),
    ({k: v for k, v in QUERY.items() if k != "document_id"}
     | {"spans": [{"document_id": "a", "start": 50, "end": 60}]},
     "field 'spans[0]': span [50, 60) lies beyond the text of document 'a'"),
    ({k: v for k, v in QUERY.items() if k != "document_id"}
     | {"spans": [{"document_id": "a", "start": 5, "end": 5}]},
     "field 'spans[0]': start and end must be character offsets"),
    (QUERY | {"spans": [{"document_id": "a", "start": 0, "end": 5}]},
     "name gold text by document_id or by spans, not both"),
    (QUERY | {"document_id": []}, "field 'document_id': must name at least one document"),
])
def test_bad_text_gold(tmp_path: Path, query: dict, message: str) -> None:
    with pytest.raises(DatasetError) as info:
        load_folder(_folder(tmp_path, [GOOD], [query]))
    assert message in str(info.value)


def test_the_passages_database_is_reserved(tmp_path: Path) -> None:
    table = {"database_id": "documents", "table_id": "t", "table": [["x"], [1]]}
    with pytest.raises(DatasetError, match="corpus.jsonl, line 1, field 'database_id': "
                                           "database_id 'documents' is reserved"):
        load_folder(_folder(tmp_path, [GOOD], [QUERY], corpus=[table]))


def test_text_gold_without_documents(write_dataset) -> None:
    folder = write_dataset(queries=[{"query_id": "q", "query": "x?", "answer": "x",
                                     "table_id": "t1", "database_id": "wiki",
                                     "document_id": "a"}])
    with pytest.raises(DatasetError, match="names gold text but the dataset has no "
                                           "documents.jsonl"):
        load_folder(folder)


# --- the document-level rule -----------------------------------------------------------

A1, A2, B1, T = ("documents", "A#1"), ("documents", "A#2"), ("documents", "B#1"), ("wiki", "T")
A, B = ("documents", "A"), ("documents", "B")


def test_document_gold_by_hand() -> None:
    retrieved = [A2, T, A1, B1]
    assert ranked_units(retrieved, [A]) == (A, T, B)
    assert ranked_units(retrieved, [A1]) == tuple(retrieved)  # span gold: chunks as given
    found = QueryOutcome("q", retrieved, (A,), "documents")
    assert found.gold_ranks == (1,)
    later = QueryOutcome("q", retrieved, (B,), "documents")
    assert later.gold_ranks == (3,)  # B#1 is 4th chunk, 3rd unit
    metrics = per_query_metrics(later, (1, 3))
    assert metrics["recall@1"] == 0 and metrics["recall@3"] == 1
    assert metrics["mrr"] == pytest.approx(1 / 3)
    both = QueryOutcome("q", retrieved, (T, A), "wiki")
    assert both.gold_ranks == (2, 1)
    assert per_query_metrics(both, (1,))["recall@1"] == 0.5
    chunks = QueryOutcome("q", retrieved, (A1, A2), "documents")
    assert chunks.gold_ranks == (3, 1)  # span gold: each chunk counts


def test_unit_rank_beyond_k_by_hand() -> None:
    keys = [T, A1, A2, B1, ("wiki", "U")]
    scores = np.array([0.5, 0.9, 0.8, 0.7, -np.inf])
    # units by best score: A (0.9), B (0.7), T (0.5); U matches nothing
    assert unit_rank(scores, keys, A) == 1
    assert unit_rank(scores, keys, B) == 2
    assert unit_rank(scores, keys, T) == 3
    assert unit_rank(scores, keys, ("wiki", "U")) is None


# --- runs ---------------------------------------------------------------------------------

def test_chunk_settings_change_the_run_key(tmp_path: Path) -> None:
    config = RunConfig("docs-tiny", "bm25")
    default = load_folder(DOCS)
    # a bigger size cuts the same single chunks, yet the run records another setting
    bigger = load_folder(DOCS, chunking=ChunkSettings(2000, 200))
    small = load_folder(DOCS, chunking=SMALL)
    assert default.corpus_fingerprint == bigger.corpus_fingerprint
    keys = {config_key(config, d.fingerprint) for d in (default, bigger, small)}
    assert len(keys) == 3
    first = run_retrieval(config, settings=_settings(tmp_path)).run
    again = run_retrieval(config, settings=_settings(tmp_path))
    assert again.reused and again.run.run_id == first.run_id
    other = run_retrieval(config, settings=_settings(tmp_path, TARGET_CHUNK_SIZE="120",
                                                     TARGET_CHUNK_OVERLAP="30")).run
    assert other.run_id != first.run_id
    assert first.index_info["chunking"] == "1000 chars, overlap 200"
    assert other.index_info["chunking"] == "120 chars, overlap 30"
    assert other.index_info["n_texts"] == 12


@pytest.mark.parametrize("retriever", ["bm25", "dense:minilm", "hybrid"])
def test_documents_and_mixed_end_to_end(tmp_path: Path, retriever: str) -> None:
    settings = _settings(tmp_path)
    store = RunStore.in_workspace(settings.workspace)
    docs = run_retrieval(RunConfig("docs-tiny", retriever, top_k=3), settings=settings,
                         store=store).run
    # each question names its article's own words: its document is first
    assert docs.metrics["recall@1"] == 1.0
    mixed = run_retrieval(RunConfig("mixed-tiny", retriever, top_k=3,
                                    generation=GenerationConfig("heuristic")),
                          settings=settings, store=store).run
    assert mixed.status == "complete" and mixed.metrics["recall@3"] == 1.0
    results = {r.query_id: r for r in store.iter_results(mixed.run_id)}
    assert {k[0] for r in results.values() for k, _ in r.ranked} == {"wiki", "documents"}
    # m1 needs the dams table and the river article: both within 3
    assert set(results["m1"].gold_ranks) == {("wiki", "Belmora_dams_1"),
                                             ("documents", "Belmora_River")}
    assert all(rank is not None and rank <= 3 for rank in results["m1"].gold_ranks.values())


def test_gold_document_beyond_k_is_ranked(tmp_path: Path) -> None:
    settings = _settings(tmp_path, TARGET_CHUNK_SIZE="120", TARGET_CHUNK_OVERLAP="30")
    store = RunStore.in_workspace(settings.workspace)
    run = run_retrieval(RunConfig("mixed-tiny", "bm25", top_k=1), settings=settings,
                        store=store).run
    result = store.get_result(run.run_id, "m1")
    ranked = [k for k, _ in result.ranked]
    ranks = result.gold_ranks
    assert len(ranked) == 1 and all(r is not None for r in ranks.values())
    assert sorted(ranks.values()) == [1, 2]  # the one found at 1, the other next among units


# --- text for indexes and prompts; the heuristic generator ------------------------------

def test_a_passage_serializes_as_text() -> None:
    passage = load_folder(DOCS).tables[0]
    body = passage.rows[0][0]
    assert table_text(passage, TableView()) == f"Title: Karsk Mountains\n{body}"
    assert table_text(passage, TableView(title=False)) == body
    assert table_text(passage, TableView(rows=0, format="csv")) == \
        f"Title: Karsk Mountains\n{body}"  # header only does not cut a passage
    assert table_text(passage, TableView.preset("target-ottqa")) == \
        f"Passage: Karsk_Mountains#1\n{body}"
    assert json.loads(table_text(passage, TableView(format="json"))) == \
        {"title": "Karsk Mountains", "text": body}


def test_a_passage_enters_a_prompt_whole_or_not_at_all() -> None:
    passage = load_folder(DOCS).tables[0]
    counter = get_counter(timeout=1)
    fitted = fit_table(passage, TableView(), 10_000, counter)
    assert fitted is not None and fitted[0] is passage
    assert fit_table(passage, TableView(), 20, counter) is None


def test_heuristic_answers_from_a_passage(tmp_path: Path) -> None:
    dataset = load_folder(DOCS)
    answer, why = answer_question("What is the highest peak of the Karsk Mountains?",
                                  [dataset.table(("documents", "Karsk_Mountains#1"))])
    assert answer == "Their highest peak is Mount Velder, which rises to 3,412 metres."
    assert why == "passage sentence 2 of 4 (2 shared words)"
    settings = _settings(tmp_path)
    store = RunStore.in_workspace(settings.workspace)
    run = run_retrieval(RunConfig("docs-tiny", "bm25", top_k=1,
                                  generation=GenerationConfig("heuristic")),
                        settings=settings, store=store).run
    generated = {r.query_id: r.generation for r in store.iter_results(run.run_id)}
    assert "1961" in generated["d3"]["answer"]
    assert "1,460" in generated["d4"]["answer"]


# --- the Query page ----------------------------------------------------------------------

def test_the_query_page_shows_a_passage(app, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TARGET_DATASETS", str(MIXED))
    settings = load_settings(tmp_path / "ws", environ={"TARGET_DATASETS": str(MIXED)})
    run = run_retrieval(RunConfig("mixed-tiny", "bm25", top_k=3), settings=settings).run
    at = app("pages/query.py", run=run.run_id, query="d1")
    assert not at.exception and not at.error
    ranked = next(d.value for d in at.dataframe if "score" in d.value.columns)
    passage = ranked[ranked["table"] == "documents/Karsk_Mountains#1"].iloc[0]
    assert passage["title"] == "Karsk Mountains (passage 1)" and bool(passage["gold"])
    gold = next(d.value for d in at.dataframe if "where" in d.value.columns)
    assert list(gold["table"]) == ["documents/Karsk_Mountains"]
    assert list(gold["title"]) == ["Karsk Mountains"]
    # the preview opens the gold document: its title and text, no one-column grid
    assert "**Karsk Mountains** · document Karsk\\_Mountains, 1 passage" in \
        [m.value for m in at.markdown]  # plain() escapes markdown
    assert any("Mount Velder" in t.value for t in at.text)
    assert len(at.dataframe) == 2  # gold and retrieved only
    at = app("pages/query.py", run=run.run_id, query="d1",
             table="documents/Karsk_Mountains#1")
    assert any("passage 1 of document Karsk\\_Mountains, characters 0\\-297" in m.value
               for m in at.markdown)


# --- the demo sets ------------------------------------------------------------------------

def test_demo_sets_rebuild_identically(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "data" / "demo" / "demo-qa", tmp_path / "demo-qa")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        importlib.import_module("demo_docs").build(tmp_path)
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    for name in ("demo-docs", "demo-mixed"):
        for file in (tmp_path / name).iterdir():
            assert file.read_bytes() == (ROOT / "data" / "demo" / name / file.name
                                         ).read_bytes(), f"{name}/{file.name}"


def test_demo_sets_load(settings) -> None:
    from target_core.datasets import load_dataset

    docs = load_dataset("demo-docs", settings)
    mixed = load_dataset("demo-mixed", settings)
    assert len(docs.queries) == 140 and docs.chunking == "1000 chars, overlap 200"
    assert {t.database_id for t in docs.tables} == {"documents"}
    assert {t.database_id for t in mixed.tables} == {"documents", "wiki"}
    assert len(mixed.queries) == 200
    levels = [q.meta.get("gold_level") for q in docs.queries]
    assert levels.count("document") == levels.count("span") == 70
    for query in docs.queries:  # every answer's value is in its gold passages' text
        value = query.answer.rpartition(" is ")[2].rstrip(".")
        texts = [document_table(docs.table_index, k) or docs.table(k) for k in query.gold]
        assert any(value in str(t.rows[0][0]) for t in texts), query.query_id


def test_the_datasets_page_shows_passages(app, monkeypatch) -> None:
    monkeypatch.setenv("TARGET_DATASETS", str(MIXED))
    at = app("pages/datasets.py", dataset="mixed-tiny", section="Tables",
             table="documents/Tarwick_Marathon#1")
    assert not at.exception and not at.error
    assert "Passage documents/Tarwick\\_Marathon\\#1" in [h.value for h in at.subheader]
    assert any("Henrik Ueda of Sorrenia" in t.value for t in at.text)
    assert any("Gold table of 1 query: d2" in c.value for c in at.caption)
    at = app("pages/datasets.py", dataset="mixed-tiny", section="Queries", query="m1")
    assert not at.exception and not at.error
    headers = [h.value for h in at.subheader]
    assert "Table wiki/Belmora\\_dams\\_1" in headers
    assert "Passage documents/Belmora\\_River" in headers  # the whole gold document
    assert any("fish ladder was built in 1994" in t.value for t in at.text)
    at = app("pages/datasets.py", dataset="demo-docs")  # sizes of 175 passages
    assert not at.exception and not at.error
    shown = {m.label: m.value for m in at.metric}  # passages are not 1 × 1 tables
    assert (shown["Tables"], shown["Passages"], shown["Median rows"]) == ("0", "175", "–")
    largest = at.dataframe[0].value  # a passage has no rows or columns to list
    assert len(largest) == 10 and set(largest["rows"]) == set(largest["columns"]) == {""}
    from target_core.figures.sizes import size_distributions

    figure = size_distributions(pd.DataFrame({"rows": [1], "columns": [1], "tokens": [9],
                                              "kind": ["passage"]}))
    assert [t.name for t in figure.data] == ["tokens"]
    assert figure.layout.annotations[0].text == "Tokens per passage"
