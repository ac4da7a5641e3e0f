"""Cross-validation of SV-Ident detection variants on the training split only.

    PYTHONPATH=src python bench/svident_detection_cv.py [--data ../shared/data] VARIANT...
    PYTHONPATH=src python bench/svident_detection_cv.py --learning-curve

The documents of ``sv-ident/train`` that ``training.svident_held_out`` does not hold
out are dealt, per language in id order, to five folds; each fold is scored by a
model trained on the other four. The held-out documents are never read. Printed per
variant: F1-macro (per document, then per language, then the mean of the languages,
as shareval's scorer) at log-odds 0 (the shipped threshold), and with a threshold per
language chosen, for each fold, on the other four folds' out-of-fold scores (grid
-2..2, step 0.2). ``--centered A`` also scores the shipped recipe's out-of-fold
log-odds minus A times the median of their document's (a document-context variant).
The record of the round that used it: docs/dev/systems-experiments-round4.md.

``--learning-curve``: the shipped recipe trained on n = 1..4 of the four other folds
(every such subset) for each fold; printed per n, the mean over folds and subsets of
the fold's F1-macro. Whether the curve still rises at n = 4 decides whether the shipped
model should be trained on all documents (docs/dev/systems-experiments-round7-detection.md).
"""
from __future__ import annotations

import argparse
import itertools
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

from shareval.systems import svident, training
from shareval.systems.lexical import FOLDS

VARIANTS = {                    # name -> options of features()/scores()
    "shipped": {},
    "fold": {"fold": True},     # character n-grams over lower-cased, umlaut-folded text
    "perlang": {"perlang": True},                     # one model per language
    "perlang_fold": {"perlang": True, "fold": True},
    "augment": {"augment": True},                     # shared + per-language feature copies
    "augment_fold": {"augment": True, "fold": True},
    "C1": {"C": 1.0},
}
GRID = np.round(np.arange(-2, 2.01, 0.2), 1)


class Data:
    def __init__(self, data: Path):
        from shareval.systems.embed import embed
        rows = training.read_svident_train(data / "sv-ident" / "train" / "train.tsv")
        held = training.svident_held_out(rows)
        rows = [r for r in rows if r["doc_id"] not in held]
        self.S = [r["sentence"] for r in rows]
        self.V = embed(self.S)
        self.y = np.array([int(r["is_variable"]) for r in rows])
        self.lang = np.array([r["lang"] for r in rows])
        self.doc = np.array([r["doc_id"] for r in rows])
        by_doc: dict[str, Counter] = {}
        for r in rows:
            by_doc.setdefault(r["doc_id"], Counter())[r["lang"]] += 1
        fold_of = {}
        for lang in ("de", "en"):
            docs = sorted((d for d, c in by_doc.items() if c.most_common(1)[0][0] == lang),
                          key=lambda d: (len(d), d))
            fold_of.update((d, i % 5) for i, d in enumerate(docs))
        self.fold = np.array([fold_of[d] for d in self.doc])

    def f1(self, mask, pred, langs=("en", "de")) -> dict:
        per = {}
        for lang in langs:
            m_lang = mask & (self.lang == lang)
            per[lang] = float(np.mean([
                f1_score(self.y[m], pred[m], average="macro", zero_division=0)
                for d in sorted(set(self.doc[m_lang])) for m in [m_lang & (self.doc == d)]]))
        per = {"all": float(np.mean(list(per.values()))), **per}
        return {k: round(v, 4) for k, v in per.items()}


def features(d: Data, opts: dict):
    common = dict(n_features=svident.HASH_FEATURES, alternate_sign=False, norm="l2")
    words = HashingVectorizer(analyzer="word", ngram_range=(1, 2),
                              token_pattern=r"(?u)\b\w+\b", **common)
    pre = (lambda s: s.lower().translate(FOLDS)) if opts.get("fold") else None
    chars = HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), preprocessor=pre, **common)
    X = sparse.hstack([words.transform(d.S), chars.transform(d.S),
                       sparse.csr_matrix(d.V)]).tocsr()
    if opts.get("augment"):
        de, en = (sparse.diags((d.lang == lang).astype(float)) for lang in ("de", "en"))
        X = sparse.hstack([X, de @ X, en @ X]).tocsr()
    return X


