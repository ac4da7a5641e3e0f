"""SV-Ident disambiguation: candidate retrievers and fusions chosen by 5-fold CV by document.

    PYTHONPATH=src python bench/svident_disambiguation_cv.py [--data ../shared/data]
        [--cache /tmp/svdis-vectors] [--no-e5]

The experiment behind docs/dev/systems-experiments-round5-disambiguation.md. Per language:
the trial sentences that have a relevant variable and the trial vocabulary; every
candidate retriever's score matrix (sentences x variables) is computed once (the
vectors are kept in ``--cache`` so a second run does not embed again). MAP@10 as
shareval's scorer computes it (AP@10 per sentence, mean per document, mean of the
documents); the documents in id order are dealt to five folds; for each fold the
candidate with the best MAP@10 on the other four folds is scored on it; the CV value is
the mean of the five folds. No trial label trains anything: the labels only choose.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from shareval import tasks
from shareval.systems import svident, svident_dense
from shareval.systems.lexical import Bm25, CharBm25, FieldBm25, gram_tokens, word_tokens

LANGS = ("en", "de")


# ---------------------------------------------------------------------------
# Data and the metric

def load(data: Path, lang: str):
    trial = data / "sv-ident" / "trial"
    ref = tasks.get("svident-disambiguation").reference(trial / "train" / f"{lang}.tsv")
    sents = [(u, s) for u, s in ref.sentences.items() if s.variables]
    vocab = svident.read_vocabulary(trial / "vocabulary" / f"{lang}.tsv")
    ids = [v.id[1:] if v.id.startswith("v") else v.id for v in vocab]
    from shareval.systems.registry import read_sentences
    text_of = {r["uuid"]: r["sentence"] for r in read_sentences(trial / "train" / f"{lang}.tsv")}
    texts = [text_of[u] for u, _ in sents]
    gold = [set(s.variables) for _, s in sents]
    docs = [s.doc_id for _, s in sents]
    return texts, gold, docs, vocab, ids


def ap10(scores: np.ndarray, gold, ids) -> np.ndarray:
    """AP@10 per sentence of rankings by ``scores`` (rounded to 4 digits, stable order)."""
    rounded = np.round(scores, 4)
    top = np.argsort(-rounded, axis=1, kind="stable")[:, :10]
    out = np.zeros(len(gold))
    for i, (row, g) in enumerate(zip(top, gold)):
        # the top 10 as disambiguate writes them, ranked as the scorer ranks: score
        # descending (single precision), ties by id descending
        row = sorted(row, key=lambda j: (-np.float32(rounded[i, j]), _desc(ids[j])))
        hits, s = 0, 0.0
        for r, j in enumerate(row, start=1):
            if ids[j] in g:
                hits += 1
                s += hits / r
        out[i] = s / len(g) if g else 0.0
    return out


def _desc(text: str):
    """A key that sorts strings in descending order."""
    return tuple(-ord(c) for c in text) + (1,)


class Folds:
    def __init__(self, docs, k=5):
        order = sorted(set(docs))
        self.fold_of_doc = {d: i % k for i, d in enumerate(order)}
        self.docs = np.array(docs)
        self.k = k

    def value(self, ap: np.ndarray, folds) -> float:
        """Mean over the documents in ``folds`` of their sentences' mean AP."""
        per = {}
        for a, d in zip(ap, self.docs):
            if self.fold_of_doc[d] in folds:
                per.setdefault(d, []).append(a)
        return float(np.mean([np.mean(v) for v in per.values()]))

    def cv(self, candidates: dict[str, np.ndarray]):
        """(CV value, the candidate each fold chose, whole-data best) over AP arrays."""
        vals, chosen = [], []
        for f in range(self.k):
            train = set(range(self.k)) - {f}
            best = max(candidates, key=lambda c: self.value(candidates[c], train))
            chosen.append(best)
            vals.append(self.value(candidates[best], {f}))
        whole = max(candidates, key=lambda c: self.value(candidates[c], set(range(self.k))))
        return float(np.mean(vals)), chosen, whole

    def whole(self, ap):
        return self.value(ap, set(range(self.k)))


# ---------------------------------------------------------------------------
# Retrievers

def minmax(s):
    lo = s.min(axis=1, keepdims=True)
    span = s.max(axis=1, keepdims=True) - lo
    return np.where(span > 0, (s - lo) / np.where(span > 0, span, 1), 0.0)


