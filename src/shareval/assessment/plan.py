"""How many judgments a precision estimate needs, and what they cost.

The arithmetic of ../shared/specs/002 ("Economics"): estimating a proportion p
to a confidence-interval half-width h takes n = z^2 p (1 - p) / h^2 judgments
(z = 2 in the spec, so ±1% needs 4·10^4·p(1-p) <= 10^4), each costing
``seconds`` of a judge paid ``rate`` per hour. When submissions overlap, only
the share ``1 - overlap`` of a new submission's sample needs new judgments.
A finite output of N items needs fewer: n / (1 + (n - 1) / N).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..metrics.estimation import z_value


@dataclass(frozen=True)
class Plan:
    judgments: int            # to judge for this submission (after overlap)
    sample: int               # sample size of the estimate
    half_width: float
    confidence: float
    z: float
    precision: float
    cost: float
    hours: float


def _cost(new: float, seconds: float, rate: float) -> tuple[float, float]:
    hours = new * seconds / 3600
    return hours * rate, hours


def plan_for_width(half_width: float, confidence: float = 0.95, precision: float = 0.5,
                   seconds: float = 4.5, rate: float = 12.0, overlap: float = 0.0,
                   population: int | None = None, z: float | None = None) -> Plan:
    """Judgments for a target half-width (worst case at precision 0.5)."""
    if not 0 < half_width < 1:
        raise ValueError("half_width must be between 0 and 1")
    if not 0 <= overlap < 1:
        raise ValueError("overlap must be in [0, 1)")
    z = z_value(confidence) if z is None else z
    n = z * z * precision * (1 - precision) / half_width ** 2
    if population:
        n = n / (1 + (n - 1) / population)
    n = max(1, math.ceil(n - 1e-9))
    new = math.ceil(n * (1 - overlap) - 1e-9)
    cost, hours = _cost(new, seconds, rate)
    return Plan(new, n, half_width, confidence, z, precision, cost, hours)


def plan_for_budget(budget: float, confidence: float = 0.95, precision: float = 0.5,
                    seconds: float = 4.5, rate: float = 12.0, overlap: float = 0.0,
                    z: float | None = None) -> Plan:
    """What a budget buys: the judgments it pays for and the half-width they give."""
    if budget <= 0:
        raise ValueError("budget must be positive")
    z = z_value(confidence) if z is None else z
    new = math.floor(budget * 3600 / (seconds * rate) + 1e-9)
    n = math.floor(new / (1 - overlap) + 1e-9)
    hw = z * math.sqrt(precision * (1 - precision) / n) if n else float("inf")
    cost, hours = _cost(new, seconds, rate)
    return Plan(new, n, hw, confidence, z, precision, cost, hours)
