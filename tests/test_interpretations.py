"""Seed 002's alternative interpretations (target_core.sql.interpretations): the rule on
hand-made results, the docs' worked examples on a real SQLite table with hand-computed
verdicts, bad metadata, and one verdict everywhere: the run's `alt_interpretation` and
`alt_interpretation_rate`, Table 1's Alt (`benchgen evaluate`) and the Query page's
answer view agree, on hand-written predictions and on a real benchmark export."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_sqlite, write_jsonl
from target_core.benchgen.error_sources import error_sources
from target_core.datasets.folder import load_folder
from target_core.engine.generation import Evaluator
from target_core.engine.runner import run_metrics
from target_core.engine.store import QueryResult, RunStore
from target_core.errors import DatasetError
from target_core.generators.base import Context, Generation
from target_core.read_models.answer import answer_view
from target_core.run_config import GenerationConfig, RunConfig
from target_core.sql import SqlResult, execute
from target_core.sql.interpretations import (
    ALTERNATIVE_KINDS,
    ExpandedTruth,
    Interpretation,
    Reading,
    interpret,
    readings_of,
    relation,
)
from target_core.types import Dataset, Query

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_PAGE = (ROOT / "docs" / "text-to-sql.md").read_text(encoding="utf-8")


def result(rows: list[tuple], columns: tuple[str, ...] = ("a",), *, truncated: bool = False,
           error: str | None = None) -> SqlResult:
    return SqlResult(sql="SELECT a FROM t", columns=columns, rows=tuple(rows),
                     truncated=truncated, error=error, error_class="execution_error"
                     if error else None, ms=1.0)


GOLD = Reading("gold", "the gold query", "SELECT a FROM t")


# --- the rule on hand-made results ----------------------------------------------------------


def test_relation_in_both_directions_and_its_guards() -> None:
    gold = result([(1,), (2,)])
    assert relation(result([(1,), (2,), (3,)]), gold) == "superset"
    assert relation(result([(2,)]), gold) == "subset"
    assert relation(result([(2,), (1,), (1,)]), gold) == "equal"  # order, duplicates
    assert relation(result([(1.0000001,), (2,)]), gold) == "equal"  # floats to 6 places
    assert relation(result([(2,), (5,)]), gold) is None  # overlap is not a subset
    assert relation(result([]), gold) is None  # the empty set is a subset of all: never
    assert relation(gold, result([])) is None
    assert relation(result([(1, "x"), (2, "y")], ("a", "b")), gold) is None  # widths
    assert relation(result([(1,)], ("total",)), gold) == "subset"  # names are aliases
    assert relation(result([(1,)], truncated=True), gold) is None  # cut by the row cap
    assert relation(result([(1,)]), result([(1,), (2,)], truncated=True)) is None
    assert relation(result([], error="no such column: x"), gold) is None


def test_interpret_levels() -> None:
    gold = result([(1,), (2,)])
    time = Reading("time", "the last 30 days", "SELECT a FROM t WHERE d > 1")
    expanded = [(GOLD, gold), (time, result([(2,), (3,)]))]
    assert interpret(result([(2,), (1,)]), expanded).level == "exact"
    assert interpret(result([(3,), (2,)]), expanded) == Interpretation(
        "alternative", "time", "the last 30 days", "equal", 2)
    assert interpret(result([(1,), (2,), (3,)]), expanded) == Interpretation(
        "alternative", "gold", "the gold query", "superset", 2)
    # subset of both readings: the earlier one (gold) is named
    assert interpret(result([(2,)]), expanded).kind == "gold"
    # subset of the union only: readings are taken one at a time
    assert interpret(result([(1,), (3,)]), expanded).level == "wrong"
    assert interpret(None, expanded).level == "wrong"
    assert interpret(result([], error="boom"), expanded).level == "wrong"
    failed_gold = [(GOLD, result([], error="gold broke")), expanded[1]]
    assert interpret(result([(2,), (3,)]), failed_gold).level == "wrong"
    # equality wins over an earlier subset relation
    wide = [(GOLD, result([(2,), (3,), (4,)])), (time, result([(2,), (3,)]))]
    assert interpret(result([(3,), (2,)]), wide).relation == "equal"
    # without alternatives: the project's earlier "one result contains the other"
    alone = [(GOLD, gold)]
    assert interpret(result([(1,), (2,), (3,)]), alone).alternative
    assert interpret(result([(2,)]), alone).alternative
    assert not interpret(result([(2,), (5,)]), alone).alternative
    with pytest.raises(ValueError, match="gold reading"):
        interpret(gold, [])


def test_verdicts_round_trip_and_read_as_sentences() -> None:
    verdict = Interpretation("alternative", "time", "the last 30 days", "subset", 3)
    assert Interpretation.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict
    assert verdict.sentence() == ("An alternative interpretation (level 2): rows that are a "
                                  "subset of those of the time alternative (the last 30 "
                                  "days).")
    assert verdict.detail() == "subset of the time alternative (the last 30 days)"
    equal = Interpretation("alternative", "time", "the last 30 days", "equal", 3)
    assert equal.detail() == "matches alternative: time (the last 30 days)"
    superset = Interpretation("alternative", "gold", "the gold query", "superset", 1)
    assert superset.detail() == "superset of the gold result"
    assert Interpretation("wrong", n_readings=1).sentence().endswith(
        "the gold result (the query has no alternative readings).")
    assert Interpretation("wrong", n_readings=3).sentence().endswith(
        "the gold result or any of its 2 alternative readings.")
    with pytest.raises(ValueError, match="level"):
        Interpretation("maybe")


def test_alternative_kinds_are_benchgens() -> None:
    """One list: the templates check their alternatives against the rule's kinds."""
    from target_core.benchgen import template_parse, templates

    assert template_parse.ALTERNATIVE_KINDS is templates.ALTERNATIVE_KINDS is ALTERNATIVE_KINDS


