"""Error sources (seed 002, Table 1): a real SQLite shop database with dated orders, a
folder-format benchmark around it, hand-written generated SQL for every source scored
by the project's own Evaluator and stored in a real run store, Table 1 percentages
computed by hand, the time-filter stripping, bad input, and a real heuristic run on the
bundled demo-sql data."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conftest import make_sqlite, write_jsonl
from target_core.benchgen.error_source_report import DEFINITIONS, SOURCES, TABLE_COLUMNS
from target_core.benchgen.error_sources import error_sources
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.datasets.folder import load_folder
from target_core.engine.generation import Evaluator
from target_core.engine.runner import run_retrieval
from target_core.engine.store import QueryResult, RunStore
from target_core.errors import ConfigError, DatasetError
from target_core.generators.base import Context, Generation
from target_core.run_config import GenerationConfig, RunConfig
from target_core.sql.time_filter import without_time_filter
from target_core.types import Dataset

if TYPE_CHECKING:  # registered by tests/conftest.py (pytest_plugins)
    from fake_openai import FakeOpenAI

ORDERS = [  # order_id, order_date, status, amount; reference date 2024-07-10
    (1, "2024-05-20", "shipped", 10), (2, "2024-06-05", "shipped", 20),
    (3, "2024-06-15", "shipped", 30), (4, "2024-06-25", "cancelled", 40),
    (5, "2024-07-05", "shipped", 50), (6, "2024-04-10", "shipped", 60),
]
LAST_MONTH = "order_date >= '2024-06-01' AND order_date < '2024-07-01'"  # June 2024
LAST_30_DAYS = "order_date >= '2024-06-11' AND order_date < '2024-07-11'"
SHIPPED_LAST_MONTH = f"SELECT SUM(amount) FROM orders WHERE status = 'shipped' AND {LAST_MONTH}"
TIME = {"expression": "last month", "reference": "2024-07-10", "start": "2024-06-01",
        "end": "2024-07-01"}
BENCH = {"template_id": "shipped_total", "bindings": {"time": "last month"},
         "reference_date": "2024-07-10", "time": TIME, "time_column": "orders.order_date"}
ALTERNATIVES = [
    {"kind": "metric", "sql": f"SELECT COUNT(*) FROM orders WHERE status = 'shipped' AND "
                              f"{LAST_MONTH}", "description": "the number of orders"},
    {"kind": "time", "sql": f"SELECT SUM(amount) FROM orders WHERE status = 'shipped' AND "
                            f"{LAST_30_DAYS}", "description": "the last 30 days"},
]


def _query(qid: str, sql: str, difficulty: str | None, **meta: object) -> dict:
    return {"query_id": qid, "query": f"question {qid}", "answer": sql, "sql": sql,
            "table_id": "orders", "database_id": "shop", "difficulty": difficulty, **meta}


QUERIES = [
    _query("exact", SHIPPED_LAST_MONTH, "easy", **BENCH, alternatives=ALTERNATIVES),
    _query("alt", SHIPPED_LAST_MONTH, "easy", **BENCH, alternatives=ALTERNATIVES),
    _query("retrieval", SHIPPED_LAST_MONTH, "medium", **BENCH, alternatives=[]),
    _query("sql_error", SHIPPED_LAST_MONTH, "medium", **BENCH, alternatives=[]),
    _query("failed", SHIPPED_LAST_MONTH, "medium", **BENCH, alternatives=[]),
    _query("time", f"SELECT status, COUNT(*) FROM orders WHERE {LAST_MONTH} GROUP BY status",
           "hard", **BENCH, alternatives=[]),
    _query("other", SHIPPED_LAST_MONTH, "hard", **BENCH, alternatives=ALTERNATIVES),
    _query("no_meta", "SELECT COUNT(*) FROM orders WHERE status = 'shipped' AND "
                      "order_date >= '2024-06-01'", None),
]
# query id -> (generated SQL, database chosen, databases in the context, generation error)
GENERATED: dict[str, tuple[str, str, tuple[str, ...], str | None]] = {
    "exact": ("SELECT SUM(o.amount) FROM orders AS o WHERE o.order_date BETWEEN "
              "'2024-06-01' AND '2024-06-30' AND o.status = 'shipped'", "shop", ("shop",), None),
    "alt": ("SELECT SUM(amount) FROM orders WHERE status = 'shipped' AND "
            "order_date >= date('2024-07-10', '-29 days')", "shop", ("shop",), None),
    "retrieval": ("SELECT COUNT(*) FROM employees", "hr", ("hr",), None),
    "sql_error": ("SELECT SUM(price) FROM orders WHERE status = 'shipped'", "shop", ("shop",),
                  None),
    "failed": ("", "shop", ("shop",), "the model call failed: HTTP 500"),
    "time": ("SELECT status, COUNT(*) FROM orders WHERE strftime('%Y', order_date) = '2024' "
             "GROUP BY status", "shop", ("shop",), None),
    "other": (f"SELECT AVG(amount) FROM orders WHERE status = 'shipped' AND {LAST_MONTH}",
              "shop", ("shop",), None),
    "no_meta": ("SELECT COUNT(*) FROM orders WHERE status = 'shipped' AND "
                "order_date >= '2024-05-01'", "shop", ("shop",), None),
}
HEURISTIC = GenerationConfig("heuristic")
EXPECTED = {"exact": "exact", "alt": "alternative", "retrieval": "retrieval",
            "sql_error": "sql", "failed": "sql", "time": "time", "other": "other",
            "no_meta": "other"}


def _write_bench(folder: Path, queries: list[dict] = QUERIES) -> Dataset:
    folder.mkdir(parents=True)
    (folder / "dataset.json").write_text(json.dumps({"name": "shop-bench", "task": "sql"}))
    write_jsonl(folder / "corpus.jsonl", [
        {"database_id": "shop", "table_id": "orders",
         "table": [["order_id", "order_date", "status", "amount"], *map(list, ORDERS)]},
        {"database_id": "hr", "table_id": "employees", "table": [["name"], ["Ada"], ["Bo"]]}])
    write_jsonl(folder / "queries.jsonl", queries)
    make_sqlite(folder / "databases" / "shop" / "shop.sqlite", [
        "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, order_date TEXT, status TEXT, "
        "amount REAL)",
        *(f"INSERT INTO orders VALUES ({i}, '{d}', '{s}', {a})" for i, d, s, a in ORDERS)])
    make_sqlite(folder / "databases" / "hr" / "hr.sqlite", [
        "CREATE TABLE employees (name TEXT)", "INSERT INTO employees VALUES ('Ada'), ('Bo')"])
    return load_folder(folder)


def _add_run(store: RunStore, dataset: Dataset,
             generated: dict[str, tuple[str, str, tuple[str, ...], str | None]] = GENERATED,
             generation: GenerationConfig | None = HEURISTIC) -> str:
    """A run whose records come from the project's own Evaluator, as a real run's do."""
    run, _ = store.start_run(RunConfig(dataset.name, "bm25", generation=generation),
                             dataset_fingerprint=dataset.fingerprint, task=dataset.task,
                             n_queries=len(generated), versions={})
    evaluator = Evaluator(dataset)
    results = []
    for position, (qid, (sql, chosen, given, error)) in enumerate(generated.items()):
        query = dataset.query(qid)
        record, metrics = None, {"mrr": 1.0}
        if generation is not None:
            record, scores = evaluator.evaluate(
                query, Generation(answer=sql, database_id=chosen, error=error),
                Context(mode="retrieved", databases=given), generator="hand",
                label="hand-written")
            metrics |= scores
        results.append(QueryResult(
            query_id=qid, position=position, ranked=[((given[0], "t"), 1.0)],
            gold=list(query.gold), gold_ranks={g: 1 for g in query.gold}, metrics=metrics,
            ms=1.0, generation=record))
    store.save_results(run.run_id, results)
    store.finish_run(run.run_id, {})
    return run.run_id


@pytest.fixture
def bench(tmp_path: Path) -> Dataset:
    return _write_bench(tmp_path / "bench")


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite")


def test_every_hand_made_query_gets_its_source(store: RunStore, bench: Dataset) -> None:
    report = error_sources(store, bench, _add_run(store, bench))
    rows = {r.query_id: r for r in report.rows}
    assert [r.query_id for r in report.rows] == list(GENERATED)  # query order
    assert {q: r.source for q, r in rows.items()} == EXPECTED
    assert report.counts == {"exact": 1, "alternative": 1, "retrieval": 1, "sql": 2,
                             "time": 1, "other": 2}
    assert sum(report.counts.values()) == report.n_queries == 8
    # the metric alternative comes first but does not match; the time one does
    assert rows["alt"].alternative_kind == "time"
    assert rows["alt"].detail == "matches alternative: time (the last 30 days)"
    assert report.alternative_counts == {"time": 1}
    assert all(r.alternative_kind is None for q, r in rows.items() if q != "alt")
    assert rows["exact"].detail == "same result as the gold query"
    assert rows["retrieval"].detail == ("queried database 'hr', not 'shop': the gold "
                                        "database was not in the context")
    assert rows["sql_error"].detail == "SQL error: no such column: price"
    assert rows["failed"].detail == "generation failed: the model call failed: HTTP 500"
    assert rows["time"].detail == "differs only in the time filter"
    # AVG instead of SUM stays wrong once the time filter is gone: not a time error
    assert rows["other"].detail.startswith("different result: 1 gold rows missing")
    # no time_column: a query differing only in its date range is "other", not "time"
    assert rows["no_meta"].source == "other"
    assert (rows["no_meta"].difficulty, rows["time"].difficulty) == (None, "hard")


def test_exact_agrees_with_the_runs_execution_accuracy(store: RunStore, bench: Dataset
                                                       ) -> None:
    run_id = _add_run(store, bench)
    report = error_sources(store, bench, run_id)
    matched = {r.query_id for r in store.iter_results(run_id)
               if r.metrics["execution_match"] == 1.0}
    assert matched == {r.query_id for r in report.rows if r.source == "exact"}


def test_table_1_percentages_by_hand(store: RunStore, bench: Dataset) -> None:
    report = error_sources(store, bench, _add_run(store, bench))
    table = report.table()
    assert list(table.columns) == list(TABLE_COLUMNS)
    assert list(table.index) == ["bm25 → heuristic"] and table.index.name == "run"
    # 8 queries: exact 1, alternative 1, time 1, sql 2, retrieval 1, other 2
    assert table.iloc[0].to_dict() == pytest.approx(
        {"Overall": 25.0, "EA": 12.5, "Alt": 12.5, "Time": 12.5, "SQL": 25.0,
         "Retrieval": 12.5, "Others": 25.0})
    row = table.iloc[0]
    assert row["Overall"] + row[["Time", "SQL", "Retrieval", "Others"]].sum() == 100.0
    by_level = report.by_difficulty()
    assert list(by_level.index) == ["easy", "medium", "hard"]  # no_meta has no difficulty
    assert by_level.loc["easy"].to_dict() == pytest.approx(
        {"Overall": 100.0, "EA": 50.0, "Alt": 50.0, "Time": 0.0, "SQL": 0.0,
         "Retrieval": 0.0, "Others": 0.0})
    assert by_level.loc["medium"].to_dict() == pytest.approx(
        {"Overall": 0.0, "EA": 0.0, "Alt": 0.0, "Time": 0.0, "SQL": 200 / 3,
         "Retrieval": 100 / 3, "Others": 0.0})
    assert by_level.loc["hard"].to_dict() == pytest.approx(
        {"Overall": 0.0, "EA": 0.0, "Alt": 0.0, "Time": 50.0, "SQL": 0.0,
         "Retrieval": 0.0, "Others": 50.0})
    data = json.loads(json.dumps(report.to_dict()))
    assert data["counts"] == report.counts and data["n_queries"] == 8
    assert data["table"]["Overall"] == 25.0
    assert data["by_difficulty"]["medium"]["SQL"] == pytest.approx(200 / 3)
    assert data["rows"][1] == {"query_id": "alt", "difficulty": "easy",
                               "source": "alternative", "alternative_kind": "time",
                               "detail": "matches alternative: time (the last 30 days)"}


def test_sources_and_definitions_are_listed_in_order() -> None:
    assert SOURCES == ("exact", "alternative", "retrieval", "sql", "time", "other")
    assert list(DEFINITIONS) == list(SOURCES)
    assert all(text.endswith(".") and text.count(". ") == 0 for text in DEFINITIONS.values())


def test_order_of_the_checks(tmp_path: Path, store: RunStore) -> None:
    """A wrong database whose SQL fails is retrieval (3 before 4); an answer matching an
    alternative that also differs only in time is alternative (2 before 5); gold
    database in the context but another chosen names its rank."""
    dataset = _write_bench(tmp_path / "order")
    generated = {
        "retrieval": ("SELECT nope FROM employees", "hr", ("hr", "shop"), None),
        "sql_error": (GENERATED["alt"][0], "shop", ("shop",), None),  # no alternatives
        "alt": GENERATED["alt"],
    }
    report = error_sources(store, dataset, _add_run(store, dataset, generated))
    rows = {r.query_id: r for r in report.rows}
    assert rows["retrieval"].source == "retrieval"
    assert rows["retrieval"].detail.endswith("the gold database was in the context "
                                             "(rank 2) but another was chosen")
    assert rows["alt"].source == "alternative"
    # same SQL, no alternatives: only the time filter differs
    assert rows["sql_error"].source == "time"


def test_non_sql_or_retrieval_only_runs_are_refused(store: RunStore, bench: Dataset,
                                                   write_dataset: Callable[..., Path]
                                                   ) -> None:
    retrieval_only = _add_run(store, bench, generation=None)
    with pytest.raises(ConfigError, match="retrieval-only run"):
        error_sources(store, bench, retrieval_only)
    qa = load_folder(write_dataset())
    run, _ = store.start_run(RunConfig(qa.name, "bm25", generation=HEURISTIC),
                             dataset_fingerprint=qa.fingerprint, task="qa", n_queries=1,
                             versions={})
    with pytest.raises(ConfigError, match="a qa run"):
        error_sources(store, qa, run.run_id)


def test_another_dataset_or_bad_metadata(tmp_path: Path, store: RunStore, bench: Dataset
                                         ) -> None:
    run_id = _add_run(store, bench, {"alt": GENERATED["alt"]})
    changed = [*QUERIES[:1], dict(QUERIES[1], sql="SELECT 1", answer="SELECT 1"), *QUERIES[2:]]
    with pytest.raises(ConfigError, match="another version"):
        error_sources(store, _write_bench(tmp_path / "changed", changed), run_id)
    bad = [*QUERIES[:1], dict(QUERIES[1], alternatives=[{"kind": "mood", "sql": "SELECT 1"}]),
           *QUERIES[2:]]
    broken = _write_bench(tmp_path / "bad", bad)  # metadata is not in the fingerprint
    assert broken.fingerprint == bench.fingerprint
    with pytest.raises(DatasetError, match=r"alternatives\[0\]\.kind"):
        error_sources(store, broken, run_id)


def test_without_time_filter() -> None:
    sql, removed = without_time_filter(
        "SELECT SUM(o.amount) FROM orders AS o WHERE (o.status = 'x' AND "
        "o.order_date >= '2024-06-01') AND date(order_date) < '2024-07-01'",
        "orders.order_date")
    assert (sql, removed) == ("SELECT SUM(o.amount) FROM orders AS o WHERE o.status = 'x'", 2)
    # a same-named column of another table stays; OR keeps its conjunct whole
    sql, removed = without_time_filter(
        "SELECT COUNT(*) FROM orders JOIN returns AS r ON r.order_id = orders.order_id "
        "WHERE r.order_date > '2024' AND (orders.order_date > '2024' OR status = 'x')",
        "orders.order_date")
    assert removed == 1 and "r.order_date > '2024'" in sql and " OR " not in sql
    # HAVING and subqueries; the last conjunct gone drops the clause
    sql, removed = without_time_filter(
        "SELECT status FROM orders WHERE order_id IN (SELECT order_id FROM orders "
        "WHERE order_date > '2024') GROUP BY status HAVING MAX(order_date) > '2024'",
        "order_date")
    assert removed == 2 and "order_date" not in sql and "HAVING" not in sql
    assert without_time_filter("SELECT 1", "orders.order_date") == ("SELECT 1", 0)


def test_a_real_heuristic_run_on_demo_sql(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    config = RunConfig("demo-sql", "bm25", generation=HEURISTIC)
    run = run_retrieval(config, settings=settings).run
    store = RunStore.in_workspace(settings.workspace)
    report = error_sources(store, load_dataset("demo-sql", settings), run.run_id)
    assert report.n_queries == run.n_done == len({r.query_id for r in report.rows})
    assert all(r.source in SOURCES for r in report.rows)
    assert sum(report.counts.values()) == report.n_queries
    # no benchmark metadata: no time column, and gold is the only reading, so Alt is a
    # subset relation with the gold result: the run's own alt_interpretation_rate
    assert report.counts["time"] == 0
    assert {r.alternative_kind for r in report.rows if r.source == "alternative"} <= {"gold"}
    assert report.table().loc[run.config.label, "EA"] == pytest.approx(
        100 * run.metrics["execution_accuracy"])
    assert report.table().loc[run.config.label, "Alt"] == pytest.approx(
        100 * run.metrics["alt_interpretation_rate"])
    assert report.table().iloc[0].sum() - report.table().iloc[0]["Overall"] == \
        pytest.approx(100.0)


def test_a_database_the_prompt_never_showed_is_the_generators_error(
        store: RunStore, bench: Dataset) -> None:
    """Issue 24: `database_id: '12345'` was classed wrong_database and counted as a
    retrieval error. Only another database the prompt showed is retrieval's fault."""
    generated = {
        "retrieval": ("SELECT 1", "12345", ("shop",), None),  # invented: never run
        "sql_error": ("SELECT name FROM employees", "hr", ("shop",), None),  # real, unshown
        "other": ("SELECT name FROM employees", "hr", ("hr", "shop"), None),  # shown: misled
    }
    run_id = _add_run(store, bench, generated)
    records = {r.query_id: r.generation["sql"] for r in store.iter_results(run_id)}
    assert {q: r["error_class"] for q, r in records.items()} == {
        "retrieval": "database_not_in_prompt", "sql_error": "database_not_in_prompt",
        "other": "wrong_database"}
    assert records["retrieval"]["pred"] is None  # the SQL had no database to run on
    assert "'12345' is not part of this dataset" in records["retrieval"]["pred_error"]
    rows = {r.query_id: r for r in error_sources(store, bench, run_id).rows}
    assert {q: r.source for q, r in rows.items()} == {
        "retrieval": "sql", "sql_error": "sql", "other": "retrieval"}
    assert "named database '12345', which its prompt did not show (shop)" in \
        rows["retrieval"].detail


def test_a_model_inventing_database_ids_is_not_a_retrieval_failure(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """The issue's run: bm25 finds every gold database (db_hit@1 = 1.0), the model answers
    `database_id: '12345'`; evaluate said 80% retrieval errors."""
    fake_openai.chat_responder = lambda body: json.dumps(
        {"chain_of_thought_reasoning": "", "sql_query": "SELECT 1", "database_id": "12345"})
    settings = load_settings(tmp_path / "ws", environ={
        "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url})
    dataset = load_dataset("demo-sql", settings)
    run = run_retrieval(RunConfig("demo-sql", "bm25", limit=6,
                                  generation=GenerationConfig("openai:test-model")),
                        settings=settings).run
    store = RunStore.in_workspace(settings.workspace)
    classes = {r.generation["sql"]["error_class"] for r in store.iter_results(run.run_id)}
    assert classes == {"database_not_in_prompt"}
    report = error_sources(store, dataset, run.run_id)
    assert report.counts["retrieval"] == 0 and report.counts["sql"] == report.n_queries == 6
