"""TARGET's downstream results out and in: a heuristic run exported as TARGET's two JSONL
files imports back with the same numbers, a downstream file imports alone, the CSV
export carries the answers, and bad lines name file, line and field."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from target_core.cli import main
from target_core.config import load_settings
from target_core.engine.export import export_run
from target_core.engine.importer import import_target_results
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import DatasetError
from target_core.types import GenerationConfig, RunConfig

RETRIEVAL_PREFIXES = ("recall", "capped_recall", "hit@", "mrr", "ndcg", "db_hit",
                      "retrieval_ms")


def downstream_of(metrics: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in metrics.items()
            if not k.startswith(RETRIEVAL_PREFIXES) and "_ms_" not in k}


def retrieval_of(metrics: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in metrics.items()
            if k.startswith(RETRIEVAL_PREFIXES) and "_ms_" not in k}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Heuristic runs over bm25 on demo-sql and demo-qa, exported as TARGET files."""
    workspace = tmp_path_factory.mktemp("ws")
    settings = load_settings(workspace)
    store = RunStore.in_workspace(workspace)
    out = {}
    for dataset in ("demo-sql", "demo-qa"):
        run = run_retrieval(RunConfig(dataset, "bm25",
                                      generation=GenerationConfig("heuristic")),
                            settings=settings, store=store).run
        paths = export_run(store, run.run_id, "target",
                           tmp_path_factory.mktemp(dataset) / "out.jsonl")
        out[dataset] = (run, paths)
    return settings, store, out


def test_target_export_writes_retrieval_and_downstream_files(runs) -> None:
    _, store, out = runs
    run, (retrieval, downstream) = out["demo-sql"]
    assert retrieval.name == "out.jsonl" and downstream.name == "out.jsonl.downstream.jsonl"
    lines = [json.loads(line) for line in downstream.read_text().splitlines()]
    assert len(lines) == run.n_queries == 242
    results = {r.query_id: r for r in store.iter_results(run.run_id)}
    for line in lines:
        assert set(line) == {"dataset_name", "query_id", "generated_results"}
        assert line["dataset_name"] == "demo-sql"
        record = results[line["query_id"]].generation
        sql, database = line["generated_results"]
        assert sql == record["answer"] and database == (record["sql"]["database_id"] or "")
    _, (_, qa_downstream) = out["demo-qa"]
    first = json.loads(qa_downstream.read_text().splitlines()[0])
    assert isinstance(first["generated_results"], str)


@pytest.mark.parametrize("dataset", ["demo-sql", "demo-qa"])
def test_exported_files_import_to_the_same_numbers(runs, dataset: str) -> None:
    settings, store, out = runs
    run, (retrieval, downstream) = out[dataset]
    imported = import_target_results(str(retrieval), settings=settings,
                                     downstream=str(downstream), store=store)
    assert imported.status == "complete" and imported.n_done == run.n_queries
    assert imported.config.retriever == "imported:out"
    assert imported.config.generation.generator == "imported:out"
    assert downstream_of(imported.metrics) == downstream_of(run.metrics)
    assert retrieval_of(imported.metrics) == retrieval_of(run.metrics)
    assert not any("_ms_" in k for k in retrieval_of(imported.metrics))
    headline = "execution_accuracy" if dataset == "demo-sql" else "sacrebleu"
    assert imported.metrics[headline] > 0


@pytest.mark.parametrize("dataset", ["demo-sql", "demo-qa"])
def test_a_downstream_file_imports_alone(runs, dataset: str) -> None:
    settings, store, out = runs
    run, (_, downstream) = out[dataset]
    imported = import_target_results(str(downstream), settings=settings, label="answers",
                                     store=store)
    assert imported.config.retriever == "imported:none"
    assert imported.config.generation.generator == "imported:answers"
    assert not any(k.startswith(RETRIEVAL_PREFIXES) for k in imported.metrics)
    # the SQL file names the database each query ran on, so nothing depends on retrieval
    assert downstream_of(imported.metrics) == downstream_of(run.metrics)
    results = list(store.iter_results(imported.run_id))
    assert len(results) == run.n_queries and all(r.ranked == [] for r in results)
    assert all(r.generation is not None for r in results)


def test_csv_export_carries_answers_and_sql_error_classes(runs, tmp_path: Path) -> None:
    _, store, out = runs
    sql_run, _ = out["demo-sql"]
    (path,) = export_run(store, sql_run.run_id, "csv", tmp_path / "sql.csv")
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 242
    assert {"answer", "generation_error", "error_class", "execution_match",
            "recall@10"} <= set(rows[0])
    results = {r.query_id: r for r in store.iter_results(sql_run.run_id)}
    for row in rows:
        record = results[row["query_id"]].generation
        assert row["answer"] == record["answer"]
        assert row["error_class"] == record["sql"]["error_class"]
        assert row["generation_error"] == ""
    qa_run, _ = out["demo-qa"]
    (path,) = export_run(store, qa_run.run_id, "csv", tmp_path / "qa.csv")
    header = next(csv.reader(path.open(encoding="utf-8")))
    assert "answer" in header and "sentence_bleu" in header and "error_class" not in header


