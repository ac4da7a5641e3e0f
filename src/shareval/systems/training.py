"""Training the reference systems' models from the shared training data.

Models are written as JSON/NPZ next to the code (``systems/models/``) and are
applied with numpy alone; scikit-learn is needed only here. Each training set has
a declared document-level split; with ``split="train"`` a model is trained on its
*training part*, so that ``bench/quality.py`` measures it on documents it never saw,
with ``split="all"`` on every document:

* RCC: publications whose integer id is divisible by 5 are held out (20%,
  ``splits.rcc_held_out``). The shipped model is trained on the training part.
* SV-Ident: per language, every fourth document in id order is held out
  (``splits.svident_held_out``). The shipped detection model is trained on all documents
  (30 against 24: the learning curve of
  docs/dev/systems-experiments-round7-detection.md still rises), so ``bench/quality.py``
  measures the same recipe trained on the training part.
* MATERIAL: nothing is learned; ``train_material`` tunes the two thresholds on a
  development pack the user supplies.
"""
from __future__ import annotations

import json
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from ..metrics.classification import best_f1_threshold, prf_from_counts
from . import rcc, rcc_mentions
from .rcc_mentions import SELECT_FEATURES
from .rcc_patterns import MENTION_FEATURES, mention_features
from .splits import (SHIPPED_SPLIT, SPLITS, check_split, rcc_held_out,  # noqa: F401
                     read_svident_train, svident_held_out)
from .text import read_document

RCC_FOLDS = 4


def _rcc_job(args):
    text_path, gold = args
    text = rcc.prepare_text(read_document(Path(text_path)))
    cands, X = rcc.features(text, _CATALOG)
    return (text, cands, X, np.array([_CATALOG.ids[c.entry] in gold for c in cands], bool))


_CATALOG: rcc.Catalog | None = None


def _init(catalog_path):
    global _CATALOG
    _CATALOG = rcc.Catalog.load(catalog_path)


# More specific or more complete evidence never lowers the score. Without these
# constraints the trees extrapolated wildly on catalogs unlike the training one (a bare
# five-title catalog: a whole title found in the text scored 3e-10).
RISING = {"max_n", "max_chars", "n_grams", "spec_sum", "exclusive", "title_cov",
          "title_prefix", "entry_cov", "score_ratio", "acronym_occ", "title_run_frac",
          "title_whole", "p1", "pub_ratio", "cosine", "log_body_occ"}
FALLING = {"rank", "log_min_df", "best_df", "sibling_rank", "pub_rank", "ref_share"}


def monotonic(names) -> list[int]:
    return [1 if n in RISING else -1 if n in FALLING else 0 for n in names]


def _hgb(seed=0, names=None):
    from sklearn.ensemble import HistGradientBoostingClassifier
    # no early stopping: its random 10% validation split stopped the second stage far too
    # soon (held-out F1 43 with it, 59 without, same features)
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                          min_samples_leaf=40, l2_regularization=1.0,
                                          early_stopping=False, random_state=seed,
                                          monotonic_cst=monotonic(names) if names else None)


def _oof(X, y, groups, names, folds=RCC_FOLDS, fit=None):
    """Out-of-fold probabilities; ``fit(X, y, groups)`` returns a model with
    ``predict_proba`` (default: one boosted model)."""
    from sklearn.model_selection import GroupKFold
    fit = fit or (lambda X, y, groups: _hgb(names=names).fit(X, y))
    p = np.zeros(len(y))
    for a, b in GroupKFold(folds).split(X, y, groups):
        p[b] = fit(X[a], y[a], groups[a]).predict_proba(X[b])[:, 1]
    return p


# Stage 1 is a bag: BAG boosted models, each on a random BAG_SHARE of the training
# publications, averaged in log-odds. One model was unstable: identical features scored
# 0.03 by one fold's model and 1.0 by another's. The bag raised the 4-fold CV F1 from
# 0.602 to 0.606 (docs/dev/systems-experiments-round1.md, step 3). Training scores with the
# sklearn members (_Bag); the shipped model holds them as one rcc.Trees.average.
BAG = 4
BAG_SHARE = 0.8


