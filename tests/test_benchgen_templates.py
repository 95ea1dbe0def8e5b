"""SQL templates (target_core.benchgen.templates) and sampling SQL from them (instantiate).

A hand-made SQLite database with known rows gives exact expected SQL and results;
the shipped example templates must each yield runnable queries on the demo databases.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, make_sqlite
from target_core.benchgen.instantiate import (
    SampledQuery,
    _Database,
    _draw_value,
    sample_queries,
)
from target_core.benchgen.render import quote_identifier, sql_literal
from target_core.benchgen.templates import (
    EXAMPLE_TEMPLATES_DIR,
    TemplateError,
    load_templates,
    parse_template,
    parse_templates,
)
from target_core.errors import ConfigError, TargetError

DEMO_DBS = ROOT / "data" / "demo" / "demo-sql" / "databases"

# (id, region, product, amount, qty, sold_on): max date 2024-03-31, so the derived
# reference date is 2024-04-01 and "last month" is March 2024 (rows 4 and 5).
SALES = [
    (1, "North", "Widget", 10.0, 1, "2024-01-15"),
    (2, "North", "Gadget", 20.0, 2, "2024-02-10"),
    (3, "South", "Widget", 30.0, 3, "2024-02-20"),
    (4, "O'Hare", "Widget", 40.0, 4, "2024-03-05"),
    (5, "South", "Gadget", 50.0, 5, "2024-03-31 18:30:00"),
]


def _literal(value: Any) -> str:
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else repr(value)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    rows = [f"INSERT INTO sales VALUES ({', '.join(_literal(v) for v in row)})" for row in SALES]
    return make_sqlite(tmp_path / "shop.sqlite", [
        "CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT, product TEXT, "
        "amount REAL, qty INTEGER, sold_on TEXT)", *rows,
        'CREATE TABLE odd ("group" TEXT, "order" INTEGER)',
        "INSERT INTO odd VALUES ('a', 1)",
    ])


def template(sql: str, placeholders: dict[str, Any] | None = None, **extra: Any):
    record = {"id": extra.pop("id", "t"), "database": "shop", "sql": sql,
              "placeholders": placeholders or {}, **extra}
    return parse_template(record, source="inline.json")


def sample(shop: Path, *templates: Any, **kwargs: Any):
    kwargs.setdefault("seed", 0)
    return sample_queries(templates, {"shop": shop}, **kwargs)


def count_rows(db: Path, sql: str, *params: Any) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql, params).fetchone()[0]


# --- sampling on the hand-made database ------------------------------------------------


def test_exhausting_a_small_space_gives_every_combination_with_exact_results(shop: Path):
    t = template("SELECT {agg}(amount) FROM sales WHERE region = {region}",
                 {"agg": {"type": "aggregation", "choices": ["sum", "MAX"]},
                  "region": {"type": "value", "column": "sales.region"}})
    report = sample(shop, t, n=6, max_draws=200)
    got = {q.sql: q.result_preview for q in report.queries}
    assert got == {
        "SELECT SUM(amount) FROM sales WHERE region = 'North'": ((30.0,),),
        "SELECT MAX(amount) FROM sales WHERE region = 'North'": ((20.0,),),
        "SELECT SUM(amount) FROM sales WHERE region = 'South'": ((80.0,),),
        "SELECT MAX(amount) FROM sales WHERE region = 'South'": ((50.0,),),
        # the quote is doubled, and the query runs and finds the row
        "SELECT SUM(amount) FROM sales WHERE region = 'O''Hare'": ((40.0,),),
        "SELECT MAX(amount) FROM sales WHERE region = 'O''Hare'": ((40.0,),),
    }
    counts = report.counts["t"]
    assert (counts.kept, counts.error, counts.empty) == (6, 0, 0)
    assert counts.draws == 6 + counts.duplicate
    query = next(q for q in report.queries if "O''Hare" in q.sql and "SUM" in q.sql)
    assert query.bindings == {"agg": "SUM", "region": "O'Hare"}
    assert (query.n_rows, query.database, query.time, query.reference_date) == (1, "shop",
                                                                                None, None)


def test_same_seed_same_sample_and_order(shop: Path):
    t = template("SELECT id FROM sales WHERE qty >= {q} ORDER BY id {o} LIMIT {n}",
                 {"q": {"type": "value", "column": "sales.qty", "mode": "range"},
                  "o": {"type": "order"}, "n": {"type": "limit", "choices": [1, 2]}})
    first = [q.to_dict() for q in sample(shop, t, n=4, seed=7).queries]
    assert first == [q.to_dict() for q in sample(shop, t, n=4, seed=7).queries]
    assert len(first) == 4


def test_empty_results_and_errors_are_rejected_and_counted(shop: Path):
    march = template("SELECT id FROM sales WHERE region = {region} AND {period}",
                     {"region": {"type": "value", "column": "sales.region"},
                      "period": {"type": "time", "column": "sales.sold_on",
                                 "expressions": ["last month"]}}, id="march")
    broken = template("SELECT {agg}(amount) FROM nowhere",
                      {"agg": {"type": "aggregation", "choices": ["SUM"]}}, id="broken")
    null = template("SELECT MAX(amount) FROM sales WHERE {period}",
                    {"period": {"type": "time", "column": "sales.sold_on",
                                "expressions": ["2023"]}}, id="null")
    report = sample(shop, march, broken, null, n=3, max_draws=30)
    c = report.counts
    # March 2024 holds O'Hare (row 4) and South (row 5); North has nothing then.
    assert (c["march"].kept, c["march"].empty, c["march"].error) == (2, 1, 0)
    assert (c["march"].duplicate, c["march"].draws) == (27, 30)
    assert {q.result_preview for q in report.queries if q.template_id == "march"} == {
        ((4,),), ((5,),)}
    assert (c["broken"].kept, c["broken"].error, c["broken"].duplicate) == (0, 1, 29)
    assert "no such table" in c["broken"].first_error
    # MAX over no rows is one NULL row: an aggregate without an answer.
    assert (c["null"].kept, c["null"].empty) == (0, 1)
    assert json.loads(json.dumps(report.to_dict()))["counts"]["march"]["empty"] == 1


def test_duplicates_are_found_across_templates_after_normalizing(shop: Path):
    a = template("SELECT COUNT(*) FROM sales", id="a")
    b = template("select   count(*)\n from sales;", id="b")
    report = sample(shop, a, b, n=1, max_draws=1)
    assert [q.template_id for q in report.queries] == ["a"]
    assert (report.counts["b"].duplicate, report.counts["b"].kept) == (1, 0)


def test_values_are_drawn_only_from_the_column(shop: Path):
    t = template("SELECT COUNT(*) FROM sales WHERE product = {p} AND qty <= {q} AND "
                 "amount >= {a}",
                 {"p": {"type": "value", "column": "sales.product"},
                  "q": {"type": "value", "column": "sales.qty", "mode": "range"},
                  "a": {"type": "value", "column": "sales.amount", "mode": "range",
                        "digits": 1}})
    queries = sample(shop, t, n=40, max_draws=200).queries
    assert len(queries) >= 20
    for q in queries:
        assert q.bindings["p"] in {"Widget", "Gadget"}
        assert isinstance(q.bindings["q"], int) and 1 <= q.bindings["q"] <= 5
        assert isinstance(q.bindings["a"], float) and 10.0 <= q.bindings["a"] <= 50.0
        assert round(q.bindings["a"], 1) == q.bindings["a"]


def test_distinct_values_are_weighted_by_frequency(shop: Path):
    db = _Database(shop)
    try:
        p = template("SELECT 1 FROM sales WHERE region = {r}",
                     {"r": {"type": "value", "column": "sales.region"}})
        rng = random.Random(3)
        draws = Counter(_draw_value(p.placeholders[0], p.placeholders[0].column, db, rng, p)
                        for _ in range(5000))
    finally:
        db.close()
    assert set(draws) == {"North", "South", "O'Hare"}
    assert draws["O'Hare"] / 5000 == pytest.approx(0.2, abs=0.03)  # 1 row of 5
    assert draws["North"] / 5000 == pytest.approx(0.4, abs=0.03)


def test_column_placeholders_and_values_drawn_from_the_chosen_column(shop: Path):
    t = template("SELECT COUNT(*) FROM sales WHERE {col} = {val}",
                 {"col": {"type": "column", "table": "sales", "choices": ["region", "product"]},
                  "val": {"type": "value", "column_from": "col"}})
    queries = sample(shop, t, n=5, max_draws=100).queries
    allowed = {"region": {"North", "South", "O'Hare"}, "product": {"Widget", "Gadget"}}
    assert len(queries) == 5
    for q in queries:
        assert q.bindings["val"] in allowed[q.bindings["col"]]
        expected = count_rows(shop, f"SELECT COUNT(*) FROM sales WHERE {q.bindings['col']} = ?",
                              q.bindings["val"])
        assert q.result_preview == ((expected,),)


def test_keyword_identifiers_are_quoted_and_run(shop: Path):
    t = template("SELECT {c} FROM odd GROUP BY {g}",
                 {"c": {"type": "column", "table": "odd", "choices": ["order"]},
                  "g": {"type": "group_by", "choices": ["odd.group"]}})
    [query] = sample(shop, t, n=1).queries
    assert query.sql == 'SELECT "order" FROM odd GROUP BY odd."group"'
    assert query.result_preview == ((1,),)


def test_literals_and_identifiers():
    assert sql_literal("it's") == "'it''s'"
    assert sql_literal("'; DROP TABLE sales; --") == "'''; DROP TABLE sales; --'"
    assert (sql_literal(3), sql_literal(2.5), sql_literal(True)) == ("3", "2.5", "1")
    assert quote_identifier("region") == "region"
    assert quote_identifier("order") == '"order"'
    assert quote_identifier('we"ird col') == '"we""ird col"'


def test_sampling_never_changes_the_database(shop: Path):
    before = hashlib.sha256(shop.read_bytes()).hexdigest()
    sample(shop, template("SELECT id FROM sales WHERE region = {r}",
                          {"r": {"type": "value", "column": "sales.region"}}), n=3)
    assert hashlib.sha256(shop.read_bytes()).hexdigest() == before


def test_sampled_query_round_trips_through_json(shop: Path):
    t = template("SELECT id, sold_on FROM sales WHERE {period}",
                 {"period": {"type": "time", "column": "sales.sold_on",
                             "expressions": ["last month"]}}, difficulty="easy")
    [query] = sample(shop, t, n=1).queries
    data = json.loads(json.dumps(query.to_dict()))
    assert SampledQuery.from_dict(data) == query
    assert (data["difficulty"], data["columns"]) == ("easy", ["id", "sold_on"])


def test_n_must_be_positive(shop: Path):
    with pytest.raises(ConfigError):
        sample(shop, template("SELECT 1"), n=0)


# --- time references --------------------------------------------------------------------

# Windows against the derived reference 2024-04-01, written out by hand.
WINDOWS = {"last month": ("2024-03-01", "2024-04-01"), "2024-02": ("2024-02-01", "2024-03-01"),
           "last 2 months": ("2024-02-01", "2024-04-01"),
           "2024-01-01..2024-02-15": ("2024-01-01", "2024-02-16")}


def test_time_placeholders_store_the_reference_and_match_the_window(shop: Path):
    t = template("SELECT id FROM sales WHERE {period}",
                 {"period": {"type": "time", "column": "sales.sold_on",
                             "expressions": [*WINDOWS, "this month"]}})
    report = sample(shop, t, n=5, max_draws=100)
    assert {q.bindings["period"] for q in report.queries} == set(WINDOWS)
    assert report.counts["t"].empty == 1  # "this month" is 1 April 2024 alone: no sales
    for q in report.queries:
        start, end = WINDOWS[q.bindings["period"]]
        assert q.reference_date == "2024-04-01"
        assert q.time == {"expression": q.bindings["period"], "reference": "2024-04-01",
                          "start": start, "end": end}
        assert f"sales.sold_on >= '{start}' AND sales.sold_on < '{end}'" in q.sql
        expected = count_rows(shop, "SELECT COUNT(*) FROM sales WHERE sold_on >= ? AND "
                              "sold_on < ?", start, end)
        assert q.n_rows == expected > 0


def test_reference_date_from_the_template_or_the_caller(shop: Path):
    spec = {"period": {"type": "time", "column": "sales.sold_on",
                       "expressions": ["last month"]}}
    pinned = template("SELECT id FROM sales WHERE {period}", spec,
                      reference_date="2024-02-29")
    [q] = sample(shop, pinned, n=1).queries
    assert (q.reference_date, q.time["start"], q.n_rows) == ("2024-02-29", "2024-01-01", 1)
    [q] = sample(shop, pinned, n=1, reference_date=date(2024, 3, 10)).queries
    assert (q.reference_date, q.time["start"], q.time["end"]) == ("2024-03-10", "2024-02-01",
                                                                   "2024-03-01")
    assert q.n_rows == 2


# --- bad templates ---------------------------------------------------------------------

GOOD = {"id": "bad-one", "database": "shop",
        "sql": "SELECT {agg}(amount) FROM sales WHERE {period}",
        "placeholders": {"agg": {"type": "aggregation"},
                         "period": {"type": "time", "column": "sales.sold_on",
                                    "expressions": ["last month", "2024"]}}}


def _with(**changes: Any) -> dict[str, Any]:
    record = json.loads(json.dumps(GOOD))
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        target = record
        for key in parents:
            target = target[key]
        target[last] = value
    return record


@pytest.mark.parametrize("record, field, words", [
    (_with(sql="SELECT {agg}(amount) FROM sales WHERE {period} AND {missing}"), "sql",
     "unknown placeholder {missing}"),
    (_with(placeholders__agg={"type": "colour"}), "placeholders.agg.type", "unknown type"),
    (_with(placeholders__agg={"type": "aggregation", "choices": ["MEDIAN"]}),
     "placeholders.agg.choices[0]", "MEDIAN"),
    (_with(placeholders__period__expressions=["last month", "next tuesday"]),
     "placeholders.period.expressions[1]", "next tuesday"),
    (_with(placeholders__extra={"type": "order"}), "placeholders.extra", "not used"),
    (_with(placeholders__period__column="sold_on"), "placeholders.period.column",
     "table.column"),
    (_with(placeholders__agg={"type": "aggregation", "colums": []}),
     "placeholders.agg.colums", "unknown key"),
    (_with(reference_date="yesterday"), "reference_date", "ISO date"),
    (_with(sql=""), "sql", "non-empty"),
])
def test_malformed_templates_name_file_template_and_field(tmp_path: Path, record, field, words):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"templates": [record]}), encoding="utf-8")
    with pytest.raises(TemplateError) as caught:
        load_templates(path)
    message = str(caught.value)
    assert str(path) in message and "template 'bad-one'" in message
    assert f"field '{field}'" in message and words in message
    assert isinstance(caught.value, TargetError) and caught.value.field == field


@pytest.mark.parametrize("placeholder, field, words", [
    ({"type": "column", "table": "sales", "choices": ["amount", "revenue"]},
     "placeholders.x.choices[1]", "no column 'revenue' in table 'sales'"),
    ({"type": "value", "column": "shops.region"}, "placeholders.x.column", "no table 'shops'"),
    ({"type": "value", "column": "sales.region", "mode": "range"}, "placeholders.x.mode",
     "range mode needs numbers"),
])
def test_templates_that_do_not_fit_the_schema(tmp_path: Path, shop: Path, placeholder, field,
                                              words):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"database": "shop", "templates": [
        {"id": "misfit", "sql": "SELECT {x} FROM sales", "placeholders": {"x": placeholder}}]}))
    with pytest.raises(TemplateError) as caught:
        sample_queries(load_templates(path), {"shop": shop}, n=1, seed=0)
    message = str(caught.value)
    assert str(path) in message and "template 'misfit'" in message
    assert f"field '{field}'" in message and words in message


def test_unknown_database_and_malformed_files(tmp_path: Path, shop: Path):
    with pytest.raises(TemplateError, match="field 'database'.*unknown database 'nope'"):
        sample_queries([parse_template({**GOOD, "database": "nope"})], {"shop": shop}, n=1,
                       seed=0)
    bad = tmp_path / "bad.json"
    bad.write_text('{"templates": [\n  {"id": "x",}\n]}', encoding="utf-8")
    with pytest.raises(TemplateError, match=r"bad\.json, line 2: invalid JSON"):
        load_templates(bad)
    (tmp_path / "empty").mkdir()
    with pytest.raises(TemplateError, match="no template files"):
        load_templates(tmp_path / "empty")
    with pytest.raises(TemplateError, match="field 'templates'"):
        parse_templates({"templates": []}, source="x.json")


def test_folders_load_json_and_yaml_and_reject_duplicate_ids(tmp_path: Path):
    (tmp_path / "a.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(
        "database: shop\ntemplates:\n  - id: from-yaml\n    reference_date: 2024-03-01\n"
        "    sql: SELECT COUNT(*) FROM sales WHERE region = {r}\n"
        "    placeholders:\n      r: {type: value, column: sales.region}\n",
        encoding="utf-8")
    loaded = load_templates(tmp_path)
    assert [t.id for t in loaded] == ["bad-one", "from-yaml"]
    assert loaded[1].reference_date == date(2024, 3, 1)
    (tmp_path / "c.json").write_text(json.dumps([{**GOOD}]), encoding="utf-8")
    with pytest.raises(TemplateError, match=r"c\.json, template 'bad-one', field 'id': "
                                            r"duplicate id; first defined in .*a\.json"):
        load_templates(tmp_path)


# --- the shipped examples -----------------------------------------------------------------


def test_every_example_template_samples_valid_queries_on_the_demo_databases():
    files = sorted(EXAMPLE_TEMPLATES_DIR.glob("*.json"))
    assert {f.stem for f in files} >= {"retail_store", "hospital", "airline"}
    templates = load_templates(EXAMPLE_TEMPLATES_DIR)
    databases = {f.stem: DEMO_DBS / f.stem / f"{f.stem}.sqlite" for f in files}
    report = sample_queries(templates, databases, n=5, seed=0)
    for t in templates:
        assert t.database == Path(t.source).stem
        assert report.counts[t.id].kept >= 1, (t.id, report.counts[t.id])
        assert report.counts[t.id].error == 0, report.counts[t.id].first_error
    for q in report.queries:
        assert q.n_rows >= 1
        if q.time is not None:
            assert q.reference_date == q.time["reference"]