def test_cli_import_with_downstream_prints_the_run_summary(runs, capsys) -> None:
    settings, _, out = runs
    run, (retrieval, downstream) = out["demo-qa"]
    code = main(["import", str(retrieval), "--downstream", str(downstream), "--label", "cli",
                 "--workspace", str(settings.workspace), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert set(summary) == {"run_id", "dataset", "task", "retriever", "config", "n_queries",
                            "metrics"}
    assert summary["dataset"] == "demo-qa" and summary["task"] == "qa"
    assert summary["retriever"] == "imported:cli" and summary["n_queries"] == 260
    assert summary["config"]["generation"]["generator"] == "imported:cli"
    assert downstream_of(summary["metrics"]) == downstream_of(run.metrics)


# --- bad input ------------------------------------------------------------------------------

def _line(query_id: str, answer) -> str:
    return json.dumps({"dataset_name": "x", "query_id": query_id,
                       "generated_results": answer}) + "\n"


@pytest.mark.parametrize(("dataset", "second", "field", "reason"), [
    ("demo-qa", _line("nope", "an answer"), "query_id", "not in dataset"),
    ("demo-qa", _line("qa-0002", 42), "generated_results", "must be a string"),
    ("demo-qa", _line("qa-0002", ["two", "parts"]), "generated_results", "must be a string"),
    ("demo-qa", _line("qa-0001", "again"), "query_id", "appears twice"),
    ("demo-qa", '{"dataset_name": "x", "query_id": "qa-0002"}\n', "generated_results",
     "missing"),
    ("demo-sql", _line("demo-sql-0002", "SELECT 1"), "generated_results",
     "[sql, database_id]"),
    ("demo-sql", _line("demo-sql-0002", ["SELECT 1"]), "generated_results",
     "[sql, database_id]"),
    ("demo-sql", _line("demo-sql-0002", ["SELECT 1", 3]), "generated_results",
     "[sql, database_id]"),
])
def test_bad_downstream_lines_name_file_line_and_field(settings, tmp_path: Path,
                                                       dataset: str, second: str, field: str,
                                                       reason: str) -> None:
    first = (_line("qa-0001", "fine") if dataset == "demo-qa"
             else _line("demo-sql-0001", ["SELECT 1", "university"]))
    path = tmp_path / "bad.jsonl"
    path.write_text(first + second, encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        import_target_results(str(path), settings=settings, dataset=dataset)
    error = info.value
    assert error.path == str(path) and error.line == 2 and error.field == field
    assert reason in str(error) and str(path) in str(error)
    assert "line 2" in str(error) and f"field '{field}'" in str(error)
    assert not (settings.workspace / "runs.sqlite").exists()  # nothing was stored


def test_empty_files_are_dataset_errors(settings, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no results in the file") as info:
        import_target_results(str(empty), settings=settings, dataset="demo-qa")
    assert info.value.path == str(empty)
    retrieval = tmp_path / "retrieval.jsonl"
    retrieval.write_text(json.dumps({"dataset_name": "demo-qa", "query_id": "qa-0001",
                                     "retrieval_results": [["wiki", "x"]]}) + "\n")
    with pytest.raises(DatasetError, match="no results in the file") as info:
        import_target_results(str(retrieval), settings=settings, downstream=str(empty))
    assert info.value.path == str(empty)
    with pytest.raises(DatasetError, match="pass --dataset") as info:  # no name to go by
        import_target_results(str(empty), settings=settings)
    assert info.value.line == 1 and info.value.field == "dataset_name"


def test_a_file_with_a_byte_order_mark_is_recognised(settings, tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({
        "dataset_name": "demo-qa", "query_id": "qa-0001",
        "generated_results": "an answer"}).encode() + b"\n")
    imported = import_target_results(str(path), settings=settings)
    assert imported.config.retriever == "imported:none" and imported.n_done == 1
    assert set(imported.metrics) >= {"sacrebleu", "rouge_l"}


def test_missing_file_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    from target_core.cli import main

    code = main(["import", str(tmp_path / "nope.jsonl"), "--workspace", str(tmp_path / "ws")])
    err = capsys.readouterr().err
    assert code == 2 and "nope.jsonl: file not found" in err and len(err.splitlines()) == 1