class _Bag:
    def __init__(self, models):
        self.models = models

    def predict_proba(self, X):
        raw = np.mean([m.decision_function(X) for m in self.models], axis=0)
        p = 1.0 / (1.0 + np.exp(-raw))
        return np.column_stack([1 - p, p])


def _fit_bag(X, y, groups, names, k=BAG, share=BAG_SHARE) -> _Bag:
    rng = np.random.default_rng(0)
    pubs = np.unique(groups)
    models = []
    for seed in range(k):
        keep = np.isin(groups, rng.choice(pubs, int(share * len(pubs)), replace=False))
        models.append(_hgb(seed, names).fit(X[keep], y[keep]))
    return _Bag(models)


def train_rcc(data_dir: str | Path, out: str | Path = rcc.MODEL_PATH, workers: int = 2,
              log=print, split: str = "train") -> dict:
    """Train the two-stage RCC citation model on ``data_dir`` (the folder holding
    ``train/`` and ``catalog/``): with ``split="train"`` (the shipped model) on the
    publications ``rcc_held_out`` does not hold out, with ``"all"`` on every one."""
    check_split(split)
    from .embed import embed
    data_dir = Path(data_dir)
    catalog_path = data_dir / "catalog" / "dataset_text_dict.json"
    gold: dict[str, set] = {}
    gold_mentions: dict[str, set] = {}
    for c in json.loads((data_dir / "train" / "data_set_citations.json").read_text()):
        gold.setdefault(str(c["publication_id"]), set()).add(str(c["data_set_id"]))
        gold_mentions.setdefault(str(c["publication_id"]), set()).update(
            m for m in c.get("mention_list") or [] if m.strip())
    pubs = [str(p["publication_id"])
            for p in json.loads((data_dir / "train" / "publications.json").read_text())]
    train = [p for p in pubs if split == "all" or not rcc_held_out(p)]
    t0 = time.time()
    jobs = [(str(data_dir / "train" / "texts" / f"{p}.json"), gold.get(p, set())) for p in train]
    with get_context("fork").Pool(workers, _init, (catalog_path,)) as pool:
        rows = pool.map(_rcc_job, jobs, chunksize=16)
    log(f"features of {len(train)} training publications: {time.time() - t0:.0f} s")
    _init(catalog_path)
    catalog = _CATALOG
    X = np.vstack([r[2] for r in rows if len(r[1])])
    y = np.concatenate([r[3] for r in rows if len(r[1])])
    pub_of = np.concatenate([np.full(len(r[1]), i) for i, r in enumerate(rows) if len(r[1])])
    n_gold = sum(len(gold.get(p, ())) for p in train)
    log(f"{len(y)} candidate pairs, {int(y.sum())} of {n_gold} gold pairs among them")

    def bag(X, y, groups):
        return _fit_bag(X, y, groups, rcc.FEATURES)
    p1_oof = _oof(X, y, pub_of, rcc.FEATURES, fit=bag)
    stage1 = bag(X, y, pub_of)
    cosine_min = 0.02
    # stage 2 learns from the pairs it will judge: stage-1 (out-of-fold) probability >=
    # cosine_min; the others score 0, as in RccModel.score
    near = np.flatnonzero(p1_oof >= cosine_min)
    cos = []            # in the order of `near`: publication by publication
    offset = 0
    for text, cands, _, _ in rows:
        mine = np.flatnonzero(p1_oof[offset:offset + len(cands)] >= cosine_min)
        cos.append(rcc.cosines(text, [cands[i] for i in mine], catalog, embed))
        offset += len(cands)
    cos = np.concatenate(cos)
    X2 = rcc.stage2_features(p1_oof[near], list(pub_of[near]), cos)
    p2_oof = np.zeros(len(y))
    p2_oof[near] = _oof(X2, y[near], pub_of[near], rcc.STAGE2)
    p2_oof[rcc.reference_only(X)] = 0.0         # as RccModel.score: never output
    threshold, f1 = best_f1_threshold(p2_oof, y, n_gold, plateau=0.005)
    stage2 = _hgb(names=rcc.STAGE2).fit(X2, y[near])
    gold_mentions = [gold_mentions.get(p, set()) for p in train]
    mentions, cited_of, pattern_of = _train_mentions(rows, gold_mentions, p2_oof, threshold,
                                                     catalog, log)
    selector, selector_threshold, selector_f1, prior = _train_selector(
        [r[0] for r in rows], cited_of, pattern_of, gold_mentions, log)
    import sklearn
    meta = {"trained_on": "all rcc/train publications" if split == "all" else
                          "rcc/train publications whose id is not divisible by 5",
            "split": split,
            "publications": len(train), "pairs": int(len(y)), "gold_pairs": n_gold,
            "cross_validated_f1": round(f1, 4), "stage1_bag": [BAG, BAG_SHARE],
            "cross_validated_mention_partial_f1": round(selector_f1, 4),
            "sklearn": sklearn.__version__}
    model = rcc.RccModel(rcc.Trees.average([rcc.Trees.from_sklearn(m, rcc.FEATURES)
                                            for m in stage1.models]),
                         rcc.Trees.from_sklearn(stage2, rcc.STAGE2), threshold, cosine_min, meta,
                         mentions=rcc.Trees.from_sklearn(mentions, MENTION_FEATURES),
                         selector=rcc.Trees.from_sklearn(selector, SELECT_FEATURES),
                         selector_threshold=selector_threshold, prior=prior)
    model.save(out)
    log(f"threshold {threshold:.3f}, {RCC_FOLDS}-fold F1 on training publications {f1:.3f}; "
        f"model written to {out} ({time.time() - t0:.0f} s)")
    return meta


