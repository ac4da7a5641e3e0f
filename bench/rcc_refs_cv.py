"""Cross-validated choice of the RCC reference-list features, on two text forms.

    python bench/rcc_refs_cv.py --data ../shared/data [--every 2] [--workers 2]
                                [--cache FILE.npz]

On the RCC training publications (the held-out fifth is not read; with ``--every
K`` every K-th of them in id order, to save time), every
publication's candidates and features (``rcc.features``, with the reference-list
columns ``ref_share`` and ``log_body_occ``) are computed twice: from its processed
JSON text and from a simulated PDF-to-text form with a made-up reference list
(``bench/pdf_form.py --references``). The publications are dealt to four folds by
their position in id order; for each feature set, one boosted stage-1 model
(``training._hgb``, the shipped settings) is fitted on the JSON rows of three folds
and scores the fourth fold's rows in both forms. The JSON scores' best-F1 threshold
(chosen on the out-of-fold scores, as training does) is applied to the PDF-form
scores too, since the model ships trained on JSON texts. A rule is scored beside
them, on each model: its pairs whose matches all lie in the reference list
(``ref_share`` 1) dropped, with the threshold chosen again on the JSON scores. The
folds' models are fitted in ``--workers`` forked processes. Stage 2 (the embedding
cosine) and the stage-1 bag are left out to keep the run short, so the F1 here is
stage 1's pair-level F1, not the shipped pipeline's. On a loaded machine set
``OMP_NUM_THREADS=1``: the boosted trees' thread pool spun for half an hour where
one thread fitted a feature set's four folds in 11 minutes.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from pdf_form import Simulator, render  # noqa: E402

from shareval.metrics.classification import best_f1_threshold, prf_from_counts  # noqa: E402
from shareval.systems import rcc, training  # noqa: E402
from shareval.systems.text import read_document  # noqa: E402

NEW = ("ref_share", "log_body_occ")
VARIANTS = {"without": (), "+ref_share+log_body_occ": NEW}
# a rule instead of, or beside, the features: a model's pairs whose matches all lie in
# the reference list are dropped (no retraining); rule variant -> the model it filters
RULES = {"without, refs-only dropped": "without",
         "+ref_share+log_body_occ, refs-only dropped": "+ref_share+log_body_occ"}
FOLDS = 4

_CATALOG = None
_SIM = None
_FORMS = None


def _init(catalog_path, data):
    global _CATALOG, _SIM
    _CATALOG = rcc.Catalog.load(catalog_path)
    _SIM = Simulator(data)


def _job(args):
    path, gold = args
    raw = read_document(Path(path))
    out = []
    for text in (raw, render(raw, 80, _SIM.references(Path(path).stem, raw))):
        cands, X = rcc.features(rcc.prepare_text(text), _CATALOG)
        out.append((X, np.array([_CATALOG.ids[c.entry] in gold for c in cands], bool)))
    return out


def _fit_fold(args):
    """One fold's stage-1 model on the JSON rows of the other folds; its scores of the
    fold's rows in both forms (run in a forked worker: ``_FORMS`` is shared)."""
    fold, cols, names = args
    X0, y0, g0 = _FORMS[0]
    train = g0 % FOLDS != fold
    model = training._hgb(names=names).fit(X0[train][:, cols], y0[train])
    return [model.predict_proba(X[g % FOLDS == fold][:, cols])[:, 1] for X, _, g in _FORMS]


def _columns(variant):
    drop = set(NEW) - set(VARIANTS[variant])
    names = [f for f in rcc.FEATURES if f not in drop]
    return [rcc.FEATURES.index(f) for f in names], names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache", type=Path, help="features saved here, read if present")
    args = ap.parse_args()
    data = args.data
    gold: dict[str, set] = {}
    for c in json.loads((data / "rcc" / "train" / "data_set_citations.json").read_text()):
        gold.setdefault(str(c["publication_id"]), set()).add(str(c["data_set_id"]))
    pubs = sorted((str(p["publication_id"]) for p in
                   json.loads((data / "rcc" / "train" / "publications.json").read_text())
                   if not training.rcc_held_out(p["publication_id"])), key=int)[::args.every]
    n_gold = sum(len(gold.get(p, ())) for p in pubs)
    if args.cache and args.cache.exists():
        z = np.load(args.cache)
        forms = [(z[f"X{k}"], z[f"y{k}"], z[f"g{k}"]) for k in range(2)]
    else:
        t0 = time.time()
        jobs = [(str(data / "rcc" / "train" / "texts" / f"{p}.json"), gold.get(p, set()))
                for p in pubs]
        with get_context("fork").Pool(args.workers, _init,
                                      (data / "rcc" / "catalog" / "dataset_text_dict.json",
                                       data)) as pool:
            rows = pool.map(_job, jobs, chunksize=16)
        print(f"features of {len(pubs)} publications in two forms: {time.time() - t0:.0f} s",
              flush=True)
        forms = []
        for k in range(2):
            X = np.vstack([r[k][0] for r in rows if len(r[k][1])])
            y = np.concatenate([r[k][1] for r in rows if len(r[k][1])])
            g = np.concatenate([np.full(len(r[k][1]), i) for i, r in enumerate(rows)
                                if len(r[k][1])])
            forms.append((X, y, g))
        if args.cache:
            np.savez(args.cache, **{f"{a}{k}": v for k, f in enumerate(forms)
                                    for a, v in zip("Xyg", f)})
    print(f"{n_gold} gold pairs; candidate pairs JSON {len(forms[0][1])} "
          f"({int(forms[0][1].sum())} gold), PDF form {len(forms[1][1])} "
          f"({int(forms[1][1].sum())} gold)", flush=True)
    share = rcc.FEATURES.index("ref_share")
    global _FORMS
    _FORMS = forms
    scores: dict[str, list] = {}
    # each rule right after the model it filters
    order = [v for model in VARIANTS for v in (model, *(r for r in RULES if RULES[r] == model))]
    for variant in order:
        t0 = time.time()
        if variant in RULES:
            p = [np.where(X[:, share] >= 1.0, 0.0, q)
                 for (X, _, _), q in zip(forms, scores[RULES[variant]])]
        else:
            cols, names = _columns(variant)
            p = [np.zeros(len(f[1])) for f in forms]
            with get_context("fork").Pool(min(args.workers, FOLDS)) as pool:
                parts = pool.map(_fit_fold, [(fold, cols, names) for fold in range(FOLDS)],
                                 chunksize=1)
            for fold, part in enumerate(parts):
                for k, (_, _, g) in enumerate(forms):
                    p[k][g % FOLDS == fold] = part[k]
        scores[variant] = p
        cut, f1 = best_f1_threshold(p[0], forms[0][1], n_gold, plateau=0.005)
        line = [f"{variant:42s}"]
        for k, name in enumerate(("JSON", "PDF form")):
            y = forms[k][1]
            tp = int((y & (p[k] >= cut)).sum())
            fp = int((~y & (p[k] >= cut)).sum())
            P, R, F = prf_from_counts(tp, fp, n_gold - tp)
            line.append(f"{name} F1 {100 * F:.1f} (P {100 * P:.1f}, R {100 * R:.1f})")
        print(" | ".join(line) + f" | threshold {cut:.3f} | {time.time() - t0:.0f} s",
              flush=True)


if __name__ == "__main__":
    main()
