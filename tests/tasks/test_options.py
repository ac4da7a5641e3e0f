"""Options are declared once per task and checked by one function, for the command
line, the bundle loader (tests/platform/test_bundle_options.py) and Task.score."""
from __future__ import annotations

import pytest

from shareval import tasks
from shareval.tasks.options import Option, check_options
from tests.conftest import write

ALL = tasks.names()


@pytest.mark.parametrize("name", ALL)
def test_every_declared_default_passes_its_own_check(name):
    task = tasks.get(name)
    defaults = {o.name: o.default for o in task.options}
    assert task.option_problems(defaults) == []
    assert len(defaults) == len(task.options), "an option declared twice"
    for o in task.options:
        assert o.help, f"{name}: option {o.name} has no help"
        if o.choices:
            assert o.default in o.choices


def test_score_refuses_a_value_with_a_value_error_naming_the_option(tmp_path):
    q = write(tmp_path / "q", "q1 0 a 1\n")
    r = write(tmp_path / "r", "q1 Q0 a 1 1.0 t\n")
    with pytest.raises(ValueError, match="score_precision: must be float or double, "
                                         "not 'quad'"):
        tasks.get("trec").score(q, r, score_precision="quad")
    with pytest.raises(ValueError, match=r"jaccard: must be between 0 and 1, not 1\.5"):
        tasks.get("rcc-mentions").score(tmp_path / "missing", tmp_path / "missing", jaccard=1.5)


def test_the_cli_refuses_a_value_in_one_line_with_exit_2(tmp_path, cli):
    q = write(tmp_path / "q", "q1 0 a 1\n")
    r = write(tmp_path / "r", "q1 Q0 a 1 1.0 t\n")
    code, out, err = cli("score", "trec", "-r", q, "-s", r, "--score-precision", "quad")
    assert code == 2 and out == ""
    assert err.splitlines() == ["<arguments>: score_precision: must be float or double, "
                                "not 'quad'", "1 problem(s) found; nothing was scored."]
    code, _, err = cli("score", "svident-disambiguation", "-r", q, "-s", r, "--ties", "x")
    assert code == 2 and err.splitlines()[0] == \
        "<arguments>: ties: must be one of official, id, not 'x'"


def test_numbers_given_as_text_are_converted_then_checked():
    o = Option("t", float, 0.5, "threshold", low=0.0, high=1.0)
    assert o.problem("0.25") is None and o.convert("0.25") == 0.25
    assert o.problem("2") == "must be between 0 and 1, not 2.0"
    assert o.problem("x") == "must be a number, not 'x'"
    assert o.problem(None) == "must be between 0 and 1, not None"
    assert o.problem(True) == "must be a number, not True"


def test_the_check_names_unknown_options_and_lists_the_allowed_ones():
    declared = (Option("a", int, 1, "a"), Option("b", str, "x", "b", choices=("x", "y")))
    assert check_options("t", declared, {"b": "z", "c": 1}) == [
        ("b", "must be one of x, y, not 'z'"), ("c", "not an option of t; allowed: a, b")]
    assert check_options("t", declared, {"c": 1}, unknown=False) == []