def _mention_hgb():
    from sklearn.ensemble import HistGradientBoostingClassifier
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, min_samples_leaf=40,
                                          random_state=0)


def _train_mentions(rows, gold_mentions, p2_oof, threshold, catalog, log):
    """The pattern-mention scorer (``rcc_patterns``), and per training publication its
    out-of-fold catalog-derived mentions (mention -> citation score) and pattern mentions
    (mention -> out-of-fold pattern score), from which ``_train_selector`` learns.

    Each training publication is taken as the citation model would output it out of
    fold: its pairs at or above ``threshold`` give the catalog-derived mentions and the
    top citation score. A pattern mention is positive when it matches a gold mention
    of the publication by the scorer's partial rule (token Jaccard >= 0.5)."""
    from sklearn.model_selection import GroupKFold
    from ..metrics.mentions import jaccard_empty_zero, tokens as mention_tokens
    found_of, Xs, ys, pub_of, names = [], [], [], [], []
    offset = 0
    for i, ((text, cands, _, _), gm) in enumerate(zip(rows, gold_mentions)):
        p2 = p2_oof[offset:offset + len(cands)]
        offset += len(cands)
        cited = rcc.cited_mentions(text, catalog, cands, p2, threshold)
        found: dict[str, float] = {}
        for k, mentions in cited:
            for m in mentions:
                found[m] = max(found.get(m, 0.0), round(float(p2[k]), 4))
        found_of.append(found)
        ms, X = mention_features(text, catalog.index, list(found),
                                 round(float(p2[cited[0][0]]), 4) if cited else 0.0)
        gold_tokens = [mention_tokens(g) for g in gm]
        for m, x in zip(ms, X):
            Xs.append(x)
            best = max((jaccard_empty_zero(mention_tokens(m), g) for g in gold_tokens), default=0)
            ys.append(best >= 0.5)
            pub_of.append(i)
            names.append(m)
    X, y, pub_of = np.array(Xs), np.array(ys, bool), np.array(pub_of)
    oof = np.zeros(len(y))
    for a, b in GroupKFold(RCC_FOLDS).split(X, y, pub_of):
        oof[b] = _mention_hgb().fit(X[a], y[a]).predict_proba(X[b])[:, 1]
    log(f"{len(y)} pattern mentions ({int(y.sum())} match a gold mention)")
    pattern_of: list[dict] = [{} for _ in rows]
    for k, (i, m) in enumerate(zip(pub_of, names)):
        pattern_of[i][" ".join(m.split())] = round(float(oof[k]), 4)
    return _mention_hgb().fit(X, y), found_of, pattern_of


