"""Runs with a generator, end to end on the bundled demos with the offline `heuristic`
generator: downstream metrics per task, oracle context as the upper bound, no context
as the floor, the per-query generation records, the GTR-T preset, one-line errors, a
run killed with SIGKILL mid-generation that resumes exactly, and the v1 -> v2 store
migration that added the `generation` column."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import query_record, table_record
from target_core.cli import main
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import QueryResult, RunStore
from target_core.errors import ConfigError
from target_core.metrics.facts import FACT_LABELS
from target_core.run_config import GenerationConfig, RunConfig
from target_core.sql import ERROR_CLASSES
from target_core.table_view import TableView

ROOT = Path(__file__).resolve().parent.parent
SQL_CLASSES = {*ERROR_CLASSES, "generation_failed"}

TASK_METRICS = {
    "demo-sql": ("execution_accuracy", "execution_accuracy_strict", "alt_interpretation_rate",
                 "exact_set_match", "execution_accuracy/easy", "execution_accuracy/medium",
                 "execution_accuracy/hard", "exact_set_match/hard"),
    "demo-qa": ("sacrebleu", "rouge_l"),
    "demo-fact": ("fact_accuracy", "fact_precision", "fact_recall", "fact_f1",
                  "fact_macro_f1", "fact_nei_rate"),
}
HEADLINE = {"demo-sql": "execution_accuracy", "demo-qa": "sacrebleu",
            "demo-fact": "fact_accuracy"}
PER_QUERY = {"demo-sql": "execution_match", "demo-qa": "sentence_bleu",
             "demo-fact": "fact_correct"}
RETRIEVAL_PREFIXES = ("recall", "hit@", "mrr", "ndcg", "db_hit", "retrieval_ms")


def cli_run(capsys, workspace: Path, dataset: str, *flags: str) -> dict:
    code = main(["run", "--dataset", dataset, "--workspace", str(workspace), "--json",
                 *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def without_timings(metrics: dict[str, float]) -> dict[str, float]:
    """Metrics that a rerun reproduces exactly: not latencies, not VES (measured times)."""
    return {k: v for k, v in metrics.items()
            if "_ms_" not in k and k.split("/")[0] != "ves"}


@pytest.mark.parametrize("dataset", ["demo-sql", "demo-qa", "demo-fact"])
def test_heuristic_runs_score_downstream_and_oracle_is_the_upper_bound(
        dataset: str, tmp_path: Path, capsys) -> None:
    retrieved = cli_run(capsys, tmp_path, dataset, "--retriever", "bm25",
                        "--generator", "heuristic")
    oracle = cli_run(capsys, tmp_path, dataset, "--retriever", "bm25",
                     "--generator", "heuristic", "--context", "oracle")
    metrics = retrieved["metrics"]
    assert set(TASK_METRICS[dataset]) <= set(metrics)
    assert "recall@10" in metrics and "mrr" in metrics  # retrieval is still scored
    assert retrieved["config"]["generation"] == {  # text-to-SQL: the paper's k = 1
        "generator": "heuristic", "context": "retrieved",
        "context_k": 1 if dataset == "demo-sql" else None,
        "token_budget": 8000, "sql_schema": "database"}
    assert oracle["config"]["generation"]["context"] == "oracle"
    headline = HEADLINE[dataset]
    assert 0 < metrics[headline] <= oracle["metrics"][headline]
    assert metrics["n_generated"] == retrieved["n_queries"] and metrics[
        "generation_errors"] == 0
    # oracle context changes the answers, never what was retrieved
    assert {k: v for k, v in oracle["metrics"].items() if k.startswith(RETRIEVAL_PREFIXES)
            and "_ms_" not in k} == {k: v for k, v in metrics.items()
                                     if k.startswith(RETRIEVAL_PREFIXES) and "_ms_" not in k}

    store = RunStore.in_workspace(tmp_path)
    results = list(store.iter_results(retrieved["run_id"]))
    assert len(results) == retrieved["n_queries"]
    for result in results:
        _check_record(dataset, result)
    values = [r.metrics[PER_QUERY[dataset]] for r in results]
    if dataset == "demo-qa":  # corpus BLEU is not a mean of sentence BLEU; ROUGE-L is
        assert metrics["rouge_l"] == pytest.approx(np.mean([r.metrics["rouge_l"]
                                                            for r in results]))
    else:
        assert metrics[headline] == pytest.approx(np.mean(values))
    if dataset == "demo-sql":
        from target_core.datasets import load_dataset

        levels = {q.query_id: q.difficulty
                  for q in load_dataset("demo-sql", load_settings(tmp_path)).queries}
        easy = [r.metrics["execution_match"] for r in results if levels[r.query_id] == "easy"]
        assert metrics["execution_accuracy/easy"] == pytest.approx(np.mean(easy))


def _check_record(dataset: str, result: QueryResult) -> None:
    record = result.generation
    assert record is not None and record["generator"] == "heuristic"
    assert isinstance(record["answer"], str) and record["error"] is None
    assert record["context"] == "retrieved" and record["cut"]["budget"] == 8000
    assert record["cut"]["tokens"] <= 8000
    assert PER_QUERY[dataset] in result.metrics
    if dataset == "demo-sql":
        sql = record["sql"]
        assert sql["error_class"] in SQL_CLASSES
        assert sql["gold"]["rows"] and sql["gold"]["error"] is None  # every gold query has rows
        assert set(sql["flags"]) == {"execution_match", "execution_match_strict",
                                     "alt_interpretation", "exact_set_match"}
        assert result.metrics["execution_match"] == float(sql["flags"]["execution_match"])
        assert (sql["error_class"] == "correct") == sql["flags"]["execution_match"]
        if result.ranked:  # bm25 returns nothing when no word matches (demo-sql-0060)
            assert record["databases"] and sql["database_id"] in record["databases"]
        else:
            assert record["databases"] == [] and sql["error_class"] == "no_sql"
    elif dataset == "demo-fact":
        fact = record["fact"]
        assert fact["pred_label"] == FACT_LABELS[fact["pred"]]
        assert result.metrics["fact_correct"] == float(fact["pred"] == fact["gold"])
    else:
        assert 0 <= result.metrics["sentence_bleu"] <= 100


@pytest.mark.parametrize(("dataset", "name", "value"), [
    ("demo-sql", "execution_accuracy", 0.0), ("demo-fact", "fact_nei_rate", 1.0)])
def test_no_context_is_the_floor(dataset: str, name: str, value: float, tmp_path: Path,
                                 capsys) -> None:
    run = cli_run(capsys, tmp_path, dataset, "--retriever", "bm25", "--generator",
                  "heuristic", "--context", "none", "--limit", "60")
    assert run["metrics"][name] == value
    results = list(RunStore.in_workspace(tmp_path).iter_results(run["run_id"]))
    assert len(results) == 60
    assert all(r.generation["context"] == "none" and r.generation["context_keys"] == []
               for r in results)


def test_gtr_t_preset_with_the_heuristic_generator(tmp_path: Path, capsys) -> None:
    run = cli_run(capsys, tmp_path, "demo-sql", "--preset", "gtr-t", "--generator",
                  "heuristic", "--limit", "10")
    config = run["config"]
    assert config["retriever"] == run["retriever"] == "dense:minilm"
    assert config["view"] == TableView.preset("gtr-csv").to_dict()
    assert config["view"]["format"] == "csv"
    assert config["generation"] == {"generator": "heuristic", "context": "retrieved",
                                    "context_k": 3, "token_budget": 8000,
                                    "sql_schema": "tables"}
    assert run["n_queries"] == 10 and "execution_accuracy" in run["metrics"]
    for result in RunStore.in_workspace(tmp_path).iter_results(run["run_id"]):
        top3 = {k for k, _ in result.ranked[:3]}
        assert {tuple(k) for k in result.generation["context_keys"]} <= top3


def test_context_without_a_generator_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    code = main(["run", "--dataset", "demo-sql", "--retriever", "bm25", "--context", "oracle",
                 "--workspace", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "--generator" in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_generator_fails_before_any_work(tmp_path: Path, capsys) -> None:
    code = main(["run", "--dataset", "demo-sql", "--retriever", "bm25", "--generator",
                 "nosuch", "--workspace", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("error: unknown generator 'nosuch'") and "heuristic" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs.sqlite").exists()
    code = main(["run", "--dataset", "demo-sql", "--retriever", "bm25", "--generator",
                 "heuristc", "--workspace", str(tmp_path), "--json"])
    assert code == 2 and "did you mean 'heuristic'" in capsys.readouterr().err


def test_generation_on_a_retrieval_dataset_is_a_config_error(write_dataset, settings) -> None:
    folder = write_dataset(corpus=[table_record("t1"), table_record("t2")],
                           queries=[query_record("q1", "t1")],
                           meta={"name": "only-retrieval", "task": "retrieval"})
    config = RunConfig(str(folder), "bm25", generation=GenerationConfig("heuristic"))
    with pytest.raises(ConfigError, match="task 'retrieval'"):
        run_retrieval(config, settings=settings)
    assert run_retrieval(RunConfig(str(folder), "bm25"), settings=settings
                         ).run.status == "complete"


KILLER = textwrap.dedent("""
    import os, signal, sys
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import GenerationConfig, RunConfig

    def progress(done, total, what):
        if what == "retrieving + generating" and done == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

    run_retrieval(RunConfig("demo-sql", "bm25", generation=GenerationConfig("heuristic")),
                  settings=load_settings(sys.argv[1]), progress=progress, batch_size=32)
