"""F1 with an interval from two independent estimates: precision (judged draws of
the submission's output) and recall (exhaustively annotated documents), spec
002's final protocol.

Estimates and bounds are first clipped to [0, 1] (:func:`clipped`). Each
estimate's sampling distribution is taken as a split normal fitted to its
interval: the estimate as the median, (estimate - low) / z the spread below and
(high - estimate) / z above, so an asymmetric (Wilson) interval near 0 or 1
stays asymmetric. Draws are clipped to [0, 1]; F1 = 2PR / (P + R) of each pair
of independent draws; the interval is the draws' percentile interval and the
point estimate is F1 of the two point estimates. Seeded: the same inputs give
the same interval.
"""
from __future__ import annotations

import numpy as np

from ..metrics.estimation import z_value

DRAWS = 20_000


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def clipped(e: tuple[float, float, float], name: str = "estimate"
            ) -> tuple[float, float, float]:
    """(estimate, low, high) moved into [0, 1], the interval stretched to hold the
    estimate: an importance-sampling precision may overshoot 1 in a finite sample,
    while the true value cannot."""
    est, low, high = e
    if not all(np.isfinite(v) for v in (est, low, high)) or low > high:
        raise ValueError(f"{name} needs a finite estimate and interval, got {est} "
                         f"[{low}, {high}]")
    est = min(max(est, 0.0), 1.0)
    return est, min(max(low, 0.0), est), max(min(high, 1.0), est)


def _split_normal(est: float, low: float, high: float, z: float, u: np.ndarray) -> np.ndarray:
    below, above = max(est - low, 0.0) / z, max(high - est, 0.0) / z
    return np.clip(est + u * np.where(u < 0, below, above), 0.0, 1.0)


def f1_interval(p: tuple[float, float, float], r: tuple[float, float, float],
                confidence: float = 0.95, draws: int = DRAWS, seed: int = 0
                ) -> tuple[float, float, float]:
    """(F1, low, high) from precision ``p`` and recall ``r``, each (estimate, low, high)."""
    p, r = clipped(p, "precision"), clipped(r, "recall")
    z = z_value(confidence)
    rng = np.random.default_rng(seed)
    ps = _split_normal(*p, z, rng.standard_normal(draws))
    rs = _split_normal(*r, z, rng.standard_normal(draws))
    with np.errstate(invalid="ignore", divide="ignore"):
        fs = np.where(ps + rs > 0, 2 * ps * rs / (ps + rs), 0.0)
    a = (1 - confidence) / 2
    low, high = np.quantile(fs, [a, 1 - a])
    point = f1(p[0], r[0])
    return point, float(min(low, point)), float(max(high, point))
