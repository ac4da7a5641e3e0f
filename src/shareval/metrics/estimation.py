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
