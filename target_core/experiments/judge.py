"""Truthfulness of a stored run's answers, rated after the run by a judge (GTR, seed 001).

GTR's rubric, word for word: "A dichotomous truthfulness rating, assigning 1 for
relevant and 0 for irrelevant responses" (its Table 2 counts the 1s and 0s per model).
The judge sees the question, the reference answer and the generated response, and
answers a JSON object {"reason": ..., "rating": 0 or 1}.

Judges (`make_truth_judge(spec)`, entries of TRUTH_JUDGES: the stand-in, then every chat
backend of llm.models):

* `openai[:MODEL]`, `local:smollm2` / `local:PATH.gguf`: a model through
  `llm.chat.ChatModel.chat_json` (the one LLM door: response cache, retries of
  transient failures, structured output negotiated per server, max tokens
  TARGET_MAX_TOKENS_JUDGE), as the benchmark builder's judge.
* `heuristic`: an offline stand-in with no model, labelled as such: 1 when the answer
  holds at least half the reference's words (ROUGE-1 recall >= 0.5), else 0. It
  measures overlap, not truth; it exists so the pipeline runs offline.

A failed call or a reply without a rating of 0 or 1 is a failed judgement: stored
with its error and no rating, never counted as 0. When all judgements, or more than
TARGET_MAX_FAILED_GENERATIONS of them, failed, the step fails (llm.policy): nothing is
stored, and the CLI and the job end failed with the reason. A query whose generation failed is
not judged (nothing to rate). `judge_run` stores every judgement (RunStore
judgements table, by judge) and makes the query and run metrics this judge's: each
query's `truthfulness` is its rating by this judge (absent where it has none), and the
run's `truthfulness` = mean rating over the queries it rated (GTR's truthful share),
`truthfulness_n` those queries, `truthfulness_failed` its failed judgements (their
newest). Ratings of two judges never mix in one number.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from target_core.config import Settings
from target_core.engine.store import RunStore
from target_core.errors import TargetError
from target_core.llm.chat import ChatModel
from target_core.llm.models import cached, role_registry
from target_core.llm.policy import enforce
from target_core.metrics.answers import answer_text
from target_core.metrics.gtr import TRUTH_RUBRIC, rouge_scores
from target_core.tasks import task_rules
from target_core.tasks.judging import reference_of
from target_core.types import Dataset

log = logging.getLogger(__name__)

HEURISTIC_LABEL = ("heuristic (offline stand-in, no model: 1 when the answer holds at "
                   "least half the reference's words, ROUGE-1 recall >= 0.5)")
TRUTH_SYSTEM = "You rate the answers of a question-answering system for truthfulness."
TRUTH_SCHEMA: dict[str, Any] = {
    "name": "truthfulness_rating",
    "strict": True,
    "schema": {"type": "object", "additionalProperties": False,
               "required": ["reason", "rating"],
               "properties": {
                   "reason": {"type": "string", "description": "A short explanation."},
                   "rating": {"type": "integer", "enum": [0, 1],
                              "description": "1 relevant (truthful), 0 irrelevant."}}},
}


class JudgeRunError(TargetError):
    """The run cannot be judged (no generated answers)."""


@dataclass(frozen=True)
class Judgement:
    """One query's rating (1 or 0), or why there is none (`error`)."""

    rating: int | None
    reason: str = ""
    error: str | None = None


class TruthJudge(Protocol):
    spec: str
    label: str
    concurrency: int

    def rate(self, question: str, reference: str, answer: str) -> Judgement: ...


def truth_messages(question: str, reference: str, answer: str) -> list[dict[str, str]]:
    """The judge's prompt: GTR's rubric, then question, reference and response."""
    user = "\n".join([
        f"Rate the response below with GTR's truthfulness rubric: \"{TRUTH_RUBRIC}\".",
        "A response is relevant (1) when it answers the question truthfully, consistent "
        "with the reference answer; it is irrelevant (0) when it does not answer the "
        "question, or says something the reference contradicts.",
        f"<question>\n{question}\n</question>",
        f"<reference answer>\n{reference}\n</reference answer>",
        f"<response>\n{answer}\n</response>",
        "Respond with a JSON object with the fields \"reason\" (a short explanation) and "
        "\"rating\" (1 or 0), and nothing else."])
    return [{"role": "system", "content": TRUTH_SYSTEM}, {"role": "user", "content": user}]


