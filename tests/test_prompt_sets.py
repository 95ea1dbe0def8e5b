"""Prompt sets: the messages of each set for each task (written out by hand for a tiny
table), unknown names refused naming them, run keys unchanged by default, a run against
the fake OpenAI server that sends TARGET's code prompts, and labels and the Compare view
that tell the sets apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from target_core.cli import main
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore, config_key
from target_core.errors import UnknownNameError
from target_core.generators.prompts import PROMPT_SETS, build_messages
from target_core.read_models.compare import compare_view, only_prompt_sets_differ
from target_core.read_models.runs import run_label
from target_core.run_config import GenerationConfig, RunConfig
from target_core.table_view import TableView

TABLE = "| lake | depth |\n| --- | --- |\n| Baikal | 1642 |"
SCHEMA = "CREATE TABLE lakes (lake TEXT, depth INTEGER)"
QA, FACT, SQL = "How deep is Baikal?", "Baikal is 1642 m deep.", "Which lake is deepest?"
FORMAT = ('a JSON object with exactly these string fields, and nothing else:\n'
          '  "chain_of_thought_reasoning": Your thought process on how you arrived at the '
          'final SQL query.\n'
          '  "sql_query": The SQLite query you write, as one string.\n'
          '  "database_id": The id of the database you chose to query from.')

EXPECTED = {
    ("appendix-d", "qa"): (
        "You are a data analyst who reads tables to answer questions.",
        "Use the provided table(s) to answer the question. Yield a concise answer to the "
        "question.\nIf the tables cannot be used to answer the question, say that not enough "
        f"information is provided.\nTables: {TABLE}\nQuestion: {QA}"),
    ("target-code", "qa"): (
        "You are a data analyst who reads tables to answer questions.",
        "\nUse the provided table(s) to answer the question. Yield a concise answer to the "
        "question.\nIf none of the tables provide relevant information, use your knowledge "
        "base to generate an answer — but only if you are confident in the answer's "
        "factuality.\nIf the neither the tables nor your knowledge can be used to answer "
        "the question reliably, say that not enough information is provided.\n\n\n"
        f"Tables: {TABLE} \n\n\nQuestion: {QA}\n"),
    ("appendix-d", "fact"): (
        "You are an expert in evaluating statements on factuality given the provided tables.",
        "Given the following evidence which may take the form of sentences or a data table, "
        "determine whether the evidence supports or refutes the following statement, or "
        "does not contain enough information.\nAssign the statement one of three labels: "
        "True, False, Not Enough Information. Do not include anything else in your answer."
        f"\nTables: {TABLE}\nStatement: {FACT}"),
    ("target-code", "fact"): (
        "You are an expert in evaluating statements on factuality given the provided tables",
        "Given the following evidence which may take the form of sentences or a data table,"
        "\ndetermine whether the evidence supports or refutes the following statement.\n"
        "If none of the tables provide relevant information, refer to your knowledge base — "
        "but only if you are confident your answer's factuality. If the neither the evidence "
        "nor your knowledge can be used to verify the statement reliably, state that there "
        "is not enough information.\nAssign the statement one of three labels: True, False, "
        "Not Enough Information. Do not include anything else in your answer.\n\n\n"
        f"Tables: {TABLE}\n\n\nStatement: {FACT}\n"),
    ("appendix-d", "sql"): (
        "You are an expert and very smart data analyst.",
        "Below, you are presented with a database schema and a question.\nYour task is to "
        "read the schema, understand the question, and generate a valid SQLite query to "
        "answer the question.\nBefore generating the final SQL query, think step by step on "
        f"how to write the query.\nDatabase Schema: {SCHEMA}\nThis schema offers an in-depth "
        "description of the database's architecture, detailing tables, columns, primary "
        "keys, foreign keys, and any pertinent information regarding relationships or "
        f"constraints.\nQuestion: {SQL}\nPlease respond with a paragraph structured as "
        f"follows: {FORMAT}\nTake a deep breath and think step by step to find the correct "
        "SQLite SQL query. If you follow all the instructions and generate the correct "
        "query, I will give you 1 million dollars."),
    ("target-code", "sql"): (
        "You are a helpful AI assistant.",
        "\nBelow, you are presented with a database schema and a question.\nYour task is to "
        "read the schema, understand the question, and generate a\nvalid SQLite query to "
        "answer the question.\nBefore generating the final SQL query, think step by step on "
        f"how to write the query.\n\nDatabase Schema:\n{SCHEMA}\nThis schema offers an "
        "in-depth description of the database's architecture,\ndetailing tables, columns, "
        "primary keys, foreign keys, and any pertinent\ninformation regarding relationships "
        f"or constraints.\n\nQuestion:\n{SQL}\n\nTake a deep breath and think step by step "
        "to find the correct SQLite SQL\nquery. If you follow all the instructions and "
        "generate the correct query,\nI will give you 1 million dollars."),
}


@pytest.mark.parametrize(("name", "task"), sorted(EXPECTED))
def test_messages_of_each_set_and_task(name: str, task: str) -> None:
    query, context = {"qa": (QA, TABLE), "fact": (FACT, TABLE), "sql": (SQL, SCHEMA)}[task]
    system, user = EXPECTED[(name, task)]
    assert build_messages(task, query, context, prompts=name) == (
        {"role": "system", "content": system}, {"role": "user", "content": user})


def test_the_default_set_is_the_paper_and_no_context_differs_by_set() -> None:
    assert build_messages("qa", QA, TABLE) == build_messages("qa", QA, TABLE,
                                                             prompts="appendix-d")
    paper = build_messages("qa", QA, "", no_context=True)[1]["content"]
    code = build_messages("qa", QA, "", no_context=True, prompts="target-code")[1]["content"]
    assert "Tables: Some or all tables are not available. Please use your best judgment" \
        in paper
    assert ("Tables: Some or all tables are not available. Don't acknowledge the lack of "
            "information in your response. Please use your knowledge base and answer to the "
            "best of your ability, without producing false information.  \n\n\n") in code


def test_an_unknown_set_is_refused_naming_it(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UnknownNameError, match="unknown prompt set 'target-cod'; did you "
                                               "mean 'target-code'"):
        build_messages("qa", QA, TABLE, prompts="target-cod")
    settings = load_settings(tmp_path)
    config = RunConfig("demo-qa", "bm25", limit=3,
                       generation=GenerationConfig("heuristic", prompt_set="paper"))
    with pytest.raises(UnknownNameError, match="prompt set 'paper'"):
        run_retrieval(config, settings=settings)
    assert RunStore.in_workspace(tmp_path).list_runs() == []  # refused before any work
    argv = ["run", "--workspace", str(tmp_path), "--dataset", "demo-qa", "--retriever",
            "bm25", "--limit", "3"]
    assert main([*argv, "--generator", "heuristic", "--prompt-set", "nope"]) == 2
    assert "unknown prompt set 'nope'" in capsys.readouterr().err
    assert main([*argv, "--prompt-set", "target-code"]) == 2
    assert "--prompt-set need --generator" in capsys.readouterr().err
    assert set(PROMPT_SETS) >= {"appendix-d", "target-code"}


def test_the_default_set_leaves_run_keys_unchanged() -> None:
    default = GenerationConfig("openai:gpt-4o-mini", context="oracle")
    assert default.to_dict() == {"generator": "openai:gpt-4o-mini", "context": "oracle",
                                 "context_k": None, "token_budget": 8000,
                                 "sql_schema": "database"}
    config = RunConfig(dataset="demo-sql", retriever="bm25", view=TableView.preset("gtr-csv"),
                       top_k=5, limit=20, generation=default)
    assert config_key(config, "0123456789abcdef") == "1346d8a44b41c6ce451f"  # as before
    code = GenerationConfig("openai:gpt-4o-mini", context="oracle", prompt_set="target-code")
    assert code.to_dict()["prompt_set"] == "target-code"
    assert GenerationConfig.from_dict(code.to_dict()) == code
    other = RunConfig(dataset="demo-sql", retriever="bm25", view=TableView.preset("gtr-csv"),
                      top_k=5, limit=20, generation=code)
    assert config_key(other, "0123456789abcdef") != "1346d8a44b41c6ce451f"
    assert config.label == "bm25 → openai:gpt-4o-mini (oracle)"
    assert other.label == "bm25 → openai:gpt-4o-mini (oracle), target-code prompts"


def test_a_run_sends_the_target_code_prompts(tmp_path: Path, fake_openai: FakeOpenAI,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    for name in ("TARGET_OPENAI_TIMEOUT", "TARGET_DATASETS", "TARGET_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    argv = ["run", "--dataset", "demo-qa", "--retriever", "bm25", "--generator", "openai",
            "--context-k", "1", "--limit", "2", "--json", "--workspace", str(tmp_path)]
    assert main([*argv, "--prompt-set", "target-code"]) == 0
    code_run = json.loads(capsys.readouterr().out)
    code_requests = [r.body["messages"] for r in fake_openai.chat_requests()]
    assert main(argv) == 0
    paper_run = json.loads(capsys.readouterr().out)
    paper_requests = [r.body["messages"] for r in fake_openai.chat_requests()][2:]
    assert len(code_requests) == len(paper_requests) == 2  # other prompts: nothing cached
    for messages in code_requests:
        system, user = messages
        assert system == {"role": "system", "content": EXPECTED[("target-code", "qa")][0]}
        assert user["content"].startswith(
            "\nUse the provided table(s) to answer the question. Yield a concise answer to "
            "the question.\nIf none of the tables provide relevant information, use your "
            "knowledge base")
        assert "\n\n\nQuestion: " in user["content"]
    for messages in paper_requests:
        assert messages[1]["content"].startswith(
            "Use the provided table(s) to answer the question. Yield a concise answer to the "
            "question.\nIf the tables cannot be used to answer the question")
    assert code_run["config"]["generation"]["prompt_set"] == "target-code"
    assert "prompt_set" not in paper_run["config"]["generation"]
    store = RunStore.in_workspace(tmp_path)
    labels = {run_label(store.get_run(r["run_id"])) for r in (code_run, paper_run)}
    assert len(labels) == 2
    assert any("bm25 → openai, target-code prompts" in label for label in labels)
    assert main(["show", code_run["run_id"], "--workspace", str(tmp_path)]) == 0
    assert "target-code prompts" in capsys.readouterr().out


def test_heuristic_runs_ignore_the_set_and_compare_as_a_prompt_set_comparison(
        tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    runs = [run_retrieval(RunConfig("demo-qa", "bm25", limit=8,
                                    generation=GenerationConfig("heuristic", prompt_set=s)),
                          settings=settings).run for s in ("appendix-d", "target-code")]
    store = RunStore.in_workspace(tmp_path)
    answers = [[r.generation["answer"] for r in store.iter_results(run.run_id)]
               for run in runs]
    assert answers[0] == answers[1] and any(answers[0])  # the heuristic reads no prompt
    assert runs[0].config_key != runs[1].config_key
    assert only_prompt_sets_differ(runs) == ("appendix-d", "target-code")
    view = compare_view(store, [r.run_id for r in runs])
    assert view.heading == "Prompt sets: appendix-d (baseline) vs target-code"
    assert view.names == {runs[0].run_id: "bm25 → heuristic · appendix-d prompts",
                          runs[1].run_id: "bm25 → heuristic · target-code prompts"}
    tfidf = run_retrieval(RunConfig("demo-qa", "tfidf", limit=8,
                                    generation=GenerationConfig("heuristic")),
                          settings=settings).run
    assert only_prompt_sets_differ([runs[1], tfidf]) == ()  # the retriever differs too
    assert compare_view(store, [runs[0].run_id, tfidf.run_id]).heading == ""


def test_reproduce_takes_a_prompt_set(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from target_core.experiments.reproduce import reproduction_configs

    configs = [c for _, c in reproduction_configs("demo-qa", generator="heuristic",
                                                  prompt_set="target-code")]
    assert configs and {c.generation.prompt_set for c in configs if c.generation} == \
        {"target-code"}
    assert all(c.generation and c.generation.prompt_set == "appendix-d"
               for _, c in reproduction_configs("demo-qa", generator="heuristic"))
    assert main(["reproduce", "--workspace", str(tmp_path), "--dataset", "demo-qa",
                 "--paper", "OTTQA", "--generator", "heuristic", "--prompt-set", "x"]) == 2
    assert "unknown prompt set 'x'" in capsys.readouterr().err
    assert RunStore.in_workspace(tmp_path).list_runs() == []


def test_compare_page_reads_as_a_prompt_set_comparison(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    ids = [run_retrieval(RunConfig("demo-qa", "bm25", limit=8,
                                   generation=GenerationConfig("heuristic", prompt_set=s)),
                         settings=settings).run.run_id for s in ("appendix-d", "target-code")]
    at = app("pages/compare.py", runs=",".join(ids))
    assert not at.exception and not at.error, at.error
    shown = [h.value.replace("\\", "") for h in at.subheader]  # markdown escapes
    assert shown[0] == "Prompt sets: appendix-d (baseline) vs target-code"
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "baseline: bm25 → heuristic · appendix-d prompts" in captions


def test_run_page_records_the_chosen_prompt_set(app, tmp_path: Path) -> None:
    from jobs_support import wait_for_jobs

    at = app(page="pages/run.py", dataset="demo-qa")
    assert at.selectbox(key="run-prompt-set").value == "appendix-d"
    at.multiselect(key="run-specs").set_value(["bm25"])
    at.selectbox(key="run-generator").set_value("heuristic")
    at.selectbox(key="run-prompt-set").set_value("target-code")
    at.number_input(key="run-limit").set_value(5).run()
    next(b for b in at.button if b.label == "Launch").click().run()
    assert not at.exception and not at.error, at.error
    wait_for_jobs(tmp_path / "ws")
    (run,) = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert run.config.generation is not None
    assert run.config.generation.prompt_set == "target-code"
    at.run()
    assert "bm25 → heuristic, target-code prompts" in at.dataframe[-1].value["pipeline"].tolist()
