"""TARGET's retriever classes as they are (issue 25, item 6) and TARGET's counting of
their lists (item 5): constructor arguments in the spec, the view refused, TARGET's
format names, cells as strings, AbsStandardEmbeddingRetriever's shape through the
engine, and repeats / more than k counted as TARGET counts them, by a plug-in and by an
imported TARGET results file."""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import numpy as np
import pytest

import target_core
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.pyclass import option_value, parse_class_ref
from target_core.registry import PluginError
from target_core.retrievers import build_retriever
from target_core.retrievers.target_plugin import target_form, target_table
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Table

CONFIGURED = '''
class Configured:
    """Configured by constructor, as TARGET's OTTQARetriever(encoding=, withtitle=)."""

    def __init__(self, encoding="bm25", withtitle=True, num_rows=None):
        self.encoding, self.withtitle, self.num_rows = encoding, withtitle, num_rows
        self.names = []

    def embed_corpus(self, dataset_name, corpus):
        self.names.append(dataset_name)
        self.keys = [(d, t) for b in corpus for d, t in zip(b["database_id"], b["table_id"])]

    def retrieve(self, query, dataset_name, top_k, **kwargs):
        return self.keys[:top_k]
'''

# Lists by question, at top_k = 2, with repeats and more than k entries (handmade-qa:
# q1 gold {L}, q2 gold {M20}, q3 gold {M19, M20}).
L, M19, M20, E = (("wiki", "Lakes_of_Norland_0"), ("wiki", "2019_Norland_Marathon_0"),
                  ("wiki", "2020_Norland_Marathon_0"), ("wiki", "Empty_Results_0"))
LISTS = {"q1": [M19, M19, E, L], "q2": [M20, M20], "q3": [M20, M20]}

REPEATING = f'''
LISTS = {json.dumps({q: [list(k) for k in keys] for q, keys in LISTS.items()})}
QUESTIONS = {{"Which lake in Norland is deepest?": "q1",
             "Who won the 2020 Norland Marathon?": "q2",
             "Did Ada Berg run faster in 2020 than in 2019?": "q3"}}

class Repeating:
    def embed_corpus(self, dataset_name, corpus):
        list(corpus)

    def retrieve(self, query, dataset_name, top_k, **kwargs):
        return [tuple(k) for k in LISTS[QUESTIONS[query]]]
'''

STANDARD = '''
import math
import zlib

DIM = 256

def bag(text):
    vector = [0.0] * DIM
    for word in text.lower().replace("?", " ").replace(",", " ").split():
        vector[zlib.crc32(word.encode()) % DIM] += 1.0
    return vector

class BagOfWords:
    """TARGET's AbsStandardEmbeddingRetriever shape: one vector per table and per query."""

    def __init__(self):
        self.expected_corpus_format = "nested array"

    def embed_corpus(self, dataset_name, corpus_entry):
        table = corpus_entry["table"]
        assert set(corpus_entry) == {"database_id", "table_id", "table", "context"}
        assert all(isinstance(c, str) for row in table for c in row), "cells are strings"
        title = str(corpus_entry["context"].get("title", ""))
        return bag(" ".join([title] + [c for row in table for c in row]))

    def embed_query(self, query, dataset_name):
        return bag(query)
'''