@pytest.mark.parametrize(("alternatives", "field"), [
    ("not a list", "alternatives"),
    (["x"], r"alternatives\[0\]"),
    ([{"kind": "mood", "sql": "SELECT 1"}], r"alternatives\[0\]\.kind"),
    ([{"kind": "time", "sql": " "}], r"alternatives\[0\]\.sql"),
])
def test_bad_alternatives_name_the_field(alternatives: Any, field: str) -> None:
    query = Query("q1", "question", "SELECT 1", (("db", "t"),), "db", sql="SELECT 1",
                  meta={"alternatives": alternatives})
    with pytest.raises(DatasetError, match=rf"queries\.jsonl.*field '{field}'"):
        readings_of(query, source="bench/queries.jsonl")


def test_readings_start_with_gold() -> None:
    query = Query("q1", "question", "SELECT 1", (("db", "t"),), "db", sql="SELECT 1",
                  meta={"alternatives": [{"kind": "metric", "sql": "SELECT 2"}]})
    assert readings_of(query) == (Reading("gold", "the gold query", "SELECT 1"),
                                  Reading("metric", "", "SELECT 2"))
    plain = Query("q2", "question", "SELECT 3", (("db", "t"),), "db")
    assert readings_of(plain) == (Reading("gold", "the gold query", "SELECT 3"),)


# --- the docs' worked examples (docs/text-to-sql.md) -----------------------------------------

ORDERS = [(1, "2024-05-20", "shipped", 10), (2, "2024-06-05", "shipped", 20),
          (3, "2024-06-15", "shipped", 30), (4, "2024-06-25", "cancelled", 40),
          (5, "2024-07-05", "shipped", 50), (6, "2024-04-10", "shipped", 60)]
