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
    """Wilson score interval; (0, 1) when n == 0 (nothing is known).

    With p = successes / n and z the normal quantile of ``confidence``: the centre
    (p + z²/2n) / (1 + z²/n), half-width z √(p(1-p)/n + z²/4n²) / (1 + z²/n).

    >>> [round(float(x), 4) for x in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
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


WEIGHTINGS = ("heuristic", "size", "uniform")


def importance_weights(shared, sizes, counts, weighting: str = "heuristic") -> np.ndarray:
    """Mixture weights w_ij of Chaganty et al. (2017), one row per target i.

    ``shared[i, j]`` is |X_i & X_j| (the diagonal holds |X_i|), ``sizes[i]`` is
    |X_i| and ``counts[j]`` the draws n_j from submission j's output, p_j being
    uniform on X_j. Rows are normalized to sum to 1:

    * ``heuristic`` (the paper's and its authors' default):
      w_ij ~ n_j sum_x p_i(x) p_j(x) = n_j |X_i & X_j| / (|X_i| |X_j|);
    * ``size``: w_ij ~ n_j, one mixture for every target;
    * ``uniform``: w_ij ~ 1 for every submission with at least one draw
      (a stratum without draws cannot carry weight: its mean is undefined).

    A row without positive weight (nothing drawn that overlaps X_i) is NaN.
    """
    shared = np.asarray(shared, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    n = np.asarray(counts, dtype=float)
    m = sizes.size
    if shared.shape != (m, m) or n.shape != (m,):
        raise ValueError("shared must be m x m and sizes, counts of length m")
    if np.any(sizes <= 0):
        raise ValueError("output sizes must be positive")
    if weighting == "heuristic":
        w = shared / np.outer(sizes, sizes) * n[None, :]
    elif weighting == "size":
        w = np.broadcast_to(n, (m, m)).astype(float)
    elif weighting == "uniform":
        w = np.broadcast_to((n > 0).astype(float), (m, m)).astype(float)
    else:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}")
    z = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(z > 0, w / z, np.nan)


def mixture_importance(values, target, proposal, stratum, confidence: float = 0.95,
                       weights=None):
    """Multiple-importance-sampling mean (Chaganty et al. 2017, Eq. for pi_i).

    Each draw k came from stratum ``stratum[k]`` (a submission's uniform
    distribution over its output); ``target[k]`` is p_i(x_k), the probability
    of the item under the submission being estimated, and ``proposal[k]`` is
    q_i(x_k) = sum_j w_ij p_j(x_k). ``weights`` maps each stratum label to
    w_ij (default n_j / n, the balance heuristic). The estimate

        sum_j w_ij mean_{x in stratum j} p_i(x) / q_i(x) f(x)

    is unbiased when q_i > 0 wherever p_i f > 0. Strata of weight 0 are left
    out. The variance is sum_j w_ij^2 s_j^2 / n_j (strata are drawn
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
    labels = np.unique(s)
    if weights is None:
        weights = {j: np.count_nonzero(s == j) / s.size for j in labels}
    if any(weights.get(j, 0) != weights.get(j, 0) for j in labels):
        return float("nan"), float("nan"), float("nan"), float("nan")
    est, var = 0.0, 0.0
    for j in labels:
        wj = float(weights.get(j, 0.0))
        if wj == 0:
            continue
        on = s == j
        if np.any(q[on] <= 0):
            raise ValueError("the proposal must be positive at every draw of a weighted stratum")
        gj = p[on] / q[on] * f[on]
        est += wj * gj.mean()
        if gj.size > 1:
            var += wj * wj * gj.var(ddof=1) / gj.size
    se = float(np.sqrt(var))
    z = z_value(confidence)
    est = float(est)
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