def _write(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(source, encoding="utf-8")
    return folder / name


# --- constructor arguments ---------------------------------------------------------------

def test_constructor_arguments_are_part_of_the_spec_and_the_run(
        tmp_path: Path, handmade_dir: Path, settings: Settings) -> None:
    path = _write(tmp_path / "plugins", "configured.py", CONFIGURED)
    spec = f"py:{path}:Configured:encoding=tfidf,withtitle=false,num_rows=0"
    built = build_retriever(spec, settings)
    assert (built.obj.encoding, built.obj.withtitle, built.obj.num_rows) == ("tfidf", False, 0)
    assert parse_class_ref(f"{path}:Configured", "retriever").kwargs == ()
    assert [option_value(v) for v in ("true", "null", "2.5", '"0"', "bm25")] == [
        True, None, 2.5, "0", "bm25"]
    runs = {}
    for options in ("withtitle=false", "withtitle=true", "withtitle=false"):
        result = run_retrieval(RunConfig(dataset=str(handmade_dir),
                                         retriever=f"py:{path}:Configured:{options}",
                                         top_k=2), settings=settings)
        assert result.run.config.retriever.endswith(f":Configured:{options}")
        runs.setdefault(options, set()).add(result.run.run_id)
        runs.setdefault("dataset names", set()).add(result.run.index_info["dataset_name"])
    assert len(runs["withtitle=false"]) == 1  # the same arguments: the run is reused
    assert runs["withtitle=false"] != runs["withtitle=true"]  # other arguments: a new run
    assert len(runs["dataset names"]) == 2  # never a class's stale index of other arguments

    with pytest.raises(PluginError, match=r"Configured has no argument 'withtitel' \(it "
                       r"takes encoding, withtitle, num_rows\)"):
        build_retriever(f"py:{path}:Configured:withtitel=false", settings)
    with pytest.raises(PluginError, match="constructor argument 'withtitle': expected "
                       "NAME=VALUE"):
        build_retriever(f"py:{path}:Configured:encoding=bm25,withtitle", settings)


# --- what a TARGET-shaped class receives ---------------------------------------------------

def test_a_non_default_view_is_refused_before_the_run_starts(
        tmp_path: Path, handmade_dir: Path, settings: Settings) -> None:
    path = _write(tmp_path / "plugins", "configured.py", CONFIGURED)
    for spec, view in ((f"py:{path}:Configured", TableView(title=False)),
                       (f"py:{_write(tmp_path / 'plugins', 'bag.py', STANDARD)}:BagOfWords",
                        TableView(rows=0))):
        with pytest.raises(PluginError, match=r"has TARGET's shape: it gets each table "
                           r"whole .*configure the class by its constructor"):
            run_retrieval(RunConfig(dataset=str(handmade_dir), retriever=spec, view=view),
                          settings=settings)
    assert RunStore.in_workspace(settings.workspace).list_runs() == []  # nothing stored


def test_targets_format_names_and_string_cells() -> None:
    assert [target_form(v) for v in ("nested array", "Array", "pandas", "DataFrame",
                                     "pandas df", "dictionary", "parquet")] == [
        "nested array", "nested array", "dataframe", "dataframe", "dataframe",
        "dictionary", None]
    table = Table("db", "t", ("n", "x", "ok", "none"), ((1, 2.5, True, None),))
    assert target_table(table) == [["n", "x", "ok", "none"], ["1", "2.5", "true", ""]]
    assert target_table(table, "dictionary") == [{"n": "1", "x": "2.5", "ok": "true",
                                                  "none": ""}]
    assert target_table(table, "dataframe").iloc[0].tolist() == ["1", "2.5", "true", ""]

    class Pandas:
        def get_expected_corpus_format(self):  # noqa: ANN201
            return "pandas"

        def embed_corpus(self, dataset_name, corpus):  # noqa: ANN001, ANN201
            self.tables = [t for b in corpus for t in b["table"]]

        def retrieve(self, query, dataset_name, top_k, **kwargs):  # noqa: ANN001, ANN201
            return []

    obj = Pandas()
    report = target_core.check_retriever(obj)
    assert report.ok, str(report)
    assert type(obj.tables[0]).__name__ == "DataFrame"
    obj.get_expected_corpus_format = lambda: "parquet"  # type: ignore[method-assign]
    report = target_core.check_retriever(obj)
    assert not report.ok and "TARGET reads 'nested array'" in report.problems[0]


# --- TARGET's counting ---------------------------------------------------------------------

def _expected_target_numbers(metrics: dict[str, float]) -> None:
    """LISTS at top_k = 2, worked by TARGET's formula (tasks/AbsTask.py): per query,
    overlap = |set(G) ∩ set(R)| and capped = min(|G|, len(R)), R as returned.

    q1: G {L},        R [M19, M19, E, L]: overlap 1, capped min(1, 4) = 1
    q2: G {M20},      R [M20, M20]:       overlap 1, capped min(1, 2) = 1
    q3: G {M19, M20}, R [M20, M20]:       overlap 1, capped min(2, 2) = 2
    recall = (1+1+1) / (1+1+2) = 3/4; capped_recall = 3 / (1+1+2) = 3/4.
    Dropping repeats and cutting to k (the old way) gave 2/4 and 2/3.
    At k = 1, R is each list's first entry: overlaps 0, 1, 1 and capped 1, 1, 1:
    recall 2/4, capped recall 2/3.
    The rank metrics use the ranking (each table at its first place, cut to k):
    q1 [M19, E] -> recall@2 0; q2 [M20] -> 1; q3 [M20] -> 1/2: mean 1/2.
    """
    assert metrics["recall_micro@2"] == 3 / 4
    assert metrics["capped_recall@2"] == 3 / 4
    assert metrics["recall_micro@1"] == 2 / 4
    assert metrics["capped_recall@1"] == 2 / 3
    assert metrics["recall@2"] == pytest.approx(1 / 2)


def test_a_plugins_repeats_and_extra_results_count_as_target_counts_them(
        tmp_path: Path, handmade_dir: Path, settings: Settings, capsys) -> None:
    path = _write(tmp_path / "plugins", "repeating.py", REPEATING)
    run = run_retrieval(RunConfig(dataset=str(handmade_dir),
                                  retriever=f"py:{path}:Repeating", top_k=2),
                        settings=settings).run
    _expected_target_numbers(run.metrics)
    assert run.index_info["returned_lists"] == {
        "queries": 3, "repeat_queries": 3, "repeats": 3, "beyond_k_queries": 1,
        "beyond_k": 2}
    store = RunStore.in_workspace(settings.workspace)
    ranked = {r.query_id: [k for k, _ in r.ranked] for r in store.iter_results(run.run_id)}
    assert ranked == {"q1": [M19, E], "q2": [M20], "q3": [M20]}
    from target_core.cli.main import main
    from target_core.read_models.runs import fallback_notes

    assert main(["show", run.run_id, "--workspace", str(settings.workspace)]) == 0
    shown = capsys.readouterr().out
    assert ("lists        3 of 3 queries listed a table more than once (3 repeats); 1 "
            "listed more than k tables (2 extra entries): recall_micro@k and "
            "capped_recall@k count the lists as returned, as TARGET does") in shown
    assert any("3 of 3 queries listed a table more than once" in n
               for n in fallback_notes([run]))


def test_an_imported_file_with_repeats_and_extra_results_counts_as_target(
        tmp_path: Path, handmade_dir: Path, settings: Settings) -> None:
    from target_core.engine.importer import import_file

    path = tmp_path / "mine" / "handmade-qa" / "2.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps({"dataset_name": "handmade-qa", "query_id": q,
                                        "retrieval_results": [list(k) for k in keys]}) + "\n"
                            for q, keys in LISTS.items()))
    imported = import_file(str(path), settings=settings, dataset=str(handmade_dir))
    _expected_target_numbers(imported.run.metrics)
    assert imported.run.index_info["returned_lists"]["beyond_k"] == 2
    assert any("3 repeated tables in 3 queries" in w and "as TARGET does" in w
               for w in imported.warnings), imported.warnings
    assert any("1 query list more than k = 2 tables (2 extra entries)" in w
               for w in imported.warnings), imported.warnings
    results = {r.query_id: r for r in
               RunStore.in_workspace(settings.workspace).iter_results(imported.run.run_id)}
    assert [k for k, _ in results["q1"].ranked] == [M19, E]  # ranked within k
    assert results["q1"].gold_ranks == {L: 3}  # listed beyond k: a near miss, ranked


