import pytest
from sklearn.metrics import f1_score

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.conftest import write


def test_scores_and_confusion(tmp_path):
    ref = write(tmp_path / "ref.tsv", "item\tlabel\n1\ta\n2\tb\n3\tb\n4\tc\n")
    sub = write(tmp_path / "sub.json", '{"1": "a", "2": "a", "3": "b", "4": "c"}')
    r = get("classification").score(ref, sub)
    assert r.metrics["accuracy"] == 0.75
    assert r.metrics["f1_macro"] == pytest.approx(
        f1_score(list("abbc"), list("aabc"), average="macro"))
    assert r.breakdowns["confusion_matrix"]["b"] == {"a": 1, "b": 1, "c": 0}
    assert r.breakdowns["per_class"]["b"]["support"] == 2


def test_coverage_problems(tmp_path):
    ref = write(tmp_path / "ref.tsv", "item\tlabel\n1\ta\n2\tb\n")
    sub = write(tmp_path / "sub.tsv", "item\tlabel\n1\ta\n3\tb\n1\tb\n")
    with pytest.raises(InvalidInput) as e:
        get("classification").score(ref, sub)
    msgs = [str(p) for p in e.value.problems]
    assert msgs == [f"{sub}:4: item: duplicate item '1' (first at line 2)",
                    f"{sub}:3: item: 1 item is not in the reference: '3'",
                    f"{sub}: item: 1 item has no prediction: '2'"]
