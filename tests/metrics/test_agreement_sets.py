"""Krippendorff's alpha with a distance (nominal, MASI, Jaccard, any function) and the
set distances: equal to nltk's AnnotationTask and distances, to the krippendorff
package, and to examples worked out by hand below; every documented rule (empty sets,
dropped units, missing values, undefined cases) has a test that fails if it breaks."""
import math
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from nltk.metrics import distance as nltk_distance
from nltk.metrics.agreement import AnnotationTask

from shareval.metrics.agreement import (MISSING, jaccard_distance, krippendorff_alpha,
                                        krippendorff_alpha_nominal, masi_distance)

sets = st.frozensets(st.sampled_from("abcd"), min_size=1)


@settings(max_examples=300, deadline=None)
@given(sets, sets)
def test_set_distances_equal_nltk_on_non_empty_sets(a, b):
    # nltk used the rounded weights 0.67 and 0.33 until its exact-thirds fix (nltk PR
    # 3695); the installed 3.10.4 has it, an older nltk fails here by design
    assert masi_distance(a, b) == pytest.approx(nltk_distance.masi_distance(a, b), abs=1e-12)
    assert jaccard_distance(a, b) == pytest.approx(nltk_distance.jaccard_distance(a, b),
                                                   abs=1e-12)


def test_masi_by_hand():
    # Passonneau (2006): 1 - J * M
    assert masi_distance({"a", "b"}, {"b", "a"}) == 0.0                 # identical, M = 1
    assert masi_distance({"a"}, {"a", "b"}) == pytest.approx(1 - 1 / 2 * 2 / 3)  # subset
    assert masi_distance({"a", "b"}, {"b", "c"}) == pytest.approx(1 - 1 / 3 * 1 / 3)  # overlap
    assert masi_distance({"a"}, {"b"}) == 1.0                              # disjoint, M = 0
    assert jaccard_distance({"a", "b"}, {"b", "c"}) == pytest.approx(2 / 3)


def test_empty_sets_are_identical_and_disjoint_from_any_other_set():
    # nltk divides by zero here; the rule: "no link" agrees with "no link"
    assert masi_distance(set(), set()) == 0.0
    assert jaccard_distance(set(), set()) == 0.0
    assert masi_distance(set(), {"a"}) == 1.0
    assert jaccard_distance(frozenset(), frozenset("a")) == 1.0
    # with only {} and {a} as values, set alpha is nominal alpha
    units = [[frozenset(), frozenset()], [frozenset(), frozenset("a")],
             [frozenset("a"), frozenset("a")], [frozenset(), frozenset()]]
    nominal = krippendorff_alpha(units)
    assert krippendorff_alpha(units, "masi") == pytest.approx(nominal)
    assert krippendorff_alpha(units, "jaccard") == pytest.approx(nominal)
    assert nominal == pytest.approx(1 - (2 / 8) / (2 * 5 * 3 / (8 * 7)))


@st.composite
def set_codings(draw):
    """(coder, item, frozenset) triples: 2-4 coders, 1-8 items, some codings missing."""
    coders = range(draw(st.integers(2, 4)))
    items = range(draw(st.integers(1, 8)))
    return [(c, i, draw(sets)) for c in coders for i in items if draw(st.booleans())
            or c < 2]


def units_of(triples):
    by_item = {}
    for _, item, value in triples:
        by_item.setdefault(item, []).append(value)
    return list(by_item.values())


@pytest.mark.parametrize("name, oracle", [("masi", nltk_distance.masi_distance),
                                          ("jaccard", nltk_distance.jaccard_distance)])
