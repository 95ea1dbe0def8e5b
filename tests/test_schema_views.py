"""Schema-aware views (TableView.context): the text of each format written out by hand,
the keys of existing views and runs exactly as before, a demo-sql run under the schema
view through the CLI and the Run page, the SQL prompt's schema, and the ablation variant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from target_core.cli import main
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.store import RunStore, config_key
from target_core.errors import ConfigError
from target_core.experiments.ablation import SCHEMA_VARIANT, ablation_variants, has_schema_context
from target_core.generators.context import ContextBuilder
from target_core.run_config import GenerationConfig, RunConfig
from target_core.serialize import table_text
from target_core.table_view import SCHEMA_CONTEXT, TableView, parse_view_context
from target_core.tokens import TokenCounter
from target_core.types import Table

TABLE = Table("university", "instructors", ("instructor_id", "dept_id", "rank"),
              ((1, 1, "Lecturer"), (2, 3, "Professor")),
              {"title": "instructors", "database": "university",
               "primary_key": ["instructor_id"],
               "foreign_keys": [{"column": "dept_id", "references": "departments.dept_id"}],
               "column_descriptions": {
                   "DEPT_ID": {"column_description": "department of the instructor",
                               "data_format": "integer"},
                   "rank": "academic rank",
                   "ghost": "a column the table does not have"}})
SCHEMA_DB = TableView(context=(*SCHEMA_CONTEXT, "database"))


# --- the text of each format ----------------------------------------------------------------

def test_markdown_text_with_the_schema_context() -> None:
    assert table_text(TABLE, SCHEMA_DB) == (
        "Title: instructors\n"
        "Primary key: instructor_id\n"
        "Foreign keys: instructors.dept_id -> departments.dept_id\n"
        "Columns:\n"
        "- dept_id: department of the instructor (integer)\n"
        "- rank: academic rank\n"
        "Database: university\n"
        "| instructor_id | dept_id | rank |\n"
        "| --- | --- | --- |\n"
        "| 1 | 1 | Lecturer |\n"
        "| 2 | 3 | Professor |")


def test_csv_text_with_the_schema_context_in_the_view_order() -> None:
    view = TableView(title=False, section_title=False, rows=1, format="csv",
                     context=("database", "foreign_keys", "primary_key"))
    assert table_text(TABLE, view) == (
        "Database: university\n"
        "Foreign keys: instructors.dept_id -> departments.dept_id\n"
        "Primary key: instructor_id\n"
        "instructor_id,dept_id,rank\n"
        "1,1,Lecturer")


def test_json_text_with_the_schema_context() -> None:
    assert json.loads(table_text(TABLE, SCHEMA_DB.with_(format="json", rows=0))) == {
        "title": "instructors",
        "primary_key": ["instructor_id"],
        "foreign_keys": ["instructors.dept_id -> departments.dept_id"],
        "column_descriptions": {"dept_id": "department of the instructor (integer)",
                                "rank": "academic rank"},
        "database": "university",
        "columns": ["instructor_id", "dept_id", "rank"], "rows": []}
    # the record's own keys are not overwritten by a context key of the same name
    odd = Table("d", "t", ("a",), ((1,),), {"columns": "from the context"})
    assert json.loads(table_text(odd, TableView(format="json", context=("columns",)))) == {
        "context_columns": "from the context", "columns": ["a"], "rows": [[1]]}


def test_bird_description_rows_and_spider_foreign_keys() -> None:
    """BIRD's database_description CSV rows (original_column_name, column_name,
    column_description, data_format, value_description) and the Spider loader's keys."""
    table = Table("schools", "frpm", ("CDSCode", "Charter School (Y/N)"), (("01", 1),),
                  {"foreign_keys": [{"column": "CDSCode", "ref_table": "schools",
                                     "ref_column": "CDSCode"}],
                   "column_descriptions": [
                       {"original_column_name": "CDSCode ", "column_name": "",
                        "column_description": "", "data_format": "text",
                        "value_description": ""},
                       {"original_column_name": "Charter School (Y/N)",
                        "column_name": "Charter School (Y/N)",
                        "column_description": "Charter School (Y/N)",
                        "data_format": "integer",
                        "value_description": "0: N;\n1: Y"}]})
    view = TableView(title=False, context=SCHEMA_CONTEXT)
    assert table_text(table, view) == (
        "Foreign keys: frpm.CDSCode -> schools.CDSCode\n"
        "Columns:\n"
        "- CDSCode: (text)\n"
        "- Charter School (Y/N): Charter School (Y/N) (integer). Values: 0: N; 1: Y\n"
        "| CDSCode | Charter School (Y/N) |\n| --- | --- |\n| 01 | 1 |")


