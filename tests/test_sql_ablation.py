"""Seed 002's text-to-SQL prompt (Figure 4), its toggles and its ablation (Table 2):
the prompt text, option parsing, few-shot pairs that never hold the query itself, run
keys unchanged without options, the ablation on demo-sql with the heuristic generator,
Table 2 on hand-made outcomes, a fake OpenAI server seeing the few-shot pairs,
annotations and CoT, the phrased answer scored, the CLI and the Ablations page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_openai import FakeOpenAI

from target_core.benchgen.draft import Draft
from target_core.benchgen.instantiate import SampledQuery
from target_core.benchgen.questions import Verdict, Written, WrittenQuestion
from target_core.cli.main import main
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.store import RunStore, config_key
from target_core.errors import ConfigError
from target_core.experiments.sql_ablation import (
    run_sql_variants,
    sql_ablation_configs,
    sql_ablation_variants,
)
from target_core.generators.prompts import PROMPT_SETS, build_messages
from target_core.generators.sql_answer import score_answer, template_answer
from target_core.generators.sql_prompt_options import (
    Example,
    FewShotPool,
    PromptOptions,
    extract_sql,
    parse_prompt_options,
)
from target_core.read_models.sql_ablation import (
    TABLE2_COLUMNS,
    SqlAblation,
    VariantOutcome,
    load_sql_ablation,
)
from target_core.run_config import GenerationConfig, RunConfig
from target_core.types import Query

FIGURE4_SYSTEM = ("You are an expert data analyst specializing in transforming e-commerce "
                  "sellers' business data requests into efficient and valid SQLite queries.")
FLIGHTS_SQL = ("SELECT flight_number, departure_date FROM flights WHERE origin = 'BOS' AND "
               "destination = 'SFO'")
ANSWER = "Two flights fly from BOS to SFO."
FIGURE4_END = ("Strictly follow the above instructions and provide the SQL query that would "
               "retrieve the data. Do not provide explanations after the SQL code.")


# --- the prompt --------------------------------------------------------------------------------

def test_the_seed002_set_is_figure_4_without_its_modules() -> None:
    system, user = build_messages("sql", "How many rooms?", "CREATE TABLE rooms (id INT)",
                                  prompts="seed002")
    assert system == {"role": "system", "content": FIGURE4_SYSTEM}
    assert user["content"] == (
        "Here is the table schema you have access to:\n<table_schema>\n"
        "CREATE TABLE rooms (id INT)\n</table_schema>\n<instruction>\n"
        "- Interpret 'last/past' periods as complete calendar units before the current "
        "date, unless explicitly stated otherwise.\n"
        "- Write only the SQL query, in a ```sql code block.\n</instruction>\n"
        "Here is the seller's question:\n<query>\nHow many rooms?\n</query>\n" + FIGURE4_END)
    assert PROMPT_SETS["seed002"].sql == (FIGURE4_SYSTEM, user["content"].replace(
        "CREATE TABLE rooms (id INT)", "{database_schema}").replace("How many rooms?",
                                                                    "{query}"))
    # QA and fact prompts of the set are Appendix D's
    assert PROMPT_SETS["seed002"].text == PROMPT_SETS["appendix-d"].text


def test_cot_examples_and_dates_enter_figure_4s_places() -> None:
    shots = [Example("How many wards?", "SELECT COUNT(*) FROM wards", "query q9")]
    _, user = build_messages("sql", "Rooms booked this week?", "SCHEMA", prompts="seed002",
                             options=PromptOptions(few_shot=1, cot=True),
                             today="2024-03-14", examples=shots)
    assert user["content"] == (
        "Here is the table schema you have access to:\n<table_schema>\nSCHEMA\n"
        "</table_schema>\n<instruction>\n"
        "Think step-by-step to generate the SQL query:\n"
        "- First provide your reasoning on how to generate the SQL query in <reasoning> "
        "tags.\n"
        "  - Analyze the associated time in the seller question\n"
        "    - Today is 2024-03-14 (Thursday) in YYYY-MM-DD format.\n"
        "    - This week starts from 2024-03-11 (Monday) and ends on 2024-03-17 (Sunday).\n"
        "  - Interpret 'last/past' periods as complete calendar units before the current "
        "date, unless explicitly stated otherwise.\n"
        "- Then write the SQL query in a ```sql code block.\n</instruction>\n"
        "Here are some examples:\n<examples>\n<example>\nQuestion: How many wards?\nSQL:\n"
        "```sql\nSELECT COUNT(*) FROM wards\n```\n</example>\n</examples>\n"
        "Here is the seller's question:\n<query>\nRooms booked this week?\n</query>\n"
        + FIGURE4_END)


@pytest.mark.parametrize(("reply", "sql", "reasoning"), [
    ("<reasoning>count rows</reasoning>\n```sql\nSELECT COUNT(*) FROM t;\n```",
     "SELECT COUNT(*) FROM t", "count rows"),
    ("First I look.\n```\nSELECT a FROM t\n```", "SELECT a FROM t", "First I look."),
    ("<reasoning>r</reasoning> SELECT b FROM t", "SELECT b FROM t", "r"),
    ("<sql>SELECT c FROM t</sql>", "SELECT c FROM t", None),
    ("I cannot help.", "", "I cannot help."),
])
def test_the_sql_is_read_back_from_prose(reply: str, sql: str, reasoning: str | None) -> None:
    assert extract_sql(reply) == (sql, reasoning)


# --- options ------------------------------------------------------------------------------------

def test_options_parse_in_one_place() -> None:
    parsed = parse_prompt_options(["cot", "fewshot=3", "annotations", "answer"])
    assert parsed == PromptOptions(few_shot=3, annotations=True, cot=True, answer=True)
    assert parsed.to_options() == ("fewshot=3", "annotations", "cot", "answer")
    assert parse_prompt_options("fewshot=2, cot") == PromptOptions(few_shot=2, cot=True)
    assert parse_prompt_options(()) == PromptOptions()
    # the answer step needs no prompt set of its own
    assert parse_prompt_options(["answer"], "appendix-d") == PromptOptions(answer=True)


@pytest.mark.parametrize(("options", "named"), [
    (["fewshot=0"], "'fewshot=0'"), (["fewshot=x"], "'fewshot=x'"), (["fewshot"], "'fewshot'"),
    (["fewshot=21"], "'fewshot=21'"), (["bogus"], "'bogus'"), (["cot=1"], "'cot=1'"),
    (["cot", "cot"], "'cot' is given twice"),
])
def test_bad_options_are_named(options: list[str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        parse_prompt_options(options)


def test_toggles_need_the_seed002_set() -> None:
    with pytest.raises(ConfigError, match="cot belong to the seed002 prompt set, not "
                                          "'appendix-d'"):
        parse_prompt_options(["cot"], "appendix-d")


def test_run_keys_are_unchanged_without_options() -> None:
    """Keys computed before prompt_options existed (commit 9e8a3c5's parent)."""
    plain = RunConfig(dataset="demo-sql", retriever="bm25", limit=20,
                      generation=GenerationConfig("heuristic", context_k=1))
    code = RunConfig(dataset="demo-sql", retriever="bm25", limit=20,
                     generation=GenerationConfig("openai:m", prompt_set="target-code"))
    assert config_key(plain, "abc") == "8b9af3293ce665849314"
    assert config_key(code, "abc") == "9804395173a20cb83757"
    assert "prompt_options" not in plain.to_dict()["generation"]
    toggled = RunConfig(dataset="demo-sql", retriever="bm25", limit=20,
                        generation=GenerationConfig("heuristic", context_k=1,
                                                    prompt_set="seed002",
                                                    prompt_options=("cot",)))
    assert toggled.to_dict()["generation"]["prompt_options"] == ["cot"]
    assert RunConfig.from_dict(toggled.to_dict()) == toggled
    assert toggled.label == "bm25 → heuristic, seed002 prompts +cot"


# --- few-shot pairs -----------------------------------------------------------------------------

def test_few_shot_pairs_never_hold_the_query() -> None:
    dataset = load_dataset("demo-sql", load_settings(Path("/nonexistent-ws")))
    pool = FewShotPool.build(dataset, None)
    for query in dataset.queries:
        picked = pool.pick(query, 5)
        assert len(picked) == 5
        for example in picked:
            assert example.source != f"query {query.query_id}"
            assert example.question != query.query
            assert " ".join(example.sql.lower().split()) != " ".join(query.sql.lower().split())
            other = dataset.query(example.source.removeprefix("query "))
            assert other.database_id == query.database_id
    assert pool.source("university") == "the dataset's other queries"
    # the closest question comes first: demo-sql-0001 and 0002 differ in their GPA bound
    assert pool.pick(dataset.query("demo-sql-0001"), 1)[0].source == "query demo-sql-0002"


def _draft(workspace: Path, pairs: list[tuple[str, str]]) -> None:
    items = []
    for question, sql in pairs:
        item = SampledQuery(template_id="t1", database="university", sql=sql,
                            difficulty="easy", bindings={}, time=None, reference_date=None,
                            result_preview=((1,),), n_rows=1)
        items.append((item, Written([WrittenQuestion(question, "plain")]),
                      [Verdict(True)], [None]))
    with Draft.create(workspace, "d1", templates=[], items=items,
                      meta={"dataset": "demo-sql"}) as draft:
        draft.review([1, 2, 3], "accepted")
        draft.review([4], "rejected")


def test_few_shot_pairs_come_from_the_builders_accepted_pairs(tmp_path: Path) -> None:
    dataset = load_dataset("demo-sql", load_settings(tmp_path))
    _draft(tmp_path, [("How many students are there?", "SELECT COUNT(*) FROM students"),
                      ("How many students have a GPA above 3.4?",  # demo-sql-0001 itself
                       "SELECT COUNT(*) FROM students WHERE gpa > 3.4"),
                      ("List every course.", "SELECT title FROM courses"),
                      ("Rejected pair", "SELECT 1")])
    pool = FewShotPool.build(dataset, tmp_path)
    assert pool.source("university") == "benchmark builder drafts"
    assert pool.source("hospital") == "the dataset's other queries"
    picked = pool.pick(dataset.query("demo-sql-0001"), 5)
    assert [e.source for e in picked] == ["draft d1, pair 1", "draft d1, pair 3"]
    same_sql = Query("x", "Another wording", None, (("university", "students"),),
                     "university", sql="select count(*)  from STUDENTS")
    assert [e.source for e in pool.pick(same_sql, 5)] == ["draft d1, pair 2",
                                                          "draft d1, pair 3"]


# --- the answer step ----------------------------------------------------------------------------

def test_the_heuristic_answer_is_a_template_and_scored() -> None:
    assert template_answer({"columns": ["n"], "rows": [[12]], "n_rows": 1}) == \
        "The answer is 12."
    assert template_answer({"columns": ["a", "b"], "rows": [[1, "x"]], "n_rows": 1}) == \
        "The answer is a 1, b x."
    assert template_answer({"columns": ["name"], "rows": [["A"], ["B"]] * 3, "n_rows": 6}) \
        == "The result has 6 rows: A, B, A, B, A and 1 more."
    assert template_answer({"columns": ["n"], "rows": [], "n_rows": 0}) == "No rows match."
    assert score_answer("The answer is 12.", None) == {"reference": None, "bleu": None,
                                                       "rouge_l": None}
    scored = score_answer("The answer is 12.", "The answer is 12.")
    assert scored["bleu"] == pytest.approx(100.0) and scored["rouge_l"] == pytest.approx(1.0)
    # ROUGE-L: LCS "there are 12" = 3 of 4 and 3 of 3 tokens: F = 2·0.75·1/1.75
    assert score_answer("there are 12", "There are 12 students")["rouge_l"] == \
        pytest.approx(2 * 0.75 / 1.75)


# --- Table 2 ------------------------------------------------------------------------------------

def _outcomes(right: list[bool], ms: list[float], cached: list[bool] | None = None) -> dict:
    cached = cached or [False] * len(right)
    return {f"q{i}": {"ea": r, "alt": False, "ms": m, "cached": c, "tokens_in": 100 + i,
                      "tokens_out": 10, "bleu": None, "rouge_l": None}
            for i, (r, m, c) in enumerate(zip(right, ms, cached, strict=True))}


def test_table_2_on_hand_made_outcomes() -> None:
    variants = sql_ablation_variants(3)
    configs = sql_ablation_configs("demo-sql", "bm25", "openai", variants)
    base = [True] * 8 + [False] * 2
    no_shots = [False] * 6 + [True] * 2 + [False] * 2      # b = 6, c = 0
    no_notes = [False] + [True] * 7 + [True] + [False]     # b = 1, c = 1
    ms = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]
    runs = [SimpleNamespace(run_id=f"r{i}") for i in range(4)]
    outcomes = (VariantOutcome(variants[0], configs[0], runs[0], _outcomes(base, ms)),
                VariantOutcome(variants[1], configs[1], runs[1], _outcomes(no_shots, ms)),
                VariantOutcome(variants[2], configs[2], runs[2], _outcomes(
                    no_notes, ms, [True] * 6 + [False] * 4)),
                VariantOutcome(variants[3], configs[3], None))
    frame = SqlAblation("demo-sql", "bm25", "openai", outcomes).table()
    assert list(frame.columns) == [*TABLE2_COLUMNS, "open"]
    assert list(frame["variant"]) == ["Text-to-SQL System", "[-] Few Shot Examples",
                                      "[-] Schema Annotation", "[-] CoT"]
    assert list(frame["Overall Acc"][:3]) == [0.8, 0.2, 0.8]
    assert frame["Error"][1] == pytest.approx(0.8)
    # linear percentiles of 1..10 s: P50 = 5.5, P90 = 9.1; of the uncached 7..10 s:
    # 8.5 and 9.7
    assert frame["P50 s"][0] == pytest.approx(5.5) and frame["P90 s"][0] == pytest.approx(9.1)
    assert frame["P50 s"][2] == pytest.approx(8.5) and frame["P90 s"][2] == pytest.approx(9.7)
    assert frame["tokens in"][0] == pytest.approx(104.5)
    # exact McNemar: b=6, c=0 -> 2/64 = 0.03125; b=c=1 -> 1; Holm over 2 -> 0.0625, 1
    assert frame["p vs base"][1] == pytest.approx(0.0625)
    assert frame["p vs base"][2] == pytest.approx(1.0)
    assert frame["p vs base"].isna()[0] and frame["p vs base"].isna()[3]
    assert frame["queries"][3] == 0 and frame["open"][0] == "query?run=r0"