@settings(max_examples=200, deadline=None)
@given(triples=set_codings())
def test_set_alpha_equals_nltk(name, oracle, triples):
    units = units_of(triples)
    pairable = {v for u in units if len(u) >= 2 for v in u}
    assume(len(pairable) >= 2)         # nltk returns 1 where alpha is undefined (NaN here)
    ref = AnnotationTask(data=triples, distance=oracle).alpha()
    assert krippendorff_alpha(units, name) == pytest.approx(ref, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(triples=set_codings())
def test_alpha_with_nominal_distance_equals_nltk(triples):
    units = units_of(triples)
    assume(len({v for u in units if len(u) >= 2 for v in u}) >= 2)
    ref = AnnotationTask(data=triples).alpha()          # nltk's default: binary distance
    assert krippendorff_alpha(units) == pytest.approx(ref, abs=1e-9)


@st.composite
def matrices(draw):
    n_coders, n_items = draw(st.integers(2, 5)), draw(st.integers(1, 25))
    return np.array([[draw(st.integers(MISSING, 3)) for _ in range(n_items)]
                     for _ in range(n_coders)])


def columns(m):
    return [[int(x) for x in col if x != MISSING] for col in m.T]


@settings(max_examples=200, deadline=None)
@given(matrices())
def test_nominal_alpha_equals_krippendorff_package_and_the_matrix_version(m):
    ours = krippendorff_alpha(columns(m))
    assert ours == pytest.approx(krippendorff_alpha_nominal(m), abs=1e-9, nan_ok=True)
    pairable = {v for u in columns(m) if len(u) >= 2 for v in u}
    assume(len(pairable) >= 2)
    data = np.where(m == MISSING, np.nan, m.astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal",
                                 value_domain=sorted(set(m[m != MISSING].tolist())))
    assert ours == pytest.approx(ref, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(matrices())
def test_a_distance_function_is_used_as_given(m):
    # squared difference is Krippendorff's interval metric: the package's "interval"
    pairable = {v for u in columns(m) if len(u) >= 2 for v in u}
    assume(len(pairable) >= 2)
    data = np.where(m == MISSING, np.nan, m.astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    ours = krippendorff_alpha(columns(m), lambda x, y: (x - y) ** 2)
    assert ours == pytest.approx(ref, abs=1e-9)


def test_krippendorff_2011_worked_example_with_missing_values():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12
    # units, coders' values by unit (missing ones left out): nominal alpha = 0.743
    units = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
             [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5],
             [1, 1], [3]]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)
    # the same units with coders' gaps written as None
    padded = [u + [None] * (4 - len(u)) for u in units]
    assert krippendorff_alpha(padded) == krippendorff_alpha(units)


def test_set_valued_example_by_hand():
    # values {a} x3, {a,b}, {b}, {c}: n = 6; three units of two coders, pairs weigh 1.
    a, ab, b, c = frozenset("a"), frozenset("ab"), frozenset("b"), frozenset("c")
    units = [[a, a], [a, ab], [b, c]]
    # MASI: d({a},{a,b}) = d({a,b},{b}) = 1 - 1/2 * 2/3 = 2/3, others 1.
    #   D_o = (2 * 2/3 + 2 * 1) / 6 = 5/9
    #   D_e = sum_c!=k n_c n_k d / (6 * 5) = (4 + 6 + 6 + 4/3 + 2 + 2) / 30 = 32/45
    assert krippendorff_alpha(units, "masi") == pytest.approx(1 - (5 / 9) / (32 / 45))
    assert krippendorff_alpha(units, "masi") == pytest.approx(7 / 32)
    # Jaccard: those two distances are 1/2: D_o = 3/6, D_e = 20/30 -> 1/4
    assert krippendorff_alpha(units, "jaccard") == pytest.approx(1 / 4)
    # nominal: D_o = 4/6, D_e = (36 - 9 - 1 - 1 - 1) / 30 = 4/5 -> 1/6
    assert krippendorff_alpha(units) == pytest.approx(1 / 6)


def test_units_with_fewer_than_two_values_are_dropped():
    units = [[1, 1], [1, 2], [2, 2], [2, 1, 2]]
    base = krippendorff_alpha(units)
    assert krippendorff_alpha(units + [[7], [], [None, 9]]) == base


def test_undefined_alpha_is_nan():
    assert math.isnan(krippendorff_alpha([]))
    assert math.isnan(krippendorff_alpha([[1], [2], [None, 3]]))   # nothing pairable
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1, 1], [2]]))  # one pairable value
    assert math.isnan(krippendorff_alpha([[frozenset(), frozenset()]], "masi"))
    assert math.isnan(krippendorff_alpha([[1, 2], [2, 1]], lambda x, y: 0.0))  # D_e = 0


def test_perfect_and_systematic_disagreement():
    assert krippendorff_alpha([[1, 1], [2, 2], [3, 3]]) == 1.0
    # every pair disagrees: D_o = 1, D_e = (4 * 4 - 2 * 2 - 2 * 2) / (4 * 3) = 2/3
    assert krippendorff_alpha([[1, 2], [2, 1]]) == pytest.approx(1 - 3 / 2)


def test_unknown_distance_is_refused():
    with pytest.raises(ValueError, match="distance: 'cosine' is not one of nominal"):
        krippendorff_alpha([[1, 1]], "cosine")