def _train_selector(texts, cited_of, pattern_of, gold_mentions, log):
    """The mention selector (``rcc_mentions``), its threshold and its string prior.

    Candidates are the forms of each training publication's out-of-fold mentions; a
    form is positive when the scorer's one-to-one rule, run over all of them, matches
    it to a gold mention, so that of two forms matching the same gold mention the
    closer one is learned (the other would be a false positive). The prior
    feature of a publication's forms is counted on the other folds' publications only,
    and the threshold maximizes the cross-validated partial mention F1."""
    from sklearn.model_selection import GroupKFold
    from ..metrics.mentions import match_partial, partial_matches
    cands_of = [rcc_mentions.candidates(c, p) for c, p in zip(cited_of, pattern_of)]
    keys, labels, pub_of = [], [], []
    for i, (cands, gm) in enumerate(zip(cands_of, gold_mentions)):
        matched = set(partial_matches(list(cands), list(gm)).values())
        for key in cands:
            keys.append(key)
            labels.append(key in matched)
            pub_of.append(i)
    y, pub_of = np.array(labels, bool), np.array(pub_of)
    start = np.searchsorted(pub_of, np.arange(len(texts) + 1))
    folds = list(GroupKFold(RCC_FOLDS).split(y, y, pub_of))
    X = np.zeros((len(y), len(SELECT_FEATURES)))
    for a, b in folds:
        prior = rcc_mentions.prior_counts([keys[j] for j in a], y[a])
        for i in np.unique(pub_of[b]):
            X[start[i]:start[i + 1]] = rcc_mentions.features(cands_of[i], texts[i], prior)
    oof = np.zeros(len(y))
    for a, b in folds:
        oof[b] = _mention_hgb().fit(X[a], y[a]).predict_proba(X[b])[:, 1]
    best = (-1.0, 0.5)
    for t in np.round(np.arange(0.1, 0.91, 0.05), 2):
        tot = np.zeros(3)
        for i, gm in enumerate(gold_mentions):
            kept = [keys[k] for k in range(start[i], start[i + 1]) if oof[k] >= t]
            tot += match_partial(kept, list(gm))
        f1 = float(prf_from_counts(*tot)[2])
        if f1 > best[0]:
            best = (f1, float(t))
    prior = rcc_mentions.prior_counts(keys, y)
    log(f"{len(y)} mention forms ({int(y.sum())} match a gold mention), {len(prior)} in the "
        f"prior; threshold {best[1]:.2f}, {RCC_FOLDS}-fold partial mention F1 {best[0]:.3f}")
    return _mention_hgb().fit(X, y), best[1], best[0], prior


# ---------------------------------------------------------------------------
# SV-Ident detection

def train_svident_detection(train_tsv: str | Path, out=None, C: float = 4.0, log=print,
                            split: str = "all") -> dict:
    """Logistic regression on ``train.tsv``: ``split="all"`` trains on every document (the
    shipped model), ``"train"`` only on those ``svident_held_out`` does not hold out, so
    that ``bench/quality.py`` can measure it on the others."""
    from sklearn.linear_model import LogisticRegression
    from . import svident
    check_split(split)
    t0 = time.time()
    rows = read_svident_train(train_tsv)
    held = svident_held_out(rows) if split == "train" else set()
    train = [r for r in rows if r["doc_id"] not in held]
    from .embed import embed
    sentences = [r["sentence"] for r in train]
    vectors = embed(sentences)
    X = svident.detection_features(sentences, vectors)
    y = np.array([int(r["is_variable"]) for r in train])
    clf = LogisticRegression(C=C, max_iter=5000, class_weight="balanced").fit(X, y)
    meta = {"trained_on": "all sv-ident/train documents" if split == "all" else
                          "sv-ident/train documents not held out (per language, every fourth "
                          "document in id order is held out)",
            "split": split, "sentences": len(train),
            "documents": len({r['doc_id'] for r in train}),
            "training_documents": sorted({r["doc_id"] for r in train}, key=lambda d: (len(d), d)),
            "held_out_documents": sorted(held), "C": C,
            "neighbors": svident.NEIGHBORS, "neighbor_weight": svident.NEIGHBOR_WEIGHT}
    # the neighbour term's k and weight were chosen by 5-fold document CV
    # (docs/dev/systems-experiments-round1.md); training on all documents rather than the 24 of
    # the split follows the learning curve of docs/dev/systems-experiments-round7-detection.md
    model = svident.DetectionModel(clf.coef_.ravel(), float(clf.intercept_[0]), 0.5, meta,
                                   vectors, y)
    model.save(out or svident.DETECTION_PATH)
    log(f"detection model on {len(train)} sentences of {meta['documents']} documents written "
        f"({time.time() - t0:.0f} s)")
    return meta


