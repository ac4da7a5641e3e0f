"""shareval.stats: `shareval agree` on a file with a missing judgment, and compare's
warning below MIN_UNITS paired units (docs/conventions.md, agreement and compare)."""
import math

import numpy as np
import pytest

from shareval.stats import MIN_UNITS, agreement_result, compare_unit_stats, too_few_units
from tests.conftest import write
from tests.overview.test_significance import mean_stats


def test_an_empty_label_is_a_missing_judgment(tmp_path):
    # i3 has one judgment: out of kappa and alpha, and Fleiss needs equal counts
    f = write(tmp_path / "a.tsv", "item\tannotator\tlabel\ni1\ta\tx\ni1\tb\tx\ni2\ta\ty\n"
                                  "i2\tb\ty\ni3\ta\tx\ni3\tb\t\ni4\ta\ty\ni4\tb\tx\n")
    r = agreement_result(f)
    # by hand over i1, i2, i4: po = 2/3, pe = 1/3*2/3 + 2/3*1/3 = 4/9, kappa = 0.4;
    # alpha: n = 6 values (3 x, 3 y), Do = 2/6, De = 2*3*3/(6*5) = 0.6, 1 - Do/De = 4/9
    assert r.metrics["cohen_kappa"] == pytest.approx(0.4)
    assert r.metrics["krippendorff_alpha"] == pytest.approx(4 / 9)
    assert r.metrics["observed_agreement"] == pytest.approx(2 / 3)
    assert math.isnan(r.metrics["fleiss_kappa"])
    assert [w for w in r.warnings if w.startswith("Fleiss' kappa not computed")]
    assert r.counts["judgments"] == 7 and r.counts["labels"] == 2


def _units(n, shift):
    return mean_stats(np.linspace(0.2, 0.8, n) + shift, units=[f"q{i}" for i in range(n)])


@pytest.mark.parametrize("n,warned", [(MIN_UNITS - 1, True), (MIN_UNITS, False)])
def test_compare_warns_below_ten_units_only(n, warned):
    assert MIN_UNITS == 10                              # the number the docs give
    r = compare_unit_stats("trec", _units(n, 0.0), _units(n, 0.05), "A", "B", samples=200)
    assert r.warnings == ([too_few_units(n)] if warned else [])
    assert r.metrics["difference"] == pytest.approx(-0.05)
