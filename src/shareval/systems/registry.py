"""The reference systems by name: how each runs over a folder and serves requests."""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..progress import progress


class RequestError(ValueError):
    """A bad request or input: the message lists every problem found."""


@dataclass
class Opt:
    name: str
    help: str
    type: type = str
    default: object = None
    required: bool = False
    multiple: bool = False


@dataclass
class System:
    name: str
    description: str
    tasks: tuple[str, ...]              # the validators its output passes
    input_help: str
    output_help: str
    run: Callable                       # (input, output, options) -> summary dict
    service: Callable                   # (options) -> {route: (handler, doc)}
    run_options: tuple[Opt, ...] = ()
    serve_options: tuple[Opt, ...] = ()
    api: dict = field(default_factory=dict)


def _need(body: dict, name: str, kind, problems: list, required=True, default=None):
    if name not in body:
        if required:
            problems.append(f"{name}: missing")
        return default
    value = body[name]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        problems.append(f"{name}: expected {kind.__name__}, found {type(value).__name__}")
        return default
    return value


def _strings(body, name, problems, limit=10_000):
    values = _need(body, name, list, problems)
    if values is None:
        return []
    bad = [i for i, v in enumerate(values) if not isinstance(v, str)]
    if bad:
        problems.append(f"{name}[{bad[0]}]: expected a string" +
                        (f" ({len(bad)} items are not strings)" if len(bad) > 1 else ""))
    if len(values) > limit:
        problems.append(f"{name}: at most {limit} items per request, found {len(values)}")
    return values


def _raise(problems):
    if problems:
        raise RequestError("; ".join(problems))


def _pub_id(stem: str):
    return int(stem) if stem.isdigit() else stem


def _write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------
# RCC

RCC_SUFFIXES = (".pdf", ".txt", ".json")


_RCC_JOB: dict = {}


def _rcc_one(path: Path):
    """Citations, mentions and fields of one publication file (in a worker or in-process)."""
    from . import fields, rcc
    from .text import read_document
    job = _RCC_JOB
    try:
        text = read_document(path)
    except Exception as exc:        # a broken PDF must not stop the batch
        return path, None, f"{path.name}: {exc}"
    pid = _pub_id(path.stem)
    c, m = rcc.find_citations(text, job["catalog"], pid, job["threshold"],
                              use_embeddings=job["embeddings"],
                              mention_threshold=job["mention_threshold"])
    fm = fields.fields_and_methods(text, job["taxonomy"], pid) if job["taxonomy"] else None
    return path, (c, m, fm), None


def _one_thread():
    from .embed import set_threads
    set_threads(1)


def _rcc_catalog(opts: dict, embeddings: bool):
    """The catalog, prepared from the cache when it holds it (``rcc_cache``)."""
    from . import rcc, rcc_cache
    return rcc_cache.prepare(opts["catalog"], rcc.MODEL_PATH, embeddings, opts.get("cache_dir"),
                             use_cache=not opts.get("no_cache"))


