"""HySE (retrievers/hyse.py, generators/hypothetical.py): the spec and its options, the
heuristic writer's tables, mean against split aggregation on hand-computed vectors,
score_all against search, TARGET's prompt on the fake OpenAI server with its tables
embedded and cached, and the fall back to the query alone when a write fails."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from target_core.config import Settings, load_settings
from target_core.datasets.folder import load_folder
from target_core.engine.runner import run_retrieval
from target_core.errors import ConfigError
from target_core.generators.hypothetical import (
    HeuristicWriter,
    HypotheticalTables,
    query_parts,
    table_writer,
    tables_from_reply,
)
from target_core.progress import Progress, no_progress
from target_core.registry import Part
from target_core.retrievers import RETRIEVERS, build_retriever
from target_core.retrievers.base import top_k_hits
from target_core.retrievers.hyse import (
    HySEOptions,
    HySERetriever,
    parse_hyse_options,
    split_scores,
)
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Query, Table
from target_core.vectorstore import VectorStore

# --- the spec ----------------------------------------------------------------------------


def test_spec_parts_and_options() -> None:
    assert RETRIEVERS.parts("hyse") == (Part("embedder", "minilm"),
                                        Part("generator", "heuristic"))
    assert RETRIEVERS.parts("hyse:openai@openai:gpt-4o-mini:n=3,agg=split") == (
        Part("embedder", "openai"), Part("generator", "openai:gpt-4o-mini"))
    assert RETRIEVERS.parts("hyse:@local:smollm2") == (Part("embedder", "minilm"),
                                                       Part("generator", "local:smollm2"))
    assert parse_hyse_options("") == HySEOptions(n=2, rows=2, agg="mean")  # TARGET's N, R
    assert parse_hyse_options("n=3, agg=split,rows=0") == HySEOptions(3, 0, "split")


@pytest.mark.parametrize(("options", "named"), [
    ("agg=max", "agg=max"), ("n=0", "n=0"), ("n=two", "n=two"), ("rows=-1", "rows=-1"),
    ("k=5", "'k=5'"), ("split", "'split'")])
def test_bad_options_name_the_value(options: str, named: str, settings: Settings) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        parse_hyse_options(options)
    if "=" in options:  # without '=' the text belongs to the generator spec
        with pytest.raises(ConfigError, match=re.escape(named)):
            build_retriever(f"hyse:minilm@heuristic:{options}", settings)


def test_a_generator_that_cannot_write_tables_is_refused() -> None:
    class Echo:
        spec = "py:echo.py:Echo"

    with pytest.raises(ConfigError, match="py:echo.py:Echo"):
        table_writer(Echo(), 2, 2)


# --- the writers ---------------------------------------------------------------------------


def test_heuristic_writer_as_documented() -> None:
    query = "Did Ada Berg run faster in 2020 than in 2019?"
    assert query_parts(query) == (["run", "faster"], ["Ada Berg"], ["2020", "2019"])
    written = HeuristicWriter(n=2, rows=2).write(query)
    assert written.error is None
    first, second = written.tables
    assert first.header == ("Run", "Faster", "Name", "Year")
    assert first.rows == (("", "", "Ada Berg", "2020"), ("", "", "Ada Berg", "2019"))
    assert second.header == ("Faster", "Run", "Name", "Year")
    assert second.rows == (("", "", "Ada Berg", "2019"), ("", "", "Ada Berg", "2020"))
    # a number that is not a year is a Value; no names, no Name column; one row at most
    lone = HeuristicWriter(n=1, rows=3).write("Which lake has area above 87.5?").tables[0]
    assert lone.header == ("Lake", "Area", "Above", "Value")
    assert lone.rows == (("", "", "", "87.5"),)
    assert HeuristicWriter(2, 2).write("Which is it?").error is not None


def test_tables_from_reply_keeps_usable_tables() -> None:
    reply = {"schemas": [[["A", "B"], ["1", 2], ["3", 4], ["5", 6]], [], "x", [[], ["1"]],
                         [["C"], "not a row", ["7"]], [["D"]]]}
    tables = tables_from_reply(reply, n=2, rows=2)
    assert [(t.header, t.rows) for t in tables] == [
        (("A", "B"), (("1", 2), ("3", 4))), (("C",), (("7",),))]
    assert tables_from_reply({"echo": "hi"}, 2, 2) == ()


# --- aggregation, on vectors worked by hand -----------------------------------------------

VOCABULARY = ("lake", "marathon", "river", "mountain")


class WordEmbedder:
    """Counts of VOCABULARY words, L2-normalized: cosines can be worked by hand."""

    spec = "words"
    dimension = len(VOCABULARY)
    max_tokens = 512
    last_truncated = 0
    backend = "numpy"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def embed(self, texts: Sequence[str], *, kind: str,
              progress: Progress = no_progress) -> np.ndarray:
        self.seen += [(kind, t) for t in texts]
        rows = np.array([[re.findall(r"[a-z]+", t.lower()).count(w) for w in VOCABULARY]
                         for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def load(self) -> None:
        pass

    def fingerprint(self) -> str:
        return "words-v1"


class FixedWriter:
    """Writes the same hand-made tables for every query (or fails, with `error`)."""

    spec = "fixed"
    label = "fixed tables (test)"
    concurrency = 2

    def __init__(self, tables: tuple[Table, ...], error: str | None = None) -> None:
        self.tables, self.error = tables, error
        self.calls: list[str] = []

    def write(self, query: str) -> HypotheticalTables:
        self.calls.append(query)
        return HypotheticalTables(() if self.error else self.tables, self.error)


CORPUS = ["lake lake", "marathon", "lake marathon", "river"]
"""Unit vectors t0 = (1,0,0,0), t1 = (0,1,0,0), t2 = (1,1,0,0)/√2, t3 = (0,0,1,0)."""
HYPOTHETICAL = (Table("", "a", ("Lake",), ()), Table("", "b", ("Marathon",), ()))
"""Serialized "| Lake |\\n| --- |" and "| Marathon |...": v_a = t0, v_b = t1."""


def _hand_made(settings: Settings, agg: str, writer: FixedWriter | None = None
               ) -> HySERetriever:
    retriever = HySERetriever(WordEmbedder(), VectorStore.from_settings(settings),
                              writer or FixedWriter(HYPOTHETICAL), HySEOptions(agg=agg))
    retriever.index(CORPUS, corpus_key=f"hand-made-{agg}")
    return retriever


def test_mean_searches_by_the_prototype_vector(settings: Settings) -> None:
    """m = (v_a + v_b + v_q)/3 normalized = (1,1,1,0)/√3 for the query "river?":
    cos(m, t2) = 2/√6 = 0.8165; t0, t1, t3 tie at 1/√3 = 0.5774 (ties to the lower index)."""
    retriever = _hand_made(settings, "mean")
    hits = retriever.search(["river?"], top_k=4)[0]
    assert [i for i, _ in hits] == [2, 0, 1, 3]
    assert [s for _, s in hits] == pytest.approx([2 / 6 ** 0.5] + [1 / 3 ** 0.5] * 3,
                                                 abs=1e-6)
    assert [i for i, _ in retriever.search(["river?"], top_k=2)[0]] == [2, 0]
    exact = top_k_hits(retriever.score_all("river?"), 4)
    assert [i for i, _ in exact] == [2, 0, 1, 3]
    assert [s for _, s in exact] == pytest.approx([s for _, s in hits], abs=1e-6)


def test_split_merges_one_list_per_table_and_the_query(settings: Settings) -> None:
    """Lists (ties to the lower index): a = t0, t2, t1, t3; b = t1, t2, t0, t3;
    query "river?" = t3, t0, t1, t2. Round-robin positions (r-1)·3 + s - 1, smallest kept:
    t0 0, t1 1, t3 2, t2 3; scores 1, 1/2, 1/3, 1/4. Unlike mean, t2 (near both tables,
    first of none) comes last, and the top 3 is each list's best."""
    retriever = _hand_made(settings, "split")
    hits = retriever.search(["river?"], top_k=4)[0]
    assert hits == [(0, 1.0), (1, 0.5), (3, pytest.approx(1 / 3)), (2, 0.25)]
    assert retriever.search(["river?"], top_k=2)[0] == hits[:2]
    assert list(retriever.score_all("river?")) == pytest.approx([1.0, 0.5, 0.25, 1 / 3])


