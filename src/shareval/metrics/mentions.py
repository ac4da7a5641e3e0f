"""Mention matching: normalisation, cleaning rules, token Jaccard and the greedy
one-to-one match of the Rich Context mention scores (pure numpy and stdlib, no I/O).

Partial matching follows the Coleridge Initiative "Show US the Data" (Kaggle
2021) evaluation page: ground truths cleaned with its clean_text (lower case,
then every run of characters other than A-Z a-z 0-9 becomes a space), and
predictions too, as participants were told to clean them; token Jaccard on
whitespace tokens, predictions sorted alphabetically, each ground truth (in
sorted order) matched to the best remaining prediction, ties to the first in
that order, a match >= 0.5 a true positive. "unicode" cleaning is shareval's
earlier, script-aware variant.

Two Jaccard conventions are in use, one function each, named by the value two
empty sets get:

* ``jaccard_empty_zero``: the partial-match rule (an empty mention matches
  nothing, not even another empty one);
* ``jaccard_empty_one``: the overlap of two value sets (two publications
  without values agree).

>>> match_partial(["ADNI data", "psid"], ["the ADNI data", "NHANES"])
(1, 1, 1)
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np

__all__ = ["KAGGLE_SEPARATOR", "CLEANINGS", "CLEANING_RULES", "normalize_exact", "clean_kaggle",
           "clean_unicode", "cleaner", "tokens", "jaccard_empty_zero", "jaccard_empty_one",
           "match_partial", "partial_matches", "kaggle_predictions"]

_SPACE = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
_NOT_ASCII_ALNUM = re.compile(r"[^A-Za-z0-9]+")
KAGGLE_SEPARATOR = "|"           # Kaggle's PredictionString joins predictions with it


def normalize_exact(text: str) -> str:
    """Case- and space-normalised form used for exact matching: NFKC, case-folded,
    whitespace runs collapsed to one space, stripped.

    >>> normalize_exact("  The\\tADNI  Study ")
    'the adni study'
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def clean_kaggle(text: str) -> str:
    """Kaggle 2021's clean_text: ``ß``, ``ü``, ``ﬁ`` become separators. Not stripped:
    its leading space (``(ADNI)`` -> `` adni ``) places a string in Kaggle's sort order.

    >>> clean_kaggle("(ADNI) Müller")
    ' adni m ller'
    """
    return _NOT_ASCII_ALNUM.sub(" ", text.lower())


