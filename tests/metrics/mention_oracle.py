"""An oracle of the Kaggle 2021 mention rule, written from its evaluation page, and
hypothesis strategies of names; used by the tests of metrics.mentions and of
the rcc-mentions scorer.

The oracle follows the Coleridge Initiative "Show US the Data" evaluation text step
by step, with its own code: ground truths cleaned by clean_text (lower case, then
every character other than A-Z a-z 0-9 a separator), predictions taken from a
'|'-separated PredictionString and cleaned as the data page tells participants to,
the published jaccard (``lower().split()`` token sets), predictions sorted
alphabetically and ties resolved by that sort, ground truths in sorted order each
taking its best remaining prediction, a match >= 0.5 a true positive, micro F0.5.
"""
import string
import unicodedata

from hypothesis import strategies as st

KEEP = set(string.ascii_lowercase + string.digits)


def oracle_clean_kaggle(text: str) -> str:
    """clean_text, character by character (no regex): a run of other characters is one
    space, kept at the ends too (it decides where the string sorts)."""
    out = []
    for ch in text.lower():
        if ch in KEEP:
            out.append(ch)
        elif not out or out[-1] != " ":
            out.append(" ")
    return "".join(out)


def oracle_clean_unicode(text: str) -> str:
    """NFKC and case folding; any character that is not alphanumeric separates."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in folded).split())


def published_jaccard(str1: str, str2: str) -> float:
    """The evaluation page's jaccard; 0 when both are empty (the page divides by zero)."""
    a, b = set(str1.lower().split()), set(str2.lower().split())
    c = a.intersection(b)
    union = len(a) + len(b) - len(c)
    return float(len(c)) / union if union else 0.0


def oracle_publication(preds: list[str], truths: list[str], clean, threshold=0.5):
    """(tp, fp, fn) of one publication, following the evaluation page's steps."""
    spellings = {}          # one ground truth per set of words, at its first spelling's place
    for t in map(clean, truths):
        if t.split():
            spellings.setdefault(tuple(t.split()), []).append(t)
    truths = sorted(min(v) for v in spellings.values())
    remaining = sorted(clean(p) for p in preds)
    tp = fn = 0
    for truth in truths:
        if not remaining:
            fn += 1
            continue
        scores = [published_jaccard(truth, p) for p in remaining]
        best = scores.index(max(scores))            # ties: the first in sorted order
        if scores[best] >= threshold:
            del remaining[best]
            tp += 1
        else:
            fn += 1
    return tp, len(remaining), fn


def oracle_kaggle(submission: dict[str, str], gold: dict[str, list[str]], threshold=0.5):
    """Micro tp, fp, fn and F0.5 over Kaggle rows {Id: PredictionString}."""
    tp = fp = fn = 0
    for pub in set(submission) | set(gold):
        row = submission.get(pub)
        preds = row.split("|") if row is not None else []
        a, b, c = oracle_publication(preds, gold.get(pub, []), oracle_clean_kaggle, threshold)
        tp, fp, fn = tp + a, fp + b, fn + c
    return tp, fp, fn, _f_half(tp, fp, fn)


def _f_half(tp, fp, fn):
    beta2 = 0.25
    den = (1 + beta2) * tp + beta2 * fn + fp
    return (1 + beta2) * tp / den if den else 0.0


# Names built from words whose cleaning differs between the rules, punctuation
# variants of one name, case and spacing variants, and ASCII look-alikes.
WORDS = ["ADNI", "(ADNI)", "adni", "Survey", "survey", "Health", "National", "Youth",
         "Straße", "Strasse", "Müller", "Muller", "ﬁnancial", "financial", "\u212aelvin",
         "İstanbul", "1997", "data", "of", "the", "U.S.", "FBI’s", "FBI's", "Ⅻ", "x_y"]
SEPARATORS = [" ", "  ", "-", " (", ") ", ", ", "/", "\t"]
# Few short words make Jaccard ties common; their raw and cleaned orders differ
# ("A" < "a", "-" > " "), so the order rule decides the outcome.
TIE_WORDS = ["a", "A", "b", "B", "c", "(c)", "d"]


@st.composite
def names(draw, words=WORDS):
    words = draw(st.lists(st.sampled_from(words), min_size=1, max_size=4))
    out = words[0]
    for w in words[1:]:
        out += draw(st.sampled_from(SEPARATORS)) + w
    return out


@st.composite
def variant(draw, name):
    """The same name as a participant might write it again: case, spacing, brackets."""
    kind = draw(st.sampled_from(["same", "upper", "lower", "spaces", "brackets", "drop"]))
    if kind == "upper":
        return name.upper()
    if kind == "lower":
        return name.lower()
    if kind == "spaces":
        return "  " + name.replace(" ", "   ") + " "
    if kind == "brackets":
        return f"({name})"
    if kind == "drop":
        return name.split()[0] if " " in name else name
    return name


@st.composite
def mention_sets(draw):
    """{publication: (gold names, predicted names)} with duplicates and near misses."""
    out = {}
    for pub in range(draw(st.integers(1, 4))):
        words = draw(st.sampled_from([WORDS, TIE_WORDS]))
        gold = draw(st.lists(names(words), max_size=5))
        preds = [draw(variant(g)) for g in gold if draw(st.booleans())]
        preds += draw(st.lists(names(words), max_size=3))
        preds += [draw(variant(p)) for p in preds if draw(st.integers(0, 3)) == 0]
        out[str(pub + 1)] = (gold, draw(st.permutations(preds)))
    return out
