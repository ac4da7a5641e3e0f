"""Sampling designs and estimators: exact small cases, enumeration, CLI round trip."""
from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pytest

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgment, Judgments, read_judgments
from shareval.assessment.outputs import Output, read_outputs
from shareval.assessment.sample import draw_sample
from shareval.cli import main
from shareval.formats.errors import InvalidInput, Problems
from shareval.metrics.estimation import mixture_importance


def _out(name, keys):
    return Output(name, {k: k.split("|")[0] for k in keys})


A = _out("A", ["d1|a", "d1|b", "d2|c", "d3|d"])
B = _out("B", ["d1|a", "d2|c", "d2|e", "d4|f", "d4|g", "d5|h", "d5|i", "d6|j"])
TRUTH = {"d1|a": 1, "d1|b": 0, "d2|c": 1, "d3|d": 1, "d2|e": 0, "d4|f": 1, "d4|g": 0,
         "d5|h": 1, "d5|i": 1, "d6|j": 0}


def test_inclusion_probabilities():
    rows = draw_sample([A, B], 2, "uniform", seed=1)
    assert sorted(r.inclusion_probability for r in rows) == [0.25, 0.25, 0.5, 0.5]
    rows = draw_sample([A, B], 2, "joint", seed=1)
    for r in rows:
        expect = 1 - np.prod([1 - {"A": 0.5, "B": 0.25}[s] for s in r.submissions])
        assert r.inclusion_probability == pytest.approx(expect)
        assert set(r.submissions) == {s for s, o in (("A", A), ("B", B)) if r.item in o.items}
    rows = draw_sample([A, B], 2, "joint", docs=2, seed=1)
    rdocs = {r.doc for r in rows if r.drawn_for == "recall"}
    assert len(rdocs) == 2
    pool = set(A.items) | set(B.items)
    assert {r.item for r in rows if r.drawn_for == "recall"} == {k for k in pool
                                                                 if k.split("|")[0] in rdocs}


def _judgments(rows, truth=TRUTH, judges=("j1",)):
    recs = [Judgment(r.item, tuple(r.submissions), j, "correct", float(truth[r.item]),
                     r.inclusion_probability, r.doc, r.drawn_for, tuple(r.drawn_by), i)
            for i, r in enumerate(rows) for j in judges]
    return Judgments(recs, {"A": len(A), "B": len(B)})


def test_census_gives_the_truth():
    """n >= |X|: every item drawn with probability 1, so estimates equal the truth."""
    for design in ("uniform", "joint"):
        table, _ = estimate_all(_judgments(draw_sample([A, B], 10, design, docs=6)),
                                bootstrap=50)
        assert table["A"]["precision"] == pytest.approx(3 / 4)
        assert table["B"]["precision"] == pytest.approx(5 / 8)
        # every document annotated: recall = own correct / all correct (6 true items)
        assert table["A"]["recall"] == pytest.approx(3 / 6)
        assert table["B"]["recall"] == pytest.approx(5 / 6)
        p, r = 5 / 8, 5 / 6
        assert table["B"]["f1"] == pytest.approx(2 * p * r / (p + r))
        assert table["A"]["precision_low"] < 0.75 < table["A"]["precision_high"]


def test_hajek_by_hand_and_judges_averaged():
    recs = [Judgment("x1", ("A",), "j1", "correct", 1.0, 0.5, "d", "precision", ("A",), 1),
            Judgment("x1", ("A",), "j2", "correct", 0.0, 0.5, "d", "precision", ("A",), 2),
            Judgment("x2", ("A", "B"), "j1", "correct", 1.0, 0.25, "d", "precision", ("B",), 3)]
    table, _ = estimate_all(Judgments(recs, {}), bootstrap=0)
    # A: x1 is 0.5 (one yes, one no): (0.5/0.5 + 1/0.25) / (1/0.5 + 1/0.25) = 5 / 6
    assert table["A"]["precision"] == pytest.approx(5 / 6)
    assert table["B"]["precision"] == pytest.approx(1.0)


def test_entity_precision_is_the_product():
    qs = {"relation": [1, 1, 0, 1], "subject": [1, 1, 1, 1], "object": [1, 0, 1, 1]}
    recs = [Judgment(f"x{i}", ("A",), "j1", q, float(v[i]), 0.5, "d", "precision", ("A",), i)
            for q, v in qs.items() for i in range(4)]
    table, _ = estimate_all(Judgments(recs, {}), bootstrap=200)
    row = table["A"]
    assert row["entity_precision"] == pytest.approx(0.75 * 1.0 * 0.75)
    assert row["precision"] == pytest.approx(2 / 4)       # all three yes on x0 and x3
    assert row["entity_precision_low"] <= row["entity_precision"] <= row["entity_precision_high"]


