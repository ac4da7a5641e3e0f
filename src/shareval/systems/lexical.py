"""BM25 over a list of texts (bm25s with Snowball stemming and the language's stopwords)."""
from __future__ import annotations

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