def test_check_retriever_reports_repeats_and_extra_results(tmp_path: Path) -> None:
    class Sloppy:
        def embed_corpus(self, dataset_name, corpus):  # noqa: ANN001, ANN201
            self.keys = [(d, t) for b in corpus for d, t in zip(b["database_id"],
                                                                 b["table_id"], strict=True)]

        def retrieve(self, query, dataset_name, top_k, **kwargs):  # noqa: ANN001, ANN201
            return [self.keys[0], self.keys[0], *self.keys]

    report = target_core.check_retriever(Sloppy())
    text = str(report)
    assert "retrieve listed a table more than once for 3 of 3 questions" in text
    assert "retrieve returned more than top_k = 2 tables for 3 of 3 questions" in text
    clean = target_core.check_retriever(
        "py:examples/target_style_retriever.py:KeywordRetriever")
    assert clean.ok and not clean.warnings


# --- AbsStandardEmbeddingRetriever's shape -----------------------------------------------

def test_a_standard_embedding_class_runs_through_the_engine_on_chroma(
        tmp_path: Path, settings: Settings) -> None:
    path = _write(tmp_path / "plugins", "bag.py", STANDARD)
    spec = f"py:{path}:BagOfWords"
    config = RunConfig(dataset="demo-qa", retriever=spec, limit=25)
    run = run_retrieval(config, settings=settings).run
    assert run.status == "complete", run.error
    info = run.index_info
    assert info["shape"] == "standard" and info["ranks_beyond_k"] is True
    data = load_dataset("demo-qa", settings)
    assert info["embedded"] == len(data.tables) and info["collection"].startswith("target-")
    assert run.metrics["recall@10"] > 0.15  # a toy embedder, far above chance (10 of 440)

    # the ranking is the class's vectors under cosine, best first
    def bag(text: str) -> np.ndarray:
        vector = np.zeros(256)
        for word in text.lower().replace("?", " ").replace(",", " ").split():
            vector[zlib.crc32(word.encode()) % 256] += 1.0
        return vector / max(math.sqrt(vector @ vector), 1e-12)

    texts = [" ".join([str(t.context.get("title", ""))] + [
        c for row in target_table(t) for c in row]) for t in data.tables]
    matrix = np.stack([bag(t) for t in texts])
    position = {t.key: i for i, t in enumerate(data.tables)}
    store = RunStore.in_workspace(settings.workspace)
    for result in list(store.iter_results(run.run_id))[:10]:
        cosine = matrix @ bag(data.query(result.query_id).query)
        top = [cosine[position[k]] for k, _ in result.ranked]
        assert top[0] == pytest.approx(cosine.max(), abs=1e-5)
        assert all(a >= b - 1e-5 for a, b in zip(top, top[1:], strict=False))  # best first
    again = run_retrieval(config, settings=settings, fresh=True).run
    assert again.index_info["embedded"] == 0  # the stored vectors are reused
    assert again.metrics["recall@10"] == run.metrics["recall@10"]
    report = target_core.check_retriever(spec)
    assert report.ok and "TARGET's standard embedding retriever shape" in report.subject
