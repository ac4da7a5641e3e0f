"""metrics.relations, rules of docs/kbp.md: "a precision without predictions (a recall
without gold) is 0"; a span of several entities links to the one that makes a gold
label, else to the lowest-numbered."""
import pytest

from shareval.metrics.relations import prf, relation_counts


@pytest.mark.parametrize("tp,predicted,gold,expected", [
    (0, 0, 5, (0.0, 0.0, 0.0)),          # no predictions: precision 0, not 1
    (0, 4, 0, (0.0, 0.0, 0.0)),          # no gold: recall 0
    (0, 0, 0, (0.0, 0.0, 0.0)),
    (3, 4, 6, (0.75, 0.5, 0.6)),         # 2 * 3 / (4 + 6)
])
def test_prf_with_zero_denominators(tp, predicted, gold, expected):
    assert prf(tp, predicted, gold) == pytest.approx(expected)


# a span (0, 4) that is a mention of two entities (0 and 2, told apart by their other
# mentions), entity 1 at (10, 15), entity 3 at (20, 25)
ENTITIES = [{(0, 4), (30, 34)}, {(10, 15)}, {(0, 4), (40, 44)}, {(20, 25)}]


def test_a_shared_span_links_to_the_entity_that_makes_a_gold_label():
    gold = {"d": (ENTITIES, {(2, 1, "P1")})}
    c = relation_counts(gold, [("d", (0, 4), "P1", (10, 15), "Anna", "Oslo")])
    assert (c.entity.tp, c.entity.predicted, c.entity.gold) == (1, 1, 1)


def test_else_a_shared_span_links_to_the_lowest_numbered_entity():
    """No label: (0, 4) stands for entity 0, so with (30, 34), entity 0's other mention,
    the two predictions are one (head, relation, tail) triple."""
    gold = {"d": (ENTITIES, {(3, 1, "P1")})}
    c = relation_counts(gold, [("d", (0, 4), "P1", (10, 15), "Anna", "Oslo"),
                               ("d", (30, 34), "P1", (10, 15), "Anna", "Oslo")])
    assert (c.entity.tp, c.entity.predicted, c.entity.gold) == (0, 1, 1)
    c = relation_counts(gold, [("d", (0, 4), "P1", (10, 15), "Anna", "Oslo"),
                               ("d", (40, 44), "P1", (10, 15), "Anna", "Oslo")])
    assert c.entity.predicted == 2
