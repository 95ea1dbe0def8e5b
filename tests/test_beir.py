"""BEIR-style folders load as text corpora (datasets/beir.py): passages through the
document path with titles kept, gold from the chosen split's qrels (score > 0) with the
grades kept, detection before the folder format, and errors naming file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from target_core.datasets import load_dataset
from target_core.datasets.beir import is_beir_dataset, load_beir
from target_core.datasets.chunking import ChunkSettings, is_passage
from target_core.datasets.registry import resolve
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import DatasetError
from target_core.run_config import RunConfig

TINY = FIXTURES / "beir-tiny"


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    """A writable copy of the tiny BEIR fixture."""
    return Path(shutil.copytree(TINY, tmp_path / "tiny"))


def test_tiny_beir_loads_as_passages_with_titles_and_graded_gold() -> None:
    dataset = load_beir(TINY)
    assert dataset.task == "retrieval" and dataset.name == "beir-tiny"
    assert all(is_passage(t) for t in dataset.tables)
    assert len(dataset.tables) == 21  # 20 documents, the long d19 cut in two passages
    assert dataset.table(("documents", "d19#2")).context["title"] == "Himalayas"
    assert dataset.table(("documents", "d01#1")).title == "Mount Everest"
    # q9 is judged in dev only, q10 judged with no relevant document: both left out
    assert [q.query_id for q in dataset.queries] == [f"q{i}" for i in range(1, 9)]
    q1 = dataset.query("q1")
    assert q1.gold == (("documents", "d01"), ("documents", "d19"))  # score 0 is not gold
    assert q1.meta["relevance"] == {"d01": 2, "d19": 1, "d02": 0}
    assert q1.meta["split"] == "test" and q1.answer is None


def test_another_split_is_chosen_in_dataset_json(beir: Path) -> None:
    (beir / "dataset.json").write_text(json.dumps({"split": "dev", "name": "tiny-dev"}))
    dataset = load_beir(beir)
    assert dataset.name == "tiny-dev"
    assert [q.query_id for q in dataset.queries] == ["q1", "q9"]
    assert load_beir(beir, split="test").query("q8").gold[0] == ("documents", "d19")
    with pytest.raises(DatasetError, match="no qrels for split 'train'; the splits here "
                                           "are dev, test"):
        load_beir(beir, split="train")


def test_only_split_is_the_default_when_there_is_no_test(beir: Path) -> None:
    (beir / "qrels" / "test.tsv").unlink()
    assert [q.query_id for q in load_beir(beir).queries] == ["q1", "q9"]


def test_registry_detects_beir_before_the_folder_format(beir: Path, settings) -> None:
    assert is_beir_dataset(beir) and not is_beir_dataset(FIXTURES / "docs-tiny")
    entry = resolve(str(beir), settings)
    assert entry.kind == "beir"
    assert len(load_dataset(str(beir), settings).queries) == 8
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td03\t1\n")
    assert load_dataset(str(beir), settings).queries[0].gold == (("documents", "d03"),)


def test_passages_follow_the_chunk_settings() -> None:
    dataset = load_beir(TINY, chunking=ChunkSettings(200, 0))
    assert len([t for t in dataset.tables if t.context["document_id"] == "d19"]) > 5
    assert dataset.chunking == "200 chars, overlap 0"


def test_a_bm25_run_on_beir_scores_documents_found_through_passages(settings) -> None:
    result = run_retrieval(RunConfig(str(TINY), "bm25", top_k=5), settings=settings,
                           store=RunStore.in_workspace(settings.workspace))
    assert result.run.n_queries == 8
    assert result.run.metrics["mrr"] == pytest.approx(0.875)  # pytrec_eval's, fixture


@pytest.mark.parametrize(("file", "content", "where"), [
    ("corpus.jsonl", '{"_id": "d1", "title": "t", "text": "x"}\n{"title": "t", "text": "y"}\n',
     "corpus.jsonl, line 2, field '_id'"),
    ("corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d1", "text": "y"}\n',
     "corpus.jsonl, line 2, field '_id'"),
    ("corpus.jsonl", '{"_id": "d1", "title": "", "text": " "}\n',
     "corpus.jsonl, line 1, field 'text'"),
    ("corpus.jsonl", '{"_id": "d#1", "text": "x"}\n', "corpus.jsonl, line 1, field '_id'"),
    ("queries.jsonl", '{"_id": "q1", "text": "x"}\n{"_id": "q2"}\n',
     "queries.jsonl, line 2, field 'text'"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td01\tone\n",
     "test.tsv, line 2, field 'score'"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td77\t1\n",
     "test.tsv, line 2, field 'corpus-id'"),
    ("qrels/test.tsv", "q77\td01\t1\n", "test.tsv, line 1, field 'query-id'"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1 d01 1\n", "test.tsv, line 2"),
    ("qrels/test.tsv", "q1\td01\t1\nq1\td01\t2\n", "test.tsv, line 2, field 'corpus-id'"),
])
def test_bad_records_name_file_line_and_field(beir: Path, file: str, content: str,
                                              where: str) -> None:
    (beir / file).write_text(content)
    if file == "corpus.jsonl":  # keep the qrels' documents
        (beir / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    with pytest.raises(DatasetError) as caught:
        load_beir(beir)
    assert where in str(caught.value)


def test_qrels_with_nothing_relevant_is_refused(beir: Path) -> None:
    (beir / "qrels" / "test.tsv").write_text("q1\td01\t0\n")
    with pytest.raises(DatasetError, match="judges no document relevant"):
        load_beir(beir)