def ranks(s, k=60):
    """Reciprocal-rank scores 1 / (k + rank)."""
    order = np.argsort(-s, axis=1, kind="stable")
    r = np.empty_like(order)
    np.put_along_axis(r, order, np.arange(s.shape[1])[None, :].repeat(len(s), 0), axis=1)
    return 1.0 / (k + 1 + r)


def embed_cached(cache: Path, name: str, texts, fn):
    path = cache / f"{name}.npy"
    if path.exists():
        v = np.load(path)
        if len(v) == len(texts):
            return v
    t = time.time()
    v = fn(texts)
    np.save(path, v)
    print(f"  embedded {name}: {len(texts)} texts in {time.time() - t:.0f} s", flush=True)
    return v


FIELDS = ("label", "question", "answers", "topic")
FIELD_WEIGHTS = {"1,1": (1, 1, 1, 1), "2,1": (2, 1, 1, 1), "2,2": (2, 2, 1, 1),
                 "3,3": (3, 3, 1, 1)}     # label, question (answers and topic 1)
# offered in a second run, after the whole-data table of label weights 1-4 was seen
EXTENDED = {f"{lw:g},{qw}": (lw, qw, 1, 1) for lw in (1, 1.5, 2, 3, 4) for qw in (1, 2)}


def lexical(texts, vocab, lang):
    """BM25 and character 4-gram BM25, with the fields weighted as FIELD_WEIGHTS says
    ('1,1' is the shipped ``Bm25``/``CharBm25`` up to float rounding), and the shipped ones."""
    whole = [v.text() for v in vocab]
    out = {"bm25": Bm25(whole, lang).scores(texts), "chars": CharBm25(whole).scores(texts)}
    fields = [{f: getattr(v, f) for f in FIELDS} for v in vocab]
    for name, w in {**FIELD_WEIGHTS, **EXTENDED}.items():
        if name == "1,1":
            continue
        weights = dict(zip(FIELDS, w))
        out[f"bm25 {name}"] = FieldBm25(fields, weights, word_tokens(lang)).scores(texts)
        out[f"chars {name}"] = FieldBm25(fields, weights, gram_tokens(4)).scores(texts)
    out.update(extra_lexical(texts, vocab, lang))
    return out


def extra_lexical(texts, vocab, lang):
    """BM25 over words and word bigrams, and BM25 with RM3 feedback (not shipped)."""
    from collections import Counter
    q = word_tokens(lang)(texts)
    docs = word_tokens(lang)([v.text() for v in vocab])
    bi = lambda toks: [t + [x + "_" + y for x, y in zip(t, t[1:])] for t in toks]  # noqa: E731
    out = {"bm25 bigrams": _NpBm25([Counter(t) for t in bi(docs)]).scores(bi(q))}
    base = _NpBm25([Counter(t) for t in docs])
    for fd, ft, orig in ((3, 10, 0.5), (2, 10, 0.6), (5, 10, 0.8)):
        out[f"bm25 rm3 {fd},{ft},{orig}"] = base.rm3(q, fd, ft, orig)
    return out


class _NpBm25:
    """BM25 (as bm25s) over term counts, dense, with RM3 pseudo-relevance feedback."""

    def __init__(self, doc_counts, k1=1.5, b=0.75):
        self.vocab = {t: i for i, t in enumerate(sorted({t for c in doc_counts for t in c}))}
        tf = np.zeros((len(doc_counts), len(self.vocab)))
        for d, c in enumerate(doc_counts):
            for t, x in c.items():
                tf[d, self.vocab[t]] = x
        dl = tf.sum(axis=1)
        df = (tf > 0).sum(axis=0)
        idf = np.log(1 + (len(tf) - df + 0.5) / (df + 0.5))
        self.w = idf[None, :] * tf / (tf + (k1 * ((1 - b) + b * dl / dl.mean()))[:, None])

    def _q(self, queries):
        q = np.zeros((len(queries), len(self.vocab)))
        for i, t in enumerate(queries):
            for x in t:
                if x in self.vocab:
                    q[i, self.vocab[x]] += 1
        return q

    def scores(self, queries):
        return self._q(queries) @ self.w.T

    def rm3(self, queries, fb_docs, fb_terms, orig):
        """The query's terms (weight ``orig``) and the ``fb_terms`` most likely terms of
        the relevance model of its ``fb_docs`` best documents (1 - ``orig``)."""
        q = self._q(queries)
        s = q @ self.w.T
        qn = q / np.maximum(q.sum(axis=1, keepdims=True), 1)
        p = self.w / np.maximum(self.w.sum(axis=1, keepdims=True), 1e-12)
        out = s.copy()
        for i in range(len(q)):
            top = np.argsort(-s[i])[:fb_docs]
            if s[i, top].sum() <= 0:
                continue
            rm = (s[i, top][:, None] * p[top]).sum(axis=0) / s[i, top].sum()
            keep = np.argsort(-rm)[:fb_terms]
            e = np.zeros_like(rm)
            e[keep] = rm[keep] / rm[keep].sum()
            out[i] = (orig * qn[i] + (1 - orig) * e) @ self.w.T
        return out


