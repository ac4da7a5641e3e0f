"""Agreement between a project's annotators, shown live during calibration rounds and
listed unit by unit for the curator.

Only finished work counts: annotator assignments with status "done", on units that
have at least two of them (the shared units). Figures (rules in metrics.agreement):

- spans: exact and partial one-to-one matching, F1 per pair of annotators pooled over
  the units both coded, and the mean over pairs;
- tokens: each shared unit's text cut into words and punctuation marks, each token
  labelled with the span label ("label/target" when linked, "O" outside); Cohen's
  kappa (the pair's, or the mean over pairs), Fleiss' kappa and nominal alpha;
- answers: the same three per question, one item per shared unit;
- links: per unit and annotator the set of entries linked (span targets and answers
  "variable"), Krippendorff's alpha with MASI and with Jaccard distance.

Undefined figures are None (NaN in the metrics, null in JSON).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from shareval.metrics.agreement import (MISSING, fleiss_kappa, krippendorff_alpha,
                                        krippendorff_alpha_nominal, pairwise_cohen,
                                        pairwise_span_f1, token_labels, token_offsets)

from .models import ANNOTATOR, ANSWER, DONE, SPAN, Annotation, Assignment

LINK_ANSWER = "variable"      # an answer that links the whole unit to an entry (SV-Ident)


def project_agreement(project, round=None) -> dict:
    """Agreement over ``project``'s shared units (of calibration round ``round`` when
    given; 0 is the regular units)."""
    work = _done_work(project, round)
    coders = sorted({c for by_coder in work.values() for c in by_coder})
    units = sorted(work, key=lambda u: (u.position, u.pk))
    spans_marked = any(x["spans"] for by in work.values() for x in by.values())
    out = {"competition": project.competition.slug, "project": project.slug,
           "round": round, "units": len(units), "coders": coders,
           "assignments": sum(len(by) for by in work.values()),
           "spans": None, "tokens": None, "questions": [], "links": None,
           "disagreements": _disagreements(units, work)}
    if project.schema.get("labels") or spans_marked:
        out["spans"] = _span_figures(units, work)
        out["tokens"] = _token_figures(units, work, coders)
    out["questions"] = _question_figures(project, units, work, coders)
    if project.schema.get("link") or any(x["links"] for by in work.values()
                                         for x in by.values()):
        out["links"] = _link_figures(units, work)
    return out


def _done_work(project, round) -> dict:
    """{unit: {username: {"spans": [...], "answers": {key: value}, "links": frozenset}}}
    for the shared units."""
    done = (Assignment.objects.filter(unit__project=project, role=ANNOTATOR, status=DONE)
            .select_related("user", "unit"))
    if round is not None:
        done = done.filter(unit__round=round)
    per_unit = defaultdict(list)
    for a in done:
        per_unit[a.unit].append(a)
    shared = {a.pk: a for group in per_unit.values() if len(group) >= 2 for a in group}
    coded = {pk: {"spans": [], "answers": {}, "links": set()} for pk in shared}
    rows = (Annotation.objects.filter(assignment_id__in=shared, kind__in=(SPAN, ANSWER))
            .values_list("assignment_id", "kind", "begin", "end", "label", "target", "value")
            .order_by("begin", "end", "label", "target", "pk"))
    for pk, kind, begin, end, label, target, value in rows:
        c = coded[pk]
        if kind == SPAN:           # a pair's span without a link: the pair's data set
            target = target or shared[pk].unit.meta.get("data_set_id", "")
            c["spans"].append((begin, end, label, target))
            if target:
                c["links"].add(target)
        elif label == LINK_ANSWER:
            if target or value:
                c["links"].add(target or value)
        elif value:
            c["answers"][label] = value
    work: dict = defaultdict(dict)
    for pk, a in shared.items():
        work[a.unit][a.user.username] = {**coded[pk], "links": frozenset(coded[pk]["links"])}
    return work


def _span_figures(units, work) -> dict:
    """Mean F1 over pairs for both modes, and per pair of annotators both modes'
    counts and scores (pairs that share no unit are left out)."""
    by_coder = defaultdict(dict)
    for u in units:
        for coder, x in work[u].items():
            by_coder[coder][u.pk] = x["spans"]
    by_coder = dict(sorted(by_coder.items()))
    out, pairs = {}, {}
    for mode in ("exact", "partial"):
        r = pairwise_span_f1(by_coder, mode)
        out[f"{mode}_f1"] = _number(r["mean_f1"])
        for (a, b), p in r["pairs"].items():
            if p["units"]:
                row = pairs.setdefault((a, b), {"a": a, "b": b, "units": p["units"],
                                                "n_a": p["n_a"], "n_b": p["n_b"]})
                row[mode] = {"tp": p["tp_a"], **{k: _number(p[k]) for k in
                                                 ("precision", "recall", "f1")}}
    return {**out, "pairs": list(pairs.values())}


def _token_figures(units, work, coders) -> dict:
    columns = []                       # one per token: {coder: label}
    for u in units:
        tokens = token_offsets(u.text)
        labelled = {c: token_labels(tokens, x["spans"]) for c, x in work[u].items()}
        columns.extend({c: labelled[c][k] for c in labelled} for k in range(len(tokens)))
    return _nominal(columns, coders)


def _question_figures(project, units, work, coders) -> list[dict]:
    texts = {q["key"]: q.get("text", "") for q in project.schema.get("questions", [])}
    found = {k for u in units for x in work[u].values() for k in x["answers"]}
    keys = list(texts) + sorted(found - set(texts))
    return [{"key": k, "text": texts.get(k, ""),
             **_nominal([{c: x["answers"][k] for c, x in work[u].items()
                          if k in x["answers"]} for u in units], coders)}
            for k in keys]


def _link_figures(units, work) -> dict:
    sets = [[x["links"] for x in work[u].values()] for u in units]
    return {"units": len(units),
            "alpha_masi": _number(krippendorff_alpha(sets, "masi")),
            "alpha_jaccard": _number(krippendorff_alpha(sets, "jaccard"))}


def _nominal(columns: list[dict], coders: list[str]) -> dict:
    """Cohen (mean over pairs), Fleiss and nominal alpha over items, each a
    {coder: label} of the coders who judged it.

    Fleiss' kappa needs the same number of judgments per item: it is computed over the
    items with the most common number (the larger on a tie), given as fleiss_items
    and fleiss_raters."""
    codes: dict[str, int] = {}
    matrix = np.full((len(coders), len(columns)), MISSING, dtype=np.int64)
    row = {c: i for i, c in enumerate(coders)}
    for k, col in enumerate(columns):
        for c, label in col.items():
            matrix[row[c], k] = codes.setdefault(label, len(codes))
    judged = (matrix != MISSING).sum(axis=0)
    pairs = []
    for (i, j), kappa in pairwise_cohen(matrix).items():
        both = int(np.sum((matrix[i] != MISSING) & (matrix[j] != MISSING)))
        if both:
            pairs.append({"a": coders[i], "b": coders[j], "items": both,
                          "kappa": _number(kappa)})
    defined = [p["kappa"] for p in pairs if p["kappa"] is not None]
    sizes = Counter(int(n) for n in judged if n >= 2)
    raters = max(sizes, key=lambda n: (sizes[n], n)) if sizes else 0
    keep = judged == raters
    return {"items": int(np.sum(judged >= 2)), "labels": len(codes),
            "cohen": sum(defined) / len(defined) if defined else None, "cohen_pairs": pairs,
            "fleiss": _number(fleiss_kappa(matrix[:, keep])) if raters else None,
            "fleiss_items": int(keep.sum()) if raters else 0, "fleiss_raters": raters,
            "alpha": _number(krippendorff_alpha_nominal(matrix))}


def _disagreements(units, work) -> list[dict]:
    """Units where the annotators' spans (exactly), answers or sets of links differ,
    each span marked agreed when every other annotator has the same one."""
    out = []
    for u in units:
        by_coder = dict(sorted(work[u].items()))
        span_sets = {c: Counter(x["spans"]) for c, x in by_coder.items()}
        keys = sorted({k for x in by_coder.values() for k in x["answers"]})
        differing = [k for k in keys
                     if len({x["answers"].get(k, "") for x in by_coder.values()}) > 1]
        links_differ = len({x["links"] for x in by_coder.values()}) > 1
        spans_differ = len({frozenset(s.items()) for s in span_sets.values()}) > 1
        if not (spans_differ or differing or links_differ):
            continue
        coders = []
        for c, x in by_coder.items():
            others = [s for o, s in span_sets.items() if o != c]
            spans = [{"begin": b, "end": e, "label": label, "target": t, "text": u.text[b:e],
                      "agreed": all(s[(b, e, label, t)] for s in others)}
                     for b, e, label, t in x["spans"]]
            coders.append({"coder": c, "spans": spans,
                           "answers": [(k, x["answers"].get(k, "")) for k in differing],
                           "links": sorted(x["links"])})
        out.append({"unit": u.pk, "key": u.key, "title": u.title, "round": u.round,
                    "coders": coders, "answer_keys": differing,
                    "links_differ": links_differ})
    return out


def _number(x) -> float | None:
    return None if x is None or math.isnan(x) else float(x)