def clean_unicode(text: str) -> str:
    """NFKC, case-folded, runs of Unicode letters and digits joined by single spaces.

    >>> clean_unicode("(ADNI) Müller")
    'adni müller'
    """
    return " ".join(_NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


CLEANINGS = {"kaggle": clean_kaggle, "unicode": clean_unicode}
CLEANING_RULES = {
    "kaggle": "Kaggle 2021 clean_text: lower case, every run of characters other than "
              "A-Z a-z 0-9 becomes one space (so ß, ü and the ligature ﬁ separate words); "
              "cleaned strings sorted as clean_text gives them; gold strings with the same "
              "words after cleaning count once; predictions are split at '|' and each "
              "counts, even when equal after cleaning",
    "unicode": "NFKC, case-folded, tokens are runs of Unicode letters and digits; gold "
               "strings are deduplicated after cleaning, each prediction record counts",
}


def cleaner(cleaning: str):
    """The cleaning function of a rule name; ValueError for an unknown one.

    >>> cleaner("unicode")("A-B")
    'a b'
    """
    if cleaning not in CLEANINGS:
        raise ValueError(f"unknown cleaning {cleaning!r} (use one of {', '.join(CLEANINGS)})")
    return CLEANINGS[cleaning]


def tokens(text: str) -> frozenset:
    """Token set of the unicode cleaning (used by the reference systems' features).

    >>> sorted(tokens("ADNI-2 data"))
    ['2', 'adni', 'data']
    """
    return frozenset(clean_unicode(text).split())


def jaccard_empty_zero(a: frozenset, b: frozenset) -> float:
    r"""Jaccard index :math:`|a \cap b| / |a \cup b|`; two empty sets give 0.

    The partial-match convention: a mention with no token left matches nothing.

    >>> jaccard_empty_zero(frozenset("ab"), frozenset("bc"))
    0.3333333333333333
    >>> jaccard_empty_zero(frozenset(), frozenset())
    0.0
    """
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def jaccard_empty_one(a: set, b: set) -> float:
    r"""Jaccard index :math:`|a \cap b| / |a \cup b|`; two empty sets give 1.

    The overlap convention: two publications without any value agree.

    >>> jaccard_empty_one({"x", "y"}, {"y"})
    0.5
    >>> jaccard_empty_one(set(), set())
    1.0
    """
    return len(a & b) / len(a | b) if a | b else 1.0


def greedy_matches(predicted: list[str], gold: list[str], threshold: float, cleaning: str):
    """Matched (gold words, prediction) pairs, how many predictions, how many gold.

    >>> greedy_matches(["b a", "a"], ["a"], 0.5, "kaggle")
    ([('a', 'a')], 2, 1)
    """
    clean = cleaner(cleaning)
    preds = sorted(((clean(p), p) for p in predicted), key=lambda cp: cp[0])
    spelled: dict[str, str] = {}             # gold words -> its first cleaned spelling
    for c in map(clean, gold):
        words = " ".join(c.split())
        if words:
            spelled[words] = min(spelled.get(words, c), c)
    golds = sorted(spelled, key=spelled.__getitem__)
    if not preds or not golds:
        return [], len(preds), len(golds)
    ptoks = [frozenset(c.split()) for c, _ in preds]
    sim = np.array([[jaccard_empty_zero(frozenset(g.split()), t) for t in ptoks] for g in golds])
    taken = np.zeros(len(preds), bool)
    pairs = []
    for gi, g in enumerate(golds):
        row = np.where(taken, -1.0, sim[gi])
        k = int(np.argmax(row))              # first maximum: the alphabetically first
        if row[k] >= threshold:
            taken[k] = True
            pairs.append((g, preds[k][1]))
    return pairs, len(preds), len(golds)


def match_partial(predicted: list[str], gold: list[str], threshold: float = 0.5,
                  cleaning: str = "kaggle") -> tuple[int, int, int]:
    """(tp, fp, fn) with the Coleridge Initiative (Kaggle 2021) matching rule.

    Strings are cleaned (``cleaning``: "kaggle" or "unicode"); gold strings with the
    same words after cleaning count once, empty ones not at all; every prediction
    counts. Ground truths are processed in sorted order; each is matched to the unmatched
    prediction of highest token Jaccard (``jaccard_empty_zero``; ties: the first in
    sorted order of the cleaned predictions); a match counts as a true positive when its
    Jaccard is at least ``threshold``, otherwise the prediction stays unmatched.
    Unmatched predictions are false positives, unmatched ground truths false negatives.

    >>> match_partial(["national survey", "survey data"], ["National Survey of X"])
    (1, 1, 0)
    """
    pairs, n_pred, n_gold = greedy_matches(predicted, gold, threshold, cleaning)
    return len(pairs), n_pred - len(pairs), n_gold - len(pairs)


def partial_matches(predicted: list[str], gold: list[str], threshold: float = 0.5,
                    cleaning: str = "kaggle") -> dict[str, str]:
    """``{gold words: prediction}`` for the true positives of ``match_partial``.

    >>> partial_matches(["ADNI data"], ["the ADNI data"])
    {'the adni data': 'ADNI data'}
    """
    return dict(greedy_matches(predicted, gold, threshold, cleaning)[0])


def kaggle_predictions(mention: str) -> list[str]:
    """The predictions one mention record makes in a Kaggle PredictionString.

    >>> kaggle_predictions("adni|psid")
    ['adni', 'psid']
    """
    return mention.split(KAGGLE_SEPARATOR)