def parse_rating(value: Any) -> int | None:
    """1 or 0 from the reply's "rating" (an int, a bool, or "1"/"0"); else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, float) and value in (0.0, 1.0):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


class HeuristicTruthJudge:
    """The offline stand-in: ROUGE-1 recall of the reference in the answer >= 0.5."""

    spec = "heuristic"
    label = HEURISTIC_LABEL
    concurrency = 1

    def rate(self, question: str, reference: str, answer: str) -> Judgement:
        recall = rouge_scores(answer, reference)["rouge1_r"]
        return Judgement(int(recall >= 0.5),
                         f"ROUGE-1 recall of the reference {recall:.2f} (threshold 0.5)")


class LLMTruthJudge:
    """A model's rating through the generators' OpenAI-compatible client."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.spec = client.spec
        self.label = f"LLM judge ({client.label})"
        self.concurrency = max(1, int(getattr(client, "concurrency", 1)))

    def rate(self, question: str, reference: str, answer: str) -> Judgement:
        reply = self.client.chat_json(truth_messages(question, reference, answer),
                                      schema=TRUTH_SCHEMA, task="judge")
        if reply.data is None:
            return Judgement(None, error=reply.error or "the call failed")
        rating = parse_rating(reply.data.get("rating"))
        if rating is None:
            return Judgement(None, str(reply.data.get("reason") or ""),
                             error=f"the reply has no 'rating' of 0 or 1: "
                                   f"{reply.data.get('rating')!r}")
        return Judgement(rating, str(reply.data.get("reason") or ""))


def _llm_judge(model: ChatModel, settings: Settings) -> TruthJudge:
    return LLMTruthJudge(cached(model, settings))


def _heuristic() -> TruthJudge:
    return HeuristicTruthJudge()


TRUTH_JUDGES = role_registry("truthfulness judge", ("heuristic", HEURISTIC_LABEL, _heuristic),
                             _llm_judge)
JUDGE_SPECS = TRUTH_JUDGES.examples()
"""Every judge's example specs, for error messages and pickers."""


def make_truth_judge(spec: str, settings: Settings) -> TruthJudge:
    """`heuristic`, `openai[:MODEL]` or `local:...` (TRUTH_JUDGES); no API key is a
    ConfigError here, an unknown spec an UnknownNameError."""
    return TRUTH_JUDGES.build(spec, settings)


@dataclass(frozen=True)
class JudgeSummary:
    run_id: str
    judge: str
    label: str
    rated: int
    failed: int
    truthful: int
    metrics: dict[str, float]
    first_error: str | None = None
    """The first failed judgement: "QUERY_ID: error" (None when none failed)."""
    failed_classes: dict[str, int] = field(default_factory=dict)
    """Failed judgements by error class (llm.error_classes)."""


def judge_run(store: RunStore, dataset: Dataset, run_id: str, judge: TruthJudge, *,
              limit: int | None = None,
              on_query: Callable[[int, int], None] | None = None,
              max_failed: float = Settings.max_failed_generations) -> JudgeSummary:
    """Rate the run's answers (the first `limit` answered queries in query order), store
    every judgement and merge `truthfulness` into the query and run metrics.

    The one failure policy (llm.policy): when all judgements, or more than `max_failed`
    of them (TARGET_MAX_FAILED_GENERATIONS), failed, nothing is stored and LLMStepFailed
    names the classes and the first error; a rerun asks only the failed calls again
    (the response cache keeps successes)."""
    from target_core.engine.answer_scores import backfill_gtr

    run = store.get_run(run_id)
    results = [r for r in store.iter_results(run_id)
               if r.generation is not None and not r.generation.get("error")]
    if run.config.generation is None or not results:
        raise JudgeRunError(f"run {run_id} has no generated answers to judge")
    if task_rules(dataset.task).gtr and not all("rouge1_p" in r.metrics for r in results):
        backfill_gtr(store, run_id, dataset)  # a run scored before GTR's metrics
    chosen = results[:limit] if limit is not None else results

    def rate(result: Any) -> Judgement:
        query = dataset.query(result.query_id)
        try:
            judgement = judge.rate(query.query, answer_text(reference_of(query, dataset.task)),
                                   str(result.generation.get("answer") or ""))
        except TargetError:
            raise
        except Exception as error:  # a judge that raised: a failed judgement, not a 0
            judgement = Judgement(None, error=f"{type(error).__name__}: {error}")
        return judgement

    judgements: list[Judgement] = []
    with ThreadPoolExecutor(max_workers=judge.concurrency) as pool:
        for judgement in pool.map(rate, chosen):  # progress from this thread (job store)
            judgements.append(judgement)
            if on_query is not None:
                on_query(len(judgements), len(chosen))
    query_ids = [r.query_id for r in chosen]
    outcome = enforce([(q, j.error or "no rating", None)
                       for q, j in zip(query_ids, judgements, strict=True)
                       if j.rating is None], len(judgements), max_failed,
                      calls="judgements", item="query")
    if outcome.failed:
        log.warning("%d of %d judgements of run %s failed; the first, query %s",
                    outcome.failed, outcome.calls, run_id, outcome.first_error)
    return replace(_store(store, run_id, judge, query_ids, judgements),
                   first_error=outcome.first_error, failed_classes=outcome.classes)


