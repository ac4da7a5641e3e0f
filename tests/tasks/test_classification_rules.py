"""The classification task's stated conventions (ClassificationTask.conventions), each checked
against scikit-learn on data where the averages differ from each other, so that a wrong
average, a wrong label set or a wrong support gives a different number."""
import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.conftest import write

# four classes of unequal support; the submission also says "z", which the reference never
# uses, and never predicts "d" (precision of d undefined) while "z" has no reference item
TRUE = ["a", "a", "a", "b", "b", "c", "d", "a", "c", "b"]
PRED = ["a", "b", "a", "b", "c", "c", "a", "z", "c", "b"]


def files(tmp_path, true=TRUE, pred=PRED):
    ref = write(tmp_path / "ref.tsv", "item\tlabel\n" +
                "".join(f"i{k}\t{t}\n" for k, t in enumerate(true)))
    sub = write(tmp_path / "sub.tsv", "item\tlabel\n" +
                "".join(f"i{k}\t{p}\n" for k, p in enumerate(pred)))
    return ref, sub


def test_every_average_equals_sklearn_over_the_union_of_labels(tmp_path):
    r = get("classification").score(*files(tmp_path))
    labels = sorted(set(TRUE) | set(PRED))                 # the sorted union
    assert list(r.breakdowns["per_class"]) == labels
    assert r.metrics["accuracy"] == pytest.approx(np.mean(np.array(TRUE) == np.array(PRED)))
    want = {}
    for avg in ("micro", "macro", "weighted"):
        p, rc, f, _ = precision_recall_fscore_support(TRUE, PRED, labels=labels, average=avg,
                                                      zero_division=0)
        want.update({f"precision_{avg}": p, f"recall_{avg}": rc, f"f1_{avg}": f})
    assert {k: v for k, v in r.metrics.items() if k != "accuracy"} == pytest.approx(want,
                                                                                 abs=1e-12)
    # the averages really differ here, so swapping two would be seen
    assert len({round(want[f"f1_{a}"], 9) for a in ("micro", "macro", "weighted")}) == 3
    assert r.metrics["f1_micro"] == pytest.approx(r.metrics["accuracy"])   # single-label data
    p, rc, f, s = precision_recall_fscore_support(TRUE, PRED, labels=labels, zero_division=0)
    for k, lab in enumerate(labels):
        assert r.breakdowns["per_class"][lab] == pytest.approx(
            {"precision": p[k], "recall": rc[k], "f1": f[k], "support": int(s[k])}, abs=1e-12)
    cm = confusion_matrix(TRUE, PRED, labels=labels)
    assert r.breakdowns["confusion_matrix"] == {
        t: {q: int(cm[i, j]) for j, q in enumerate(labels)} for i, t in enumerate(labels)}
    assert r.counts == {"items": len(TRUE), "classes": len(labels)}


def test_zero_division_and_unseen_labels_are_named_in_warnings(tmp_path):
    r = get("classification").score(*files(tmp_path))
    assert r.warnings == [
        "precision is undefined for some class (no predictions); counted as 0",
        "recall is undefined for some class (no reference items); counted as 0",
        "submitted labels absent from the reference: z"]
    (tmp_path / "two").mkdir()
    r = get("classification").score(*files(tmp_path / "two", ["a", "b"], ["b", "a"]))
    assert r.warnings == [] and r.metrics["accuracy"] == 0.0


def test_unit_stats_are_per_item_correctness(tmp_path):
    ref, sub = files(tmp_path)
    u = get("classification").unit_stats(ref, sub)
    assert u.metric == "accuracy" and u.units == [f"i{k}" for k in range(len(TRUE))]
    assert u.stats[:, 0].tolist() == [float(t == p) for t, p in zip(TRUE, PRED)]
    assert u.weights.tolist() == [1.0] * len(TRUE)
    assert float(u.aggregate(u.stats, u.weights)) == pytest.approx(0.6)


def test_coverage_counts_every_unknown_and_missing_item(tmp_path):
    ref = write(tmp_path / "ref.tsv", "item\tlabel\n1\ta\n2\tb\n3\ta\n4\tb\n")
    sub = write(tmp_path / "sub.tsv", "item\tlabel\n1\ta\n7\tb\n8\ta\n")
    with pytest.raises(InvalidInput) as e:
        get("classification").score(ref, sub)
    assert [str(p) for p in e.value.problems] == [
        f"{sub}:3: item: 2 items are not in the reference: '7', '8' (lines 3, 4)",
        f"{sub}: item: 3 items have no prediction: '2', '3', '4'"]
    # without a reference, nothing is checked against it
    assert get("classification").submission(sub) is not None


def test_unseen_labels_are_listed_up_to_ten(tmp_path):
    true = ["a"] * 12
    pred = ["a"] + [f"u{k:02d}" for k in range(11)]
    r = get("classification").score(*files(tmp_path, true, pred))
    assert r.warnings[-1] == "submitted labels absent from the reference: " + \
        ", ".join(f"u{k:02d}" for k in range(10))


def test_unit_stats_check_coverage_like_score(tmp_path):
    """The paired tests (shareval compare) read unit stats: a submission missing an item is
    refused there with the same problem as in score, not scored on the items it has."""
    ref = write(tmp_path / "ref.tsv", "item\tlabel\n1\ta\n2\tb\n")
    sub = write(tmp_path / "sub.tsv", "item\tlabel\n1\ta\n")
    with pytest.raises(InvalidInput) as e:
        get("classification").unit_stats(ref, sub)
    assert [str(p) for p in e.value.problems] == [f"{sub}: item: 1 item has no prediction: '2'"]
