"""rcc-mentions partial scores against an oracle written from the Kaggle 2021 evaluation page.

The oracle follows the Coleridge Initiative "Show US the Data" evaluation text step
by step, with its own code: ground truths cleaned by clean_text (lower case, then
every character other than A-Z a-z 0-9 a separator), predictions taken from a
'|'-separated PredictionString and cleaned as the data page tells participants to,
the published jaccard (``lower().split()`` token sets), predictions sorted
alphabetically and ties resolved by that sort, ground truths in sorted order each
taking its best remaining prediction, a match >= 0.5 a true positive, micro F0.5.
"""
import json
import string
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from shareval.tasks.rcc import match_partial, partial_matches
from tests.conftest import write

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


def _files(tmp_path, pubs, pipes=False):
    ref = [{"publication_id": p, "data_set_id": i, "score": 1.0, "mention_list": [g]}
           for p, (gold, _) in pubs.items() for i, g in enumerate(gold)]
    ref += [{"publication_id": p, "data_set_id": 99, "score": 1.0, "mention_list": []}
            for p, (gold, _) in pubs.items() if not gold]
    if pipes:      # one record per publication holding the whole PredictionString
        sub = [{"publication_id": p, "mention": "|".join(preds)}
               for p, (_, preds) in pubs.items() if preds]
    else:
        sub = [{"publication_id": p, "mention": m} for p, (_, preds) in pubs.items()
               for m in preds]
    return (write(tmp_path / "ref.json", json.dumps(ref)),
            write(tmp_path / "sub.json", json.dumps(sub)))


def _counts(r):
    return r.counts["partial_tp"], r.counts["partial_fp"], r.counts["partial_fn"]


@settings(max_examples=300, deadline=None)
@given(mention_sets(), st.booleans())
def test_kaggle_cleaning_equals_the_oracle(tmp_path_factory, pubs, pipes):
    ref, sub = _files(tmp_path_factory.mktemp("k"), pubs, pipes)
    r = get("rcc-mentions").score(ref, sub)
    rows = {p: "|".join(preds) for p, (_, preds) in pubs.items() if preds}
    tp, fp, fn, f05 = oracle_kaggle(rows, {p: g for p, (g, _) in pubs.items()})
    assert _counts(r) == (tp, fp, fn)
    assert r.metrics["partial_f0_5"] == pytest.approx(f05, abs=1e-9)
    assert r.conventions["cleaning"] == "kaggle"


@settings(max_examples=200, deadline=None)
@given(mention_sets(), st.sampled_from([0.3, 0.5, 2 / 3, 1.0]))
def test_unicode_cleaning_equals_the_oracle(tmp_path_factory, pubs, threshold):
    ref, sub = _files(tmp_path_factory.mktemp("u"), pubs)
    r = get("rcc-mentions").score(ref, sub, cleaning="unicode", jaccard=threshold)
    tot = [0, 0, 0]
    for gold, preds in pubs.values():
        for i, v in enumerate(oracle_publication(preds, gold, oracle_clean_unicode, threshold)):
            tot[i] += v
    assert _counts(r) == tuple(tot)
    assert r.metrics["partial_f0_5"] == pytest.approx(_f_half(*tot), abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([WORDS, TIE_WORDS]).flatmap(
    lambda w: st.tuples(st.lists(names(w), max_size=6), st.lists(names(w), max_size=6))),
    st.sampled_from(["kaggle", "unicode"]))
def test_match_partial_equals_the_oracle(preds_gold, cleaning):
    preds, gold = preds_gold
    clean = oracle_clean_kaggle if cleaning == "kaggle" else oracle_clean_unicode
    got = match_partial(preds, gold, cleaning=cleaning)
    assert got == oracle_publication(preds, gold, clean)
    assert len(partial_matches(preds, gold, cleaning=cleaning)) == got[0]


# Worked examples, each breaking one rule of the earlier scorer or of the page.

def test_gold_deduplicated_after_cleaning():
    # "ADNI" and "(ADNI)" are one cleaned ground truth, "adni"
    assert match_partial(["adni"], ["ADNI", "(ADNI)"]) == (1, 0, 0)
    assert partial_matches(["adni"], ["ADNI", "(ADNI)"]) == {"adni": "adni"}


def test_leading_punctuation_sorts_first_as_in_kaggle():
    # clean_text("(a) x") is " a x": it sorts before "a b" and takes the tie (1/2 each)
    # for "a", so "a b c" keeps "a b" (2/3). Sorted stripped, "a" would take "a b" and
    # "a b c" would fail on "a x" (1/4).
    assert match_partial(["a b", "(a) x"], ["a", "a b c"]) == (2, 0, 0)
    assert partial_matches(["a b", "(a) x"], ["a", "a b c"]) == {"a": "(a) x", "a b c": "a b"}
    # a ground truth written with and without leading punctuation is one, at the
    # earlier place: " b c" goes first and takes "a b c" (2/3), leaving "a b d" to "a b"
    gold = ["a b", "(b) c", "b c"]
    assert match_partial(["a b c", "a b d"], gold) == (2, 0, 0)
    assert partial_matches(["a b c", "a b d"], gold) == {"b c": "a b c", "a b": "a b d"}


