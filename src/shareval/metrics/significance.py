"""Paired significance tests between two systems scored on the same units.

Both take per-unit statistics ``a`` and ``b`` of shape (n_units, s), an
``aggregate(stats, weights)`` that maps a (batch, n_units, s) array to the
metric (batch,), and per-unit ``weights``. This covers means of per-query
scores as well as micro-averaged F1 from per-document (tp, fp, fn) counts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BATCH_ELEMENTS = 4_000_000     # bounds memory of one vectorised resampling batch


@dataclass
class TestResult:
    statistic: float          # metric(A) - metric(B) on the full data
    p_value: float
    ci_low: float
    ci_high: float
    samples: int
    method: str


def _batches(total: int, n_units: int, s: int):
    size = max(1, BATCH_ELEMENTS // max(1, n_units * s))
    for start in range(0, total, size):
        yield min(size, total - start)


def batch_count(samples: int, n_units: int, s: int) -> int:
    """How many batches the tests below resample in (for a progress bar's total)."""
    return sum(1 for _ in _batches(samples, n_units, s))


def paired_bootstrap(a, b, aggregate, weights=None, strata=None, samples: int = 10_000,
                     confidence: float = 0.95, seed: int = 0, on_batch=None) -> TestResult:
    """Paired bootstrap over units (resampled within strata when given).

    ``on_batch()``, if given, is called after each resampling batch (progress).

    CI: percentile interval of the resampled differences. p-value: two-sided,
    the share of resampled differences on the other side of 0 from the
    observed difference (doubled, capped at 1), with add-one smoothing.
    """
    a, b, w = _prepare(a, b, weights)
    rng = np.random.default_rng(seed)
    observed = float(aggregate(a[None], w[None])[0] - aggregate(b[None], w[None])[0])
    groups = [np.arange(len(w))] if strata is None else \
        [np.flatnonzero(np.asarray(strata) == g) for g in np.unique(strata)]
    diffs = []
    for n in _batches(samples, len(w), a.shape[1]):
        idx = np.concatenate([g[rng.integers(0, len(g), size=(n, len(g)))] for g in groups],
                             axis=1)
        diffs.append(aggregate(a[idx], w[idx]) - aggregate(b[idx], w[idx]))
        if on_batch is not None:
            on_batch()
    d = np.concatenate(diffs)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
    if observed >= 0:
        tail = (np.sum(d <= 0) + 1) / (samples + 1)
    else:
        tail = (np.sum(d >= 0) + 1) / (samples + 1)
    return TestResult(observed, float(min(1.0, 2 * tail)), float(lo), float(hi), samples,
                      "paired bootstrap")


def randomization_test(a, b, aggregate, weights=None, samples: int = 10_000,
                       seed: int = 0, on_batch=None) -> TestResult:
    """Approximate paired randomization (permutation) test.

    Each sample swaps A's and B's statistics of every unit with probability
    1/2; p = (1 + #{|diff*| >= |diff|}) / (1 + samples), two-sided. A
    randomization test gives no interval: ci_low/ci_high are NaN (use the
    paired bootstrap's). ``on_batch`` as for :func:`paired_bootstrap`.

    Four units, A right on three, B on one (the aggregate: a weighted mean):

    >>> import numpy as np
    >>> mean = lambda s, w: (s[..., 0] * w).sum(-1) / w.sum(-1)
    >>> r = randomization_test(np.array([[1.], [1.], [1.], [0.]]),
    ...                        np.array([[0.], [1.], [0.], [0.]]), mean, samples=1000, seed=0)
    >>> r.statistic, round(r.p_value, 3)
    (0.5, 0.515)
    """
    a, b, w = _prepare(a, b, weights)
    rng = np.random.default_rng(seed)
    observed = float(aggregate(a[None], w[None])[0] - aggregate(b[None], w[None])[0])
    extreme = 0
    for n in _batches(samples, len(w), a.shape[1]):
        swap = rng.random((n, len(w))) < 0.5
        sa = np.where(swap[..., None], b[None], a[None])
        sb = np.where(swap[..., None], a[None], b[None])
        ww = np.broadcast_to(w, (n, len(w)))
        d = aggregate(sa, ww) - aggregate(sb, ww)
        extreme += int(np.sum(np.abs(d) >= abs(observed) - 1e-12))
        if on_batch is not None:
            on_batch()
    return TestResult(observed, (extreme + 1) / (samples + 1), float("nan"), float("nan"),
                      samples, "paired randomization")


def _prepare(a, b, weights):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim == 1:
        a, b = a[:, None], b[:, None]
    if a.shape != b.shape:
        raise ValueError(f"systems have different unit statistics: {a.shape} vs {b.shape}")
    if a.shape[0] == 0:
        raise ValueError("no units to compare")
    w = np.ones(a.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return a, b, w
