"""The one held-out evaluation of round 6's cross-validation winner (``mix_calib``).

    PYTHONPATH=src python bench/svident_finetune_heldout.py [--data ../shared/data]
        [--threads 2]

Needs torch (``pip install torch==2.13.0``, CPU; bench only). Trains all twelve layers
of multilingual-e5-small and a head on the 24 training documents (the settings of
``bench/svident_finetune.py`` that won the five-fold CV: ``--top 12 --epochs 4 --lr
3e-5 --head-lr 1e-3 --batch 16``, seed 0), adds the shipped detection model's log-odds
(it was trained on the same 24 documents) and, within each of the six held-out
documents (``training.svident_held_out``), marks as positive its top q share of
sentences by that sum, q being the training documents' positive share
(``svident_calib.top_share``). Prints the F1-macro (per document, then per language,
then the mean of the languages) of that and of the shipped model at its threshold.
The record: docs/dev/systems-experiments-round6-detection.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from svident_calib import top_share  # noqa: E402
from svident_finetune import frozen_states, train_fold  # noqa: E402
from quality import detection_score  # noqa: E402

from shareval.systems import e5_numpy, svident, training  # noqa: E402


def score(test: list[dict], predicted, tmp: Path) -> dict:
    """F1-macro by shareval's ``svident-detection`` scorer, overall and per language."""
    res = detection_score(test, predicted, tmp)
    return {"all": round(res.metrics["f1_macro"], 4),
            **{k: round(v["f1_macro"], 4) for k, v in res.breakdowns["per_language"].items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/svft_heldout"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    settings = argparse.Namespace(top=12, epochs=4, lr=3e-5, head_lr=1e-3, batch=16,
                                  max_first_epoch=float("inf"))
    rows = training.read_svident_train(args.data / "sv-ident" / "train" / "train.tsv")
    held = training.svident_held_out(rows)
    y = np.array([int(r["is_variable"]) for r in rows], dtype=np.float32)
    doc = np.array([r["doc_id"] for r in rows])
    test = np.flatnonzero(np.isin(doc, sorted(held)))
    train = np.flatnonzero(~np.isin(doc, sorted(held)))
    m = e5_numpy.model()
    ids = [m.tokenize(r["sentence"]) for r in rows]
    states = frozen_states(m, ids, 0, Path(f"{args.cache}_0.npz"))
    t0 = time.time()
    finetuned, epoch_s, _ = train_fold(m, states, y, train, test, settings)
    shipped = svident.detection_model()
    p = shipped.probabilities([rows[i]["sentence"] for i in test])
    logodds = np.log(p) - np.log1p(-p)
    q = float(y[train].mean())
    test_rows = [rows[i] for i in test]
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps({
            "held_out_documents": len(held), "sentences": len(test), "q": round(q, 4),
            "shipped": score(test_rows, p >= shipped.threshold, Path(tmp)),
            "mix_calib": score(test_rows, top_share(finetuned + logodds, doc[test], q),
                               Path(tmp)),
            "epoch_seconds": epoch_s, "seconds": round(time.time() - t0)}))


if __name__ == "__main__":
    main()
