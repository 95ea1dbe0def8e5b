"""Exports and imports: TARGET JSONL round-trips, the TREC files score the same under
trec_eval (pytrec_eval), CSV has a row per query, bad imports name file and line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from target_core.config import load_settings
from target_core.engine.export import export_run
from target_core.engine.importer import import_target_results
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import DatasetError, UnknownNameError
from target_core.run_config import RunConfig


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("ws")
    settings = load_settings(workspace)
    run = run_retrieval(RunConfig("demo-qa", "bm25", top_k=10, limit=80), settings=settings).run
    return settings, RunStore.in_workspace(workspace), run


def test_target_format_round_trips(finished, tmp_path: Path) -> None:
    settings, store, run = finished
    (path,) = export_run(store, run.run_id, "target", tmp_path / "run.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 80 and lines[0]["dataset_name"] == "demo-qa"
    assert all(len(line["retrieval_results"]) <= 10 for line in lines)
    imported = import_target_results(str(path), settings=settings, label="again", store=store)
    assert imported.config.retriever == "imported:again"
    quality = {k: v for k, v in run.metrics.items() if not k.startswith("retrieval_ms")}
    assert imported.metrics == quality


def test_trec_files_score_the_same_under_trec_eval(finished, tmp_path: Path) -> None:
    import pytrec_eval

    _, store, run = finished
    run_path, qrels_path = export_run(store, run.run_id, "trec", tmp_path / "run.trec")
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        qid, _, doc, rel = line.split()
        qrels.setdefault(qid, {})[doc] = int(rel)
    ranking: dict[str, dict[str, float]] = {}
    for line in run_path.read_text().splitlines():
        qid, _, doc, rank, _score, _tag = line.split()
        ranking.setdefault(qid, {})[doc] = 1000.0 - int(rank)  # trec_eval sorts by score
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"recall.10", "recip_rank"}).evaluate(ranking)
    recall = sum(s["recall_10"] for s in scores.values()) / len(qrels)
    # queries with nothing retrieved are absent from the run file: they score 0
    assert recall == pytest.approx(run.metrics["recall@10"], abs=1e-9)
    mrr = sum(s["recip_rank"] for s in scores.values()) / len(qrels)
    assert mrr == pytest.approx(run.metrics["mrr"], abs=1e-9)


def test_csv_has_a_row_per_query(finished, tmp_path: Path) -> None:
    _, store, run = finished
    (path,) = export_run(store, run.run_id, "csv", tmp_path / "run.csv")
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 80
    assert {"query_id", "gold", "top1", "gold_ranks", "ms", "recall@10", "mrr"} <= set(rows[0])


def test_unknown_format(finished, tmp_path: Path) -> None:
    _, store, run = finished
    with pytest.raises(UnknownNameError, match="export format"):
        export_run(store, run.run_id, "xml", tmp_path / "x")


@pytest.mark.parametrize(("line", "field", "reason"), [
    ('{"dataset_name": "demo-qa", "query_id": "nope", "retrieval_results": []}',
     "query_id", "not in dataset"),
    ('{"dataset_name": "demo-qa", "query_id": "qa-0002", "retrieval_results": ["x"]}',
     "retrieval_results", "pairs"),
    ("not json", None, "malformed JSON"),
])
def test_bad_import_names_file_and_line(finished, tmp_path: Path, line: str, field, reason
                                        ) -> None:
    settings, store, _ = finished
    path = tmp_path / "bad.jsonl"
    path.write_text('{"dataset_name": "demo-qa", "query_id": "qa-0001", '
                    '"retrieval_results": [["wiki", "x"]]}\n' + line + "\n")
    with pytest.raises(DatasetError) as info:
        import_target_results(str(path), settings=settings, store=store)
    assert info.value.line == 2 and info.value.field == field and reason in str(info.value)
