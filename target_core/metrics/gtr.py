"""GTR's answer metrics (seed 001, section 4): ROUGE-1/2/L precision, recall and F,
semantic answer similarity, reply length in tokens, response time, truthfulness.

Per query (`gtr_query_metrics`, for every QA answer; a failed generation scores 0 on
ROUGE and has 0 reply tokens):

* `rouge1_p/_r/_f`, `rouge2_p/_r/_f`, `rougeL_p/_r` from one rouge-score call
  (`RougeScorer(["rouge1", "rouge2", "rougeL"])`, default tokenizer, no stemming, as
  `metrics.answers.rouge_l`). ROUGE-L's F is the existing `rouge_l`. With the
  hypothesis' tokens H and the reference's R (multisets of n-grams for ROUGE-N):

      ROUGE-N  P = |H_n ∩ R_n| / |H_n|,  R = |H_n ∩ R_n| / |R_n|  (clipped counts)
      ROUGE-L  P = LCS(H, R) / |H|,      R = LCS(H, R) / |R|
      F = 2PR / (P + R)   (0 when P + R = 0)

  GTR's Table 4 and Figure 3 report the precisions.
* `reply_tokens`: the answer's length in o200k_base tokens (`target_core.tokens`,
  exact and offline), one tokenizer for every generator so runs compare on one axis
  (a model's own count stays in the record as `tokens_out`).
* `response_ms`: the generator's wall time for the call (the record's `ms`).

`sas`, semantic answer similarity, needs embeddings and is computed once per run over
all answers (engine.answer_scores): the cosine of the MiniLM embeddings of answer and
reference, `sas_scores`. Labelled "SAS (MiniLM cosine)" everywhere: SAS proper
(Risch et al. 2021, GTR's [24]) scores the pair with a cross-encoder; a bi-encoder
cosine is its cheap, offline stand-in. An empty answer or reference scores 0.

`truthfulness` is an LLM judge's rating per query (experiments.judge): GTR's "dichotomous
truthfulness rating, assigning 1 for relevant and 0 for irrelevant responses".

Run level (`aggregate_gtr`): the macro mean of each per-query value over every outcome
(failed ones count 0, as `rouge_l`), under the same names, but for `response_ms_mean`:
the mean of `response_ms` over real calls (cached replies left out, as the latency
percentiles; a latency, like `generation_ms_p50`, not a score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from target_core.metrics.answers import answer_text

__all__ = ["GTR_COLUMNS", "ROUGE_METRICS", "SAS_LABEL", "TRUTH_RUBRIC", "aggregate_gtr",
           "gtr_query_metrics", "reply_tokens", "rouge_scores", "sas_scores"]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
ROUGE_METRICS: tuple[str, ...] = ("rouge1_p", "rouge1_r", "rouge1_f", "rouge2_p",
                                  "rouge2_r", "rouge2_f", "rougeL_p", "rougeL_r")
"""Per-query and run-level names; ROUGE-L's F is `rouge_l` (metrics.answers)."""

SAS_LABEL = "SAS (MiniLM cosine)"
"""How `sas` is named on every page: not a cross-encoder's SAS."""

TRUTH_RUBRIC = ("A dichotomous truthfulness rating, assigning 1 for relevant and 0 for "
                "irrelevant responses")
"""Seed 001's rubric, word for word (GTR, section 4)."""

GTR_COLUMNS: dict[str, str] = {
    "rouge1_p": "ROUGE-1 P", "rouge1_r": "ROUGE-1 R", "rouge1_f": "ROUGE-1 F",
    "rouge2_p": "ROUGE-2 P", "rouge2_r": "ROUGE-2 R", "rouge2_f": "ROUGE-2 F",
    "rougeL_p": "ROUGE-L P", "rougeL_r": "ROUGE-L R", "rouge_l": "ROUGE-L F",
    "sas": SAS_LABEL, "truthfulness": "truthful (judge)", "reply_tokens": "reply tokens",
    "response_ms": "response ms",
}
"""Each GTR metric's display name, per query and run-level alike."""


def rouge_scores(hypothesis: str, reference: str) -> dict[str, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L precision, recall and F of one answer (one
    rouge-score call): the keys of ROUGE_METRICS plus `rouge_l` (ROUGE-L F)."""
    scores = _scorer().score(reference, hypothesis)
    values: dict[str, float] = {}
    for kind in ROUGE_TYPES:
        score = scores[kind]
        values[f"{kind}_p"] = float(score.precision)
        values[f"{kind}_r"] = float(score.recall)
        values[f"{kind}_f" if kind != "rougeL" else "rouge_l"] = float(score.fmeasure)
    return values


@lru_cache(maxsize=1)
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=False)


def reply_tokens(text: str) -> int:
    """The answer's length in o200k_base tokens (exact offline; see target_core.tokens)."""
    from target_core.tokens import get_counter

    return get_counter().count(text) if text else 0


def gtr_query_metrics(prediction: str, reference: Any, *, failed: bool,
                      ms: float | None) -> dict[str, float]:
    """One QA answer's ROUGE P/R/F (without `rouge_l`, which per_query_downstream
    gives), `reply_tokens` and `response_ms` (when the time is known)."""
    if failed:
        values = dict.fromkeys(ROUGE_METRICS, 0.0) | {"reply_tokens": 0.0}
    else:
        scores = rouge_scores(prediction, answer_text(reference))
        values = {name: scores[name] for name in ROUGE_METRICS}
        values["reply_tokens"] = float(reply_tokens(prediction))
    if ms is not None:
        values["response_ms"] = float(ms)
    return values


def sas_scores(answers: np.ndarray, references: np.ndarray,
               empty: Sequence[bool] | None = None) -> list[float]:
    """Row-wise cosine of answer and reference embeddings (rows in the same order):

        sas_q = a_q · r_q / (||a_q|| ||r_q||)

    0 where either vector is zero or `empty[q]` is True (an empty answer or reference:
    an embedder still gives such a text a vector). Shapes differ -> ValueError.
    """
    a = np.asarray(answers, dtype=np.float64)
    r = np.asarray(references, dtype=np.float64)
    if a.shape != r.shape or a.ndim != 2:
        raise ValueError(f"answer embeddings {a.shape} and reference embeddings {r.shape} "
                         "must be two arrays of the same (n, dim) shape")
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(r, axis=1)
    dots = np.einsum("ij,ij->i", a, r)
    cosine = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    if empty is not None:
        cosine = np.where(np.asarray(empty, dtype=bool), 0.0, cosine)
    return [float(v) for v in cosine]


def aggregate_gtr(per_query: Sequence[Mapping[str, float]],
                  cached: Sequence[bool] | None = None) -> dict[str, float]:
    """Run-level GTR metrics: the mean of each per-query value present in every row
    (ROUGE P/R/F, `reply_tokens`, `sas`); `response_ms_mean` over the rows not
    `cached` that have a `response_ms`. No rows -> {}."""
    if not per_query:
        return {}
    names = [*ROUGE_METRICS, "reply_tokens", "sas"]
    values = {name: float(np.mean([row[name] for row in per_query]))
              for name in names if all(name in row for row in per_query)}
    flags = cached if cached is not None else [False] * len(per_query)
    times = [row["response_ms"] for row, hit in zip(per_query, flags, strict=True)
             if "response_ms" in row and not hit]
    if times:
        values["response_ms_mean"] = float(np.mean(times))
    return values
