"""What every task shares (tasks/base.py): the result's JSON shape (NaN -> null, numpy
scalars -> Python), options, the reference requirement, warnings order, the
aggregates used by paired comparison, and the warning previews."""
import math

import numpy as np
import pytest

from shareval.formats.errors import InvalidInput, Problems
from shareval.tasks.base import (Option, Result, Task, hierarchical_weights, load_checked,
                                 micro_f1, preview, weighted_mean)


class Toy(Task):
    name = "toy"
    version = "7"
    primary_metric = "m"
    conventions = {"rule": "toy"}
    options = (Option("k", int, 3, "k"), Option("flag", None, False, "f", flag=True))

    def load_reference(self, path):
        return {"ref": str(path)}

    def load_submission(self, path, reference=None):
        class Sub:
            warnings = [f"sub warning ({'with' if reference else 'without'} reference)"]
            p = str(path)
        return Sub()

    def _score(self, reference, submission, k, flag):
        r = self.new_result({"m": float(k)}, counts={"flag": flag, "ref": reference["ref"]},
                            warnings=["scorer warning"])
        return r


def test_score_passes_options_with_defaults_and_puts_the_loaders_warnings_first():
    from shareval import __version__
    r = Toy().score("R", "S")
    assert r.metrics == {"m": 3.0} and r.counts == {"flag": False, "ref": "R"}
    assert r.warnings == ["sub warning (with reference)", "scorer warning"]
    assert r.scorer_version == f"toy/7 (shareval {__version__})" and r.task == "toy"
    assert r.conventions == {"rule": "toy"}
    r.conventions["x"] = 1                           # a copy: the class's stays as it was
    assert Toy.conventions == {"rule": "toy"}
    assert Toy().score("R", "S", k=5, flag=True).counts["flag"] is True
    with pytest.raises(TypeError, match=r"toy: unknown options \['j', 'z'\]"):
        Toy().score("R", "S", z=1, j=2)


def test_the_reference_is_required_unless_the_task_says_otherwise():
    with pytest.raises(InvalidInput) as e:
        Toy().score(None, "S")
    assert [str(p) for p in e.value.problems] == [
        "<arguments>: reference: task toy needs --reference"]

    class Free(Toy):
        reference_required = False
    assert Free().reference(None) is None
    assert Toy().reference({"ref": "given"}) == {"ref": "given"}     # loaded objects pass
    # validate without a reference loads the submission alone
    assert Toy().validate("S") == ["sub warning (without reference)"]
    assert Toy().validate("S", "R") == ["sub warning (with reference)"]


def test_a_submission_without_warnings_validates_and_scores_with_none():
    # a loader may return an object without a ``warnings`` attribute: nothing to warn about
    class Silent(Toy):
        def load_submission(self, path, reference=None):
            return object()
    assert Silent().validate("S") == [] and Silent().validate("S", "R") == []
    assert Silent().score("R", "S").warnings == ["scorer warning"]


def test_unimplemented_parts_say_so():
    t = Task()
    t.name = "bare"
    for call in (lambda: t.load_reference("x"), lambda: t.load_submission("x"),
                 lambda: t._score(None, None)):
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(NotImplementedError, match="bare does not support paired comparison"):
        t.unit_stats(None, None)


def test_to_dict_is_json_ready():
    r = Result("t", "t/1", {"c": 1}, {"a": float("nan"), "b": np.float32(0.5), "c": np.int64(3),
                                      "d": 1.25},
               breakdowns={"per": {7: {"x": np.nan, "y": np.bool_(True)}}},
               counts={"n": np.int32(4), "nan": np.float64("nan"), "s": "text"},
               warnings=["w"])
    d = r.to_dict()
    assert d == {"task": "t", "scorer_version": "t/1", "conventions": {"c": 1},
                 "metrics": {"a": None, "b": 0.5, "c": 3, "d": 1.25},
                 "breakdowns": {"per": {"7": {"x": None, "y": True}}},
                 "counts": {"n": 4, "nan": None, "s": "text"}, "warnings": ["w"]}
    assert type(d["metrics"]["c"]) is int and type(d["counts"]["n"]) is int
    assert type(d["breakdowns"]["per"]["7"]["y"]) is bool
    d["warnings"].append("x")
    assert r.warnings == ["w"]                       # a copy
    assert Result("t", "v", {}, {}).to_dict()["breakdowns"] == {}


def test_preview_names_five_and_counts_the_rest():
    assert preview([]) == ""
    assert preview([1, 2, 3, 4, 5]) == "1, 2, 3, 4, 5"
    assert preview(range(7)) == "0, 1, 2, 3, 4 (+2 more)"
    assert preview("abc", n=2) == "a, b (+1 more)"


def test_load_checked_skips_the_check_after_a_fatal_problem():
    seen = []

    def reader(path, problems, extra):
        if path == "fatal":
            problems.fatal(path, 3, "json", "syntax")
            return {"partial": extra}
        if path == "none":
            return None
        return {"ok": extra}

    def check(obj, problems):
        seen.append(obj)
        if obj.get("ok") == "bad":
            problems.add("f", None, "id", "unknown")

    assert load_checked(reader, "good", "x", check=check) == {"ok": "x"}
    with pytest.raises(InvalidInput) as e:
        load_checked(reader, "good", "bad", check=check)
    assert [str(p) for p in e.value.problems] == ["f: id: unknown"]
    with pytest.raises(InvalidInput) as e:
        load_checked(reader, "fatal", "x", check=check)
    assert [str(p) for p in e.value.problems] == ["fatal:3: json: syntax"]
    assert load_checked(reader, "none", "x", check=check) is None
    assert seen == [{"ok": "x"}, {"ok": "bad"}]
    assert load_checked(reader, "good", "y") == {"ok": "y"}
    assert isinstance(Problems(), Problems)


def test_weighted_mean_renormalises_the_weights_of_each_resample():
    stats = np.array([[1.0], [0.0], [0.5]])
    assert float(weighted_mean(stats, np.array([1.0, 1.0, 2.0]))) == pytest.approx(2 / 4)
    assert float(weighted_mean(stats, np.array([3.0, 1.0, 0.0]))) == pytest.approx(0.75)
    # resamples in a batch: (2 samples, 3 units, 1)
    batch = np.stack([stats, stats[[0, 0, 1]]])
    w = np.array([[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]])
    assert weighted_mean(batch, w).tolist() == pytest.approx([0.5, 0.5])


def test_micro_f1_sums_the_counts_and_is_0_without_any():
    stats = np.array([[2, 1, 0], [0, 0, 3], [1, 0, 0]], dtype=float)
    # tp 3, fp 1, fn 3: 6 / (6 + 1 + 3)
    assert float(micro_f1(stats, np.ones(3))) == pytest.approx(0.6)
    assert float(micro_f1(np.zeros((2, 3)), np.ones(2))) == 0.0
    batch = np.stack([stats, stats[[1, 1, 1]]])
    assert micro_f1(batch, np.ones((2, 3))).tolist() == pytest.approx([0.6, 0.0])


def test_hierarchical_weights_give_each_group_an_equal_share():
    w = hierarchical_weights(["en", "de", "en", "en", "fr"])
    # three groups, 1/3 each: en's three units 1/9 each, de's and fr's one unit 1/3
    assert w.tolist() == pytest.approx([1 / 9, 1 / 3, 1 / 9, 1 / 9, 1 / 3])
    assert math.fsum(w) == pytest.approx(1.0)
    assert hierarchical_weights([]).tolist() == []
