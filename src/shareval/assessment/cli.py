"""``shareval assess plan`` as a Result (same table and JSON shapes as scoring)."""
from __future__ import annotations

from dataclasses import asdict

from .. import __version__
from ..formats.errors import InvalidInput, Problem
from ..tasks.base import Result
from .plan import plan_for_budget, plan_for_width

CONVENTIONS = {
    "sample_size": "n = z^2 p (1 - p) / h^2, rounded up (spec 002, Economics); with "
                   "--population N: n / (1 + (n - 1) / N)",
    "z": "the normal quantile for --confidence unless --z is given (the spec uses z = 2)",
    "cost": "judgments x seconds x rate / 3600; only the share 1 - overlap is judged anew",
    "budget": "judgments = floor(budget x 3600 / (seconds x rate)); sample = judgments / "
              "(1 - overlap); half-width = z sqrt(p (1 - p) / sample)",
}


def plan_result(args) -> Result:
    try:
        if args.budget is not None:
            plan = plan_for_budget(args.budget, args.confidence, args.precision, args.seconds,
                                   args.rate, args.overlap, args.z)
        else:
            plan = plan_for_width(args.half_width, args.confidence, args.precision,
                                  args.seconds, args.rate, args.overlap, args.population, args.z)
    except ValueError as e:
        raise InvalidInput([Problem("<arguments>", None, "assess plan", str(e))]) from None
    d = asdict(plan)
    metrics = {k: float(d[k]) for k in ("judgments", "sample", "half_width", "cost", "hours")}
    return Result("assess-plan", f"assess-plan/1 (shareval {__version__})", dict(CONVENTIONS),
                  metrics, counts={"confidence": plan.confidence, "z": round(plan.z, 6),
                                   "precision": plan.precision, "seconds": args.seconds,
                                   "rate": args.rate, "overlap": args.overlap})