def _rcc_run(inp: Path, out: Path, opts: dict) -> dict:
    from . import fields, rcc
    workers = 1 if opts.get("workers") is None else opts["workers"]
    if workers < 1:
        raise RequestError(f"--workers: expected 1 or more, found {workers}")
    taxonomy = fields.read_taxonomy(opts["taxonomy"]) if opts.get("taxonomy") else None
    files = sorted(p for p in inp.iterdir() if p.suffix.lower() in RCC_SUFFIXES and p.is_file())
    if not files:
        raise RequestError(f"{inp}: no publications (*.pdf, *.txt or *.json files)")
    embeddings = not opts.get("no_embeddings")
    # model, catalog and its embeddings before forking, so the workers share them
    rcc.model()
    prepared = _rcc_catalog(opts, embeddings)
    catalog = prepared.catalog
    out.mkdir(parents=True, exist_ok=True)
    _RCC_JOB.update(catalog=catalog, taxonomy=taxonomy, threshold=opts.get("threshold"),
                    mention_threshold=opts.get("mention_threshold"), embeddings=embeddings)
    citations, mentions, fields_out, methods, new = [], [], [], [], []
    failed = []
    pool = None
    if workers > 1:
        from multiprocessing import get_context
        pool = get_context("fork").Pool(min(workers, len(files)), _one_thread)
        results = pool.imap(_rcc_one, files, chunksize=2)
    else:
        results = map(_rcc_one, files)
    try:
        for _path, found, error in progress(results, len(files), "publications"):
            if error:
                failed.append(error)
                continue
            c, m, fm = found
            citations += c
            mentions += m
            if fm:
                fields_out += fm["research_fields"]
                methods += fm["methods"]
                new += fm["candidate_methods"]
    finally:
        if pool is not None:
            pool.terminate()        # all results are in (or an error stops the run)
            pool.join()
    _write_json(out / "data_set_citations.json", citations)
    _write_json(out / "data_set_mentions.json", mentions)
    written = ["data_set_citations.json", "data_set_mentions.json"]
    if taxonomy:
        for name, value in (("research_fields.json", fields_out), ("methods.json", methods),
                            ("candidate_methods.json", new)):
            if value:       # the format has no empty file: nothing found, nothing written
                _write_json(out / name, value)
                written.append(name)
    return {"publications": len(files) - len(failed), "citations": len(citations),
            "mentions": len(mentions), "files": written, "unreadable": failed,
            "catalog_cache": prepared.status}


def _rcc_service(opts: dict) -> dict:
    from . import fields, rcc
    rcc.model()
    catalog = _rcc_catalog(opts, True).catalog     # at start-up, not in the first request
    taxonomy = fields.read_taxonomy(opts["taxonomy"]) if opts.get("taxonomy") else None

    def cite(body):
        problems = []
        text = _need(body, "text", str, problems)
        pid = body.get("publication_id", "0")
        threshold = _need(body, "threshold", float, problems, required=False)
        mention_threshold = _need(body, "mention_threshold", float, problems, required=False)
        _raise(problems)
        c, m = rcc.find_citations(text, catalog, pid, threshold,
                                  mention_threshold=mention_threshold)
        return {"citations": c, "mentions": m}

    def fields_(body):
        problems = []
        text = _need(body, "text", str, problems)
        _raise(problems)
        if taxonomy is None:
            raise RequestError("this service was started without --taxonomy")
        return fields.fields_and_methods(text, taxonomy, body.get("publication_id", "0"))

    return {"/cite": (cite, RCC_API["/cite"]), "/fields": (fields_, RCC_API["/fields"])}


RCC_API = {
    "/cite": {"request": {"text": "publication text (required)",
                          "publication_id": "echoed in the records (default \"0\")",
                          "threshold": "decision threshold on the score (default: the model's)",
                          "mention_threshold": "threshold on the mention score (default: "
                                               "the model's; 0: every candidate form)"},
              "response": {"citations": "data_set_citations.json records",
                           "mentions": "data_set_mentions.json records"}},
    "/fields": {"request": {"text": "publication text", "publication_id": "optional"},
                "response": {"research_fields": "records", "methods": "records",
                             "candidate_methods": "unmatched method-like keyphrases"}},
}


# ---------------------------------------------------------------------------
# SV-Ident

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


