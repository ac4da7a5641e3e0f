"""BM25 over a list of texts: words (bm25s with Snowball stemming and the language's
stopwords) or the character n-grams of words."""
from __future__ import annotations

import re

import numpy as np

STEMMERS = {"en": "english", "de": "german"}


class Bm25:
    def __init__(self, texts: list[str], lang: str = "en"):
        import bm25s
        import Stemmer
        self.lang = lang if lang in STEMMERS else "en"
        self._stem = Stemmer.Stemmer(STEMMERS[self.lang])
        self.size = len(texts)
        self.index = bm25s.BM25()
        self.index.index(self._tokenize(texts), show_progress=False)

    def _tokenize(self, texts):
        import bm25s
        return bm25s.tokenize(texts, stopwords=self.lang, stemmer=self._stem, show_progress=False)

    def scores(self, queries: list[str]) -> np.ndarray:
        """BM25 of every text for each query (queries x texts)."""
        docs, scores = self.index.retrieve(self._tokenize(queries), k=self.size,
                                           show_progress=False, n_threads=1)
        out = np.zeros((len(queries), self.size))
        np.put_along_axis(out, docs, scores, axis=1)
        return out


FOLDS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})
WORD = re.compile(r"[^\W_]+")


def char_grams(text: str, n: int = 4) -> list[str]:
    """The character n-grams of each word, lower-cased, umlauts folded to ae/oe/ue/ss,
    word boundaries marked with ``#`` (a word shorter than n - 2 letters is one gram)."""
    out = []
    for w in WORD.findall(text.lower().translate(FOLDS)):
        w = f"#{w}#"
        out += [w[i:i + n] for i in range(max(1, len(w) - n + 1))]
    return out


class CharBm25:
    """BM25 (bm25s's defaults) over the character n-grams of each word (``char_grams``):
    a German compound shares grams with its parts, which whole words do not."""

    def __init__(self, texts: list[str], n: int = 4):
        import bm25s
        self.n = n
        self.size = len(texts)
        self.index = bm25s.BM25()
        self.index.index([char_grams(t, n) or ["#"] for t in texts], show_progress=False)

    def scores(self, queries: list[str]) -> np.ndarray:
        """BM25 of every text for each query (queries x texts)."""
        out = np.zeros((len(queries), self.size))
        for i, q in enumerate(queries):
            grams = char_grams(q, self.n)
            if grams:
                out[i] = self.index.get_scores(grams)
        return out