def log_odds(d: Data, X, fit, test, neighbors=None, C: float = 4.0) -> np.ndarray:
    """The shipped recipe's log-odds of the ``test`` rows: logistic regression fitted on
    the ``fit`` rows plus the neighbour term over the ``neighbors`` rows (default: ``fit``)."""
    neighbors = fit if neighbors is None else neighbors
    clf = LogisticRegression(C=C, max_iter=5000, class_weight="balanced").fit(X[fit], d.y[fit])
    return X[test] @ clf.coef_.ravel() + clf.intercept_[0] + svident.NEIGHBOR_WEIGHT \
        * svident.neighbor_margin(d.V[test], d.V[neighbors], d.y[neighbors])


def out_of_fold(d: Data, opts: dict) -> np.ndarray:
    X, oof = features(d, opts), np.zeros(len(d.y))
    groups = [d.lang == lang for lang in ("en", "de")] if opts.get("perlang") \
        else [np.ones(len(d.y), bool)]
    for k in range(5):
        for in_group in groups:
            b = in_group & (d.fold == k)
            oof[b] = log_odds(d, X, in_group & (d.fold != k), b, d.fold != k,
                              opts.get("C", 4.0))
    return oof


def per_language_thresholds(d: Data, oof: np.ndarray):
    pred, chosen = np.zeros(len(d.y), int), []
    for k in range(5):
        for lang in ("en", "de"):
            other = (d.fold != k)
            t = max(GRID, key=lambda t: d.f1(other, (oof >= t).astype(int), (lang,))["all"])
            m = (d.fold == k) & (d.lang == lang)
            pred[m] = oof[m] >= t
            chosen.append(f"{lang} {t:g}")
    return pred, chosen


def centered(d: Data, oof: np.ndarray, a: float) -> np.ndarray:
    out = oof.copy()
    for doc in set(d.doc):
        m = d.doc == doc
        out[m] -= a * np.median(oof[m])
    return out


def learning_curve(d: Data) -> None:
    X = features(d, {})
    for n in range(1, 5):
        t0, scores, docs = time.time(), [], []
        for k in range(5):
            for subset in itertools.combinations([f for f in range(5) if f != k], n):
                a, b = np.isin(d.fold, subset), d.fold == k
                docs.append(len(set(d.doc[a])))
                pred = np.zeros(len(d.y), int)
                pred[b] = log_odds(d, X, a, b) >= 0
                scores.append(d.f1(b, pred))
        print(json.dumps({"training_folds": n, "documents": round(float(np.mean(docs)), 1),
                          "runs": len(scores), **{key: round(float(np.mean(
                              [s[key] for s in scores])), 4) for key in ("all", "en", "de")},
                          "seconds": round(time.time() - t0)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="*", help=", ".join(sorted(VARIANTS)))
    ap.add_argument("--learning-curve", action="store_true")
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--centered", type=float, nargs="*", default=[])
    args = ap.parse_args()
    if not args.variants and not args.learning_curve:
        ap.error("name a variant or --learning-curve")
    if set(args.variants) - set(VARIANTS):
        ap.error(f"unknown variant(s): {', '.join(sorted(set(args.variants) - set(VARIANTS)))}")
    d = Data(args.data)
    if args.learning_curve:
        learning_curve(d)
    everywhere = np.ones(len(d.y), bool)
    for name in args.variants:
        t0 = time.time()
        oof = out_of_fold(d, VARIANTS[name])
        pred, chosen = per_language_thresholds(d, oof)
        r = {"variant": name, "cv": d.f1(everywhere, (oof >= 0).astype(int)),
             "cv_per_language_thresholds": d.f1(everywhere, pred), "thresholds": chosen}
        for a in args.centered:
            r[f"cv_centered_{a:g}"] = d.f1(everywhere, (centered(d, oof, a) >= 0).astype(int))
        r["seconds"] = round(time.time() - t0)
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
