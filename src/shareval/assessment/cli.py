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


ESTIMATE_CONVENTIONS = {
    "precision (design)": "Hajek sum(y/pi)/sum(1/pi) over judged items the submission contains; "
                          "interval (low, high): Wilson on Kish's effective n (plain Wilson "
                          "for equal weights); normal_: the linearized variance "
                          "(with-replacement approximation); boot_: percentile bootstrap "
                          "over items",
    "precision (importance)": "Chaganty et al. 2017: sum_j w_ij mean_j(p_i/q_i * y) over the "
                              "draws of each submission j, q_i = sum_j w_ij p_j the mixture of "
                              "the submissions' uniform distributions; w_ij per 'weights' "
                              "(see 'weightings'); "
                              "normal interval from sum_j w_ij^2 s_j^2 / n_j",
    "weightings": "heuristic (default; the paper's and its authors' choice): w_ij ~ n_j "
                  "sum_x p_i(x) p_j(x) = n_j |X_i & X_j| / (|X_i| |X_j|), from the "
                  "'# overlaps:' line; size: w_ij ~ n_j; uniform: w_ij ~ 1 for each "
                  "submission with draws; rows sum to 1",
    "entity_precision": "P_e = P^r P^s P^o, the product of the relation, subject and object "
                        "questions' precisions (spec 002); percentile bootstrap interval",
    "recall": "share of the true items of the exhaustively annotated documents that the "
              "submission output; interval (low, high) over documents (Korn and Graubard: "
              "Wilson on the effective number of items, Student t with D-1 degrees of "
              "freedom; none with one document); item_: Wilson on the items as if "
              "independent; _boot_: bootstrap over documents",
    "recall_importance": "pool recall x |X_i| P_i / (correct items of the pool), the pool "
                         "total estimated with weights ~ n_j (uniform: equal) so that every "
                         "drawn output counts (Chaganty et al.); point estimate",
    "f1": "2PR/(P+R); interval: bootstrap of items and documents together",
    "several judges": "an item's value is the mean of its judges' answers (a 1-1 tie is 0.5); "
                      "with question chains a judge's answer is yes only if every question "
                      "they answered is yes",
    "empty": "no judged items: NaN (null in JSON)",
}


def sample_command(args, console) -> int:
    import sys

    from .outputs import parse_columns, read_outputs
    from .sample import draw_sample, overlaps_comment, sizes_comment, write_sample
    outs = read_outputs(args.outputs, parse_columns(args.key), args.doc_column)
    try:
        rows = draw_sample(outs, args.n, args.design, args.docs, args.seed)
    except ValueError as e:
        raise InvalidInput([Problem("<arguments>", None, "assess sample", str(e))]) from None
    write_sample(rows, args.output, sys.stdout,
                 sizes=sizes_comment(outs) + "\n" + overlaps_comment(outs))
    if args.output:
        p = sum(r.drawn_for == "precision" for r in rows)
        console.print(f"{args.output}: {p} precision rows, {len(rows) - p} recall rows "
                      f"({args.design} design, seed {args.seed})")
    return 0


def estimate_result(args) -> Result:
    from ..formats.errors import Problems
    from .estimate import estimate_all
    from .judgments import read_judgments
    problems = Problems()
    j = read_judgments(args.judgments, problems)
    problems.raise_if_any()
    try:
        table, warnings = estimate_all(j, args.method, args.confidence, args.bootstrap, args.seed,
                                       args.weights)
    except ValueError as e:
        raise InvalidInput([Problem(str(args.judgments), None, "estimate", str(e))]) from None
    conv = dict(ESTIMATE_CONVENTIONS)
    conv.update({"confidence": args.confidence, "bootstrap": args.bootstrap, "seed": args.seed,
                 "method": args.method})
    if args.method == "importance":
        conv["weights"] = args.weights
    return Result("assess-estimate", f"assess-estimate/1 (shareval {__version__})", conv,
                  {"submissions": float(len(table)), "judgments": float(len(j.records))},
                  breakdowns=split_table(table),
                  counts={"judges": len({r.judge for r in j.records if r.judge})},
                  warnings=warnings)


ENTITY = ("precision_relation", "precision_subject", "precision_object")


def _group(key: str) -> str:
    if key.startswith("entity_precision") or key in ENTITY:
        return "entity precision"
    if key == "judged_items" or key.startswith("precision"):
        return "precision"
    if key.startswith("recall") or key == "pool_recall":
        return "recall"
    return "f1"


def split_table(table: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """One breakdown per measure so each prints narrow: the estimate, then its
    intervals, named without the measure's prefix (precision_boot_low -> boot_low)."""
    out: dict[str, dict[str, dict]] = {}
    for name, row in table.items():
        for k, v in row.items():
            group = _group(k)
            prefix = group.replace(" ", "_")
            short = ("estimate" if k == prefix else k[len(prefix) + 1:]
                     if k.startswith(prefix + "_") else k)
            out.setdefault(group, {}).setdefault(name, {})[short] = v
    return out


def simulate_result(args) -> Result:
    from .simulate import make_world, run_simulations
    try:
        world = make_world(args.seed, docs=args.world_docs, systems=args.systems,
                           coverage=args.coverage)
    except ValueError as e:
        raise InvalidInput([Problem("<arguments>", None, "assess simulate", str(e))]) from None
    res = run_simulations(world, args.sims, args.n, args.docs, args.seed + 1)
    table = {f"{k[0]} {k[1]}": {"bias": v.bias, "worst |bias|/SE": v.worst_bias_se,
                                "coverage": v.coverage, "median width": v.median_width}
             for k, v in res.items()}
    base = res[("uniform", "precision")].median_width
    widths = {f"{k[0]}/uniform precision width": v.median_width / base
              for k, v in res.items() if k[1] == "precision" and k[0] != "uniform"}
    imp = {k[0].split("-")[-1]: v.median_width for k, v in res.items()
           if k[1] == "precision" and k[0].startswith("joint/importance-")}
    return Result("assess-simulate", f"assess-simulate/1 (shareval {__version__})",
                  {"world": "synthetic documents with true/false candidates; systems with "
                            "recall 0.35..0.75 sharing item difficulty (overlapping outputs); "
                            "coverage < 1: each system outputs only from its own band of that "
                            "share of the documents",
                   "draws": "system s of S draws n (0.5 + s/(S-1)) items (mean n)",
                   "truth": "precision and recall computed on the full synthetic world",
                   "bias": "mean over simulations and systems of estimate - truth",
                   "coverage": "share of 95% intervals that hold the truth",
                   "importance-W": "Chaganty et al.'s estimator with mixture weights W "
                                   "(heuristic, size, uniform; assess estimate --weights)"},
                  widths,
                  breakdowns={"estimators": table},
                  counts={"narrowest importance weighting": min(imp, key=imp.get),
                          "coverage": args.coverage, "simulations": args.sims,
                          "systems": args.systems,
                          "draws per system": args.n, "recall documents": args.docs})