def _svident_run(inp: Path, out: Path, opts: dict) -> dict:
    from . import svident
    files = [inp] if inp.is_file() else sorted(inp.glob("*.tsv"))
    if not files:
        raise RequestError(f"{inp}: no .tsv files of sentences")
    rows = [r for f in files for r in read_sentences(f)]
    out.mkdir(parents=True, exist_ok=True)
    sentences = [r["sentence"] for r in rows]
    detected = []
    batch = 512
    for i in progress(range(0, len(rows), batch), (len(rows) + batch - 1) // batch,
                      "detection batches"):
        detected += svident.detect(sentences[i:i + batch], opts.get("threshold"))
    _write_json(out / "detection.json", {r["uuid"]: d for r, (d, _) in zip(rows, detected)})
    written = ["detection.json"]
    if opts.get("vocabulary"):
        vocab = [v for p in opts["vocabulary"] for v in svident.read_vocabulary(p)]
        langs = [r["lang"] or svident.language(r["sentence"]) for r in rows]
        ranked = svident.disambiguate(sentences, vocab, opts.get("k") or 10,
                                      opts.get("method") or "fusion", langs)
        strip = opts.get("strip_prefix") or ""
        _write_json(out / "disambiguation.json", {
            r["uuid"]: {(vid[len(strip):] if strip and vid.startswith(strip) else vid): s
                        for vid, s in ranking} for r, ranking in zip(rows, ranked)})
        written.append("disambiguation.json")
    return {"sentences": len(rows), "detected": sum(d for d, _ in detected), "files": written}


def _svident_service(opts: dict) -> dict:
    from . import svident
    vocab = [v for p in (opts.get("vocabulary") or []) for v in svident.read_vocabulary(p)]

    def detect(body):
        problems = []
        sentences = _strings(body, "sentences", problems)
        threshold = _need(body, "threshold", float, problems, required=False)
        _raise(problems)
        return {"predictions": [{"is_variable": d, "score": s}
                                for d, s in svident.detect(sentences, threshold)]}

    def disambiguate(body):
        problems = []
        sentences = _strings(body, "sentences", problems)
        langs = _strings(body, "langs", problems) if "langs" in body else None
        k = _need(body, "k", int, problems, required=False, default=10)
        method = _need(body, "method", str, problems, required=False, default="fusion")
        if method not in ("bm25", "dense", "fusion"):
            problems.append(f"method: one of bm25, dense, fusion, found {method!r}")
        if langs is not None and len(langs) != len(sentences):
            problems.append("langs: one language per sentence")
        variables = vocab
        if "vocabulary" in body:
            records = _need(body, "vocabulary", list, problems)
            variables = _request_vocabulary(records or [], problems)
        if not variables:
            problems.append("vocabulary: none given (start the service with --vocabulary or "
                            "send one)")
        _raise(problems)
        ranked = svident.disambiguate(sentences, variables, k, method, langs)
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


# ---------------------------------------------------------------------------
# MATERIAL

def _material_inputs(inp: Path, opts: dict):
    from . import material
    collection = material.read_collection(inp / "documents")
    queries = material.read_queries(inp / "queries.tsv") if (inp / "queries.tsv").exists() else {}
    domains_path = opts.get("domains") or (inp / "domains.json" if (inp / "domains.json").exists()
                                           else None)
    return collection, queries, material.load_domains(domains_path)