def dense(cache: Path, texts, vocab, lang, use_e5: bool):
    from shareval.systems.embed import e5, embed
    whole = [v.text() for v in vocab]
    lq = [svident_dense.passage_text(v) for v in vocab]
    lqa = [" ".join(x for x in (v.label, v.question, v.answers) if x) or v.text() for v in vocab]
    c = svident_dense.centre
    out, vec = {}, {}
    q = embed_cached(cache, f"usem3-q-{lang}", texts, embed)
    qm = svident_dense.query_mean("usem3")
    for pname, ptexts in (("whole", whole), ("lq", lq), ("lqa", lqa)):
        p = embed_cached(cache, f"usem3-p-{pname}-{lang}", ptexts, embed)
        out[f"use-{pname}"] = q @ p.T
        pc = c(p, p.mean(axis=0))
        out[f"use-{pname}-c"] = c(q, qm) @ pc.T
        vec[f"use-{pname}-c"] = (c(q, qm), pc)
    if use_e5:
        q5 = embed_cached(cache, f"e5-q-{lang}", texts, lambda t: e5(t, "query"))
        qm5 = svident_dense.query_mean("e5")
        for pname, ptexts in (("whole", whole), ("lq", lq), ("lqa", lqa)):
            p = embed_cached(cache, f"e5-p-{pname}-{lang}", ptexts, lambda t: e5(t, "passage"))
            out[f"e5-{pname}"] = q5 @ p.T
            pc = c(p, p.mean(axis=0))
            out[f"e5-{pname}-c"] = c(q5, qm5) @ pc.T
            # centring the queries by the vocabulary's own mean instead of the training one
            out[f"e5-{pname}-cv"] = c(q5, p.mean(axis=0)) @ pc.T
            vec[f"e5-{pname}-c"] = (c(q5, qm5), pc)
        # passages with the query: prefix (symmetric use)
        pq = embed_cached(cache, f"e5-pq-lq-{lang}", lq, lambda t: e5(t, "query"))
        out["e5-lq-qq-c"] = c(q5, qm5) @ c(pq, pq.mean(axis=0)).T
        # both encoders: concatenated centred unit vectors, weights a (e5) and 1 - a
        for pname in ("lq", "lqa"):
            for a in (0.5, 0.625, 0.75, 0.875):
                out[f"both-{pname}-{a}"] = (a * vec[f"e5-{pname}-c"][0] @ vec[f"e5-{pname}-c"][1].T
                                            + (1 - a) * vec[f"use-{pname}-c"][0]
                                            @ vec[f"use-{pname}-c"][1].T)
    return out


def grid(names, step=8):
    """Weightings of ``names`` in multiples of 1/step summing to one (each > 0)."""
    for w in itertools.product(range(1, step + 1), repeat=len(names)):
        if sum(w) == step:
            yield dict(zip(names, (x / step for x in w)))


def label(w):
    return " + ".join(f"{n} {v:g}" for n, v in w.items())


def run_cv(title, folds, cands, gold, ids, show=8):
    aps = {n: ap10(s, gold, ids) for n, s in cands.items()}
    cv, chosen, whole = folds.cv(aps)
    print(f"\n## {title}: {len(cands)} candidates; CV {100 * cv:.1f}; whole-data best "
          f"{whole} {100 * folds.whole(aps[whole]):.1f}")
    print("  chosen:", dict(Counter(chosen)))
    for n in sorted(aps, key=lambda n: -folds.whole(aps[n]))[:show]:
        print(f"  {100 * folds.whole(aps[n]):5.1f}  {n}")
    return cv, chosen, whole, aps


