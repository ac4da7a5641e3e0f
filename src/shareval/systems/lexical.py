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


class FieldBm25:
    """BM25 over documents made of weighted fields (a simple BM25F).

    A term's frequency in a document is the weighted sum of its frequencies in the
    document's fields, and the document's length the weighted sum of its fields'
    lengths; the rest is bm25s's BM25 (Lucene's idf, k1 = 1.5, b = 0.75), so with all
    weights 1 the scores are those of ``Bm25``/``CharBm25`` over the fields joined.
    ``tokens`` turns a list of texts into lists of terms: ``word_tokens(lang)`` or
    ``gram_tokens(n)``. The term-document weights are a sparse matrix, so a large
    vocabulary costs memory in proportion to its text.
    """

    def __init__(self, fields: list[dict[str, str]], weights: dict[str, float], tokens,
                 k1: float = 1.5, b: float = 0.75):
        from scipy import sparse
        self.tokens = tokens
        self.size = len(fields)
        counts: list[dict[str, float]] = [{} for _ in fields]
        for name, weight in weights.items():
            if not weight:
                continue
            for doc, terms in zip(counts, tokens([f.get(name) or "" for f in fields])):
                for t in terms:
                    doc[t] = doc.get(t, 0.0) + weight
        self.vocab: dict[str, int] = {}
        rows, cols, tf = [], [], []
        for d, doc in enumerate(counts):
            for t, x in doc.items():
                rows.append(d)
                cols.append(self.vocab.setdefault(t, len(self.vocab)))
                tf.append(x)
        rows, cols, tf = np.array(rows, int), np.array(cols, int), np.array(tf, float)
        n = max(self.size, 1)
        length = np.bincount(rows, weights=tf, minlength=self.size)
        mean = length.mean() if self.size and length.mean() > 0 else 1.0
        df = np.bincount(cols, minlength=len(self.vocab))
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        norm = k1 * ((1 - b) + b * length / mean)
        values = idf[cols] * tf / (tf + norm[rows])
        self.weights = sparse.csr_matrix((values, (cols, rows)),
                                         shape=(len(self.vocab), self.size))

    def scores(self, queries: list[str]) -> np.ndarray:
        """The score of every document for each query (queries x documents); a term
        repeated in the query counts as often as it occurs."""
        from scipy import sparse
        rows, cols = [], []
        for i, terms in enumerate(self.tokens(queries)):
            for t in terms:
                j = self.vocab.get(t)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        q = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                              shape=(len(queries), len(self.vocab)))
        return np.asarray((q @ self.weights).todense()).reshape(len(queries), self.size)


def word_tokens(lang: str):
    """Texts -> stemmed words without stopwords, as ``Bm25`` tokenizes."""
    import bm25s
    import Stemmer
    lang = lang if lang in STEMMERS else "en"
    stemmer = Stemmer.Stemmer(STEMMERS[lang])

    def tokens(texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize(texts, stopwords=lang, stemmer=stemmer, return_ids=False,
                              show_progress=False)
    return tokens


def gram_tokens(n: int = 4):
    """Texts -> the character n-grams of their words, as ``CharBm25`` splits them."""
    def tokens(texts: list[str]) -> list[list[str]]:
        return [char_grams(t, n) for t in texts]
    return tokens
