"""The declared held-out splits of the reference systems' training data, and the
SV-Ident training file they are read from. A leaf of ``systems``: the systems that
read training data and ``training`` (which imports the systems) both use it.
"""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

# what ``train-system --split`` trains on: "train" leaves the declared held-out part out
# (bench/quality.py measures on it), "all" uses every training document
SPLITS = ("train", "all")
# how each shipped model was trained, the default of ``train-system``
SHIPPED_SPLIT = {"rcc": "train", "svident": "all"}


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")


def rcc_held_out(publication_id) -> bool:
    """The declared RCC split: held out when the integer id is divisible by 5."""
    return int(publication_id) % 5 == 0


def read_svident_train(path: str | Path) -> list[dict]:
    with Path(path).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def svident_held_out(rows: list[dict]) -> set[str]:
    """The declared SV-Ident split: per language, documents in sorted id order, every fourth
    (positions 3, 7, ...) held out. A document's language is its majority sentence language."""
    lang_of: dict[str, Counter] = {}
    for r in rows:
        lang_of.setdefault(r["doc_id"], Counter())[r["lang"]] += 1
    held = set()
    for lang in sorted({c.most_common(1)[0][0] for c in lang_of.values()}):
        docs = sorted((d for d, c in lang_of.items() if c.most_common(1)[0][0] == lang),
                      key=lambda d: (len(d), d))
        held.update(docs[3::4])
    return held
