"""metrics.relations.prf: docs/kbp.md, "a precision without predictions (a recall
without gold) is 0"."""
import pytest

from shareval.metrics.relations import prf


@pytest.mark.parametrize("tp,predicted,gold,expected", [
    (0, 0, 5, (0.0, 0.0, 0.0)),          # no predictions: precision 0, not 1
    (0, 4, 0, (0.0, 0.0, 0.0)),          # no gold: recall 0
    (0, 0, 0, (0.0, 0.0, 0.0)),
    (3, 4, 6, (0.75, 0.5, 0.6)),         # 2 * 3 / (4 + 6)
])
def test_prf_with_zero_denominators(tp, predicted, gold, expected):
    assert prf(tp, predicted, gold) == pytest.approx(expected)
