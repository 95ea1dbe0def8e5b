"""GTR's answer metrics (seed 001): ROUGE-1/2/L P/R/F worked out by hand, SAS against a
direct numpy cosine of the real MiniLM vectors, the run-level means, the truthfulness
judge (the offline stand-in, and an LLM on the fake OpenAI server, a malformed reply a
failed judgement), the `judge` command, and the metrics where sacreBLEU shows: the
leaderboard, the runs list, `show`, the Query page and the Compare page's Figure 3."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from target_core.config import load_settings
from target_core.engine.store import RunStore
from target_core.metrics.gtr import (
    aggregate_gtr,
    gtr_query_metrics,
    reply_tokens,
    rouge_scores,
    sas_scores,
)
from target_core.read_models.text_width import text_px
from target_core.run_config import GenerationConfig, RunConfig

# --- ROUGE by hand ----------------------------------------------------------------------------


def test_rouge_of_a_symmetric_pair_by_hand() -> None:
    # hyp: the cat sat on the mat / ref: the cat lay on the mat (6 tokens each)
    # unigrams: the×2, cat, on, mat shared = 5; bigrams: the-cat, on-the, the-mat = 3 of 5
    # LCS: the cat on the mat = 5
    scores = rouge_scores("The cat sat on the mat.", "the cat lay on the mat")
    assert scores == pytest.approx({
        "rouge1_p": 5 / 6, "rouge1_r": 5 / 6, "rouge1_f": 5 / 6,
        "rouge2_p": 3 / 5, "rouge2_r": 3 / 5, "rouge2_f": 3 / 5,
        "rougeL_p": 5 / 6, "rougeL_r": 5 / 6, "rouge_l": 5 / 6})


def test_rouge_precision_is_over_the_answer_and_recall_over_the_reference() -> None:
    # hyp: paris is the capital (4) / ref: the capital of france is paris (6)
    # unigrams: 4 shared -> P 4/4, R 4/6; bigrams: only the-capital -> P 1/3, R 1/5,
    # F = 2·(1/3)(1/5)/(1/3 + 1/5) = 1/4; LCS "the capital" = 2 -> P 2/4, R 2/6, F 0.4
    scores = rouge_scores("Paris is the capital", "The capital of France is Paris")
    assert scores == pytest.approx({
        "rouge1_p": 1.0, "rouge1_r": 4 / 6, "rouge1_f": 0.8,
        "rouge2_p": 1 / 3, "rouge2_r": 1 / 5, "rouge2_f": 0.25,
        "rougeL_p": 0.5, "rougeL_r": 1 / 3, "rouge_l": 0.4})


def test_query_metrics_of_an_answer_and_of_a_failed_generation() -> None:
    from target_core.tokens import get_counter

    values = gtr_query_metrics("Paris is the capital", "The capital of France is Paris",
                               failed=False, ms=12.5)
    assert values["rouge1_p"] == 1.0 and values["response_ms"] == 12.5
    assert "rouge_l" not in values  # per_query_downstream gives ROUGE-L F
    assert values["reply_tokens"] == get_counter().count("Paris is the capital") == 4
    assert reply_tokens("") == 0
    failed = gtr_query_metrics("", "anything", failed=True, ms=None)
    assert set(failed.values()) == {0.0} and "response_ms" not in failed


# --- SAS ---------------------------------------------------------------------------------------

def test_sas_is_the_rowwise_cosine() -> None:
    answers = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0], [1.0, 1.0]])
    references = np.array([[1.0, 1.0], [3.0, 4.0], [1.0, 0.0], [1.0, 1.0]])
    assert sas_scores(answers, references, [False, False, False, True]) == pytest.approx(
        [1 / math.sqrt(2), 1.0, 0.0, 0.0])  # a zero vector and an empty text score 0
    with pytest.raises(ValueError, match=r"\(2, 2\).*\(1, 2\)"):
        sas_scores(answers[:2], references[:1])


def test_sas_of_minilm_vectors_equals_a_numpy_cosine() -> None:
    from target_core.embeddings import get_embedder
    from target_core.engine.answer_scores import sas_of

    answers = ["Paris is the capital of France.", "It was 1998.", ""]
    references = ["The capital of France is Paris", "The bridge opened in 1998", "x"]
    got = sas_of(answers, references)
    vectors = get_embedder("minilm", load_settings()).embed(answers[:2] + references[:2],
                                                            kind="document")
    a, r = vectors[:2].astype(np.float64), vectors[2:].astype(np.float64)
    want = [float(a[i] @ r[i] / np.linalg.norm(a[i]) / np.linalg.norm(r[i])) for i in range(2)]
    assert got is not None and got[:2] == pytest.approx(want, abs=1e-6)
    assert got[2] == 0.0 and 0.5 < got[0] < 1.0 and got[0] > got[1]


def test_run_level_means_and_response_time_over_real_calls() -> None:
    rows = [{"rouge1_p": 1.0, "reply_tokens": 4.0, "sas": 0.5, "response_ms": 10.0},
            {"rouge1_p": 0.5, "reply_tokens": 8.0, "sas": 0.25, "response_ms": 30.0},
            {"rouge1_p": 0.0, "reply_tokens": 0.0, "response_ms": 0.1}]
    values = aggregate_gtr(rows, cached=[False, False, True])
    assert values == pytest.approx({"rouge1_p": 0.5, "reply_tokens": 4.0,
                                    "response_ms_mean": 20.0})  # sas: not on every row
    assert aggregate_gtr([]) == {}


# --- a QA run end to end -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def qa_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """bm25 and tfidf with the heuristic generator on 12 demo-qa queries."""
    from target_core.engine.runner import run_retrieval

    workspace = tmp_path_factory.mktemp("gtr") / "ws"
    settings = load_settings(workspace)
    ids = [run_retrieval(RunConfig("demo-qa", spec, limit=12,
                                   generation=GenerationConfig("heuristic")),
                         settings=settings).run.run_id for spec in ("bm25", "tfidf")]
    return workspace, ids


def test_a_qa_run_stores_gtr_metrics_per_query_and_their_means(qa_runs) -> None:
    from target_core.datasets import load_dataset
    from target_core.metrics.answers import answer_text

    workspace, (run_id, _) = qa_runs
    store = RunStore.in_workspace(workspace)
    run = store.get_run(run_id)
    dataset = load_dataset("demo-qa", load_settings(workspace))
    results = list(store.iter_results(run_id))
    assert len(results) == 12
    for result in results:
        generation = result.generation or {}
        reference = answer_text(dataset.query(result.query_id).answer)
        want = rouge_scores(generation["answer"], reference)
        assert {k: result.metrics[k] for k in want} == pytest.approx(want)
        assert result.metrics["reply_tokens"] == reply_tokens(generation["answer"])
        assert result.metrics["response_ms"] == generation["ms"]
        assert -1.0 <= result.metrics["sas"] <= 1.0
    for name in ("rouge1_p", "rouge2_r", "rougeL_p", "sas", "reply_tokens"):
        assert run.metrics[name] == pytest.approx(np.mean([r.metrics[name] for r in results]))
    assert run.metrics["response_ms_mean"] == pytest.approx(
        np.mean([r.generation["ms"] for r in results if r.generation]))


def test_gtr_columns_beside_sacrebleu_on_the_leaderboard_and_runs_list(qa_runs) -> None:
    from target_core.analysis.leaderboard import leaderboard
    from target_core.read_models.runs import runs_table

    workspace, (run_id, _) = qa_runs
    runs = RunStore.in_workspace(workspace).list_runs()
    board = leaderboard(runs)
    columns = [metric for _, metric in board.table.columns]
    assert {"SB", "R-1 P", "R-2 P", "R-L P", "SAS (MiniLM cosine)", "reply tokens",
            "response ms"} <= set(columns)
    assert not board.best[("demo-qa", "reply tokens")].any()  # no better direction
    from target_core.read_models.overview import display_table

    shown = display_table(board)
    tokens = board.table[("demo-qa", "reply tokens")].iloc[0]
    assert shown[("demo-qa", "reply tokens")].iloc[0] == f"{tokens:.1f}"
    assert shown[("demo-qa", "SAS (MiniLM cosine)")].iloc[0].startswith("0.")
    table = runs_table(runs).set_index("run_id")
    run = RunStore.in_workspace(workspace).get_run(run_id)
    assert table.loc[run_id, "SAS (MiniLM cosine)"] == f"{run.metrics['sas']:.3f}"
    assert "truthful" not in table.columns  # not judged yet: no blank column


def test_the_run_page_lists_gtrs_metrics_in_a_table_of_their_own(qa_runs, app, tmp_path: Path
                                                                   ) -> None:
    """run_list: the run id is the Query link, GTR's metrics move to a second table, the
    retrieval ms and an empty repeat column go, and the widths fit the page's 978 px
    (1,500 px less the sidebar); the Run page shows both tables."""
    import shutil

    from target_core.read_models.runs import run_list

    workspace, ids = qa_runs
    runs = RunStore.in_workspace(workspace).list_runs()
    listed = run_list(runs)
    assert list(listed.runs.columns) == ["run", "pipeline", "view", "k", "status", "queries",
                                         "R@k", "mrr", "answers"]
    assert sorted(listed.runs["run"]) == sorted(f"query?run={i}" for i in ids)
    assert list(listed.answers.columns[:3]) == ["run", "pipeline", "R-1 P"]
    assert "SAS (MiniLM cosine)" in listed.answers.columns
    assert len(listed.answers) == 2
    assert sum(listed.widths.values()) <= 978 and listed.row_height is None
    assert listed.widths["run"] == max(math.ceil(text_px(i) + 20) for i in ids)  # not links
    shutil.copytree(workspace, tmp_path / "ws")
    at = app("pages/run.py", dataset="demo-qa")
    shown = [d.value for d in at.dataframe if "run" in d.value.columns]
    assert [list(f.columns[:2]) for f in shown] == [["run", "pipeline"]] * 2
    assert "R-1 P" in shown[1].columns and "R-1 P" not in shown[0].columns


def test_a_long_view_wraps_in_the_run_list(tmp_path: Path) -> None:
    """An ablation's long view label has its whole width while the list fits the page;
    on a narrower page the view wraps first, just enough, and every row is tall enough
    to show it whole (cells.wrapped_row_height)."""
    from target_core.engine.runner import run_retrieval
    from target_core.read_models.cells import PAGE_PX
    from target_core.read_models.runs import WRAPPED, run_list
    from target_core.table_view import TableView

    settings = load_settings(tmp_path / "ws")
    view = TableView(title=False, section_title=False, rows=0)
    for shown in (TableView(), view):
        run_retrieval(RunConfig("demo-qa", "bm25", view=shown, limit=2), settings=settings)
    listed = run_list(RunStore.in_workspace(tmp_path / "ws").list_runs())
    assert "answers" not in listed.runs.columns and listed.answers.empty  # no generator
    # the list fits without wrapping: each label has its whole width
    assert listed.widths["view"] == math.ceil(text_px(view.label) + 20)
    assert listed.row_height is None and sum(listed.widths.values()) <= PAGE_PX
    narrow = run_list(RunStore.in_workspace(tmp_path / "ws").list_runs(),
                      page_px=sum(listed.widths.values()) - 30)
    assert narrow.widths["view"] == listed.widths["view"] - 30 >= WRAPPED["view"]
    assert narrow.row_height is not None and narrow.row_height >= 2 * 20


# --- the judge ---------------------------------------------------------------------------------

def _fresh_run(tmp_path: Path, limit: int = 4) -> tuple[Path, str]:
    from target_core.engine.runner import run_retrieval

    workspace = tmp_path / "ws"
    run = run_retrieval(RunConfig("demo-qa", "bm25", limit=limit,
                                  generation=GenerationConfig("heuristic")),
                        settings=load_settings(workspace)).run
    return workspace, run.run_id


def test_heuristic_judge_by_rouge1_recall_via_the_cli(tmp_path: Path, capsys) -> None:
    from target_core.cli.main import main
    from target_core.datasets import load_dataset
    from target_core.metrics.answers import answer_text

    workspace, run_id = _fresh_run(tmp_path)
    assert main(["judge", run_id, "--judge", "heuristic", "--workspace", str(workspace),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    store = RunStore.in_workspace(workspace)
    dataset = load_dataset("demo-qa", load_settings(workspace))
    want = {r.query_id: float(rouge_scores(r.generation["answer"], answer_text(
        dataset.query(r.query_id).answer))["rouge1_r"] >= 0.5)
        for r in store.iter_results(run_id) if r.generation}
    got = {r.query_id: r.metrics["truthfulness"] for r in store.iter_results(run_id)}
    assert got == want
    assert out["rated"] == 4 and out["failed"] == 0 and out["truthful"] == sum(want.values())
    assert "offline stand-in" in out["label"]
    run = store.get_run(run_id)
    assert run.metrics["truthfulness"] == pytest.approx(sum(want.values()) / 4)
    assert run.metrics["truthfulness_n"] == 4
    rows = store.judgements(run_id)
    assert {r["judge"] for r in rows} == {"heuristic"} and len(rows) == 4
    # `show` carries it with the other metrics
    assert main(["show", run_id, "--workspace", str(workspace), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["metrics"]
    assert shown["truthfulness"] == run.metrics["truthfulness"] and "sas" in shown
    assert main(["judge", run_id, "--judge", "nonsense", "--workspace", str(workspace)]) == 2
    assert "nonsense" in capsys.readouterr().err


def test_llm_judge_on_the_fake_server_records_a_malformed_reply_as_failed(
        tmp_path: Path, fake_openai) -> None:
    from target_core.datasets import load_dataset
    from target_core.experiments.judge import TRUTH_RUBRIC, judge_run, make_truth_judge

    workspace, run_id = _fresh_run(tmp_path, limit=3)
    settings = load_settings(workspace, environ={"OPENAI_API_KEY": "sk-test",
                                                 "OPENAI_BASE_URL": fake_openai.base_url})
    replies = iter([{"reason": "matches the reference", "rating": 1},
                    {"reason": "off topic", "rating": 0},
                    {"reason": "unsure", "rating": "maybe"}])
    asked: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> str:
        asked.append(body)
        return json.dumps(next(replies))

    fake_openai.chat_responder = responder
    store = RunStore.in_workspace(workspace)
    judge = make_truth_judge("openai:judge-model", settings)
    judge.concurrency = 1  # replies in query order
    summary = judge_run(store, load_dataset("demo-qa", settings), run_id, judge)
    assert (summary.rated, summary.failed, summary.truthful) == (2, 1, 1)
    prompt = asked[0]["messages"][1]["content"]
    assert TRUTH_RUBRIC in prompt and "<reference answer>" in prompt
    assert asked[0]["max_tokens"] == settings.max_tokens.get("judge", 256)
    ids = [r.query_id for r in store.iter_results(run_id)]
    metrics = dict(store.query_metrics(run_id))
    assert [metrics[q].get("truthfulness") for q in ids] == [1.0, 0.0, None]  # not a 0
    failed = next(r for r in store.judgements(run_id) if r["query_id"] == ids[2])
    assert failed["rating"] is None and "'maybe'" in failed["error"]
    assert failed["label"].startswith("LLM judge (") and "judge-model" in failed["label"]
    run = store.get_run(run_id)
    assert run.metrics["truthfulness"] == 0.5 and run.metrics["truthfulness_failed"] == 1


def _judge_env(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("TARGET_OPENAI_RETRIES", "0")


def test_judge_with_the_server_down_fails_loudly_and_stores_nothing(
        tmp_path: Path, capsys, monkeypatch) -> None:
    """Issue 24: `judge` exited 0 when every call failed, and never showed why."""
    from fake_openai import start_fake_openai

    from target_core.cli.main import main

    workspace, run_id = _fresh_run(tmp_path, limit=3)
    down = start_fake_openai()
    down.stop()  # its port now refuses connections
    _judge_env(monkeypatch, down.base_url)
    code = main(["judge", run_id, "--judge", "openai:judge-model", "--workspace",
                 str(workspace)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "3 of 3 judgements failed (connection 3); the first, query " in err
    store = RunStore.in_workspace(workspace)
    assert store.judgements(run_id) == []  # no failed ratings stored as if judged
    assert "truthfulness_n" not in store.get_run(run_id).metrics
    assert all("truthfulness" not in m for _, m in store.query_metrics(run_id))


def test_failed_judgements_within_the_tolerance_are_stored_and_shown(
        tmp_path: Path, capsys, monkeypatch, fake_openai) -> None:
    """One failure in four (within TARGET_MAX_FAILED_GENERATIONS): stored as today, the
    output names the failure; a rerun asks only the failed call again (cache)."""
    from target_core.cli.main import main

    workspace, run_id = _fresh_run(tmp_path, limit=4)
    _judge_env(monkeypatch, fake_openai.base_url)
    monkeypatch.setenv("TARGET_GENERATION_CONCURRENCY", "1")
    fake_openai.chat_responder = lambda body: json.dumps({"reason": "ok", "rating": 1})
    fake_openai.fail_next(1, "500")
    args = ["judge", run_id, "--judge", "openai:judge-model", "--workspace", str(workspace)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "3 of 3 rated answers truthful (1), 1 failed judgements" in out
    assert "failed judgements (http 1); the first, query " in out and "HTTP 500" in out
    store = RunStore.in_workspace(workspace)
    assert store.get_run(run_id).metrics["truthfulness_failed"] == 1
    asked = len(fake_openai.chat_requests())
    assert main([*args, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["rated"], again["failed"], again["first_error"]) == (4, 0, None)
    assert len(fake_openai.chat_requests()) == asked + 1  # only the failed one again


def test_judge_beyond_the_tolerance_fails_and_its_job_says_why(
        tmp_path: Path, monkeypatch, fake_openai) -> None:
    from target_core.cli.main import main
    from target_core.datasets import load_dataset
    from target_core.engine.jobs import JobStore
    from target_core.experiments.judge import judge_run, make_truth_judge
    from target_core.llm.policy import LLMStepFailed

    workspace, run_id = _fresh_run(tmp_path, limit=4)
    _judge_env(monkeypatch, fake_openai.base_url)
    settings = load_settings(workspace)
    fake_openai.chat_responder = lambda body: json.dumps({"reason": "ok", "rating": 1})
    fake_openai.fail_next(3, "500")
    judge = make_truth_judge("openai:judge-model", settings)
    judge.concurrency = 1  # type: ignore[misc]
    store = RunStore.in_workspace(workspace)
    with pytest.raises(LLMStepFailed, match=r"^3 of 4 judgements failed \(http 3\), more "
                                            r"than the 50% TARGET_MAX_FAILED_GENERATIONS"):
        judge_run(store, load_dataset("demo-qa", settings), run_id, judge,
                  max_failed=settings.max_failed_generations)
    assert store.judgements(run_id) == []
    # the same step as a job (the Query page's): the job ends failed with the reason
    fake_openai.chat_responder = lambda body: "not json at all"
    jobs = JobStore.in_workspace(workspace)
    job = jobs.create_job("judge", {"dataset": "demo-qa", "run_id": run_id,
                                    "judge": "openai:other-model", "limit": None})
    assert main(["worker", job.job_id, "--workspace", str(workspace)]) == 2
    failed = jobs.get(job.job_id)
    assert failed.status == "failed"
    assert failed.error.startswith("4 of 4 judgements failed (")
    assert "the first, query " in failed.error
    assert store.judgements(run_id) == []


# --- pages -------------------------------------------------------------------------------------

def test_compare_page_draws_quality_against_reply_length(app, tmp_path: Path) -> None:
    from target_core.engine.runner import run_retrieval

    settings = load_settings(tmp_path / "ws")
    ids = [run_retrieval(RunConfig("handmade-qa", spec,
                                   generation=GenerationConfig("heuristic")),
                         settings=settings).run.run_id for spec in ("bm25", "tfidf")]
    at = app("pages/compare.py", runs=",".join(ids))
    assert not at.error
    quality = next(s for s in at.selectbox if s.label == "Quality")
    assert quality.options == ["ROUGE-L F", "ROUGE-L P", "SAS (MiniLM cosine)"]
    assert any("GTR's Figure 3" in s.value for s in at.subheader)
    assert any("against its length in o200k tokens" in c.value for c in at.caption)
    headline = at.dataframe[0].value
    assert {"sas", "rougeL_p"} <= set(headline.columns)
    quality.set_value("sas").run()
    assert not at.exception and not at.error
    # the last chart is Figure 3: one trace per run, y the stored per-query SAS
    figure = json.loads(at.get("plotly_chart")[-1].proto.spec)
    traces = figure["data"]
    assert len(traces) == 2
    assert figure["layout"]["yaxis"]["title"]["text"] == "SAS (MiniLM cosine)"
    stored = RunStore.in_workspace(tmp_path / "ws").query_metrics(ids[0])
    assert sorted(_values(traces[0]["y"])) == pytest.approx(sorted(m["sas"] for _, m in stored))
    assert sorted(_values(traces[0]["x"])) == sorted(m["reply_tokens"] for _, m in stored)


def _values(data: Any) -> list[float]:
    """A plotly JSON array: a list, or {"dtype", "bdata"} (base64 of the raw buffer)."""
    if isinstance(data, dict):
        import base64

        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).tolist()
    return list(data)


def test_query_page_shows_gtr_metrics_and_the_judgement(app, tmp_path: Path) -> None:
    from target_core.datasets import load_dataset
    from target_core.engine.runner import run_retrieval
    from target_core.experiments.judge import HeuristicTruthJudge, judge_run
    from target_core.read_models.answer import gtr_note

    settings = load_settings(tmp_path / "ws")
    run_id = run_retrieval(RunConfig("handmade-qa", "bm25",
                                     generation=GenerationConfig("heuristic")),
                           settings=settings).run.run_id
    store = RunStore.in_workspace(tmp_path / "ws")
    judge_run(store, load_dataset("handmade-qa", settings), run_id, HeuristicTruthJudge())
    result = store.get_result(run_id, "q1")
    at = app("pages/query.py", run=run_id, query="q1")
    assert not at.error
    captions = [c.value.replace("\\", "") for c in at.caption]  # plain() escapes markdown
    note = gtr_note(result.metrics)
    assert note.startswith("ROUGE-1 P/R/F ") and "SAS (MiniLM cosine) " in note
    assert any(note in c for c in captions), captions
    rating = "1, relevant" if result.metrics["truthfulness"] else "0, irrelevant"
    assert any(c.startswith(f"Truthfulness {rating} (heuristic (offline stand-in")
               for c in captions), captions


def test_a_judge_job_from_the_query_page_runs_in_a_worker(app, tmp_path: Path,
                                                          monkeypatch) -> None:
    from target_core.cli.main import main
    from target_core.engine import workers
    from target_core.engine.jobs import JobStore
    from target_core.engine.runner import run_retrieval

    spawned: list[str] = []
    monkeypatch.setattr(workers, "spawn_worker", lambda job, settings: spawned.append(
        job.job_id) or 0)
    settings = load_settings(tmp_path / "ws")
    run_id = run_retrieval(RunConfig("handmade-qa", "bm25",
                                     generation=GenerationConfig("heuristic")),
                           settings=settings).run.run_id
    at = app("pages/query.py", run=run_id, query="q1")
    next(t for t in at.text_input if t.label == "Judge").set_value("nonsense").run()
    next(b for b in at.button if b.label == "Launch the judge as a job").click().run()
    assert "nonsense" in at.error[0].value and not spawned  # nothing launched
    next(t for t in at.text_input if t.label == "Judge").set_value("heuristic").run()
    next(b for b in at.button if b.label == "Launch the judge as a job").click().run()
    assert len(spawned) == 1 and "launched" in at.success[0].value
    assert "python -m" not in at.success[0].value  # the sidebar lists jobs, not the CLI
    jobs = JobStore.in_workspace(settings.workspace)
    job = jobs.get(spawned[0])
    assert job.kind == "judge" and job.label == f"truthfulness of run {run_id} by heuristic"
    # the worker process's work: `worker JOB_ID` picks judge_task by the job's kind
    assert main(["worker", job.job_id, "--workspace", str(settings.workspace)]) == 0
    done = jobs.get(job.job_id)
    assert done.status == "done" and done.run_id == run_id and done.done == 3
    metrics = RunStore.in_workspace(settings.workspace).get_run(run_id).metrics
    assert metrics["truthfulness_n"] == 3


def test_a_run_stored_before_gtr_metrics_gets_them_when_judged_and_exports_them(
        tmp_path: Path) -> None:
    from target_core.datasets import load_dataset
    from target_core.engine.export import export_run
    from target_core.experiments.judge import HeuristicTruthJudge, judge_run

    workspace, run_id = _fresh_run(tmp_path, limit=3)
    store = RunStore.in_workspace(workspace)
    fresh = {q: dict(m) for q, m in store.query_metrics(run_id)}
    gtr = ("rouge1_p", "rouge1_r", "rouge1_f", "rouge2_p", "rouge2_r", "rouge2_f",
           "rougeL_p", "rougeL_r", "sas", "reply_tokens", "response_ms")
    with store.db.conn:  # as an older version stored it: no GTR metrics at all
        for name in gtr:
            store.db.execute("UPDATE query_results SET metrics = json_remove(metrics, ?)",
                             [f"$.{name}"])
            store.db.execute("UPDATE runs SET metrics = json_remove(metrics, ?)",
                             [f"$.{name}"])
        store.db.execute("UPDATE runs SET metrics = json_remove(metrics, '$.response_ms_mean')")
    assert not any("sas" in m for _, m in store.query_metrics(run_id))
    judge_run(store, load_dataset("demo-qa", load_settings(workspace)), run_id,
              HeuristicTruthJudge())
    again = dict(store.query_metrics(run_id))
    for query_id, metrics in fresh.items():
        assert {k: again[query_id][k] for k in gtr} == pytest.approx(
            {k: metrics[k] for k in gtr})
    run = store.get_run(run_id)
    assert run.metrics["sas"] == pytest.approx(np.mean([m["sas"] for m in fresh.values()]))
    out = tmp_path / "run.csv"
    export_run(store, run_id, "csv", out)
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert {"sas", "rouge1_p", "reply_tokens", "truthfulness"} <= set(header)


def test_two_judges_never_mix_in_one_number(tmp_path: Path) -> None:
    from target_core.datasets import load_dataset
    from target_core.experiments.judge import HeuristicTruthJudge, Judgement, judge_run

    class Yes:
        spec, label, concurrency = "yes", "always 1 (test)", 1

        def rate(self, question: str, reference: str, answer: str) -> Judgement:
            return Judgement(1, "yes")

    workspace, run_id = _fresh_run(tmp_path, limit=4)
    store = RunStore.in_workspace(workspace)
    dataset = load_dataset("demo-qa", load_settings(workspace))
    judge_run(store, dataset, run_id, HeuristicTruthJudge())
    judge_run(store, dataset, run_id, HeuristicTruthJudge(), limit=2)  # again: still 4
    assert store.get_run(run_id).metrics["truthfulness_n"] == 4
    judge_run(store, dataset, run_id, Yes(), limit=2)
    metrics = [m.get("truthfulness") for _, m in store.query_metrics(run_id)]
    assert metrics == [1.0, 1.0, None, None]  # only the newest judge's ratings
    run = store.get_run(run_id).metrics
    assert run["truthfulness"] == 1.0 and run["truthfulness_n"] == 2
    assert sorted({r["judge"] for r in store.judgements(run_id)}) == ["heuristic", "yes"]
