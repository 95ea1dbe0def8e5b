"""Fusing ranked lists: score normalisations and fusion methods, as ranx defines them.

Each input is one ranking (Hits: (index, score), best first). A normalisation maps a
ranking's scores to comparable values; a text absent from a ranking gets 0 from it.

Normalisations (over the scores of one query's list):
    min-max   (s - min) / max(max - min, 1e-9)
    z-score   (s - mean) / max(std, 1e-9)          (ranx's "zmuv", population std)
    rank      1 - (r - 1) / n for the text at 1-based rank r of n
    none      s unchanged

Methods:
    rrf       Σ_r 1 / (k + rank_r(t))              (Cormack et al. 2009; ignores norm)
    combsum   Σ_r norm_r(t)
    combmnz   combsum × number of rankings holding t
    wsum      Σ_r w_r · norm_r(t)

ranx 0.3.21's `ranx.fuse` is the reference: tests/fixtures/ranx_fusion.json holds its
outputs on a small example and tests/test_fusion.py checks these functions against them.
ranx itself is not a dependency: it installs ~700 MB (matplotlib, seaborn, pandas,
ir-datasets, numba), `import ranx` takes ~1.8 s and its first fuse call another 4 s of
numba compilation, for arithmetic that is a few lines here.

Fused ties go to the lower index, as every retriever's do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from target_core.errors import ConfigError
from target_core.registry import split_options  # noqa: F401 - re-exported: the spec grammar's
from target_core.retrievers.base import Hits

NORMS = ("min-max", "z-score", "rank", "none")
METHODS = ("rrf", "combsum", "combmnz", "wsum")
RRF_K = 60
_EPS = 1e-9


@dataclass(frozen=True)
class Fusion:
    """How two or more rankings become one."""

    method: str = "wsum"
    norm: str = "min-max"
    weights: tuple[float, ...] = (0.5, 0.5)
    """wsum's weight per ranking (lexical first); other methods ignore it."""
    k: int = RRF_K
    """rrf's constant; other methods ignore it."""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"fusion method '{self.method}': expected one of "
                              f"{', '.join(METHODS)}")
        if self.norm not in NORMS:
            raise ConfigError(f"fusion norm '{self.norm}': expected one of {', '.join(NORMS)}")
        if self.k <= 0:
            raise ConfigError(f"rrf k must be positive, not {self.k}")

    @property
    def label(self) -> str:
        """Short name, e.g. "wsum min-max 0.3/0.7" or "rrf k=60"."""
        if self.method == "rrf":
            return f"rrf k={self.k}"
        if self.method == "wsum":
            return f"wsum {self.norm} " + "/".join(f"{w:g}" for w in self.weights)
        return f"{self.method} {self.norm}"

    def with_weight(self, lexical: float) -> Fusion:
        """wsum with `lexical` on the first ranking and 1 - lexical on the second."""
        return replace(self, method="wsum", weights=(lexical, round(1.0 - lexical, 10)))


def normalize(hits: Hits, norm: str) -> dict[int, float]:
    """{index: normalised score} of one ranking (see the module docstring)."""
    if not hits:
        return {}
    scores = np.array([s for _, s in hits], dtype=np.float64)
    if norm == "min-max":
        values = (scores - scores.min()) / max(scores.max() - scores.min(), _EPS)
    elif norm == "z-score":
        values = (scores - scores.mean()) / max(float(scores.std()), _EPS)
    elif norm == "rank":
        values = 1.0 - np.arange(len(hits)) / len(hits)
    elif norm == "none":
        values = scores
    else:
        raise ConfigError(f"fusion norm '{norm}': expected one of {', '.join(NORMS)}")
    return {index: float(v) for (index, _), v in zip(hits, values, strict=True)}


def fused_scores(rankings: Sequence[Hits], fusion: Fusion) -> dict[int, float]:
    """{index: fused score} over every text in any ranking."""
    fused: dict[int, float] = defaultdict(float)
    if fusion.method == "rrf":
        for hits in rankings:
            for rank, (index, _) in enumerate(hits, start=1):
                fused[index] += 1.0 / (fusion.k + rank)
        return dict(fused)
    if fusion.method == "wsum" and len(fusion.weights) != len(rankings):
        raise ConfigError(f"wsum has {len(fusion.weights)} weights for "
                          f"{len(rankings)} rankings")
    counts: dict[int, int] = defaultdict(int)
    for i, hits in enumerate(rankings):
        weight = fusion.weights[i] if fusion.method == "wsum" else 1.0
        for index, value in normalize(hits, fusion.norm).items():
            fused[index] += weight * value
            counts[index] += 1
    if fusion.method == "combmnz":
        return {index: value * counts[index] for index, value in fused.items()}
    return dict(fused)


