"""Estimating a proportion from sampled judgments (pure numpy, no I/O).

``wilson_interval`` is the score interval for a binomial proportion;
``weighted_proportion`` is the Horvitz-Thompson (Hajek) ratio estimate of a
precision from items drawn with known inclusion probabilities, with the
linearization (delta-method) standard error.
"""
from __future__ import annotations

from statistics import NormalDist

import numpy as np


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for a confidence level (1.96 for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval; (0, 1) when n == 0 (nothing is known)."""
    if n == 0:
        return 0.0, 1.0
    z = z_value(confidence)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def weighted_proportion(correct, inclusion, confidence: float = 0.95):
    """Hajek estimate sum(y/pi) / sum(1/pi) with a normal interval.

    ``correct``: 0/1 judgments; ``inclusion``: each item's inclusion
    probability. Returns (estimate, low, high); all NaN for no items.
    """
    y = np.asarray(correct, dtype=float)
    pi = np.asarray(inclusion, dtype=float)
    if y.shape != pi.shape:
        raise ValueError("correct and inclusion must have the same length")
    if y.size == 0:
        return float("nan"), float("nan"), float("nan")
    if np.any((pi <= 0) | (pi > 1)):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    w = 1 / pi
    est = float(np.sum(w * y) / np.sum(w))
    n = y.size
    if n < 2:
        return est, 0.0, 1.0
    # with-replacement approximation of the ratio estimator's variance
    u = w * (y - est) / np.sum(w)
    se = float(np.sqrt(n / (n - 1) * np.sum(u ** 2)))
    z = z_value(confidence)
    return est, max(0.0, est - z * se), min(1.0, est + z * se)


def mixture_importance(values, target, proposal, stratum, confidence: float = 0.95):
    """Multiple-importance-sampling mean (the balance heuristic).

    Each draw k came from stratum ``stratum[k]`` (a submission's uniform
    distribution over its output); ``target[k]`` is p_i(x_k), the probability
    of the item under the submission being estimated, and ``proposal[k]`` is
    q(x_k) = sum_j (n_j / n) p_j(x_k), the mixture of all strata. The estimate
    mean(target / proposal * values) is unbiased when q > 0 wherever p_i > 0.
    The standard error adds the within-stratum variances (strata are drawn
    independently). Returns (estimate, low, high, se); NaN for no draws.
    """
    f = np.asarray(values, dtype=float)
    p = np.asarray(target, dtype=float)
    q = np.asarray(proposal, dtype=float)
    s = np.asarray(stratum)
    if not (f.shape == p.shape == q.shape == s.shape):
        raise ValueError("values, target, proposal and stratum must have the same length")
    if f.size == 0:
        return float("nan"), float("nan"), float("nan"), float("nan")
    if np.any(q <= 0):
        raise ValueError("the proposal must be positive at every draw")
    g = p / q * f
    n = g.size
    est = float(g.mean())
    var = 0.0
    for j in np.unique(s):
        gj = g[s == j]
        if gj.size > 1:
            var += gj.size * gj.var(ddof=1)
    se = float(np.sqrt(var) / n)
    z = z_value(confidence)
    return est, max(0.0, est - z * se), min(1.0, est + z * se), se


def effective_size(weights) -> float:
    """Kish's effective sample size (sum w)^2 / sum w^2, for Wilson on weighted data."""
    w = np.asarray(weights, dtype=float)
    return float(w.sum() ** 2 / np.sum(w ** 2)) if w.size else 0.0


def percentile_interval(replicates, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap interval of replicate estimates (NaNs dropped)."""
    r = np.asarray(replicates, dtype=float)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return float("nan"), float("nan")
    a = (1 - confidence) / 2
    return float(np.quantile(r, a)), float(np.quantile(r, 1 - a))
