"""Fact-verification metrics: TARGET's label rule, per-query correctness, run-level scores.

Labels are ints, as in TARGET's FactVerificationTask: 1 = True (the claim is
supported), 0 = False (refuted), -1 = Not Enough Information (NEI). A generated text
becomes a label by TARGET's substring rule (`map_prediction`); the gold becomes one by
`gold_label`. Per query, `fact_correct` is 1.0 or 0.0; over a run, `fact_scores` gives
accuracy and sklearn's weighted precision/recall/F1 exactly as TARGET computes them,
plus a macro F1 and the NEI rate. scikit-learn is imported on first use.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

__all__ = ["FACT_LABELS", "fact_correct", "fact_scores", "gold_label", "map_prediction",
           "names_a_label"]

FACT_LABELS: dict[int, str] = {1: "True", 0: "False", -1: "Not Enough Information"}


def map_prediction(text: str) -> int:
    """A generated text's label by TARGET's rule: 1 if "true" occurs in text.lower(),
    else 0 if "false" occurs, else -1 (Not Enough Information).

    This is the paper's rule, kept as is so that scores compare with TARGET's; it is
    naive: a plain substring test, checked for "true" first. "The statement is not
    true" -> 1, "untrue" -> 1, "True or false? False." -> 1, "falsehood" -> 0, and an
    empty text -> -1.
    """
    lowered = text.lower()
    if "true" in lowered:
        return 1
    if "false" in lowered:
        return 0
    return -1


def names_a_label(text: str) -> bool:
    """The reply names one of the three labels at all ("true", "false" or "not enough"
    somewhere, any case). A reply that names none is unparseable: `map_prediction` would
    read it as Not Enough Information, and a run of such replies measures nothing."""
    lowered = text.lower()
    return "true" in lowered or "false" in lowered or "not enough" in lowered


def gold_label(value: Any) -> int:
    """A dataset's gold verdict as a label: True -> 1, False -> 0, None -> -1.

    A string uses `map_prediction`'s substring rule (TARGET maps gold strings the same
    way: "True" -> 1, "FALSE" -> 0, "NEI" -> -1); an int already in {1, 0, -1} is
    taken as that label. Anything else -> ValueError (other ints) or TypeError.
    """
    if value is None:
        return -1
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return map_prediction(value)
    if isinstance(value, numbers.Integral):
        if int(value) not in FACT_LABELS:
            raise ValueError(f"a fact label is 1, 0 or -1, got {value!r}")
        return int(value)
    raise TypeError(f"cannot read a fact verdict from {type(value).__name__} {value!r}")


def fact_correct(gold: int, pred: int) -> float:
    """1.0 when the predicted label equals the gold label, else 0.0.

    Its mean over queries is `fact_accuracy`. An NEI prediction (-1) is correct only
    against an NEI gold. Labels outside {1, 0, -1} -> ValueError.
    """
    _check_labels((gold, pred))
    return 1.0 if gold == pred else 0.0


def fact_scores(golds: Sequence[int], preds: Sequence[int]) -> dict[str, float]:
    """A run's fact-verification scores from aligned gold and predicted labels.

    * `fact_accuracy`: share of queries with pred == gold (sklearn `accuracy_score`).
    * `fact_precision`, `fact_recall`, `fact_f1`: sklearn
      `precision_recall_fscore_support(golds, preds, average="weighted",
      zero_division=0)`, exactly TARGET's call (TARGET leaves zero_division at "warn",
      which also gives 0, with a warning). For each label L in gold ∪ pred, with
      support s_L = #gold == L and n = len(golds):
          P_L = TP_L / #pred == L,  R_L = TP_L / s_L,  F_L = 2 P_L R_L / (P_L + R_L)
          weighted X = Σ_L (s_L / n) · X_L
      so a label never in gold weighs 0, weighted recall equals accuracy, and weighted
      F1 is the weighted mean of per-label F1 (not the F1 of weighted P and R).
    * `fact_macro_f1`: (1 / |gold ∪ pred|) Σ_L F_L, the unweighted mean over the labels
      present in gold or pred (sklearn `average="macro"`, zero_division=0).
    * `fact_nei_rate`: share of predictions that are -1 (Not Enough Information).
    * `fact_recall_excl_nei`: weighted recall over the queries whose prediction is not
      NEI, TARGET's "when we exclude all 'not enough information' responses" figure
      (about 0.747 in the paper, Section 4). Weighted recall is accuracy, so it is the
      share of answered queries answered right. Omitted when every prediction is NEI.

    A 0/0 (a label never predicted, for P_L) counts as 0. No queries -> {} (no score
    is defined; the caller omits the keys). Lengths differ or a label outside
    {1, 0, -1} -> ValueError.
    """
    if len(golds) != len(preds):
        raise ValueError(f"{len(golds)} gold labels but {len(preds)} predictions")
    if len(golds) == 0:
        return {}
    golds, preds = _check_labels(golds), _check_labels(preds)
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    precision, recall, f1, _ = precision_recall_fscore_support(
        golds, preds, average="weighted", zero_division=0)
    _, _, macro_f1, _ = precision_recall_fscore_support(
        golds, preds, average="macro", zero_division=0)
    scores = {
        "fact_accuracy": float(accuracy_score(golds, preds)),
        "fact_precision": float(precision),
        "fact_recall": float(recall),
        "fact_f1": float(f1),
        "fact_macro_f1": float(macro_f1),
        "fact_nei_rate": sum(1 for p in preds if p == -1) / len(preds),
    }
    answered = [(g, p) for g, p in zip(golds, preds, strict=True) if p != -1]
    if answered:
        _, recall_answered, _, _ = precision_recall_fscore_support(
            [g for g, _ in answered], [p for _, p in answered], average="weighted",
            zero_division=0)
        scores["fact_recall_excl_nei"] = float(recall_answered)
    return scores


def _check_labels(labels: Sequence[int]) -> list[int]:
    checked: list[int] = []
    for label in labels:
        if isinstance(label, bool) or not isinstance(label, numbers.Integral) \
                or int(label) not in FACT_LABELS:
            raise ValueError(f"a fact label is 1, 0 or -1, got {label!r}")
        checked.append(int(label))
    return checked