def _store(store: RunStore, run_id: str, judge: TruthJudge, query_ids: Sequence[str],
           judgements: Sequence[Judgement]) -> JudgeSummary:
    store.save_judgements(run_id, judge.spec, judge.label,
                          [(q, j.rating, j.reason, j.error)
                           for q, j in zip(query_ids, judgements, strict=True)])
    rated = {q: j.rating for q, j in zip(query_ids, judgements, strict=True)
             if j.rating is not None}
    # this judge's ratings only (an earlier --limit call's too): never two judges in one
    # number; a query it has not rated loses another judge's (kept in the judgements)
    mine = {r["query_id"]: r["rating"] for r in store.judgements(run_id)
            if r["judge"] == judge.spec}
    ratings = [float(v) for v in mine.values() if v is not None]
    store.merge_query_metrics(run_id, {q: {"truthfulness": None if mine.get(q) is None
                                           else float(mine[q])}
                                       for q in store.done_query_ids(run_id)})
    failed = len(judgements) - len(rated)
    metrics = {"truthfulness_n": float(len(ratings)),
               "truthfulness_failed": float(len(mine) - len(ratings))}
    if ratings:
        metrics["truthfulness"] = sum(ratings) / len(ratings)
    store.merge_run_metrics(run_id, metrics)
    return JudgeSummary(run_id, judge.spec, judge.label, len(rated), failed,
                        sum(rated.values()), metrics)


def launch_judge(run_id: str, judge: str, settings: Settings, *,
                 limit: int | None = None) -> Any:
    """Judge a stored run in a worker process (a job of kind "judge"); checks the run
    and the judge's family first (nothing started on a TargetError). Returns the Job."""
    from target_core.engine.jobs import JobStore
    from target_core.engine.workers import spawn_worker

    run = RunStore.in_workspace(settings.workspace).get_run(run_id)
    if run.config.generation is None:
        raise JudgeRunError(f"run {run_id} has no generated answers to judge")
    entry, arg = TRUTH_JUDGES.parse(judge)  # an unknown judge stops here
    if entry.self_contained:  # the stand-in, built at once; a model is the worker's
        entry.build(arg, settings)
    jobs = JobStore.in_workspace(settings.workspace)
    job = jobs.create_job("judge", {"dataset": run.config.dataset, "run_id": run_id,
                                    "judge": judge.strip(), "limit": limit})
    spawn_worker(job, settings)
    return jobs.get(job.job_id)


def judge_task(job: Any, settings: Settings, progress: Any) -> dict[str, Any]:
    """The worker's work for a judge job: `judge_run`, reporting each query."""
    from target_core.datasets import load_dataset

    store = RunStore.in_workspace(settings.workspace)
    dataset = load_dataset(job.spec["dataset"], settings)
    judge = make_truth_judge(job.spec["judge"], settings)
    summary = judge_run(store, dataset, job.spec["run_id"], judge, limit=job.spec.get("limit"),
                        on_query=lambda done, total: progress(done, total, "judging"),
                        max_failed=settings.max_failed_generations)
    return {"run_id": summary.run_id, "done": summary.rated + summary.failed,
            "total": summary.rated + summary.failed}