def test_every_prediction_counts_even_equal_after_cleaning():
    assert match_partial(["ADNI", "adni", "  ADNI ", "(adni)"], ["ADNI"]) == (1, 3, 0)


def test_ascii_cleaning_separates_non_ascii_letters():
    # ß, ü and the ligature ﬁ separate words: "stra e survey", "m ller", " nancial"
    assert match_partial(["Strasse Survey"], ["Straße Survey"]) == (0, 1, 1)     # J = 1/4
    assert match_partial(["financial panel"], ["ﬁnancial panel"]) == (0, 1, 1)   # J = 1/3
    assert match_partial(["Müller Study"], ["MÜLLER study"]) == (1, 0, 0)        # same tokens
    assert match_partial(["M ller Study"], ["Müller Study"]) == (1, 0, 0)
    # the unicode cleaning keeps them letters (NFKC: ﬁ -> fi; case folding: ß -> ss)
    assert match_partial(["Strasse Survey"], ["Straße Survey"], cleaning="unicode") == (1, 0, 0)
    assert match_partial(["financial panel"], ["ﬁnancial panel"],
                         cleaning="unicode") == (1, 0, 0)
    assert match_partial(["M ller Study"], ["Müller Study"], cleaning="unicode") == (0, 1, 1)


def test_order_is_that_of_the_cleaned_strings():
    # Both predictions tie (2/3) for "national survey". Cleaned, "national survey health"
    # sorts first and is taken, so "national survey health 1997" is left with the other
    # (2/5). Raw, "national survey youth" sorts first (' ' < '-'), and both would match.
    preds = ["national-survey-health", "national survey youth"]
    gold = ["National Survey", "National Survey Health 1997"]
    assert match_partial(preds, gold) == (1, 1, 1)
    assert partial_matches(preds, gold) == {"national survey": "national-survey-health"}


def test_threshold_is_inclusive_and_ties_go_to_the_first_sorted():
    assert match_partial(["a b c d"], ["a b"]) == (1, 0, 0)                      # J = 0.5
    assert match_partial(["a b c d e"], ["a b"]) == (0, 1, 1)                    # J = 0.4
    assert partial_matches(["b x", "a x"], ["x"]) == {"x": "a x"}
    # a ground truth below the threshold leaves its best prediction to the next one
    assert match_partial(["c d"], ["a b", "c d e"]) == (1, 0, 1)


def test_prediction_string_split_at_pipes(tmp_path):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["ADNI", "NHANES"]}]))
    sub = write(tmp_path / "sub.json", json.dumps(
        [{"publication_id": 1, "mention": "ADNI|NHANES"}]))
    assert _counts(get("rcc-mentions").score(ref, sub)) == (2, 0, 0)
    # unicode: one prediction {adni, nhanes}, Jaccard 1/2 with "ADNI"
    assert _counts(get("rcc-mentions").score(ref, sub, cleaning="unicode")) == (1, 0, 1)


def test_gold_empty_after_cleaning_is_left_out_with_a_warning(tmp_path):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["ßü", "PSID"]}]))
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "PSID"}]))
    r = get("rcc-mentions").score(ref, sub)
    assert _counts(r) == (1, 0, 0) and r.counts["gold_mentions_empty_after_cleaning"] == 1
    assert any("1 gold mentions have no letter or digit" in w for w in r.warnings)
    u = get("rcc-mentions").score(ref, sub, cleaning="unicode")
    assert _counts(u) == (1, 0, 1) and not u.warnings


def test_result_names_the_rule_and_kaggle_is_the_default(tmp_path):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["PSID"]}]))
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "psid"}]))
    r = get("rcc-mentions").score(ref, sub)
    assert r.conventions["cleaning"] == "kaggle"
    assert "clean_text" in r.conventions["cleaning_rule"]
    u = get("rcc-mentions").score(ref, sub, cleaning="unicode")
    assert u.conventions["cleaning"] == "unicode" and "NFKC" in u.conventions["cleaning_rule"]
    assert u.scorer_version.startswith("rcc-mentions/2 ")


def test_unknown_cleaning_is_invalid_input(tmp_path, cli):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["PSID"]}]))
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "psid"}]))
    with pytest.raises(InvalidInput) as e:
        get("rcc-mentions").score(ref, sub, cleaning="ascii")
    assert "cleaning: unknown cleaning 'ascii'" in str(e.value.problems[0])
    code, out, err = cli("score", "rcc-mentions", "-r", ref, "-s", sub, "--cleaning", "ascii")
    assert code == 2 and "unknown cleaning 'ascii'" in err
    code, out, err = cli("score", "rcc-mentions", "-r", ref, "-s", sub, "--cleaning", "unicode",
                         "--format", "json")
    assert code == 0 and json.loads(out)["conventions"]["cleaning"] == "unicode"