def test_importance_estimate_is_exactly_unbiased_by_enumeration():
    """Enumerate every outcome of one draw from A and two from B: the expected
    importance estimate equals each submission's true precision."""
    outs = {"A": sorted(A.items), "B": sorted(B.items)}
    true = {s: np.mean([TRUTH[k] for k in v]) for s, v in outs.items()}
    n = {"A": 1, "B": 2}
    total = sum(n.values())
    for s in ("A", "B"):
        ests = []
        for da in itertools.product(outs["A"], repeat=n["A"]):
            for db in itertools.product(outs["B"], repeat=n["B"]):
                draws = [(x, "A") for x in da] + [(x, "B") for x in db]
                xs = [x for x, _ in draws]
                q = [sum(n[j] / total / len(outs[j]) for j in outs if x in outs[j]) for x in xs]
                p = [1 / len(outs[s]) if x in outs[s] else 0 for x in xs]
                ests.append(mixture_importance([TRUTH[x] for x in xs], p, q,
                                               [j for _, j in draws])[0])
        assert np.mean(ests) == pytest.approx(true[s], abs=1e-12)


def test_importance_matches_brute_force_through_the_library():
    """Size weights: one mixture q = sum_j n_j/n U(X_j) for every target."""
    rows = draw_sample([A, B], 3, "joint", seed=4)
    table, _ = estimate_all(_judgments(rows), "importance", bootstrap=0, weights="size")
    draws = [(r.item, j) for r in rows for j in r.drawn_by]
    n = {j: sum(1 for _, k in draws if k == j) for j in ("A", "B")}
    outs = {"A": A.items, "B": B.items}
    for s in ("A", "B"):
        g = [(1 / len(outs[s]) if x in outs[s] else 0)
             / sum(n[j] / len(draws) / len(outs[j]) for j in outs if x in outs[j]) * TRUTH[x]
             for x, _ in draws]
        assert table[s]["precision"] == pytest.approx(np.mean(g))


def test_bad_judgments_list_every_problem(tmp_path):
    f = tmp_path / "j.csv"
    f.write_text("item,submissions,answer,inclusion_probability\n"
                 "x,A,maybe,0.5\n"
                 ",A,yes,0.5\n"
                 "y,A,yes,\n"
                 "z,A,yes,1.5\n"
                 "w,,yes,0.5\n"
                 "v,A,,0.5\n", encoding="utf-8")
    problems = Problems()
    read_judgments(f, problems)
    got = [(p.line, p.field) for p in problems.items]
    assert got == [(2, "answer"), (3, "item"), (4, "inclusion_probability"),
                   (5, "inclusion_probability"), (6, "submissions")]


def test_answers_are_yes_no_1_0_true_false_or_a_fraction(tmp_path):
    f = tmp_path / "j.csv"
    spelled = ["yes", "no", "1", "0", "true", "false", "TRUE", " No ", "0.25", "1.0"]
    f.write_text("item,submissions,answer,inclusion_probability\n" + "".join(
        f"i{k},A,{a},0.5\n" for k, a in enumerate(spelled)), encoding="utf-8")
    problems = Problems()
    j = read_judgments(f, problems)
    assert problems.items == []
    assert [r.answer for r in j.records] == [1, 0, 1, 0, 1, 0, 1, 0, 0.25, 1]
    f.write_text("item,submissions,answer,inclusion_probability\n"
                 "a,A,1.5,0.5\nb,A,nan,0.5\nc,A,-0.1,0.5\nd,A,yes please,0.5\n",
                 encoding="utf-8")
    problems = Problems()
    read_judgments(f, problems)
    assert [(p.line, p.field) for p in problems.items] == [(k, "answer") for k in (2, 3, 4, 5)]


