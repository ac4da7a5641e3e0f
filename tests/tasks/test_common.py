"""Invariants every registered task keeps, run over the task registry (as
scikit-learn's metrics/tests/test_common.py runs over its metrics), so a new task
is covered as soon as it has a case below, and fails until it has one or a reason
to skip:

* an empty submission is a clear problem or a defined score;
* permuting a submission's lines (records) does not change the score;
* the reference submitted as a run scores its best on the primary metric;
* a malformed line is a problem naming that line.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from shareval import tasks
from shareval.formats.errors import InvalidInput
from tests.tasks.kbp_tiny import HEADER as KBP_HEADER
from tests.tasks.kbp_tiny import PERFECT as KBP_PERFECT
from tests.tasks.kbp_tiny import write_reference
from tests.tasks.test_material import DOCS, DOMAINS, REL, make_pack


@dataclass
class Case:
    """A task's inputs: ``reference(tmp)`` builds the reference (None: the task has
    none); ``write(records, path)`` writes a submission of ``records`` (one line or
    file entry each) and returns its path; ``perfect`` are the records of the
    reference submitted as a run; ``bad`` a malformed submission and the line its
    problem must name."""
    reference: Callable[[Path], Path | None]
    write: Callable[[list, Path], Path]
    perfect: list
    bad: tuple[str, int] | None = None
    best: float = 1.0


def _lines(header: str = ""):
    def write(records, path):
        path.write_text(header + "".join(r + "\n" for r in records), encoding="utf-8")
        return path
    return write


def _json_lines(records, path):
    """A JSON array with one record per line (so a record's line is known)."""
    body = ",\n".join(json.dumps(r) for r in records)
    path.write_text("[\n" + body + "\n]\n" if records else "[]\n", encoding="utf-8")
    return path


def _json_object(records, path):
    """{key: value} from (key, value) records, in the records' order."""
    path.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in records)
                    + "\n}\n", encoding="utf-8")
    return path


def _folder(records, path):
    """One TSV file per name: records are (file name, line)."""
    path.mkdir()
    files: dict[str, list[str]] = {}
    for name, line in records:
        files.setdefault(name, []).append(line)
    for name, lines in files.items():
        (path / name).write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
    return path


def _text(name, text):
    def build(tmp):
        (tmp / name).write_text(text, encoding="utf-8")
        return tmp / name
    return build


def write_reference_in(name):
    return lambda tmp: write_reference(tmp / name)


QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1}, "q2": {"d4": 2, "d5": 0}}
CITATIONS = [(1, 10, ["the ADNI study"]), (1, 11, ["PSID"]), (2, 12, ["NHANES 1999"]),
             (3, 13, ["General Social Survey"])]
SVIDENT = [["s", "1", "v1;v2", "R", "d1", "u1", "en"], ["s", "0", "", "R", "d1", "u2", "en"],
           ["s", "1", "v3", "R", "d2", "u3", "de"], ["s", "0", "", "R", "d2", "u4", "de"]]
SV_HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
SV_REF = SV_HEADER + "".join("\t".join(r) + "\n" for r in SVIDENT)
CS = 5                          # the pack's conversational document (not in DomainID)


def _pack(tmp):
    return make_pack(tmp / "pack")


def _decisions(name, relevant, docs):
    return [(f"{name}.tsv", f"{d}\t{'Y' if i in relevant else 'N'}\t"
                            f"{1.0 if i in relevant else 0.0}") for i, d in enumerate(docs)]


CASES = {
    "kbp-relations": Case(
        write_reference_in("ref"), _lines(KBP_HEADER), KBP_PERFECT,
        (KBP_HEADER + KBP_PERFECT[0] + "\n" + KBP_PERFECT[1].replace("P19", "P99") + "\n", 3)),
    "trec": Case(
        _text("qrels", "".join(f"{q} 0 {d} {r}\n" for q, m in QRELS.items() for d, r in m.items())),
        _lines(),
        [f"{q} Q0 {d} {i + 1} {(r > 0) * 10 + 5 - i} t"
         for q, m in QRELS.items() for i, (d, r) in enumerate(m.items())],
        ("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 high t\n", 2)),
    "classification": Case(
        _text("gold.tsv", "item\tlabel\n1\ta\n2\tb\n3\tb\n4\tc\n"),
        _lines("item\tlabel\n"), ["1\ta", "2\tb", "3\tb", "4\tc"],
        ("item\tlabel\n1\ta\n2\tb\n1\tc\n", 4)),
    "rcc-citations": Case(
        _text("ref.json", json.dumps([{"publication_id": p, "data_set_id": d, "mention_list": m}
                                      for p, d, m in CITATIONS])),
        _json_lines, [{"publication_id": p, "data_set_id": d, "score": 0.5 + d / 100,
                       "mention_list": m} for p, d, m in CITATIONS],
        ('[\n{"publication_id": 1, "data_set_id": 10, "score": 1, "mention_list": []},\n'
         '{"publication_id": 1, "data_set_id": 11, "score": "high", "mention_list": []}\n]\n', 3)),
    "rcc-mentions": Case(
        _text("ref.json", json.dumps([{"publication_id": p, "data_set_id": d, "mention_list": m}
                                      for p, d, m in CITATIONS])),
        _json_lines, [{"publication_id": p, "mention": x, "score": 0.9}
                      for p, _, m in CITATIONS for x in m],
        ('[\n{"publication_id": 1, "mention": "PSID"},\n{"publication_id": 2}\n]\n', 3)),
    "rcc-fields-methods": Case(
        lambda tmp: None, _json_lines,
        [{"publication_id": p, "method": m, "score": 1.0}
         for p, m in [(1, "survey"), (1, "regression"), (2, "interview")]],
        ('[\n{"publication_id": 1, "method": "survey"},\n{"publication_id": 2, "method": 7}\n]\n',
         3)),
    "svident-detection": Case(
        _text("ref.tsv", SV_REF), _lines("uuid\tis_variable\n"),
        [f"{r[5]}\t{r[1]}" for r in SVIDENT], ("uuid\tis_variable\nu1\t1\nu2\tyes\n", 3)),
    "svident-disambiguation": Case(
        _text("ref.tsv", SV_REF), _json_object,
        [(r[5], {v: 1.0 for v in r[2].split(";")}) for r in SVIDENT if r[1] == "1"],
        ("u1 Q0 v1 1 2.0 sys\nzz Q0 v2 1 1.0 sys\n", 2)),
    "material-clir": Case(
        _pack, _folder, [x for q, rel in REL.items() for x in _decisions(q, rel, DOCS)],
        (f"{DOCS[0]}\tY\t0.9\n{DOCS[1]}\tmaybe\t0.1\n", 2)),
    "material-domainid": Case(
        _pack, _folder, [x for d, rel in DOMAINS.items() for x in _decisions(d, rel, DOCS[:CS])],
        (f"{DOCS[0]}\tY\t0.9\n{DOCS[1]}\tmaybe\t0.1\n", 2)),
    "material-langid": Case(
        _pack, _folder, _decisions("1A", set(range(len(DOCS))), DOCS),
        (f"{DOCS[0]}\tY\t0.9\n{DOCS[1]}\tmaybe\t0.1\n", 2)),
}