def test_split_scores_by_hand() -> None:
    cosines = np.array([[0.9, 0.1], [0.8, 0.7], [0.0, 0.2]])
    # list 0: 0, 1, 2 -> positions 0, 2, 4; list 1: 1, 2, 0 -> 1, 3, 5
    assert list(split_scores(cosines)) == pytest.approx([1.0, 1 / 2, 1 / 4])


def test_tables_are_embedded_as_documents_in_the_run_view(settings: Settings) -> None:
    embedder = WordEmbedder()
    retriever = HySERetriever(embedder, VectorStore.from_settings(settings),
                              FixedWriter((Table("", "a", ("Lake", "Depth"),
                                                 (("Orin", 102), ("Vessa", 48))),)),
                              HySEOptions(n=1))
    texts = retriever.prepare_texts([Table("w", "t", ("Lake",), (("x",),))],
                                    TableView(rows=1, format="csv"))
    retriever.index(texts, corpus_key="view")
    embedder.seen.clear()
    retriever.search(["deepest lake?"], top_k=1)
    assert embedder.seen == [("document", "Lake,Depth\nOrin,102"), ("query", "deepest lake?")]


def test_a_failed_write_falls_back_to_the_query(settings: Settings) -> None:
    """No tables: the only vector is the query's, so mean and split are dense search."""
    for agg in ("mean", "split"):
        writer = FixedWriter(HYPOTHETICAL, error="model down")
        retriever = _hand_made(settings, agg, writer)
        assert [i for i, _ in retriever.search(["marathon"], top_k=2)[0]] == [1, 2]
        assert retriever.query_vectors("marathon").shape == (1, len(VOCABULARY))
    info = retriever.writing_info()
    assert info["hyse_writes"] == info["hyse_writes_failed"] == 1
    assert info["hyse_write_error_example"] == "model down"