""")
SQL_RUN = RunConfig("demo-sql", "bm25", generation=GenerationConfig("heuristic"))


def test_sigkill_mid_generation_resumes_with_nothing_lost_or_duplicated(tmp_path: Path
                                                                         ) -> None:
    workspace = tmp_path / "killed"
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.run([sys.executable, str(script), str(workspace), "70"], env=env,
                             cwd=ROOT, capture_output=True, timeout=120)
    assert process.returncode == -9, process.stderr.decode()[-2000:]

    store = RunStore.in_workspace(workspace)
    (partial,) = store.list_runs()
    assert partial.status == "running" and partial.n_done == 64  # two batches of 32 saved
    assert all(r.generation is not None for r in store.iter_results(partial.run_id))

    resumed = run_retrieval(SQL_RUN, settings=load_settings(workspace))
    assert resumed.resumed and resumed.run.run_id == partial.run_id
    assert resumed.n_new == 242 - 64
    assert store.integrity_check() == "ok"
    results = list(store.iter_results(partial.run_id))
    ids = [r.query_id for r in results]
    assert len(ids) == len(set(ids)) == 242
    assert all(r.generation is not None for r in results)

    clean = run_retrieval(SQL_RUN, settings=load_settings(tmp_path / "clean")).run.metrics
    assert "execution_accuracy" in clean
    assert without_timings(resumed.run.metrics) == without_timings(clean)


V1_SCHEMA = """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY, config_key TEXT NOT NULL, config TEXT NOT NULL,
        dataset TEXT NOT NULL, dataset_fingerprint TEXT NOT NULL, task TEXT NOT NULL,
        retriever TEXT NOT NULL, view TEXT NOT NULL, top_k INTEGER NOT NULL,
        status TEXT NOT NULL, created_at REAL NOT NULL, finished_at REAL,
        n_queries INTEGER NOT NULL, index_info TEXT NOT NULL DEFAULT '{}',
        text_fingerprint TEXT NOT NULL DEFAULT '', text_example TEXT NOT NULL DEFAULT '',
        versions TEXT NOT NULL DEFAULT '{}', metrics TEXT NOT NULL DEFAULT '{}',
        error TEXT);
    CREATE INDEX runs_config_key ON runs (config_key, status);
    CREATE TABLE query_results (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        query_id TEXT NOT NULL, position INTEGER NOT NULL, ranked TEXT NOT NULL,
        gold TEXT NOT NULL, gold_ranks TEXT NOT NULL, metrics TEXT NOT NULL,
        ms REAL NOT NULL, PRIMARY KEY (run_id, query_id));
    INSERT INTO meta VALUES ('schema_version', '1');