def _languages(spec: str | None) -> dict[str, str]:
    from .material import LANGUAGES
    if not spec:
        return dict(LANGUAGES)
    out = {}
    for part in spec.split(","):
        if "=" not in part:
            raise RequestError(f"--languages: expected LangID=iso pairs, found {part!r}")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _material_run(inp: Path, out: Path, opts: dict) -> dict:
    from . import material
    collection, queries, domains = _material_inputs(inp, opts)
    tuned = material.thresholds(opts.get("model"), opts.get("threshold"),
                                opts.get("domain_threshold"))
    threshold = tuned["clir"]
    index = material.ClirIndex(collection)
    written = {}
    if queries:
        conf = material.clir(collection, queries, threshold, index)
        (out / "clir").mkdir(parents=True, exist_ok=True)
        for qid, c in conf.items():
            (out / "clir" / f"{qid}.tsv").write_text(
                material.decision_lines(collection.doc_ids, c, threshold), encoding="utf-8")
        written["clir"] = len(conf)
        n = material.write_e2e(out / "e2e", collection, queries, conf, threshold, index,
                               opts.get("team") or "shareval", opts.get("sys_label") or "baseline")
        written["e2e_summaries"] = n
    (out / "domainid").mkdir(parents=True, exist_ok=True)
    dscores = material.domain_scores(collection, domains, index)
    dthreshold = tuned["domainid"]
    # DomainID files must not list conversational speech (plan 7.2.2)
    speech = material.conversational(inp / "documents.tsv")
    keep = [i for i, d in enumerate(collection.doc_ids) if d not in speech]
    for name, s in dscores.items():
        (out / "domainid" / f"{name}.tsv").write_text(
            material.decision_lines([collection.doc_ids[i] for i in keep], s[keep], dthreshold),
            encoding="utf-8")
    written["domainid"] = len(dscores)
    (out / "langid").mkdir(parents=True, exist_ok=True)
    langs = material.languages(collection)
    lang_ids = _languages(opts.get("languages"))
    for lang_id, iso in lang_ids.items():
        conf = [p if lang == iso else 0.0 for lang, p in langs]
        (out / "langid" / f"{lang_id}.tsv").write_text(
            material.decision_lines(collection.doc_ids, conf, 0.5), encoding="utf-8")
    written["langid"] = len(lang_ids)
    return {"documents": len(collection.doc_ids), "queries": len(queries), **written,
            "thresholds": tuned}


def _material_service(opts: dict) -> dict:
    from . import material
    collection, _, domains = _material_inputs(Path(opts["collection"]), opts)
    index = material.ClirIndex(collection)
    tuned = material.thresholds(opts.get("model"), opts.get("threshold"),
                                opts.get("domain_threshold"))
    threshold = tuned["clir"]

    def search(body):
        problems = []
        query = _need(body, "query", str, problems)
        k = _need(body, "k", int, problems, required=False, default=10)
        if query is not None and ":" not in query:
            problems.append("query: expected QueryString:Domain")
        _raise(problems)
        string, domain = query.rsplit(":", 1)
        conf, best = index.scores([material.query_words(string)])
        order = conf[0].argsort()[::-1][:max(0, k)]
        return {"query": query, "threshold": threshold, "results": [
            {"doc_id": collection.doc_ids[d], "decision": "Y" if conf[0][d] >= threshold else "N",
             "confidence": round(float(conf[0][d]), 5), "passage": index.passages[best[0][d]]}
            for d in order]}

    def langid(body):
        problems = []
        texts = _strings(body, "texts", problems)
        _raise(problems)
        c = material.Collection([str(i) for i in range(len(texts))], texts)
        return {"languages": [{"lang": lang, "probability": round(p, 4)}
                              for lang, p in material.languages(c)]}

    def domainid(body):
        problems = []
        texts = _strings(body, "texts", problems, limit=200)
        _raise(problems)
        c = material.Collection([str(i) for i in range(len(texts))], texts)
        scores = material.domain_scores(c, domains)
        return {"domains": [{name: round(float(s[i]), 4) for name, s in scores.items()}
                            for i in range(len(texts))]}

    return {"/search": (search, MATERIAL_API["/search"]),
            "/langid": (langid, MATERIAL_API["/langid"]),
            "/domainid": (domainid, MATERIAL_API["/domainid"])}


MATERIAL_API = {
    "/search": {"request": {"query": "QueryString:Domain", "k": "results (default 10)"},
                "response": {"results": "[{doc_id, decision Y|N, confidence, passage}] best "
                                        "first", "threshold": "the detection threshold"}},
    "/langid": {"request": {"texts": "list of strings"},
                "response": {"languages": "[{lang (ISO 639-1), probability}]"}},
    "/domainid": {"request": {"texts": "list of strings (at most 200)"},
                  "response": {"domains": "[{domain: score}] per text"}},
}


RCC_CACHE_OPTIONS = (
    Opt("cache_dir", "folder of prepared catalogs (default: $SHAREVAL_CACHE_DIR, else "
                     "$XDG_CACHE_HOME/shareval or ~/.cache/shareval)"),
    Opt("no_cache", "prepare the catalog afresh and store nothing", bool),
)


