"""Paired significance tests and confidence intervals, as pure functions.

Every function takes plain numbers and returns plain numbers; seeds make the
resampling ones deterministic. Cross-checked against scipy in tests/test_compare.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["MIN_DISCORDANT", "bootstrap_ci", "detectable", "holm", "mcnemar_exact",
           "paired_randomization"]

ALPHA = 0.05
MIN_DISCORDANT = 6
"""Fewest discordant pairs for which the exact McNemar test can reach p < 0.05:
the smallest possible p with m discordant pairs is 2 · 0.5^m, 0.0625 at m = 5 and
0.03125 at m = 6."""

_CHUNK = 1_000  # resamples drawn at once, so memory stays at _CHUNK × n numbers
_FEW = 8
"""Resampling draws per distinct value (counts, not items) when there are at most n / _FEW
distinct values, as for hits and reciprocal ranks: the same distribution, drawn in
O(distinct) instead of O(n) per resample, which keeps a 5,000-query comparison
interactive."""


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c.

    Under H0 each of the m = b + c discordant pairs goes either way with probability
    1/2, so b ~ Binomial(m, 1/2) and
        p = min(1, 2 · Σ_{i=0}^{min(b, c)} C(m, i) / 2^m),
    which equals the two-sided binomial test (scipy.stats.binomtest(b, m, 0.5)).
    p = 1.0 when m = 0 (nothing differs). Exact integer arithmetic up to the division.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**m)


def paired_randomization(a: Sequence[float], b: Sequence[float], *, n_resamples: int = 10_000,
                         seed: int = 0) -> float:
    """Two-sided paired sign-flip permutation test on the mean difference.

    With d_i = a_i - b_i and observed T = mean(d), each resample flips the sign of
    every d_i independently with probability 1/2 (H0: the two labels are exchangeable
    within a pair) and computes T* = mean(s · d).
    * When 2^n <= n_resamples every sign vector is enumerated (identity included) and
      p = #{|T*| >= |T|} / 2^n exactly.
    * Otherwise p = (#{|T*| >= |T|} + 1) / (n_resamples + 1), which is never 0.
    Comparisons allow a relative tolerance of 1e-12 so float ties count as ties.
    p = 1.0 for empty input or when every d_i is 0.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1:
        raise ValueError("a and b must be one-dimensional sequences of equal length")
    n = d.size
    if n == 0 or not d.any():
        return 1.0
    observed = abs(d.sum())  # sums, not means: same test, fewer rounding steps
    threshold = observed - 1e-12 * max(1.0, observed)
    if 2**n <= n_resamples:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        return float(np.count_nonzero(np.abs(signs @ d) >= threshold) / 2**n)
    rng = np.random.default_rng(seed)
    magnitudes, counts = np.unique(np.abs(d[d != 0]), return_counts=True)
    grouped = magnitudes.size * _FEW <= n
    count = 0
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        if grouped:  # per distinct |d_i|, the signed sum is 2 · Binomial(count, 1/2) - count
            sums = (2 * rng.binomial(counts, 0.5, size=(size, counts.size)) - counts) @ magnitudes
        else:
            sums = rng.choice(np.array([-1.0, 1.0]), size=(size, n)) @ d
        count += int(np.count_nonzero(np.abs(sums) >= threshold))
    return (count + 1) / (n_resamples + 1)


def bootstrap_ci(values: Sequence[float], *, confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean.

    Draw n_resamples samples of size n with replacement, take each sample's mean, and
    return the (1 - confidence)/2 and (1 + confidence)/2 quantiles of those means
    (numpy's default linear interpolation). A single value gives (v, v).
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("bootstrap_ci needs a non-empty one-dimensional sequence")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(x, return_counts=True)
    grouped = distinct.size * _FEW <= x.size
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        if grouped:  # how often each distinct value is drawn is Multinomial(n, counts / n)
            picks = rng.multinomial(x.size, counts / x.size, size=size)
            means[start:start + size] = picks @ distinct / x.size
        else:
            means[start:start + size] = x[rng.integers(0, x.size, size=(size, x.size))
                                          ].mean(axis=1)
    low, high = np.percentile(means, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Sort ascending p_(1) <= ... <= p_(m); then
        p̃_(i) = min(1, max_{j <= i} (m - j + 1) · p_(j)),
    so adjusted values are monotone in the sorted order and capped at 1.
    e.g. [0.01, 0.04, 0.03] -> [0.03, 0.06, 0.06].
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def detectable(n: int, b: int, c: int) -> str | None:
    """A warning when no difference could be significant at 0.05, else None.

    n is the number of paired queries, b and c the discordant counts (hit in one run
    only). With m = b + c discordant pairs the exact McNemar p is at least 2 · 0.5^m,
    which is >= 0.05 for every m < 6: the test cannot detect any difference then,
    however lopsided b and c are.
    """
    m = b + c
    if n < MIN_DISCORDANT:
        return (f"only {n} queries in common: no paired test can reach p < {ALPHA} "
                f"(need at least {MIN_DISCORDANT})")
    if m < MIN_DISCORDANT:
        best = 2 * 0.5**m if m else 1.0
        return (f"only {m} queries flip between the runs: the exact McNemar test cannot "
                f"reach p < {ALPHA} with fewer than {MIN_DISCORDANT} (best case p = "
                f"{min(best, 1.0):.3g}); run more queries")
    return None