def test_a_table_without_the_keys_reads_as_under_the_plain_view() -> None:
    plain = Table("wiki", "lakes", ("lake",), (("Baikal",),), {"title": "Lakes"})
    for fmt in ("markdown", "csv", "json"):
        assert (table_text(plain, TableView.preset("schema").with_(format=fmt))
                == table_text(plain, TableView(format=fmt)))


# --- keys of existing views and runs ---------------------------------------------------------

def test_keys_of_existing_views_and_runs_are_unchanged() -> None:
    """Computed before TableView.context existed: a run stored then is still found."""
    assert TableView().key == "title+section+no-table-id+rows:all+markdown"
    assert TableView().to_dict() == {"title": True, "section_title": True, "table_id": False,
                                     "rows": None, "format": "markdown"}
    gtr = TableView.preset("gtr-csv")
    assert gtr.key == "title+no-section+no-table-id+rows:all+csv"
    assert gtr.to_dict() == {"title": True, "section_title": False, "table_id": False,
                             "rows": None, "format": "csv"}
    assert TableView().label == "default" and TableView(rows=5).label == \
        "markdown, title+section, 5 rows"
    assert config_key(RunConfig(dataset="demo-qa", retriever="bm25"),
                      "0123456789abcdef") == "3d6ef37cea13faf1480f"
    assert config_key(RunConfig(dataset="demo-sql", retriever="bm25", view=gtr, top_k=5,
                                limit=20, generation=GenerationConfig("openai:gpt-4o-mini",
                                                                      context="oracle")),
                      "0123456789abcdef") == "1346d8a44b41c6ce451f"


def test_a_context_view_has_its_own_key_label_and_round_trips() -> None:
    schema = TableView.preset("schema")
    assert schema.context == ("primary_key", "foreign_keys", "column_descriptions")
    assert schema.key == ("title+section+no-table-id+rows:all+markdown+context:primary_key,"
                          "foreign_keys,column_descriptions")
    assert schema.to_dict()["context"] == list(SCHEMA_CONTEXT)
    assert schema.label == "schema"
    assert TableView.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema
    assert TableView(context=["database"]).label == "markdown, title+section, all rows, " \
        "with database"
    with_context = RunConfig("demo-sql", "bm25", view=schema)
    assert config_key(with_context, "0123456789abcdef") != "3d6ef37cea13faf1480f"
    assert RunConfig.from_dict(with_context.to_dict()) == with_context


@pytest.mark.parametrize("bad", ["primary_key", [""], [" a"], ["a,b"], ["a", "a"], [3]])
def test_bad_context_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(ConfigError, match="context"):
        TableView(context=bad)  # type: ignore[arg-type]


def test_parse_view_context() -> None:
    assert parse_view_context("primary_key, foreign_keys") == ("primary_key", "foreign_keys")
    assert parse_view_context("schema,database,primary_key") == (*SCHEMA_CONTEXT, "database")
    assert parse_view_context("") == parse_view_context("none") == ()


# --- runs ------------------------------------------------------------------------------------

