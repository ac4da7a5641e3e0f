"""Rich Context Competition: dataset citations, mentions, research fields and methods."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from ..formats.digits import natural_key
from ..formats.errors import InvalidInput, Problem
from ..formats.rcc import Citations, Mentions, read_citations, read_mentions, read_values
from ..metrics.classification import prf_from_counts, safe_div
from ..metrics.mentions import (CLEANING_RULES, CLEANINGS, cleaner, jaccard_empty_one,
                                jaccard_empty_zero, kaggle_predictions, match_partial,
                                normalize_exact)
from . import register
from .base import Option, Task, UnitStats, load_checked, micro_f1

PR_CURVE_POINTS = 101


def _prf(tp, fp, fn, prefix=""):
    p, r, f = (float(x) for x in prf_from_counts(tp, fp, fn))
    return {f"{prefix}precision": p, f"{prefix}recall": r, f"{prefix}f1": f}


def _zero_division(predicted, gold, what: str, min_score) -> list[str]:
    """The warnings of docs/conventions.md "Zero division is 0": precision with no
    prediction, recall with no gold item."""
    kept = "" if min_score is None else f" with a score >= {min_score}"
    out = []
    if not predicted:
        out.append(f"no submitted {what}{kept}: precision and F1 are 0 (0/0)")
    if not gold:
        out.append(f"no reference {what}: recall and F1 are 0 (0/0)")
    return out


# ---------------------------------------------------------------------------
# Dataset citations: (publication, dataset) pairs

@register
class RccCitations(Task):
    name = "rcc-citations"
    description = ("Rich Context: which catalog datasets each publication cites; micro P/R/F1 "
                   "over (publication_id, data_set_id) pairs.")
    primary_metric = "f1"
    options = (
        Option("min_score", float, None, "keep only submitted pairs with score >= X"),
    )
    figure = "the precision-recall curve over score thresholds"
    conventions = {
        "unit": "the set of (publication_id, data_set_id) pairs; ids compared as strings",
        "averaging": "micro: tp, fp, fn summed over all pairs",
        "duplicates": "a pair submitted twice counts once (highest score kept), with a warning",
        "true_negatives": "not counted (as in the competition)",
        "zero_division": "0, with a warning",
        "per_publication_flags": "above_mean_fp / above_mean_fn mark publications whose fp or "
                                 "fn exceeds the mean over the publications in the breakdown",
        "breakdown_publications": "publications of the reference folder's publications.json when "
                                  "given, else those in the reference or the submission",
        "pr_curve": "one point per distinct submitted score (thresholds score >= t), "
                    f"at most {PR_CURVE_POINTS} points in the JSON",
    }

    def load_reference(self, path):
        return load_checked(read_citations, path, False)

    def load_submission(self, path, reference=None, keep=None):
        """``keep``: which valid records to hold (``read_citations``); ``validate`` holds
        only those naming a publication outside the corpus, the ones it reports."""
        def check(sub, problems):
            known = set(reference.publications)
            unknown = [c for c in sub.records if c.publication_id not in known]
            problems.summarize(sub.path, "publication_id", [c.publication_id for c in unknown],
                               "{n} record names a publication not in the evaluated corpus",
                               "{n} records name publications not in the evaluated corpus",
                               lines=[c.line for c in unknown],
                               records=[c.index for c in unknown])
        known_corpus = reference is not None and reference.publications is not None
        return load_checked(read_citations, path, True, keep,
                            check=check if known_corpus else None)

    def validate(self, submission, reference=None, name: str | None = None) -> list[str]:
        """As ``Task.validate`` (the same problems, the same warnings: none), without
        holding the valid records a verdict does not need (uploads' memory, issue 41)."""
        if not isinstance(submission, (str, Path)):
            return super().validate(submission, reference, name)
        ref = self.reference(reference) if reference is not None else None
        corpus = None if ref is None or ref.publications is None else set(ref.publications)
        sub = self.load_submission(submission, ref, keep=lambda c: corpus is not None and
                                   c.publication_id not in corpus)
        return list(sub.warnings)

    @staticmethod
    def pairs(citations: Citations, min_score=None) -> tuple[dict, int]:
        """{(pub, dataset): best score}, and how many duplicate records were merged."""
        out: dict[tuple[str, str], float] = {}
        dup = 0
        for c in citations.records:
            if min_score is not None and c.score < min_score:
                continue
            key = (c.publication_id, c.data_set_id)
            if key in out:
                dup += 1
                out[key] = max(out[key], c.score)
            else:
                out[key] = c.score
        return out, dup

    def _confusion(self, ref, sub, min_score):
        gold, gold_dup = self.pairs(ref)
        pred, dup = self.pairs(sub, min_score)
        pubs = list(ref.publications) if ref.publications is not None else \
            sorted({p for p, _ in gold} | {p for p, _ in pred}, key=natural_key)
        per = {p: [0, 0, 0] for p in pubs}
        for key in pred:
            per.setdefault(key[0], [0, 0, 0])[0 if key in gold else 1] += 1
        for key in gold:
            if key not in pred:
                per.setdefault(key[0], [0, 0, 0])[2] += 1
        return gold, pred, per, dup, gold_dup

    def _score(self, ref, sub, min_score):
        gold, pred, per, dup, gold_dup = self._confusion(ref, sub, min_score)
        counts_arr = np.array(list(per.values()), dtype=float).reshape(-1, 3)
        tp, fp, fn = (int(x) for x in counts_arr.sum(axis=0))
        metrics = {**_prf(tp, fp, fn), "tp": tp, "fp": fp, "fn": fn}
        mean_fp, mean_fn = (float(x) for x in counts_arr.mean(axis=0)[1:]) if len(per) else (0, 0)
        per_pub = {}
        for p, (a, b, c) in per.items():
            row = {"tp": a, "fp": b, "fn": c, **_prf(a, b, c)}
            row["above_mean_fp"] = b > mean_fp
            row["above_mean_fn"] = c > mean_fn
            per_pub[p] = row
        curve = pr_curve(gold, pred)
        warnings = _zero_division(pred, gold, "pairs", min_score)
        if dup:
            warnings.append(f"{dup} duplicate (publication_id, data_set_id) records in the "
                            f"submission were counted once")
        if gold_dup:
            warnings.append(f"{gold_dup} duplicate pairs in the reference were counted once")
        result = self.new_result(
            metrics,
            breakdowns={"per_publication": per_pub, "pr_curve": _thin(curve)},
            counts={"reference_pairs": len(gold), "submitted_pairs": len(pred),
                    "submitted_records": len(sub.records), "duplicate_records": dup,
                    "publications": len(per),
                    "publications_above_mean_fp": sum(r["above_mean_fp"] for r in per_pub.values()),
                    "publications_above_mean_fn": sum(r["above_mean_fn"] for r in per_pub.values()),
                    "mean_fp_per_publication": mean_fp, "mean_fn_per_publication": mean_fn},
            warnings=warnings)
        result.conventions["min_score"] = min_score
        result.figure = {"pr_curve": curve, "title": "Precision and recall over score thresholds"}
        return result

    def unit_stats(self, reference, submission, min_score=None):
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        _, _, per, _, _ = self._confusion(ref, sub, min_score)
        units = list(per)
        return UnitStats("f1", units, np.array([per[u] for u in units], dtype=float).reshape(-1, 3),
                         micro_f1, np.ones(len(units)))


def pr_curve(gold: dict, pred: dict) -> list[dict]:
    """Precision/recall/F1 when keeping pairs with score >= t, for each distinct t (desc)."""
    if not pred:
        return []
    keys = list(pred)
    scores = np.array([pred[k] for k in keys])
    hit = np.array([k in gold for k in keys], dtype=float)
    order = np.argsort(-scores, kind="stable")
    s, h = scores[order], hit[order]
    tp = np.cumsum(h)
    n = np.arange(1, len(s) + 1)
    last = np.append(s[1:] != s[:-1], True)        # last row of each distinct score
    tp, n, t = tp[last], n[last], s[last]
    p = safe_div(tp, n)
    r = safe_div(tp, len(gold))
    f = safe_div(2 * tp, n + len(gold))
    return [{"threshold": float(a), "precision": float(b), "recall": float(c), "f1": float(d),
             "pairs": int(e)} for a, b, c, d, e in zip(t, p, r, f, n)]


def _thin(curve: list[dict]) -> dict:
    if len(curve) > PR_CURVE_POINTS:
        idx = np.unique(np.linspace(0, len(curve) - 1, PR_CURVE_POINTS).round().astype(int))
        curve = [curve[i] for i in idx]
    return {f"{c['threshold']:.6g}": {k: v for k, v in c.items() if k != "threshold"}
            for c in curve}


# ---------------------------------------------------------------------------
# Dataset mentions: strings per publication, matched by metrics.mentions
# (normalisation, the Kaggle 2021 cleaning and its greedy one-to-one rule)


def _cleaner(cleaning: str):
    try:
        return cleaner(cleaning)
    except ValueError as e:
        raise InvalidInput([Problem("<arguments>", None, "cleaning", str(e))]) from None


@register
class RccMentions(Task):
    name = "rcc-mentions"
    version = "2"
    description = ("Rich Context: dataset mention strings per publication, matched exactly "
                   "(normalised) and partially (Kaggle 2021 rule, token Jaccard >= 0.5).")
    primary_metric = "partial_f1"
    options = (Option("min_score", float, None, "keep only mentions with score >= X"),
               Option("jaccard", float, 0.5, "partial-match threshold on token Jaccard",
                      low=0.0, high=1.0),
               Option("cleaning", str, "kaggle", "partial-match cleaning: kaggle (the "
                      "competition's ASCII clean_text) or unicode (NFKC, any script)",
                      choices=tuple(CLEANINGS),
                      refusal="unknown cleaning {value} (use one of {choices})"))
    conventions = {
        "gold": "per publication, the union of mention_list over its reference citations",
        "exact": "NFKC, case-folded, whitespace-collapsed strings; set intersection",
        "partial": "Coleridge Initiative (Kaggle 2021) rule: cleaned ground truths in sorted "
                   "order, each matched one-to-one to the unmatched cleaned prediction of "
                   "highest token Jaccard (ties: first in sorted order); a match >= threshold "
                   "is a true positive, otherwise the prediction stays unmatched",
        "duplicates": "exact: strings equal after normalisation count once per publication; "
                      "partial: see cleaning",
        "averaging": "micro over all publications (tp, fp, fn summed); per publication in "
                     "the breakdown",
        "f0_5": "partial F-beta with beta 0.5, the Kaggle 2021 ranking metric",
        "zero_division": "0, with a warning",
    }

    load_reference = RccCitations.load_reference

    def load_submission(self, path, reference=None):
        return load_checked(read_mentions, path)

    def _per_publication(self, ref: Citations, sub: Mentions, min_score, threshold, cleaning):
        clean = _cleaner(cleaning)
        gold: dict[str, set] = defaultdict(set)
        raw_gold: dict[str, list] = defaultdict(list)
        unmatchable = 0
        for c in ref.records:
            for m in c.mentions:
                if m.strip():
                    gold[c.publication_id].add(normalize_exact(m))
                    raw_gold[c.publication_id].append(m)
                    unmatchable += not clean(m).split()
        pred: dict[str, set] = defaultdict(set)
        raw_pred: dict[str, list] = defaultdict(list)
        for m in sub.records:
            if min_score is None or m.score >= min_score:
                pred[m.publication_id].add(normalize_exact(m.mention))
                raw_pred[m.publication_id] += (kaggle_predictions(m.mention)
                                               if cleaning == "kaggle" else [m.mention])
        per = {}
        for p in sorted(set(gold) | set(pred), key=natural_key):
            g, s = gold.get(p, set()), pred.get(p, set())
            e = (len(g & s), len(s - g), len(g - s))
            q = match_partial(raw_pred.get(p, []), raw_gold.get(p, []), threshold, cleaning)
            per[p] = e + q
        return per, unmatchable

    def _score(self, ref, sub, min_score, jaccard, cleaning):
        per, unmatchable = self._per_publication(ref, sub, min_score, jaccard, cleaning)
        tot = np.array(list(per.values()), dtype=float).reshape(-1, 6).sum(axis=0)
        metrics = {**_prf(*tot[:3], prefix="exact_"), **_prf(*tot[3:], prefix="partial_")}
        tp, fp, fn = tot[3:]
        metrics["partial_f0_5"] = float(safe_div(1.25 * tp, 1.25 * tp + 0.25 * fn + fp))
        per_pub = {p: {"exact_tp": v[0], "exact_fp": v[1], "exact_fn": v[2],
                       **_prf(*v[:3], prefix="exact_"),
                       "partial_tp": v[3], "partial_fp": v[4], "partial_fn": v[5],
                       **_prf(*v[3:], prefix="partial_")} for p, v in per.items()}
        counts = {"publications": len(per), "exact_tp": int(tot[0]), "exact_fp": int(tot[1]),
                  "exact_fn": int(tot[2]), "partial_tp": int(tot[3]), "partial_fp": int(tot[4]),
                  "partial_fn": int(tot[5]), "submitted_records": len(sub.records),
                  "gold_mentions_empty_after_cleaning": unmatchable}
        warnings = _zero_division(tot[0] + tot[1], tot[0] + tot[2], "mentions", min_score)
        if unmatchable:
            warnings.append(f"{unmatchable} gold mentions have no letter or digit left after "
                            f"{cleaning} cleaning and are left out of the partial scores"
                            + (" (--cleaning unicode keeps non-ASCII letters)"
                               if cleaning == "kaggle" else ""))
        result = self.new_result(metrics, breakdowns={"per_publication": per_pub},
                                 counts=counts, warnings=warnings)
        result.conventions["cleaning"] = cleaning
        result.conventions["cleaning_rule"] = CLEANING_RULES[cleaning]
        result.conventions["jaccard_threshold"] = jaccard
        result.conventions["min_score"] = min_score
        return result

    def unit_stats(self, reference, submission, min_score=None, jaccard=0.5, cleaning="kaggle"):
        self.checked_options(dict(min_score=min_score, jaccard=jaccard, cleaning=cleaning))
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        per, _ = self._per_publication(ref, sub, min_score, jaccard, cleaning)
        units = list(per)
        return UnitStats("partial_f1", units,
                         np.array([per[u][3:] for u in units], dtype=float).reshape(-1, 3),
                         micro_f1, np.ones(len(units)))


# ---------------------------------------------------------------------------
# Research fields and methods: no gold; distributions for the judges

TOP_VALUES = 50


@register
class RccFieldsMethods(Task):
    name = "rcc-fields-methods"
    description = ("Rich Context: research fields / methods per publication. No gold exists: "
                   "validation plus the value distributions the judges compared.")
    primary_metric = ""
    reference_required = False
    options = (Option("compare", str, None, "a second submission of the same kind to compare "
                                            "distributions and overlap with"),
               Option("top", int, TOP_VALUES, "how many most frequent values to list"))
    conventions = {
        "values": "compared after NFKC, case-folding and whitespace collapsing",
        "value_counts": "records per value, and distinct publications per value",
        "overlap": "Jaccard of the two submissions' distinct value sets, and the mean over "
                   "publications (in either submission) of the per-publication Jaccard",
        "reference": "not used: the competition judged these by hand (see shareval assess)",
    }

    def load_reference(self, path):
        return None

    def load_submission(self, path, reference=None):
        return load_checked(read_values, path)

    @staticmethod
    def _sets(sub):
        per_pub: dict[str, set] = defaultdict(set)
        counts: Counter = Counter()
        pubs_per_value: dict[str, set] = defaultdict(set)
        for pub, value, _, _ in sub.records:
            v = normalize_exact(value)
            per_pub[pub].add(v)
            counts[v] += 1
            pubs_per_value[v].add(pub)
        return per_pub, counts, pubs_per_value

    def _score(self, ref, sub, compare, top):
        per_pub, counts, pubs_per_value = self._sets(sub)
        breakdowns = {"value_counts": {v: {"records": n, "publications": len(pubs_per_value[v])}
                                       for v, n in counts.most_common(top)}}
        metrics = {"distinct_values": len(counts),
                   "values_per_publication": float(np.mean([len(s) for s in per_pub.values()]))
                   if per_pub else 0.0}
        result_counts = {"records": len(sub.records), "publications": len(per_pub),
                         "kind": sub.kind}
        if compare:
            other = self.submission(compare)
            if other.kind != sub.kind:
                raise InvalidInput([Problem(other.path, None, "kind",
                                            f"holds {other.kind} values, the submission holds "
                                            f"{sub.kind} values")])
            o_pub, o_counts, _ = self._sets(other)
            a, b = set(counts), set(o_counts)
            metrics["value_set_jaccard"] = jaccard_empty_zero(a, b)
            pubs = set(per_pub) | set(o_pub)
            metrics["mean_publication_jaccard"] = float(np.mean([
                jaccard_empty_one(per_pub.get(p, set()), o_pub.get(p, set()))
                for p in pubs])) if pubs else 0.0
            union = (counts + o_counts).most_common(top)
            breakdowns["compare"] = {v: {"records": counts.get(v, 0),
                                         "records_other": o_counts.get(v, 0)} for v, _ in union}
            result_counts.update({"records_other": len(other.records),
                                  "publications_other": len(o_pub),
                                  "shared_values": len(a & b)})
        return self.new_result(metrics, breakdowns=breakdowns, counts=result_counts)

