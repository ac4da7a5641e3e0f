"""MATERIAL as a command (a folder of documents and queries) and as a service."""
from __future__ import annotations

from pathlib import Path

from .checks import RequestError, need, raise_problems, strings


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


def material_run(inp: Path, out: Path, opts: dict) -> dict:
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


def material_service(opts: dict) -> dict:
    from . import material
    collection, _, domains = _material_inputs(Path(opts["collection"]), opts)
    index = material.ClirIndex(collection)
    tuned = material.thresholds(opts.get("model"), opts.get("threshold"),
                                opts.get("domain_threshold"))
    threshold = tuned["clir"]

    def search(body):
        problems = []
        query = need(body, "query", str, problems)
        k = need(body, "k", int, problems, required=False, default=10)
        if query is not None and ":" not in query:
            problems.append("query: expected QueryString:Domain")
        raise_problems(problems)
        string, domain = query.rsplit(":", 1)
        conf, best = index.scores([material.query_words(string)])
        order = conf[0].argsort()[::-1][:max(0, k)]
        return {"query": query, "threshold": threshold, "results": [
            {"doc_id": collection.doc_ids[d], "decision": "Y" if conf[0][d] >= threshold else "N",
             "confidence": round(float(conf[0][d]), 5), "passage": index.passages[best[0][d]]}
            for d in order]}

    def langid(body):
        problems = []
        texts = strings(body, "texts", problems)
        raise_problems(problems)
        c = material.Collection([str(i) for i in range(len(texts))], texts)
        return {"languages": [{"lang": lang, "probability": round(p, 4)}
                              for lang, p in material.languages(c)]}

    def domainid(body):
        problems = []
        texts = strings(body, "texts", problems, limit=200)
        raise_problems(problems)
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