def test_cli_runs_demo_sql_with_bm25_under_the_schema_view(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "--workspace", str(tmp_path), "--dataset", "demo-sql", "--retriever",
            "bm25", "--limit", "20", "--json"]
    assert main([*base, "--view", "schema"]) == 0
    schema_run = json.loads(capsys.readouterr().out)
    assert main(base) == 0
    plain_run = json.loads(capsys.readouterr().out)
    assert main([*base, "--view-context", "primary_key,database"]) == 0
    typed_run = json.loads(capsys.readouterr().out)
    store = RunStore.in_workspace(tmp_path)
    stored = {r: store.get_run(r) for r in (schema_run["run_id"], plain_run["run_id"],
                                            typed_run["run_id"])}
    schema, plain, typed = stored.values()
    assert schema.config.view == TableView.preset("schema")
    assert plain.config.view == TableView()
    assert typed.config.view.context == ("primary_key", "database")
    assert len({r.config_key for r in stored.values()}) == 3
    assert len({r.text_fingerprint for r in stored.values()}) == 3  # other texts indexed
    first = load_dataset("demo-sql", load_settings(tmp_path)).tables[0]
    assert schema.text_example.startswith(f"Title: {first.title}\nPrimary key: ")
    assert "Primary key" not in plain.text_example
    assert 0 < schema.metrics["recall@10"] <= 1


def test_text_to_sql_prompts_carry_the_same_context_lines() -> None:
    settings = load_settings()
    dataset = load_dataset("demo-sql", settings)
    builder = ContextBuilder(dataset, GenerationConfig("heuristic", sql_schema="tables"),
                             TableView.preset("schema"), TokenCounter("test", False), top_k=1)
    context = builder.build(dataset.queries[0], [("university", "instructors")])
    statement = context.text.split("\n\n")[1]
    assert statement.startswith("CREATE TABLE")
    assert statement.endswith(
        "\n-- Primary key: instructor_id"
        "\n-- Foreign keys: instructors.dept_id -> departments.dept_id")
    plain = ContextBuilder(dataset, GenerationConfig("heuristic", sql_schema="tables"),
                           TableView(), TokenCounter("test", False), top_k=1)
    assert "-- Primary key" not in plain.build(dataset.queries[0],
                                               [("university", "instructors")]).text


# --- ablations --------------------------------------------------------------------------------

def test_the_schema_variant_is_offered_on_request() -> None:
    assert SCHEMA_VARIANT not in [v.name for v in ablation_variants()]
    variants = ablation_variants((100, 0), ("markdown",), schema=True)
    assert variants[-1].name == SCHEMA_VARIANT == "with schema context"
    assert variants[-1].view == TableView(rows=100, context=SCHEMA_CONTEXT)
    settings = load_settings()
    assert has_schema_context(load_dataset("demo-sql", settings))
    assert not has_schema_context(load_dataset("demo-qa", settings))


def test_cli_ablate_runs_the_schema_variant(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ablate", "--workspace", str(tmp_path), "--dataset", "demo-sql",
                 "--retriever", "bm25", "--limit", "20", "--rows", "all", "--formats",
                 "markdown", "--schema", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    text = json.dumps(report)
    assert SCHEMA_VARIANT in text
    runs = RunStore.in_workspace(tmp_path).list_runs()
    assert sorted(r.config.view.label for r in runs) == ["default", "no-title", "schema"]


def test_run_page_launches_a_schema_view_run(app, tmp_path: Path) -> None:
    from jobs_support import wait_for_jobs

    at = app(page="pages/run.py", dataset="demo-sql")
    at.multiselect(key="run-specs").set_value(["bm25"])
    at.selectbox(key="run-preset").set_value("schema").run()
    assert at.multiselect(key="run-schema-context").value == list(SCHEMA_CONTEXT)
    at.number_input(key="run-limit").set_value(20).run()
    next(b for b in at.button if b.label == "Launch").click().run()
    assert not at.exception and not at.error, at.error
    wait_for_jobs(tmp_path / "ws")
    (run,) = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert run.status == "complete" and run.config.view == TableView.preset("schema")


def test_ablations_page_offers_the_schema_variant_where_tables_have_keys(app) -> None:
    at = app(page="pages/ablations.py", dataset="demo-sql")
    assert at.checkbox(key="ablation-schema-demo-sql").value is True
    # nothing stored yet: 3 rows settings x (title, no title) + csv + json + schema
    assert any("(9 runs)" in i.value for i in at.info), [i.value for i in at.info]
    at = app(page="pages/ablations.py", dataset="demo-qa")
    assert at.checkbox(key="ablation-schema-demo-qa").value is False
    assert any("(8 runs)" in i.value for i in at.info), [i.value for i in at.info]