def fusions(single, dense_names, field_weights=("1,1",), rrf=False):
    """Weighted min-max fusions of BM25, character 4-grams and one dense retriever (and
    of BM25 with characters alone), with the fields weighted alike in both lexical ones."""
    out = {}
    for fw in field_weights:
        b, c = ("bm25", "chars") if fw == "1,1" else (f"bm25 {fw}", f"chars {fw}")
        combos = [(b, c)] + [(b, d) for d in dense_names] + [(b, c, d) for d in dense_names]
        for names in combos:
            for w in grid(names):
                out[label(w)] = sum(v * minmax(single[n]) for n, v in w.items())
            if rrf:
                out["rrf " + " + ".join(names)] = sum(ranks(single[n]) for n in names)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/svdis-vectors"))
    ap.add_argument("--no-e5", action="store_true")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    for lang in LANGS:
        texts, gold, docs, vocab, ids = load(args.data, lang)
        folds = Folds(docs)
        print(f"\n# {lang}: {len(texts)} evaluated sentences, {len(set(docs))} documents, "
              f"{len(vocab)} variables")
        single = {**lexical(texts, vocab, lang),
                  **dense(args.cache, texts, vocab, lang, not args.no_e5)}
        run_cv(f"{lang} single retrievers", folds, single, gold, ids, show=len(single))
        lex = [n for n in single if n.startswith(("bm25", "chars"))
               and n.split(" ")[-1] not in set(EXTENDED) - set(FIELD_WEIGHTS)]
        run_cv(f"{lang} lexical retrievers alone", folds, {n: single[n] for n in lex},
               gold, ids, show=3)
        fw_all = tuple(FIELD_WEIGHTS)
        use = ("use-whole", "use-lq-c")
        run_cv(f"{lang} default mode, round 4's family", folds, fusions(single, use), gold, ids)
        run_cv(f"{lang} default mode, + reciprocal ranks", folds,
               fusions(single, use, rrf=True), gold, ids, show=3)
        run_cv(f"{lang} default mode, fields weighted", folds,
               fusions(single, use, fw_all), gold, ids)
        run_cv(f"{lang} default mode, fields weighted + reciprocal ranks", folds,
               fusions(single, use, fw_all, rrf=True), gold, ids, show=3)
        run_cv(f"{lang} default mode, fields weighted (extended, {len(EXTENDED)} weightings)",
               folds, fusions(single, use, tuple(EXTENDED)), gold, ids)
        for extra in ("bm25 bigrams", "bm25 rm3 3,10,0.5", "bm25 rm3 2,10,0.6"):
            fam = fusions(single, use)
            for d in use:
                for w in grid((extra, "chars", d)):
                    fam[label(w)] = sum(v * minmax(single[n]) for n, v in w.items())
            run_cv(f"{lang} default mode, round 4's family + {extra}", folds, fam, gold, ids,
                   show=3)
        if not args.no_e5:
            e5d = ("e5-lq-c",)
            run_cv(f"{lang} e5 mode, round 4's family", folds,
                   fusions(single, e5d), gold, ids, show=3)
            run_cv(f"{lang} e5 mode, fields weighted", folds,
                   fusions(single, e5d, fw_all), gold, ids)
            jd = {"en": e5d, "de": ("both-lq-0.625",)}[lang]
            run_cv(f"{lang} e5 mode, fields weighted (extended), dense {jd[0]}", folds,
                   fusions(single, jd, tuple(EXTENDED)), gold, ids)
            more = ("e5-lq-c", "e5-lqa-c", "both-lq-0.625", "both-lq-0.75")
            run_cv(f"{lang} e5 mode, fields weighted, other dense retrievers", folds,
                   fusions(single, more, fw_all), gold, ids)
            for d in more[1:]:
                run_cv(f"{lang} e5 mode, fields weighted, dense {d}", folds,
                       fusions(single, (d,), fw_all), gold, ids, show=3)
            dn = [n for n in single if n.startswith(("e5-", "both-"))]
            run_cv(f"{lang} e5-mode dense retrievers alone", folds,
                   {n: single[n] for n in dn}, gold, ids, show=len(dn))
            both = [n for n in dn if n.startswith("both-")] + ["e5-lq-c"]
            run_cv(f"{lang} e5 mode, dense: e5-lq-c or both encoders", folds,
                   {n: single[n] for n in both}, gold, ids, show=len(both))
    return 0


if __name__ == "__main__":
    sys.exit(main())