JUNE = "order_date >= '2024-06-01' AND order_date < '2024-07-01'"
LAST_30_DAYS = "order_date >= '2024-06-11' AND order_date < '2024-07-11'"
SHIPPED = "FROM orders WHERE status = 'shipped' AND"
QUESTIONS: dict[str, dict[str, Any]] = {
    "A": {"query": "What were our shipped sales last month?",
          "sql": f"SELECT SUM(amount) {SHIPPED} {JUNE}",
          "alternatives": [
              {"kind": "metric", "description": "the number of orders",
               "sql": f"SELECT COUNT(*) {SHIPPED} {JUNE}"},
              {"kind": "time", "description": "the last 30 days",
               "sql": f"SELECT SUM(amount) {SHIPPED} {LAST_30_DAYS}"}]},
    "B": {"query": "On which days last month did we ship orders?",
          "sql": f"SELECT DISTINCT order_date {SHIPPED} {JUNE}",
          "alternatives": [
              {"kind": "time", "description": "the last 30 days",
               "sql": f"SELECT DISTINCT order_date {SHIPPED} {LAST_30_DAYS}"}]},
}
QUESTIONS["B-plain"] = dict(QUESTIONS["B"], alternatives=[])  # an ordinary sql dataset
# number, question, prediction ({JUNE}: the docs' *June*), its rows, level, kind, relation
EXAMPLES: list[tuple[int, str, str, set, str, str | None, str | None]] = [
    (1, "A", f"SELECT SUM(amount) {SHIPPED} order_date BETWEEN '2024-06-01' AND '2024-06-30'",
     {(50,)}, "exact", "gold", "equal"),
    (2, "A", f"SELECT SUM(amount) {SHIPPED} order_date > date('2024-07-10', '-30 days')",
     {(80,)}, "alternative", "time", "equal"),
    (3, "A", f"SELECT COUNT(order_id) {SHIPPED} {{JUNE}}", {(2,)}, "alternative", "metric",
     "equal"),
    (4, "A", f"SELECT AVG(amount) {SHIPPED} {{JUNE}}", {(25,)}, "wrong", None, None),
    (5, "B", f"SELECT order_date {SHIPPED} order_date >= '2024-06-01'",
     {("2024-06-05",), ("2024-06-15",), ("2024-07-05",)}, "alternative", "gold", "superset"),
    (6, "B", f"SELECT order_date {SHIPPED} order_date >= '2024-06-26'", {("2024-07-05",)},
     "alternative", "time", "subset"),
    (7, "B", f"SELECT MIN(order_date) {SHIPPED} order_date >= '2024-06-01' GROUP BY "
             "substr(order_date, 1, 7)", {("2024-06-05",), ("2024-07-05",)}, "wrong", None,
     None),
    (8, "B", f"SELECT order_date {SHIPPED} order_date >= '2024-07-10'", set(), "wrong", None,
     None),
    (9, "B", f"SELECT order_date, amount {SHIPPED} {{JUNE}}",
     {("2024-06-05", 20), ("2024-06-15", 30)}, "wrong", None, None),
]
WITHOUT_ALTERNATIVES = {5: ("alternative", "gold", "superset"), 6: ("wrong", None, None)}
"""The docs: example 5 is the same without alternatives, example 6 becomes wrong."""


def _sql(template: str) -> str:
    return template.replace("{JUNE}", JUNE)


def _write_orders(folder: Path, queries: list[dict[str, Any]]) -> Dataset:
    folder.mkdir(parents=True)
    (folder / "dataset.json").write_text(json.dumps({"name": "orders-bench", "task": "sql"}))
    write_jsonl(folder / "corpus.jsonl", [
        {"database_id": "shop", "table_id": "orders",
         "table": [["order_id", "order_date", "status", "amount"], *map(list, ORDERS)]},
        {"database_id": "hr", "table_id": "employees", "table": [["name"], ["Ada"]]}])
    write_jsonl(folder / "queries.jsonl", queries)
    make_sqlite(folder / "databases" / "shop" / "shop.sqlite", [
        "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, order_date TEXT, status TEXT, "
        "amount REAL)",
        *(f"INSERT INTO orders VALUES ({i}, '{d}', '{s}', {a})" for i, d, s, a in ORDERS)])
    make_sqlite(folder / "databases" / "hr" / "hr.sqlite", [
        "CREATE TABLE employees (name TEXT)", "INSERT INTO employees VALUES ('Ada')"])
    return load_folder(folder)