SYSTEMS: dict[str, System] = {s.name: s for s in (
    System("rcc", "Rich Context: dataset citations and mentions (+ fields and methods with a "
                  "taxonomy)", ("rcc-citations", "rcc-mentions", "rcc-fields-methods"),
           "a folder of publications: <publication_id>.pdf, .txt or .json",
           "data_set_citations.json, data_set_mentions.json (+ research_fields.json, "
           "methods.json, candidate_methods.json with --taxonomy)",
           _rcc_run, _rcc_service,
           run_options=(Opt("catalog", "dataset catalog JSON", required=True),
                        Opt("taxonomy", "fields/methods taxonomy JSON"),
                        Opt("threshold", "citation score threshold (default: the model's)",
                            float),
                        Opt("mention_threshold", "mention score threshold (default: the "
                            "model's; 0 keeps every candidate form)", float),
                        Opt("no_embeddings", "skip the embedding-similarity feature", bool),
                        Opt("workers", "processes (default 1; one per core is fastest)", int,
                            default=1),
                        *RCC_CACHE_OPTIONS),
           serve_options=(Opt("catalog", "dataset catalog JSON", required=True),
                          Opt("taxonomy", "fields/methods taxonomy JSON"),
                          *RCC_CACHE_OPTIONS),
           api=RCC_API),
    System("svident", "SV-Ident: variable detection and zero-shot disambiguation",
           ("svident-detection", "svident-disambiguation"),
           "a TSV (or a folder of TSVs) with uuid and sentence columns (lang optional)",
           "detection.json (+ disambiguation.json with --vocabulary)",
           _svident_run, _svident_service,
           run_options=(Opt("vocabulary", "variable vocabulary TSV/JSON (repeatable)",
                            multiple=True),
                        Opt("method", "bm25, dense or fusion (default)"),
                        Opt("k", "variables per sentence (default 10)", int),
                        Opt("threshold", "detection probability threshold", float),
                        Opt("strip_prefix", "remove this prefix from variable ids in the output "
                                            "(the trial data: v)")),
           serve_options=(Opt("vocabulary", "variable vocabulary TSV/JSON (repeatable)",
                              multiple=True),),
           api=SVIDENT_API),
    System("material", "MATERIAL: CLIR, E2E summaries, DomainID and LangID",
           ("material-clir", "material-e2e", "material-domainid", "material-langid"),
           "a folder with documents/<DocID>.txt, queries.tsv and optional domains.json",
           "clir/<QueryID>.tsv, e2e/<QueryID>/..., domainid/<Domain>.tsv, langid/<LangID>.tsv",
           _material_run, _material_service,
           run_options=(Opt("threshold", "CLIR detection threshold (default: --model's)",
                            float),
                        Opt("model", "thresholds JSON written by `shareval train-system "
                                     "material` (default: the tuned file if one was written, "
                                     "else untuned placeholders)"),
                        Opt("domain_threshold", "DomainID threshold", float),
                        Opt("domains", "domain descriptions JSON"),
                        Opt("languages", "LangID=iso pairs, default 1A=sw,1B=tl,1S=so"),
                        Opt("team", "E2E team id (default shareval)"),
                        Opt("sys_label", "E2E system label (default baseline)")),
           serve_options=(Opt("collection", "input folder with documents/", required=True),
                          Opt("threshold", "CLIR detection threshold (default: --model's)",
                              float),
                          Opt("model", "thresholds JSON written by `shareval train-system "
                                       "material`"),
                          Opt("domains", "domain descriptions JSON")),
           api=MATERIAL_API),
)}


def names() -> list[str]:
    return sorted(SYSTEMS)


def get(name: str) -> System:
    try:
        return SYSTEMS[name]
    except KeyError:
        raise RequestError(f"unknown system {name!r}; known: {', '.join(names())}") from None
