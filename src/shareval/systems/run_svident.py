"""SV-Ident as a command (TSVs of sentences) and as a service."""
from __future__ import annotations

import csv
from pathlib import Path

from ..progress import progress
from .checks import RequestError, need, raise_problems, strings, write_json


def read_sentences(path: Path) -> list[dict]:
    """uuid, sentence (or text), optional lang and doc_id columns of a TSV; the language
    defaults to the file name (en.tsv / de.tsv) or is identified later."""
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in ("uuid",) if c not in (reader.fieldnames or [])]
        if missing or not ({"sentence", "text"} & set(reader.fieldnames or [])):
            raise RequestError(f"{path}:1: header: needs columns uuid and sentence (or text), "
                               f"found {', '.join(reader.fieldnames or [])}")
        rows = []
        for line, r in enumerate(reader, start=2):
            text = r.get("sentence") if r.get("sentence") is not None else r.get("text")
            if not r.get("uuid") or text is None:
                raise RequestError(f"{path}:{line}: uuid/sentence: missing value")
            lang = r.get("lang") or (path.stem if path.stem in ("en", "de") else "")
            rows.append({"uuid": r["uuid"], "sentence": text, "lang": lang})
    return rows


def svident_run(inp: Path, out: Path, opts: dict) -> dict:
    from . import svident
    files = [inp] if inp.is_file() else sorted(inp.glob("*.tsv"))
    if not files:
        raise RequestError(f"{inp}: no .tsv files of sentences")
    rows = [r for f in files for r in read_sentences(f)]
    encoder = _encoder(opts)
    model = _detection_model(opts)
    out.mkdir(parents=True, exist_ok=True)
    sentences = [r["sentence"] for r in rows]
    detected = []
    batch = 512
    for i in progress(range(0, len(rows), batch), (len(rows) + batch - 1) // batch,
                      "detection batches"):
        detected += svident.detect(sentences[i:i + batch], opts.get("threshold"), model)
    write_json(out / "detection.json", {r["uuid"]: d for r, (d, _) in zip(rows, detected)})
    written = ["detection.json"]
    if opts.get("vocabulary"):
        vocab = [v for p in opts["vocabulary"] for v in svident.read_vocabulary(p)]
        langs = [r["lang"] or svident.language(r["sentence"]) for r in rows]
        ranked = svident.disambiguate(sentences, vocab, opts.get("k") or 10,
                                      opts.get("method") or "fusion", langs, encoder)
        strip = opts.get("strip_prefix") or ""
        write_json(out / "disambiguation.json", {
            r["uuid"]: {(vid[len(strip):] if strip and vid.startswith(strip) else vid): s
                        for vid, s in ranking} for r, ranking in zip(rows, ranked)})
        written.append("disambiguation.json")
    return {"sentences": len(rows), "detected": sum(d for d, _ in detected), "files": written,
            "encoder": encoder, "detection_model": opts.get("model") or "shipped"}


def _detection_model(opts: dict):
    """The ``--model`` file (a detection model ``train-system svident --out`` wrote), else
    the shipped model."""
    from . import svident
    if not opts.get("model"):
        return svident.detection_model()
    path = Path(opts["model"])
    try:
        return svident.DetectionModel.load(path)
    except FileNotFoundError:
        raise RequestError(f"{path}: --model: no such file") from None
    except Exception:       # np.load raises many kinds of error on a file that is not one
        raise RequestError(f"{path}: --model: not a detection model written by `shareval "
                           f"train-system svident`") from None


def _encoder(opts: dict) -> str:
    from .svident import ENCODERS
    encoder = opts.get("encoder") or ENCODERS[0]
    if encoder not in ENCODERS:
        raise RequestError(f"--encoder: {' or '.join(ENCODERS)}, found {encoder!r}")
    return encoder


def svident_service(opts: dict) -> dict:
    from . import svident
    encoder = _encoder(opts)
    model = _detection_model(opts)
    vocab = [v for p in (opts.get("vocabulary") or []) for v in svident.read_vocabulary(p)]

    def detect(body):
        problems = []
        sentences = strings(body, "sentences", problems)
        threshold = need(body, "threshold", float, problems, required=False)
        raise_problems(problems)
        return {"predictions": [{"is_variable": d, "score": s}
                                for d, s in svident.detect(sentences, threshold, model)]}

    def disambiguate(body):
        problems = []
        sentences = strings(body, "sentences", problems)
        langs = strings(body, "langs", problems) if "langs" in body else None
        k = need(body, "k", int, problems, required=False, default=10)
        method = need(body, "method", str, problems, required=False, default="fusion")
        if method not in ("bm25", "dense", "fusion"):
            problems.append(f"method: one of bm25, dense, fusion, found {method!r}")
        if langs is not None and len(langs) != len(sentences):
            problems.append("langs: one language per sentence")
        variables = vocab
        if "vocabulary" in body:
            records = need(body, "vocabulary", list, problems)
            variables = _request_vocabulary(records or [], problems)
        if not variables:
            problems.append("vocabulary: none given (start the service with --vocabulary or "
                            "send one)")
        raise_problems(problems)
        ranked = svident.disambiguate(sentences, variables, k, method, langs, encoder)
        return {"rankings": [[{"id": v, "score": s} for v, s in r] for r in ranked]}

    return {"/detect": (detect, SVIDENT_API["/detect"]),
            "/disambiguate": (disambiguate, SVIDENT_API["/disambiguate"])}


def _request_vocabulary(records, problems):
    from .svident import Variable
    out = []
    for i, r in enumerate(records):
        if not isinstance(r, dict) or not isinstance(r.get("id"), str):
            problems.append(f"vocabulary[{i}]: expected an object with a string id")
            continue
        out.append(Variable(r["id"], *(str(r.get(k) or "") for k in
                                       ("label", "topic", "question", "answer", "lang"))))
    return out


SVIDENT_API = {
    "/detect": {"request": {"sentences": "list of strings (at most 10,000)",
                            "threshold": "optional probability threshold"},
                "response": {"predictions": "[{is_variable: 0|1, score}] per sentence"}},
    "/disambiguate": {"request": {"sentences": "list of strings",
                                  "langs": "optional 'en'/'de' per sentence (else identified)",
                                  "k": "variables per sentence (default 10)",
                                  "method": "bm25 | dense | fusion (default)",
                                  "vocabulary": "optional [{id, label, topic, question, answer, "
                                                "lang}] replacing the service's vocabulary"},
                      "response": {"rankings": "[[{id, score}, ...]] per sentence, best first"}},
}
