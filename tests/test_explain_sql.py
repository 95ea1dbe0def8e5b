"""The text-to-SQL explanation on demo-sql failures of a bm25 run: a wrong database
(which words pulled it, checked by hand against the two schemas and against the SQL
writer's own choice) and a wrong table in the right database; not for other tasks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from target_core.analysis.explain_sql import explain_sql
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.generators.context import read_schema
from target_core.generators.heuristic_sql import write_sql
from target_core.read_models.explain_sql import render_sql
from target_core.run_config import RunConfig
from target_core.types import table_ref


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    workspace = tmp_path_factory.mktemp("explain-sql")
    settings = load_settings(environ={"TARGET_WORKSPACE": str(workspace)})
    store = RunStore.in_workspace(settings.workspace)
    run = run_retrieval(RunConfig("demo-sql", "bm25"), settings=settings, store=store).run
    return settings, store, run, load_dataset("demo-sql", settings)


def _explain(demo, query_id: str) -> dict:
    """The gold table against the table the run ranked first (it must be a failure)."""
    _, store, run, dataset = demo
    result = store.get_result(run.run_id, query_id)
    query = dataset.query(query_id)
    gold, top = query.gold[0], result.ranked[0][0]
    assert top not in query.gold  # the run ranked a wrong table first
    tables = [{"table": table_ref(gold), "role": "gold", "rank": result.gold_ranks[gold]},
              {"table": table_ref(top), "role": "winner", "rank": 1}]
    section = explain_sql(run, dataset, query, tables)
    assert section is not None
    return section


def test_wrong_database_names_the_words_that_pulled_it(demo) -> None:
    """"What is the most common job title?" (gold city_hr.employees) ranked
    airline.employees first. city_hr's employees has no job or title column (its
    positions table has `title`); airline's employees has `job_title`."""
    sql = _explain(demo, "demo-sql-0216")
    gold, winner = sql["tables"]
    assert (gold["table"], winner["table"]) == ("city_hr/employees", "airline/employees")
    assert gold["score"] == 0 and gold["words"] == []
    assert winner["columns"] == [{"column": "job_title", "words": ["job", "title"]}]
    assert winner["score"] == 1 and sql["only_other"] == ["job", "title"]
    assert not sql["same_database"]
    dbs = sql["databases"]
    assert dbs["gold"] == {"database": "city_hr", "score": 1.0, "best_table": "positions",
                           "words": ["title"]}
    assert dbs["other"]["database"] == "airline" and dbs["other"]["score"] == 1.0
    assert dbs["pulled_by"] == ["job"]
    # a tie at 1: the writer takes the better-ranked database, as write_sql does
    assert dbs["writer_picks"] == "airline"
    settings, _, _, dataset = demo
    schema = (read_schema("city_hr", dataset.databases["city_hr"])
              + read_schema("airline", dataset.databases["airline"]))
    question = dataset.query("demo-sql-0216").query
    assert write_sql(question, schema, ("airline", "city_hr")).database_id == "airline"
    rows = {row["word"]: row for row in sql["words"]}
    assert rows["job"] == {"word": "job", "gold": [],
                           "winner": ["column employees.job_title"]}
    assert rows["common"] == {"word": "common", "gold": [], "winner": []}
    shown = render_sql(sql)
    assert shown.database is not None and "'job'" in shown.database
    assert "would pick airline" in shown.database
    assert list(shown.words.columns) == ["word", "gold", "winner"]


def test_wrong_table_in_the_right_database(demo) -> None:
    """"Which departments pay an average salary above the overall average?" (gold
    city_hr.departments) ranked city_hr.positions first: "pay" and "salary" name its
    pay_grade, min_salary and max_salary; the gold is named by "departments" only."""
    sql = _explain(demo, "demo-sql-0217")
    gold, winner = sql["tables"]
    assert winner["table"] == "city_hr/positions" and sql["same_database"]
    assert sql["databases"] is None
    assert gold["name_word"] == "departments" and gold["score"] == 3.0
    assert [c["column"] for c in winner["columns"]] == ["pay_grade", "min_salary",
                                                        "max_salary"]
    assert winner["score"] == 3.0
    assert sql["only_gold"] == ["departments"] and sql["only_other"] == ["pay", "salary"]
    words = [row["word"] for row in sql["words"]]
    assert words.count("average") == 1  # said twice, linked the same way: one row
    assert "salary" in winner["text_words"]
    assert render_sql(sql).database is None


def test_value_links_are_reported_with_their_text(demo) -> None:
    """A person's name is two sampled values: patients.first_name 'Olivia' and
    last_name 'Castillo', two spans worth 2 points each."""
    sql = _explain(demo, "demo-sql-0037")
    gold = sql["tables"][0]
    assert [(v["column"], v["text"]) for v in gold["values"]] == [
        ("first_name", "Olivia"), ("last_name", "Castillo")]
    assert gold["words"] == ["olivia", "castillo"] and gold["score"] >= 4
    rows = {row["word"]: row for row in sql["words"]}
    assert rows["olivia"]["gold"] == ["value first_name = 'Olivia' (\"Olivia\")"]


def test_only_for_text_to_sql(demo) -> None:
    _, _, run, dataset = demo
    query = dataset.query("demo-sql-0216")
    tables = [{"table": "city_hr/employees", "role": "gold", "rank": None}]
    qa = replace(dataset, task="qa", databases={})
    assert explain_sql(replace(run, task="qa"), qa, query, tables) is None
    # the gold alone (nothing else retrieved) is still explained
    alone = explain_sql(run, dataset, query, tables)
    assert alone is not None and alone["other"] is None and alone["databases"] is None


def test_missing_database_file_is_a_note(demo, tmp_path: Path) -> None:
    _, _, run, dataset = demo
    broken = replace(dataset, databases={**dataset.databases,
                                         "airline": tmp_path / "gone.sqlite"})
    query = dataset.query("demo-sql-0216")
    tables = [{"table": "city_hr/employees", "role": "gold", "rank": 41},
              {"table": "airline/employees", "role": "winner", "rank": 1}]
    sql = explain_sql(run, broken, query, tables)
    assert sql is not None and sql["tables"][1]["in_schema"] is False
    assert "airline" in sql["notes"][0] and sql["databases"] is None


def test_query_page_shows_the_schema_linking(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    run_id = run_retrieval(RunConfig("demo-sql", "bm25"), settings=settings).run.run_id
    at = app("pages/query.py", run=run_id, query="demo-sql-0216")
    at.toggle(key="why-on").set_value(True).run()  # off until asked
    assert not at.error
    assert "Why this ranking?" in [h.value for h in at.subheader]
    assert any("Schema linking" in m.value for m in at.markdown)
    words = next(d.value for d in at.dataframe if list(d.value.columns)[:2] == ["word", "gold"])
    assert "job" in list(words["word"])
    assert any("would pick airline" in c.value for c in at.caption)