def fusion_parts(rankings: Sequence[Hits], fusion: Fusion, index: int) -> dict[str, Any]:
    """How fused_scores(rankings, fusion)[index] is made, for explanations: per ranking
    the text's rank (None: not in it), score, normalised value, weight and share; the
    shares' sum times `multiplier` (combmnz: the rankings holding it, else 1) is `fused`."""
    components: list[dict[str, Any]] = []
    for i, hits in enumerate(rankings):
        rank = next((r for r, (j, _) in enumerate(hits, start=1) if j == index), None)
        score = None if rank is None else float(hits[rank - 1][1])
        if fusion.method == "rrf":
            normalised, weight = None, 1.0
            share = 0.0 if rank is None else 1.0 / (fusion.k + rank)
        else:
            normalised = normalize(hits, fusion.norm).get(index)
            weight = fusion.weights[i] if fusion.method == "wsum" else 1.0
            share = 0.0 if normalised is None else weight * normalised
        components.append({"rank": rank, "score": score, "normalised": normalised,
                           "weight": weight, "share": share})
    held = sum(c["rank"] is not None for c in components)
    multiplier = held if fusion.method == "combmnz" else 1
    return {"method": fusion.label, "components": components, "multiplier": multiplier,
            "fused": sum(c["share"] for c in components) * multiplier}


def fuse(rankings: Sequence[Hits], fusion: Fusion, top_k: int) -> Hits:
    """The best `top_k` of the fused rankings; ties go to the lower index."""
    scores = fused_scores(rankings, fusion)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:max(top_k, 0)]


# --- spec options -----------------------------------------------------------------------
#
# hybrid[:EMBEDDER][:OPTIONS], OPTIONS = name=value,... e.g.
#   hybrid:minilm:method=wsum,norm=min-max,w=0.3   (w: the lexical side's weight)
#   hybrid:method=rrf,k=60                         (default embedder)
#   hybrid:minilm:tune=recall@10,folds=5
# The options are the part after the last ':' when it holds '=' (embedder model names
# may hold ':', never '=').

OPTION_NAMES = ("method", "norm", "w", "k", "tune", "folds", "seed")


@dataclass(frozen=True)
class HybridOptions:
    fusion: Fusion
    tune: int | None = None
    """Tune wsum's weight on other folds for recall@tune (None: fixed weights)."""
    folds: int = 5
    seed: int = 0


def parse_options(text: str, default: Fusion) -> HybridOptions:
    """HybridOptions from "method=wsum,norm=min-max,w=0.3,tune=recall@10,folds=5";
    unknown names and bad values raise ConfigError naming the expected form."""
    values: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in OPTION_NAMES:
            raise ConfigError(f"hybrid option '{item}': expected NAME=VALUE with NAME one "
                              f"of {', '.join(OPTION_NAMES)}")
        values[name] = value.strip()
    try:
        fusion = replace(default, method=values.get("method", default.method),
                         norm=values.get("norm", default.norm),
                         k=int(values.get("k", default.k)))
        if "w" in values:
            fusion = replace(fusion, weights=(float(values["w"]),
                                              round(1.0 - float(values["w"]), 10)))
        tune = None
        if "tune" in values:
            metric, _, cutoff = values["tune"].partition("@")
            if metric != "recall" or not cutoff.isdigit() or int(cutoff) < 1:
                raise ConfigError(f"hybrid option tune={values['tune']}: expected "
                                  "tune=recall@K")
            tune = int(cutoff)
            if "method" not in values:
                fusion = replace(fusion, method="wsum")
        folds = int(values.get("folds", 5))
        seed = int(values.get("seed", 0))
    except ValueError as exc:
        raise ConfigError(f"hybrid options '{text}': {exc}") from None
    if tune is not None and fusion.method != "wsum":
        raise ConfigError("hybrid tune= tunes wsum's weight: use method=wsum (the default)")
    if folds < 2:
        raise ConfigError(f"hybrid folds={folds}: cross-validation needs at least 2")
    return HybridOptions(fusion, tune, folds, seed)