def test_the_run_writes_its_queries_up_front_and_records_it(settings: Settings) -> None:
    writer = FixedWriter(HYPOTHETICAL)
    retriever = _hand_made(settings, "mean", writer)
    queries = [Query(f"q{i}", text, "", (("w", "t"),), "w")
               for i, text in enumerate(["river?", "lake?", "river?"])]
    info = retriever.prepare_queries([q.query for q in queries])
    assert sorted(writer.calls) == ["lake?", "river?"]
    retriever.search(["river?", "lake?"], top_k=2)
    assert len(writer.calls) == 2  # searching writes nothing again
    assert info | {"hyse_write_seconds": 0} == {
        "hyse_writer": "fixed tables (test)", "hyse_n": 2, "hyse_rows": 2,
        "hyse_agg": "mean", "hyse_writes": 2, "hyse_writes_failed": 0,
        "hyse_writes_cached": 0, "hyse_tables_written": 4, "hyse_write_seconds": 0}


# --- MiniLM and the heuristic writer, through the runner ----------------------------------


def test_minilm_heuristic_run_on_handmade(handmade_dir: Path, settings: Settings) -> None:
    result = run_retrieval(RunConfig(str(handmade_dir), "hyse", top_k=2), settings=settings)
    run = result.run
    assert run.status == "complete"
    info = run.index_info
    assert info["hyse_writer"].startswith("heuristic") and info["hyse_agg"] == "mean"
    assert info["hyse_writes"] == 3 and info["hyse_writes_failed"] == 0
    # "Which lake in Norland is deepest?": | Lake | Deepest | Name | with row Norland
    retriever = build_retriever("hyse", settings)
    dataset = load_folder(handmade_dir)
    retriever.index(retriever.prepare_texts(dataset.tables, TableView()), corpus_key="h")
    hits = retriever.search(["Which lake in Norland is deepest?"], top_k=4)[0]
    assert dataset.tables[hits[0][0]].table_id == "Lakes_of_Norland_0"
    scores = retriever.score_all("Which lake in Norland is deepest?")
    assert [i for i, _ in top_k_hits(scores, 4)] == [i for i, _ in hits]


# --- an LLM writer on the fake OpenAI server -----------------------------------------------

SCHEMAS = {"schemas": [[["Lake", "Max depth (m)"], ["Orin", 102], ["Vessa", 48], ["Tamm", 9]],
                       [["Marathon", "Winner", "Year"], ["Norland", "Mia Holt", 2020]]]}


def _fake_settings(tmp_path: Path, fake_openai: Any) -> Settings:
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "OPENAI_API_KEY": "sk-test-hyse",
                                  "OPENAI_BASE_URL": fake_openai.base_url,
                                  "TARGET_OPENAI_RETRIES": "0"})


def _chats(fake_openai: Any) -> list[dict[str, Any]]:
    return [r.body for r in fake_openai.requests if r.path.endswith("/chat/completions")]