# a task that cannot be covered here says why
SKIP = {
    "program": "scored by the organizers' own program in the sandbox: tests/tasks/"
               "test_program.py covers its scoring, its inputs are the program's own",
    "material-e2e": "a run needs a summary JSON and an image per Y line and the judges' "
                    "decisions: tests/tasks/test_material_e2e*.py build and score them",
}
NO_PERFECT = {
    "rcc-fields-methods": "no reference exists: the judges compared distributions by hand",
}
# where a bad file's problem is not in the file itself: the file name the bad text gets
BAD_NAME = {"material-clir": "query1.tsv", "material-domainid": "GOV.tsv",
            "material-langid": "1A.tsv", "svident-disambiguation": "run.txt",
            "classification": "sub.tsv", "svident-detection": "sub.tsv",
            "kbp-relations": "sub.tsv"}

NAMES = tasks.names()


def _case(name) -> Case:
    if name in SKIP:
        pytest.skip(SKIP[name])
    assert name in CASES, f"task {name} has no case in test_common.py (or a reason in SKIP)"
    return CASES[name]


def _score(task, ref, sub):
    return task.score(ref, sub)


def _submit(case, records, tmp, name="sub"):
    return case.write(list(records), tmp / name)


@pytest.mark.parametrize("name", NAMES)
def test_empty_submission_is_a_problem_or_a_defined_score(name, tmp_path):
    case, task = _case(name), tasks.get(name)
    ref = case.reference(tmp_path)
    try:
        r = _score(task, ref, _submit(case, [], tmp_path))
    except InvalidInput as e:
        assert e.problems and all(str(p) for p in e.problems)
        return
    if task.primary_metric:
        v = r.metrics[task.primary_metric]
        assert isinstance(v, float) and math.isfinite(v), r.metrics


@pytest.mark.parametrize("name", NAMES)
def test_permuted_lines_score_the_same(name, tmp_path):
    case, task = _case(name), tasks.get(name)
    ref = case.reference(tmp_path)
    records = list(case.perfect)
    base = _score(task, ref, _submit(case, records, tmp_path, "a")).to_dict()
    for seed in range(3):
        random.Random(seed).shuffle(records)
        other = _score(task, ref, _submit(case, records, tmp_path, f"p{seed}")).to_dict()
        assert other["metrics"] == base["metrics"]
        assert other["breakdowns"] == base["breakdowns"]


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_as_a_run_scores_best(name, tmp_path):
    case, task = _case(name), tasks.get(name)
    if name in NO_PERFECT:
        pytest.skip(NO_PERFECT[name])
    r = _score(task, case.reference(tmp_path), _submit(case, case.perfect, tmp_path))
    assert r.metrics[task.primary_metric] == pytest.approx(case.best), r.metrics


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_line_is_a_problem_naming_it(name, tmp_path):
    case, task = _case(name), tasks.get(name)
    ref = case.reference(tmp_path)
    text, line = case.bad
    if name.startswith("material-"):
        sub = tmp_path / "sub"
        _folder([x for x in case.perfect], sub)
        bad_file = sub / BAD_NAME[name]
    else:
        sub = bad_file = tmp_path / BAD_NAME.get(name, "sub.json")
    bad_file.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput) as e:
        _score(task, ref, sub)
    assert any(p.line == line and str(bad_file).endswith(Path(p.file).name)
               for p in e.value.problems), e.value.render()


def test_every_registered_task_has_a_case_or_a_reason():
    assert set(NAMES) == set(CASES) | set(SKIP)
