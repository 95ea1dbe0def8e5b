"""Question-answering metrics: BLEU (sacrebleu), ROUGE-L (rouge-score), and word diffs.

TARGET scores generated answers against reference answers (FeTaQA, OTTQA) with
HuggingFace `evaluate`'s "sacrebleu" and "rouge" metrics; both wrap the libraries used
here, with the same defaults:

* `corpus_bleu` is TARGET's "SB": sacrebleu's `corpus_bleu(hyps, [refs])`, 0-100,
  13a tokenization, case-sensitive, exp smoothing, no effective order.
* `rouge_l` is rouge-score's ROUGE-L F-measure, 0-1, default tokenizer, no stemming
  (`evaluate`'s default). Averaged over queries it is the run's `rouge_l` (macro);
  `evaluate` reports the median of 1,000 bootstrap means instead, which differs from
  the plain mean only by resampling noise.

Every scoring function takes text: turn a dataset's reference answer (a string, number,
list ...) into text with `answer_text` first. sacrebleu and rouge-score are imported on
first use (rouge-score pulls in nltk, about two seconds), never at module import.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["answer_text", "corpus_bleu", "differing_words", "exact_match", "rouge_l",
           "sentence_bleu"]

WordMarks = list[tuple[str, bool]]
"""A text's whitespace tokens in order, each with True when the other text shares it."""


def answer_text(answer: Any) -> str:
    """A reference answer as one string, the form every metric here compares.

    * str: unchanged.
    * None: "".
    * bool: "True" / "False" (checked before numbers: bool is an int in Python).
    * int: its digits; float: integral values without the trailing ".0" (3.0 -> "3"),
      others as `str` gives them (2.5 -> "2.5", nan -> "nan").
    * list or tuple (FeTaQA/OTTQA sometimes give several answers): each item through
      this function, None items dropped, joined with ", " (["a", 2.0] -> "a, 2").
    * anything else: `str(answer)`.
    """
    if answer is None:
        return ""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, bool):
        return str(answer)
    if isinstance(answer, numbers.Integral):
        return str(int(answer))
    if isinstance(answer, numbers.Real):
        value = float(answer)
        return str(int(value)) if math.isfinite(value) and value.is_integer() else str(value)
    if isinstance(answer, (list, tuple)):
        return ", ".join(answer_text(item) for item in answer if item is not None)
    return str(answer)


def sentence_bleu(hypothesis: str, reference: str) -> float:
    """Sentence BLEU of one answer against one reference: sacrebleu's defaults, 0-100.

        BLEU = BP · exp( (1/N) Σ_{n=1..N} log p_n ),  BP = min(1, exp(1 - r/c))

    p_n is the clipped n-gram precision (in %), c and r the hypothesis and reference
    lengths in 13a tokens (case-sensitive). sacrebleu 2.6.0's `sentence_bleu` defaults:
    `smooth_method="exp"` (Chen & Cherry's method 3, the NIST mteval smoothing: the
    k-th order with no match gets p_n = 100 / (2^k · total_n) instead of 0) and
    `use_effective_order=True` (N stops at the longest order the hypothesis has any
    n-gram of, so a 2-word answer is scored on 1- and 2-grams only).
    Edge cases: no matching unigram, bigram ... at all -> 0.0; empty hypothesis or
    reference -> 0.0; identical texts -> 100.0.
    BLEU is a corpus metric; the mean of sentence BLEU is not `corpus_bleu`. This is the
    per-query value the UI shows, not a run metric.
    """
    import sacrebleu

    return float(sacrebleu.sentence_bleu(hypothesis, [reference]).score)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU over aligned answers and references (one each): TARGET's "SB", 0-100.

    sacrebleu's `corpus_bleu(hypotheses, [references])` with all its defaults (13a
    tokenization, case-sensitive, `smooth_method="exp"`, `use_effective_order=False`).
    n-gram matches and lengths are summed over the corpus first (micro), then

        BLEU = BP · exp( (1/4) Σ_{n=1..4} log p_n ),  p_n = Σ matches_n / Σ total_n,
        BP = min(1, exp(1 - Σ r / Σ c))

    Edge cases: no pairs -> 0.0 (sacrebleu itself fails on an empty corpus); no
    matching n-gram of any order -> 0.0; a corpus with no 4-gram in any hypothesis
    (all answers under four tokens) -> ~0.0, as with sacrebleu. Lengths differ ->
    ValueError.
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if len(hypotheses) == 0:
        return 0.0
    import sacrebleu

    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


def exact_match(hypothesis: str, reference: Any) -> float:
    """1.0 when the answer is the reference (`answer_text`) up to case, surrounding
    whitespace, quotes and a final period, and runs of spaces; else 0.0.
    E.g. "  lake baikal." matches "Lake Baikal"; "1642 m" does not match 1642."""
    return float(_normalised(hypothesis) == _normalised(answer_text(reference)))


def _normalised(text: str) -> str:
    return " ".join(text.strip().strip("\"'").rstrip(".").split()).casefold()


def rouge_l(hypothesis: str, reference: str, *, stemmer: bool = False) -> float:
    """ROUGE-L F-measure of one answer against one reference (rouge-score), in [0, 1].

        P = LCS / |hypothesis|,  R = LCS / |reference|,  F = 2PR / (P + R)

    where LCS is the length of the longest common token subsequence. rouge-score's
    default tokenizer lowercases, replaces every character outside [a-z0-9] by a space
    and splits on whitespace: punctuation never counts, and non-ASCII letters vanish
    ("café" -> "caf"; a Chinese answer has no tokens at all).
    `stemmer=False` by default because TARGET's "rouge" (HuggingFace `evaluate`) does
    not stem. `stemmer=True` applies nltk's Porter stemmer to tokens longer than three
    characters; it needs no NLTK data download and works offline.
    Edge cases: either text empty, or without any [a-z0-9] token -> 0.0; no common
    token -> 0.0.
    """
    score = _rouge_scorer(stemmer).score(reference, hypothesis)["rougeL"]
    return float(score.fmeasure)


@lru_cache(maxsize=2)
def _rouge_scorer(stemmer: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stemmer)


def differing_words(hypothesis: str, reference: str) -> tuple[WordMarks, WordMarks]:
    """Each text's whitespace tokens, marked True where the two texts agree.

    Both texts are split on whitespace (punctuation stays on its word), then aligned
    with difflib's `SequenceMatcher` on the lower-cased tokens (no junk heuristic): a
    token is shared when it lies in a matching block, so the shared tokens of both
    sides form the same common subsequence. Tokens keep their original case.
    Returns (hypothesis marks, reference marks). Edge cases: an empty text -> [].
    """
    hyp, ref = hypothesis.split(), reference.split()
    matcher = difflib.SequenceMatcher(None, [t.lower() for t in hyp], [t.lower() for t in ref],
                                      autojunk=False)
    hyp_shared, ref_shared = [False] * len(hyp), [False] * len(ref)
    for block in matcher.get_matching_blocks():
        hyp_shared[block.a:block.a + block.size] = [True] * block.size
        ref_shared[block.b:block.b + block.size] = [True] * block.size
    return (list(zip(hyp, hyp_shared, strict=True)), list(zip(ref, ref_shared, strict=True)))
