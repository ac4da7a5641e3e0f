"""RCC as a command (a folder of publications, in one or more processes) and as a service."""
from __future__ import annotations

from pathlib import Path

from ..progress import progress
from .checks import RequestError, need, pub_id, raise_problems, write_json


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
    pid = pub_id(path.stem)
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


def _keep_weights(opts: dict) -> None:
    """The encoder's weights kept uncompressed beside the prepared catalogs (not with
    ``--no-cache``)."""
    if not opts.get("no_cache"):
        from . import rcc_cache
        from .embed import keep_weights
        keep_weights(rcc_cache.cache_dir(opts.get("cache_dir")))


def _warm_up(embeddings: bool, publications: int):
    """Load the encoder (and, for more than ``COMPILED_FROM`` publications, the compiled
    tree walk) in a thread while the main thread reads the model and the catalog: both
    mostly wait on I/O, BLAS or LLVM, which release the GIL, so on two cores start-up
    overlaps (join it before forking). A short run walks the trees in numpy instead: the
    compiled walk's 0.65 s of CPU to load exceeds what it saves on a few publications."""
    import threading

    from . import rcc_trees

    def work():
        if publications > rcc_trees.COMPILED_FROM:
            rcc_trees.warm()
        if embeddings:
            from .embed import load
            load()
    thread = threading.Thread(target=work, name="rcc-warm-up", daemon=True)
    thread.start()
    return thread


def rcc_run(inp: Path, out: Path, opts: dict) -> dict:
    from . import fields, rcc
    workers = 1 if opts.get("workers") is None else opts["workers"]
    if workers < 1:
        raise RequestError(f"--workers: expected 1 or more, found {workers}")
    taxonomy = fields.read_taxonomy(opts["taxonomy"]) if opts.get("taxonomy") else None
    files = sorted(p for p in inp.iterdir() if p.suffix.lower() in RCC_SUFFIXES and p.is_file())
    if not files:
        raise RequestError(f"{inp}: no publications (*.pdf, *.txt or *.json files)")
    embeddings = not opts.get("no_embeddings")
    _keep_weights(opts)
    warming = _warm_up(embeddings, len(files))
    # model, catalog and its embeddings before forking, so the workers share them
    rcc.model()
    prepared = _rcc_catalog(opts, embeddings)
    catalog = prepared.catalog
    warming.join()
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
    write_json(out / "data_set_citations.json", citations)
    write_json(out / "data_set_mentions.json", mentions)
    written = ["data_set_citations.json", "data_set_mentions.json"]
    if taxonomy:
        for name, value in (("research_fields.json", fields_out), ("methods.json", methods),
                            ("candidate_methods.json", new)):
            if value:       # the format has no empty file: nothing found, nothing written
                write_json(out / name, value)
                written.append(name)
    return {"publications": len(files) - len(failed), "citations": len(citations),
            "mentions": len(mentions), "files": written, "unreadable": failed,
            "catalog_cache": prepared.status}


def rcc_service(opts: dict) -> dict:
    from . import fields, rcc
    from . import rcc_trees
    rcc.model()
    rcc_trees.warm()            # a service answers many requests: the compiled walk
    _keep_weights(opts)
    catalog = _rcc_catalog(opts, True).catalog     # at start-up, not in the first request
    taxonomy = fields.read_taxonomy(opts["taxonomy"]) if opts.get("taxonomy") else None

    def cite(body):
        problems = []
        text = need(body, "text", str, problems)
        pid = body.get("publication_id", "0")
        threshold = need(body, "threshold", float, problems, required=False)
        mention_threshold = need(body, "mention_threshold", float, problems, required=False)
        raise_problems(problems)
        c, m = rcc.find_citations(text, catalog, pid, threshold,
                                  mention_threshold=mention_threshold)
        return {"citations": c, "mentions": m}

    def fields_(body):
        problems = []
        text = need(body, "text", str, problems)
        raise_problems(problems)
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