def test_llm_writer_asks_for_n_tables_and_embeds_them(tmp_path: Path, fake_openai: Any,
                                                      handmade_dir: Path) -> None:
    fake_openai.chat_responder = lambda body: json.dumps(SCHEMAS)
    settings = _fake_settings(tmp_path, fake_openai)
    spec = "hyse:openai@openai:gpt-4o-mini:n=3,rows=2"
    retriever = build_retriever(spec, settings)
    dataset = load_folder(handmade_dir)
    retriever.index(retriever.prepare_texts(dataset.tables, TableView()), corpus_key="llm")
    retriever.search(["Which lake is deepest?"], top_k=2)
    (chat,) = _chats(fake_openai)
    system, user = chat["messages"]
    assert system["content"].startswith("You are an assistant skilled in generating")
    assert "Generate exactly 3 tables with different semantics and at least 5 columns, " \
           "but exactly 2 rows that could answer or verify the following query: " \
           "Which lake is deepest?." in user["content"]
    assert chat["response_format"]["json_schema"]["name"] == "hypothetical_schemas"
    assert chat["max_tokens"] == 512
    embedded = [text for r in fake_openai.requests if r.path.endswith("/embeddings")
                for text in r.body["input"]]
    # rows cut to 2; the two tables sent as documents, then the query
    assert embedded[-3:] == [
        "| Lake | Max depth (m) |\n| --- | --- |\n| Orin | 102 |\n| Vessa | 48 |",
        "| Marathon | Winner | Year |\n| --- | --- | --- |\n| Norland | Mia Holt | 2020 |",
        "Which lake is deepest?"]
    assert retriever.query_vectors("Which lake is deepest?").shape[0] == 3
    # a rerun in a new retriever costs nothing: the reply comes from the response cache
    again = build_retriever(spec, settings)
    assert again.prepare_queries(["Which lake is deepest?"])[
        "hyse_writes_cached"] == 1
    assert len(_chats(fake_openai)) == 1


@pytest.mark.parametrize("fault", ["500", "no tables"])
def test_llm_write_failures_fall_back_and_are_counted(fault: str, tmp_path: Path,
                                                      fake_openai: Any,
                                                      handmade_dir: Path) -> None:
    fake_openai.chat_responder = lambda body: json.dumps({"schemas": [[]]})
    retriever = build_retriever("hyse:openai@openai", _fake_settings(tmp_path, fake_openai))
    dataset = load_folder(handmade_dir)
    retriever.index(retriever.prepare_texts(dataset.tables, TableView()), corpus_key="f")
    if fault == "500":
        fake_openai.fail_next(1, "500")
    info = retriever.prepare_queries(["Who won in 2020?"])
    assert info["hyse_writes_failed"] == 1 and info["hyse_tables_written"] == 0
    assert retriever.query_vectors("Who won in 2020?").shape[0] == 1
    dense = build_retriever("dense:openai", _fake_settings(tmp_path, fake_openai))
    dense.index(dense.prepare_texts(dataset.tables, TableView()), corpus_key="f")
    assert retriever.score_all("Who won in 2020?") == pytest.approx(
        dense.score_all("Who won in 2020?"), abs=1e-6)


def test_cells_are_bounded_only_where_the_server_enforces_it(tmp_path: Path) -> None:
    """maxLength goes to llama.cpp (its grammar enforces it), never to other servers
    (OpenAI's strict mode does not list it)."""
    from fake_openai import llama_cpp_props, start_fake_openai

    from target_core.generators.hypothetical import LLMWriter
    from target_core.llm.chat import ChatModel

    reply = json.dumps({"schemas": [[["Lake", "Depth"], ["Norland", 3]]]})
    sent = {}
    for name, options in (("llama.cpp", {"props": llama_cpp_props(n_ctx=4096)}),
                          ("other", {})):
        server = start_fake_openai(chat_responder=lambda body: reply, **options)
        try:
            settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / name),
                                              "OPENAI_API_KEY": "k",
                                              "OPENAI_BASE_URL": server.base_url})
            written = LLMWriter(ChatModel(settings, "m"), 1, 1).write("deepest lake?")
            assert written.error is None and written.tables[0].header == ("Lake", "Depth")
            (request,) = server.chat_requests()
            schema = request.body["response_format"]["json_schema"]["schema"]
            sent[name] = schema["properties"]["schemas"]["items"]["items"]  # a row
        finally:
            server.stop()
    assert sent["llama.cpp"]["items"]["anyOf"][0] == {"type": "string", "maxLength": 40}
    assert sent["other"]["items"]["anyOf"][0] == {"type": "string"}
    assert sent["other"]["maxItems"] == 10 == sent["llama.cpp"]["maxItems"]