def test_outputs_report_file_and_line(tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text('{"pub": 1, "ds": 2}\nnot json\n{"pub": 3}\n', encoding="utf-8")
    with pytest.raises(InvalidInput) as e:
        read_outputs([str(f)], ["pub", "ds"], None)
    assert [(p.line, p.field) for p in e.value.problems] == [(2, "json"), (3, "ds")]


def _write_runs(tmp_path):
    """A's and B's outputs as TSV runs, one item a line."""
    paths = tmp_path / "a.tsv", tmp_path / "b.tsv"
    for path, out in zip(paths, (A, B)):
        path.write_text("".join(f"{k.replace('|', chr(9))}\n" for k in out.items),
                        encoding="utf-8")
    return paths


def test_cli_defaults_joint_design_and_95_percent(tmp_path, cli):
    """docs/assessment.md: `--design joint` (default), 95% intervals (`--confidence`);
    `assess plan` at 95% needs 385 judgments for +-0.05."""
    code, out, _ = cli("assess", "plan", "--half-width", "0.05", "--format", "json")
    res = json.loads(out)
    assert code == 0 and res["metrics"]["judgments"] == 385 and res["counts"]["confidence"] == 0.95
    a, b = _write_runs(tmp_path)
    s = tmp_path / "s.tsv"
    assert cli("assess", "sample", f"A={a}", f"B={b}", "--n", "20", "-o", s)[0] == 0
    rows = list(csv.DictReader(s.read_text().splitlines()[2:], delimiter="\t"))
    shared = [r for r in rows if r["item"] in ("d1|a", "d2|c")]
    assert len(shared) == 2 and all(r["submissions"] == "A,B" for r in shared)   # joint
    j = tmp_path / "j.csv"
    with open(j, "w", encoding="utf-8") as f:
        w = csv.DictWriter(f, [*rows[0], "answer"])
        w.writeheader()
        w.writerows({**r, "answer": "yes" if TRUTH[r["item"]] else "no"} for r in rows)

    def precision(*extra):
        code, out, err = cli("assess", "estimate", str(j), "--format", "json", *extra)
        assert code == 0, err
        return json.loads(out)["breakdowns"]["precision"]["B"]
    default = precision()
    assert default == precision("--confidence", "0.95") != precision("--confidence", "0.9")


def test_importance_without_a_judged_item_of_the_submission_is_unknown(tmp_path, cli):
    """No judged item B output: NaN (null), as with the design estimator, not 0 +- 0."""
    j = tmp_path / "e.csv"
    j.write_text("# sizes: A=10,B=5\n# overlaps: A+B=2\n"
                 "item,submissions,inclusion_probability,answer,drawn_by\n"
                 "x,A,0.5,yes,A\n", encoding="utf-8")
    for method in ("design", "importance"):
        code, out, err = cli("assess", "estimate", str(j), "--method", method,
                             "--format", "json")
        assert code == 0, err
        b = json.loads(out)["breakdowns"]["precision"]["B"]
        assert b["judged_items"] == 0 and b["estimate"] is None and b["low"] is None


def test_cli_sample_then_estimate(tmp_path, capsys):
    a, b = _write_runs(tmp_path)
    s = tmp_path / "s.tsv"
    assert main(["assess", "sample", f"A={a}", f"B={b}", "--n", "20", "--docs", "6",
                 "-o", str(s)]) == 0
    lines = s.read_text().splitlines()
    assert lines[0] == "# sizes: A=4,B=8"
    assert lines[1] == "# overlaps: A+B=2"                    # d1|a and d2|c
    rows = list(csv.DictReader(lines[2:], delimiter="\t"))
    j = tmp_path / "j.jsonl"
    with open(j, "w") as f:
        f.write(lines[0] + "\n" + lines[1] + "\n")
        for r in rows:
            f.write(json.dumps({**r, "judge": "j1", "answer": "yes" if TRUTH[r["item"]] else "no"})
                    + "\n")
    out = tmp_path / "e.json"
    for method, weights in (("design", "heuristic"), ("importance", "heuristic"),
                            ("importance", "size"), ("importance", "uniform")):
        assert main(["assess", "estimate", str(j), "--method", method, "--weights", weights,
                     "--format", "json", "-o", str(out)]) == 0
        res = json.loads(out.read_text())
        assert res["conventions"].get("weights") == (weights if method == "importance"
                                                     else None)
        assert res["breakdowns"]["precision"]["B"]["estimate"] == pytest.approx(5 / 8)
        assert res["breakdowns"]["recall"]["A"]["estimate"] == pytest.approx(0.5)
    bad = tmp_path / "bad.csv"
    bad.write_text("item,answer\nx,perhaps\n")
    assert main(["assess", "estimate", str(bad)]) == 2
    assert "bad.csv:2: answer" in capsys.readouterr().err