def test_the_ablation_runs_on_demo_sql_with_the_heuristic(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset("demo-sql", settings)
    report = load_sql_ablation(store, dataset, "bm25", "heuristic", limit=20)
    assert len(report.missing()) == 4
    run_sql_variants(store, settings, dataset, report.missing())
    report = load_sql_ablation(store, dataset, "bm25", "heuristic", limit=20)
    assert report.missing() == []
    frame = report.table()
    assert list(frame.columns) == [*TABLE2_COLUMNS, "open"]
    runs = [store.get_run(r) for r in frame["run_id"]]
    assert [r.config.generation.prompt_options for r in runs] == [
        ("fewshot=3", "annotations", "cot"), ("annotations", "cot"), ("fewshot=3", "cot"),
        ("fewshot=3", "annotations")]
    # the heuristic reads no prompt: every row is the same, 9 of 20 execution matches
    # and 1 alternative reading (the run's own metrics say the same)
    assert list(frame["EA"]) == [0.45] * 4 and list(frame["Alt"]) == [0.05] * 4
    assert runs[0].metrics["execution_accuracy"] == pytest.approx(0.45)
    assert list(frame["p vs base"][1:]) == [1.0, 1.0, 1.0]
    assert frame["tokens in"].isna().all() and list(frame["queries"]) == [20] * 4
    assert any("prompt toggles do not apply" in n for n in report.notes)
    assert any("no column descriptions" in n for n in report.notes)
    record = next(store.iter_results(runs[0].run_id)).generation
    assert len(record["few_shot"]) == 3 and "nl_answer" not in record
    # complete variants are reused, not run again
    run_sql_variants(store, settings, dataset, [v.config for v in report.variants])
    assert len(store.list_runs(dataset="demo-sql")) == 4


# --- the prompts an LLM is sent -----------------------------------------------------------------

def _annotated_copy(tmp_path: Path) -> Path:
    """demo-sql with column descriptions on airline's `flights` and a reference answer
    on demo-sql-0099 (the first query of the seeded sample of 3)."""
    folder = tmp_path / "demo-sql-notes"
    shutil.copytree(Path(__file__).parents[1] / "data/demo/demo-sql", folder)
    (folder / "dataset.json").write_text(json.dumps({"name": "demo-sql-notes",
                                                      "task": "sql"}))
    lines = []
    for line in (folder / "corpus.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["table_id"] == "flights":
            record["context"]["column_descriptions"] = {"origin": "IATA departure airport"}
        lines.append(json.dumps(record))
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    lines = []
    for line in (folder / "queries.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["query_id"] == "demo-sql-0099":
            record["reference_answer"] = ANSWER
        lines.append(json.dumps(record))
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def _responder(body: dict) -> str:
    user = body["messages"][-1]["content"]
    if user.startswith("A question was answered"):
        return ANSWER
    return f"<reasoning>flights from BOS to SFO</reasoning>\n```sql\n{FLIGHTS_SQL}\n```"


def test_an_llm_is_sent_the_pairs_annotations_and_cot(tmp_path: Path, fake_openai: FakeOpenAI,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    for name in ("TARGET_OPENAI_TIMEOUT", "TARGET_DATASETS", "TARGET_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    fake_openai.chat_responder = _responder
    folder = _annotated_copy(tmp_path)
    argv = ["run", "--dataset", str(folder), "--retriever", "bm25", "--generator", "openai",
            "--prompt-set", "seed002", "--limit", "3", "--json", "--workspace",
            str(tmp_path / "ws")]
    settings = load_settings(tmp_path / "ws")
    dataset = load_dataset(str(folder), settings)
    config = RunConfig(dataset=str(folder), retriever="bm25", limit=3, generation=(
        GenerationConfig("openai", context=("oracle"), prompt_set="seed002",
                         prompt_options=("fewshot=2", "annotations", "cot", "answer"))))
    from target_core.engine.runner import run_retrieval

    run = run_retrieval(config, settings=settings).run
    sql_requests = [r.body for r in fake_openai.chat_requests()
                    if r.body["messages"][0]["content"] == FIGURE4_SYSTEM]
    assert len(sql_requests) == 3
    for body in sql_requests:
        assert "response_format" not in body  # prose: no JSON schema forcing a reasoning
        user = body["messages"][1]["content"]
        assert "Think step-by-step to generate the SQL query:" in user
        assert user.count("<example>") == 2
    store = RunStore.in_workspace(settings.workspace)
    results = {r.query_id: r.generation for r in store.iter_results(run.run_id)}
    for query_id, record in results.items():
        query = dataset.query(query_id)
        user = next(b["messages"][1]["content"] for b in sql_requests
                    if f"<query>\n{query.query}\n</query>" in b["messages"][1]["content"])
        for source in record["few_shot"]:
            shot = dataset.query(source.removeprefix("query "))
            assert f"Question: {shot.query}\nSQL:\n```sql\n{shot.sql}\n```" in user
            assert shot.query_id != query_id
        if query.database_id == "airline":
            assert "-- Columns:\n-- - origin: IATA departure airport" in user
        assert record["sql"]["database_id"] == query.database_id
    first = results["demo-sql-0099"]
    assert first["answer"] == FLIGHTS_SQL
    assert first["reasoning"] == "flights from BOS to SFO"
    assert first["sql"]["flags"]["execution_match"]
    assert first["nl_answer"]["text"] == ANSWER
    assert first["nl_answer"]["bleu"] == pytest.approx(100.0)
    assert results["demo-sql-0195"]["nl_answer"]["bleu"] is None  # no reference answer
    answer_requests = [r.body for r in fake_openai.chat_requests()
                       if r.body["messages"][1]["content"].startswith("A question was")]
    assert len(answer_requests) == 1  # the other two ran flights SQL on other databases
    assert results["demo-sql-0195"]["nl_answer"]["error"] == (
        "the generated SQL did not run: nothing to phrase")
    assert any("columns: flight_number, departure_date):\n" in b["messages"][1]["content"]
               for b in answer_requests)
    # without toggles the same set sends no examples and no CoT
    assert main(argv) == 0
    capsys.readouterr()
    plain = [r.body["messages"][1]["content"] for r in fake_openai.chat_requests()][-3:]
    assert all("<example>" not in u and "Think step-by-step" not in u for u in plain)


# --- CLI and page -------------------------------------------------------------------------------

def test_the_cli_prints_table_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sql-ablate", "--dataset", "demo-sql", "--limit", "5", "--workspace",
            str(tmp_path)]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [v["variant"] for v in report["variants"]][0] == "Text-to-SQL System"
    assert all(v["queries"] == 5 for v in report["variants"])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Seed 002's Table 2 on demo-sql: bm25 → heuristic" in out
    assert "note: heuristic: prompt toggles do not apply" in out
    assert main([*argv, "--few-shot", "0"]) == 2
    assert "few-shot examples: 0 is not a number from 1 to 20" in capsys.readouterr().err


def test_the_ablations_page_shows_table_2(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset("demo-sql", settings)
    configs = sql_ablation_configs("demo-sql", "bm25", "heuristic",
                                   sql_ablation_variants(3), limit=5)
    run_sql_variants(store, settings, dataset, configs[:2])
    at = app("pages/ablations.py", dataset="demo-sql", retriever="bm25", limit="5")
    assert "Seed 002: text-to-SQL prompt ablation (Table 2)" in [h.value for h in at.subheader]
    assert any("prompt toggles do not apply" in w.value for w in at.warning)
    button = next(b for b in at.button if b.key == "sql-ablation-run")
    assert button.label == "Run 2 missing variant(s)"
    table = next(d.value for d in at.dataframe if "Overall Acc" in d.value.columns)
    assert list(table["variant"][:2]) == ["Text-to-SQL System", "[-] Few Shot Examples"]
    assert table["queries"].tolist() == [5, 5, 0, 0]


def test_detach_launches_the_missing_variants_as_jobs(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    from jobs_support import wait_for_jobs

    settings = load_settings(tmp_path)
    configs = sql_ablation_configs("demo-sql", "bm25", "heuristic", sql_ablation_variants(3),
                                   limit=3)
    run_sql_variants(RunStore.in_workspace(tmp_path), settings,
                     load_dataset("demo-sql", settings), configs[:3])
    argv = ["sql-ablate", "--dataset", "demo-sql", "--limit", "3", "--workspace",
            str(tmp_path), "--detach"]
    assert main(argv) == 0
    assert len(capsys.readouterr().out.split()) == 1  # one job id: the [-] CoT variant
    assert [j.status for j in wait_for_jobs(tmp_path)] == ["done"]
    assert main(argv) == 0
    assert "every variant is stored (4 runs)" in capsys.readouterr().err
