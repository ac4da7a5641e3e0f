"""metrics.mentions: cleaning, token Jaccard and the Kaggle 2021 greedy match, on
worked examples and against the oracle written from the evaluation page."""
import pytest
from hypothesis import given, settings, strategies as st

from shareval.metrics.mentions import (cleaner, jaccard_empty_one, jaccard_empty_zero,
                                       kaggle_predictions, match_partial, normalize_exact,
                                       partial_matches, tokens)
from tests.metrics.mention_oracle import (TIE_WORDS, WORDS, names, oracle_clean_kaggle,
                                          oracle_clean_unicode, oracle_publication)


def test_partial_matching_rule():
    # Jaccard("ANES 1980 study", "ANES 1980") = 2/3 -> match; "the data" vs "ANES" -> 0
    assert match_partial(["ANES 1980", "the data"], ["ANES 1980 study"]) == (1, 1, 0)
    # one-to-one: two predictions cannot both match one ground truth
    assert match_partial(["survey of income", "income survey"], ["survey of income"]) == (1, 1, 0)
    # below threshold: 1/3
    assert match_partial(["current population"], ["current survey data"]) == (0, 1, 1)
    assert match_partial([], ["x"]) == (0, 0, 1)
    assert normalize_exact("  The  ANES\nStudy ") == "the anes study"


def test_matching_helpers():
    assert jaccard_empty_zero(frozenset(), frozenset()) == 0.0
    assert jaccard_empty_zero(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)
    assert tokens("The  Straße-Data") == frozenset({"the", "strasse", "data"})
    assert kaggle_predictions("a|b c|") == ["a", "b c", ""]
    assert partial_matches(["NS data", "survey"], ["National Survey", "ns"]) == \
        {"ns": "NS data", "national survey": "survey"}
    assert partial_matches(["x"], ["y"], cleaning="unicode") == {}


def test_the_two_jaccard_conventions_differ_only_on_two_empty_sets():
    assert jaccard_empty_zero(frozenset(), frozenset()) == 0.0
    assert jaccard_empty_one(set(), set()) == 1.0
    for a, b in [({"a"}, set()), ({"a", "b"}, {"b"}), ({"a"}, {"a"})]:
        assert jaccard_empty_zero(frozenset(a), frozenset(b)) == jaccard_empty_one(a, b)


def test_an_unknown_cleaning_is_a_value_error_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"^unknown cleaning 'ascii' \(use one of kaggle, unicode\)$"):
        cleaner("ascii")


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