def _query(query_id: str, question: str) -> dict[str, Any]:
    spec = QUESTIONS[question]
    return {"query_id": query_id, "query": spec["query"], "answer": spec["sql"],
            "sql": spec["sql"], "table_id": "orders", "database_id": "shop",
            "difficulty": "easy" if question == "A" else "medium",
            "reference_date": "2024-07-10", "time_column": "orders.order_date",
            "alternatives": spec["alternatives"]}


# query id -> (question, generated SQL, database chosen, generation error)
PREDICTIONS: dict[str, tuple[str, str, str, str | None]] = {
    **{f"ex{n}": (q, _sql(sql), "shop", None) for n, q, sql, *_ in EXAMPLES},
    **{f"plain{n}": ("B-plain", _sql(EXAMPLES[n - 1][2]), "shop", None)
       for n in WITHOUT_ALTERNATIVES},
    "failed": ("A", "", "shop", "the model call failed: HTTP 500"),
    "elsewhere": ("B", "SELECT '2024-06-05' FROM employees", "hr", None),
}


@pytest.fixture(scope="module")
def orders(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _write_orders(tmp_path_factory.mktemp("orders") / "bench",
                         [_query(qid, q) for qid, (q, *_) in PREDICTIONS.items()])


@pytest.mark.parametrize(("number", "question", "sql", "rows", "level", "kind", "how"),
                         EXAMPLES, ids=[f"example-{e[0]}" for e in EXAMPLES])
def test_readme_worked_example(orders: Dataset, number: int, question: str, sql: str,
                               rows: set, level: str, kind: str | None, how: str | None
                               ) -> None:
    pred = execute(orders.databases["shop"], _sql(sql))
    assert pred.ok and set(pred.rows) == rows
    verdict = ExpandedTruth(orders).interpret(orders.query(f"ex{number}"), pred)
    assert (verdict.level, verdict.kind if level != "wrong" else None, verdict.relation) == (
        level, kind, how)
    if number in WITHOUT_ALTERNATIVES:
        plain = ExpandedTruth(orders).interpret(orders.query(f"plain{number}"), pred)
        assert (plain.level, plain.kind, plain.relation) == WITHOUT_ALTERNATIVES[number]
    # the docs' row shows this very SQL and verdict
    shown = "`" + sql.replace(" {JUNE}", "` *June*") + ("`" if "{JUNE}" not in sql else "")
    row = next(line for line in EXAMPLES_PAGE.splitlines() if line.startswith(f"| {number} | `"))
    assert row.startswith(f"| {number} | {shown} |"), row
    said = level if level != "alternative" else f"alternative ({kind}, {how})"
    assert f"| {said} |" in row


def test_docs_state_the_readings_of_the_examples() -> None:
    for spec in (QUESTIONS["A"], QUESTIONS["B"]):
        assert spec["query"] in EXAMPLES_PAGE
    assert f"`{JUNE}`" in EXAMPLES_PAGE
    assert f"`{LAST_30_DAYS.split(' AND ')[0]}" in EXAMPLES_PAGE


# --- one verdict everywhere ------------------------------------------------------------------


def _hand_run(store: RunStore, dataset: Dataset, *, keep_verdicts: bool = True) -> str:
    """A run of PREDICTIONS scored by the project's Evaluator, as a real run's are."""
    run, _ = store.start_run(RunConfig(dataset.name, "bm25",
                                       generation=GenerationConfig("heuristic")),
                             dataset_fingerprint=dataset.fingerprint, task="sql",
                             n_queries=len(PREDICTIONS), versions={})
    evaluator, results = Evaluator(dataset), []
    for position, (qid, (_, sql, chosen, error)) in enumerate(PREDICTIONS.items()):
        query = dataset.query(qid)
        record, scores = evaluator.evaluate(
            query, Generation(answer=sql, database_id=chosen, error=error),
            Context(mode="retrieved", databases=(chosen,)), generator="hand",
            label="hand-written")
        if not keep_verdicts:  # as stored before verdicts were
            record["sql"].pop("interpretation")
        results.append(QueryResult(
            query_id=qid, position=position, ranked=[((chosen, "orders"), 1.0)],
            gold=list(query.gold), gold_ranks={g: 1 for g in query.gold},
            metrics={"mrr": 1.0} | scores, ms=1.0, generation=record))
    store.save_results(run.run_id, results)
    store.finish_run(run.run_id, run_metrics(store, store.get_run(run.run_id), dataset))
    return run.run_id


def _assert_one_verdict(store: RunStore, dataset: Dataset, run_id: str) -> set[str]:
    """The run's flag and rate, Table 1 and the answer view agree; the alternatives."""
    run = store.get_run(run_id)
    report = error_sources(store, dataset, run_id)
    table_1 = {r.query_id for r in report.rows if r.source == "alternative"}
    results = list(store.iter_results(run_id))
    flagged = {r.query_id for r in results if r.metrics["alt_interpretation"] == 1.0}
    viewed = set()
    for r in results:
        view = answer_view(dataset, r)
        assert view is not None and view.sql is not None
        if view.sql.alternative:
            viewed.add(r.query_id)
            assert view.sql.interpretation.startswith("An alternative interpretation")
    assert flagged == table_1 == viewed
    assert report.table().iloc[0]["Alt"] == pytest.approx(
        100 * run.metrics["alt_interpretation_rate"])
    assert report.table().iloc[0]["EA"] == pytest.approx(
        100 * run.metrics["execution_accuracy"])
    return table_1


def test_run_metric_table_1_and_answer_view_agree(tmp_path: Path, orders: Dataset) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = _hand_run(store, orders)
    expected = {f"ex{n}" for n, *_, level, _, _ in EXAMPLES if level == "alternative"}
    expected |= {f"plain{n}" for n, v in WITHOUT_ALTERNATIVES.items() if v[0] == "alternative"}
    expected.add("elsewhere")  # another database, but a subset of the gold days
    assert _assert_one_verdict(store, orders, run_id) == expected
    run = store.get_run(run_id)
    assert run.metrics["alt_interpretation_rate"] == pytest.approx(len(expected) / 13)
    rows = {r.query_id: r for r in error_sources(store, orders, run_id).rows}
    assert rows["ex2"].detail == "matches alternative: time (the last 30 days)"
    assert rows["ex5"].detail == "superset of the gold result"
    assert (rows["ex6"].detail, rows["ex6"].alternative_kind) == (
        "subset of the time alternative (the last 30 days)", "time")
    # without the alternative, example 6 differs from gold only in its time filter
    assert rows["plain6"].source == "time" and rows["failed"].source == "sql"
    stored = next(r for r in store.iter_results(run_id) if r.query_id == "ex6")
    assert stored.generation is not None
    assert stored.generation["sql"]["interpretation"] == {
        "level": "alternative", "kind": "time", "description": "the last 30 days",
        "relation": "subset", "n_readings": 2}
    view = answer_view(orders, stored)
    assert view is not None and view.sql is not None
    assert view.sql.interpretation == ("An alternative interpretation (level 2): rows that are "
                                       "a subset of those of the time alternative (the last "
                                       "30 days).")
    # the execution diff's counts, as the Query page writes them (one row: "row")
    one = dataclasses.replace(view.sql, counts={"n_shared": 1, "n_only_gold": 0,
                                                "n_only_pred": 2})
    assert one.diff_counts == "1 shared row, 0 only in gold, 2 only in the prediction"
    assert dataclasses.replace(one, counts={"n_shared": 3}).diff_counts.startswith(
        "3 shared rows, 0 only in gold")


def test_table_1_recomputes_runs_stored_without_verdicts(tmp_path: Path, orders: Dataset
                                                         ) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    fresh = error_sources(store, orders, _hand_run(store, orders))
    old = error_sources(store, orders, _hand_run(store, orders, keep_verdicts=False))
    assert [(r.query_id, r.source, r.detail, r.alternative_kind) for r in old.rows] == [
        (r.query_id, r.source, r.detail, r.alternative_kind) for r in fresh.rows]


def test_on_a_real_benchmark_export(tmp_path: Path) -> None:
    """A real export of the demo databases: a hand-made run answering with gold, with an
    alternative's SQL, with part of the gold rows and with nonsense, then a real
    retrieval + heuristic run: all three places agree on both."""
    from target_core.benchgen.build import build_draft, pick_templates
    from target_core.benchgen.export import export_draft
    from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, load_templates
    from target_core.config import load_settings
    from target_core.datasets import load_dataset
    from target_core.engine.runner import run_retrieval

    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    demo = load_dataset("demo-sql", settings)
    templates = pick_templates(load_templates(EXAMPLE_TEMPLATES_DIR), demo, "retail_store")
    draft, _ = build_draft(demo, templates, workspace=settings.workspace, name="d", n=3,
                           seed=0)
    with draft:
        draft.accept_automatic()
        export_draft(draft, settings, "bench-sql")
    dataset = load_dataset("bench-sql", settings)
    with_alternatives = [q for q in dataset.queries if q.meta["alternatives"]]
    assert with_alternatives

    answers: dict[str, str] = {}
    for i, query in enumerate(dataset.queries):
        gold = query.sql or ""
        kind = i % 4
        if kind == 1 and query.meta["alternatives"]:
            answers[query.query_id] = query.meta["alternatives"][0]["sql"]
        elif kind == 2:
            answers[query.query_id] = f"SELECT * FROM ({gold}) LIMIT 1"
        elif kind == 3:
            answers[query.query_id] = "SELECT 'no such answer'"
        else:
            answers[query.query_id] = gold
    store = RunStore.in_workspace(settings.workspace)
    run, _ = store.start_run(RunConfig("bench-sql", "bm25",
                                       generation=GenerationConfig("heuristic")),
                             dataset_fingerprint=dataset.fingerprint, task="sql",
                             n_queries=len(answers), versions={})
    evaluator, results = Evaluator(dataset), []
    for position, query in enumerate(dataset.queries):
        record, scores = evaluator.evaluate(
            query, Generation(answer=answers[query.query_id], database_id=query.database_id),
            Context(mode="oracle", databases=(query.database_id,)), generator="hand",
            label="hand-written")
        results.append(QueryResult(
            query_id=query.query_id, position=position, ranked=[(query.gold[0], 1.0)],
            gold=list(query.gold), gold_ranks={g: 1 for g in query.gold},
            metrics={"mrr": 1.0} | scores, ms=1.0, generation=record))
    store.save_results(run.run_id, results)
    store.finish_run(run.run_id, run_metrics(store, store.get_run(run.run_id), dataset))
    alternatives = _assert_one_verdict(store, dataset, run.run_id)
    kinds = {r.alternative_kind for r in error_sources(store, dataset, run.run_id).rows
             if r.query_id in alternatives}
    assert kinds & set(ALTERNATIVE_KINDS)  # some answer matched an enumerated alternative

    real = run_retrieval(RunConfig("bench-sql", "bm25", top_k=5,
                                   generation=GenerationConfig("heuristic")),
                         settings=settings).run
    _assert_one_verdict(store, dataset, real.run_id)
