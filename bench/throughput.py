"""Throughput of the reference systems on this machine.

    python bench/throughput.py [--data ../shared/data] [--pubs 200] [--sentences 2000]

RCC: publications/s of ``rcc.find_citations`` (text already extracted, catalog
loaded, embedding model warm) over held-out ``rcc/train`` publications, in one
process and in one process per core. SV-Ident: sentences/s of detection and of
fusion disambiguation against the trial vocabulary, one process.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

from rich.console import Console
from rich.table import Table

from shareval.systems import rcc, svident, training
from shareval.systems.registry import read_sentences
from shareval.systems.text import read_document

_CATALOG = None


def _init(path):
    global _CATALOG
    from shareval.systems.embed import embed
    _CATALOG = rcc.Catalog.load(path)
    _CATALOG.vectors(embed)             # the catalog's embeddings: once per catalog, not timed


def _one_thread():
    from shareval.systems.embed import set_threads
    set_threads(1)


def _cite(text):
    return len(rcc.find_citations(text, _CATALOG)[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--pubs", type=int, default=200)
    ap.add_argument("--sentences", type=int, default=2000)
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "rcc").exists():
        print(f"{data}: the shared data is not there; nothing to measure", file=sys.stderr)
        return 2
    rows = []
    catalog_path = data / "rcc" / "catalog" / "dataset_text_dict.json"
    ids = [p.stem for p in sorted((data / "rcc" / "train" / "texts").glob("*.json"))
           if training.rcc_held_out(p.stem)][:args.pubs]
    texts = [read_document(data / "rcc" / "train" / "texts" / f"{i}.json") for i in ids]
    words = sum(len(t.split()) for t in texts) / len(texts)
    _init(catalog_path)
    t0 = time.perf_counter()
    for t in texts:
        _cite(t)
    one = len(texts) / (time.perf_counter() - t0)
    rows.append(("RCC citations + mentions", f"{len(texts)} publications, {words:.0f} words "
                 "on average", "1 process", f"{one:.1f} publications/s"))
    workers = os.cpu_count() or 1
    # workers are forked after the catalog and its embeddings are loaded, so they share them
    with get_context("fork").Pool(workers, _one_thread) as pool:
        t0 = time.perf_counter()
        pool.map(_cite, texts, chunksize=4)
        many = len(texts) / (time.perf_counter() - t0)
    rows.append(("RCC citations + mentions", f"{len(texts)} publications", f"{workers} processes",
                 f"{many:.1f} publications/s"))

    rows_sv = training.read_svident_train(data / "sv-ident" / "train" / "train.tsv")
    sents = [r["sentence"] for r in rows_sv][:args.sentences]
    svident.detect(sents[:10])
    t0 = time.perf_counter()
    svident.detect(sents)
    rows.append(("SV-Ident detection", f"{len(sents)} sentences", "1 process",
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
    rows.append(("SV-Ident disambiguation (fusion)", f"{len(trial_sents)} trial sentences, "
                 f"{len(vocab)} variables", "1 process",
                 f"{len(trial_sents) / (time.perf_counter() - t0):.0f} sentences/s"))
    table = Table(title=f"Reference system throughput ({os.cpu_count()} cores)")
    for col in ("system", "input", "parallelism", "throughput"):
        table.add_column(col)
    for r in rows:
        table.add_row(*r)
    Console(width=140).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