"""


def test_a_v1_store_gains_the_generation_column(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    config = RunConfig("demo-qa", "bm25", top_k=5)
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(V1_SCHEMA)
        connection.execute(
            "INSERT INTO runs (run_id, config_key, config, dataset, dataset_fingerprint, task, "
            "retriever, view, top_k, status, created_at, finished_at, n_queries, metrics) "
            "VALUES ('old', 'k', ?, 'demo-qa', 'fp', 'qa', 'bm25', ?, 5, 'complete', 1.0, "
            "2.0, 1, '{\"mrr\": 0.5}')",
            [json.dumps(config.to_dict()), json.dumps(config.view.to_dict())])
        connection.execute(
            "INSERT INTO query_results VALUES ('old', 'q1', 0, '[[\"wiki\", \"t1\", 2.5]]', "
            "'[[\"wiki\", \"t1\"]]', '{\"[\\\"wiki\\\", \\\"t1\\\"]\": 1}', "
            "'{\"hit@1\": 1.0}', 0.5)")
    connection.close()

    store = RunStore(path)
    columns = [c.name for c in store.db["query_results"].columns]
    assert columns[-1] == "generation"
    version = next(iter(store.db.query("SELECT value FROM meta WHERE key = "
                                       "'schema_version'")))["value"]
    assert version == "2"
    run = store.get_run("old")
    assert run.config == config and run.metrics == {"mrr": 0.5} and run.n_done == 1
    (old,) = store.iter_results("old")
    assert old.generation is None and old.ranked == [(("wiki", "t1"), 2.5)]
    assert old.gold_ranks == {("wiki", "t1"): 1} and old.metrics == {"hit@1": 1.0}
    # opening again does not migrate twice; new rows carry generations
    again = RunStore(path)
    again.save_results("old", [QueryResult("q2", 1, [], [("wiki", "t2")], {}, {}, 1.0,
                                           generation={"answer": "x"})])
    assert again.get_result("old", "q2").generation == {"answer": "x"}
    assert again.get_result("old", "q1").generation is None
    assert again.integrity_check() == "ok"


def test_run_config_with_generation_round_trips() -> None:
    config = RunConfig("demo-sql", "dense:minilm", TableView.preset("gtr-csv"), top_k=7,
                       limit=20, seed=3,
                       generation=GenerationConfig("openai:gpt-4o", context="oracle",
                                                   context_k=2, token_budget=500,
                                                   sql_schema="tables"))
    data = config.to_dict()
    assert data["generation"] == {"generator": "openai:gpt-4o", "context": "oracle",
                                  "context_k": 2, "token_budget": 500,
                                  "sql_schema": "tables"}
    assert RunConfig.from_dict(json.loads(json.dumps(data))) == config
    assert config.label == "dense:minilm → openai:gpt-4o (oracle)"


def test_a_retrieval_only_config_keeps_its_old_keys() -> None:
    config = RunConfig("demo-qa", "bm25", top_k=5)
    assert config.to_dict() == {  # exactly the pre-generation dict: config keys stay stable
        "dataset": "demo-qa", "retriever": "bm25",
        "view": {"title": True, "section_title": True, "table_id": False, "rows": None,
                 "format": "markdown"},
        "top_k": 5, "limit": None, "seed": 0}
    assert RunConfig.from_dict(config.to_dict()) == config and config.generation is None
    assert RunConfig.from_dict(config.to_dict() | {"generation": None}) == config


def test_scoring_limits_come_from_the_settings(tmp_path: Path) -> None:
    """TARGET_SQL_ROW_CAP reaches the run's scoring: results over it are not_comparable
    (and wrong), never compared by their first rows."""
    settings = load_settings(tmp_path, environ={"TARGET_SQL_ROW_CAP": "2"})
    run = run_retrieval(RunConfig("demo-sql", "bm25", limit=40,
                                  generation=GenerationConfig("heuristic", context="oracle")),
                        settings=settings).run
    records = [r.generation for r in RunStore.in_workspace(tmp_path).iter_results(run.run_id)]
    classes = {g["sql"]["error_class"] for g in records if g is not None}
    assert "not_comparable" in classes
    for g in records:
        assert g is not None
        if g["sql"]["error_class"] == "not_comparable":
            assert g["sql"]["flags"]["execution_match"] is False