# ---------------------------------------------------------------------------
# MATERIAL thresholds

def train_material(input_dir: str | Path, pack_dir: str | Path, out=None, beta=None,
                   log=print) -> dict:
    """Tune the CLIR threshold (AQWV, plan Eq. 3, with the pack's beta) and the DomainID
    threshold (pooled F1) on a development pack.

    ``input_dir`` is what ``shareval run material`` reads (``documents/``, optional
    ``domains.json``); ``pack_dir`` is the reference pack of ``docs/material.md`` (its
    ``queries.tsv``, ``clir/`` and optional ``domainid/`` judgments)."""
    from .. import tasks
    from . import material
    t0 = time.time()
    input_dir, pack_dir = Path(input_dir), Path(pack_dir)
    clir_task = tasks.get("material-clir")
    pack = clir_task.load_reference(pack_dir)
    collection = material.read_collection(input_dir / "documents")
    where = {d: i for i, d in enumerate(collection.doc_ids)}
    missing = [d for d in pack.doc_ids if d not in where]
    if missing:
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise ValueError(f"{input_dir / 'documents'}: no text for the pack's documents "
                         f"{', '.join(missing[:10])}{more}")
    if not pack.queries:
        raise ValueError(f"{pack_dir / 'queries.tsv'}: the pack has no queries to tune on")
    # the pack's documents, in the pack's order
    order = np.array([where[d] for d in pack.doc_ids])
    collection = material.Collection(list(pack.doc_ids), [collection.texts[i] for i in order])
    index = material.ClirIndex(collection)
    ids = list(pack.queries)
    queries = {q: (pack.queries[q].query_string, pack.queries[q].domain) for q in ids}
    conf = material.clir(collection, queries, index=index)
    rel = clir_task.relevance(pack, ids)
    b = clir_task.beta(pack, beta)
    clir_t, aqwv = material.tune_threshold(conf, {q: rel[k] for k, q in enumerate(ids)}, b)
    result = {"clir": round(clir_t, 5), "domainid": material.DOMAIN_THRESHOLD,
              "meta": {"tuned_on": str(pack_dir), "documents": len(pack.doc_ids),
                       "queries": len(ids), "beta": b, "aqwv": round(aqwv, 4)}}
    log(f"CLIR threshold {clir_t:.4f}: AQWV {aqwv:.4f} on {len(ids)} queries, "
        f"{len(pack.doc_ids)} documents (beta {b:g})")
    domain_task = tasks.get("material-domainid")
    domain_ids = domain_task.ids(pack)
    if domain_ids:
        domains = material.load_domains(input_dir / "domains.json"
                                        if (input_dir / "domains.json").exists() else None)
        unknown = [d for d in domain_ids if d not in domains]
        if unknown:
            raise ValueError(f"{pack_dir / 'domainid'}: no description for the domains "
                             f"{', '.join(unknown)} (add them to {input_dir / 'domains.json'})")
        scores = material.domain_scores(collection, {d: domains[d] for d in domain_ids}, index)
        drel = domain_task.relevance(pack, domain_ids)
        scored = ~pack.conversational          # CS documents are not scored (plan 7.2.2)
        dt, f1 = material.tune_domain_threshold(
            {d: scores[d][scored] for d in domain_ids},
            {d: drel[k][scored] for k, d in enumerate(domain_ids)})
        result["domainid"] = round(dt, 5)
        result["meta"].update(domains=len(domain_ids), domainid_f1=round(f1, 4))
        log(f"DomainID threshold {dt:.4f}: pooled F1 {f1:.4f} over {len(domain_ids)} domains")
    else:
        log("the pack has no domainid/ judgments: the DomainID threshold stays the placeholder")
    out = Path(out or material.THRESHOLDS_PATH)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    log(f"thresholds written to {out} ({time.time() - t0:.0f} s)")
    return result
