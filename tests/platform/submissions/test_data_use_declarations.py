"""Data-use declarations (MATERIAL 6.4-6.5): a fact-sheet field with ``refuse`` makes a
declaration a rule. Open-query use is documented on every run; a person in the loop is
refused in the phase with closed queries, with the reason, and nothing is stored."""
from __future__ import annotations

import pytest
import yaml

from shareval.platform.bundles.loader import load_bundle
from shareval.platform.submissions.models import Submission
from shareval.platform.submissions.service import SubmissionError

from ..factories import make_world, submit

FACTSHEET = {"fields": [
    {"name": "open_query_use", "label": "Use of the open queries", "type": "text",
     "required": True},
    {"name": "human_in_loop", "label": "A person in the loop", "type": "bool", "required": True,
     "refuse": {"value": True, "phases": ["eval"],
                "reason": "closed queries allow no human in the loop (plan 6.5)"}}]}


@pytest.fixture
def w(db, tmp_path):
    w = make_world(tmp_path)
    root = tmp_path / "bundle"
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["factsheet"] = FACTSHEET
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    load_bundle(root, w["org"])
    w["comp"].refresh_from_db()
    return w


def test_a_person_in_the_loop_is_refused_where_the_queries_are_closed(w):
    before = Submission.objects.count()
    with pytest.raises(SubmissionError) as e:
        submit(w, ds="eval", factsheet={"open_query_use": "none", "human_in_loop": "yes"})
    assert e.value.problems == ["factsheet.human_in_loop: yes is not allowed in Evaluation: "
                                "closed queries allow no human in the loop (plan 6.5)"]
    assert Submission.objects.count() == before
    ok = submit(w, ds="eval", factsheet={"open_query_use": "none", "human_in_loop": "no"})
    assert ok.factsheet == {"open_query_use": "none", "human_in_loop": False}
    # the development phase's queries are open: the same declaration is accepted there
    dev = submit(w, ds="dev", factsheet={"open_query_use": "explored by hand",
                                         "human_in_loop": "yes"})
    assert dev.factsheet["human_in_loop"] is True


def test_the_declarations_are_required(w):
    with pytest.raises(SubmissionError) as e:
        submit(w, ds="dev", factsheet={})
    assert sorted(e.value.problems) == [
        "factsheet.human_in_loop: required (A person in the loop)",
        "factsheet.open_query_use: required (Use of the open queries)"]


def test_a_correction_cannot_declare_what_the_phase_refuses(w):
    from shareval.platform.submissions.runs import edit_factsheet
    sub = submit(w, ds="eval", factsheet={"open_query_use": "none", "human_in_loop": "no"})
    with pytest.raises(SubmissionError) as e:
        edit_factsheet(sub, w["users"]["alice"], {"open_query_use": "none",
                                                  "human_in_loop": "true"})
    assert "is not allowed in Evaluation" in e.value.problems[0]
    sub.refresh_from_db()
    assert sub.factsheet["human_in_loop"] is False


def test_a_refusal_for_a_phase_the_bundle_lacks_is_a_bundle_problem(db, tmp_path):
    from shareval.formats.errors import InvalidInput
    w = make_world(tmp_path)
    root = tmp_path / "bundle"
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["factsheet"] = {"fields": [dict(FACTSHEET["fields"][1],
                                        refuse={"value": True, "phases": ["evall"]})]}
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        load_bundle(root, w["org"])
    assert any("refuse.phases" in str(p) and "no phase evall" in str(p)
               for p in e.value.problems)


@pytest.mark.parametrize("spelling", ["YES", " yes ", "Yes"])
def test_a_refused_text_or_choice_value_is_refused_in_any_case_or_spacing(spelling):
    """i37 security review: a refusal of a text value is not passed by writing it in
    another case; bool spellings (YES, 1, ' true ') are read as booleans already."""
    from shareval.platform.competitions.models import Phase
    from shareval.platform.submissions import factsheets
    schema = {"fields": [{"name": "people", "label": "People", "type": "text",
                          "required": False, "choices": [], "help": "",
                          "refuse": {"value": "yes", "phases": None, "reason": "no people"}},
                         {"name": "loop", "label": "Loop", "type": "bool", "required": False,
                          "choices": [], "help": "",
                          "refuse": {"value": True, "phases": None, "reason": "no loop"}}]}
    phase = Phase(slug="eval", title="Evaluation")
    _, problems = factsheets.clean(schema, {"people": spelling}, phase=phase)
    assert problems and "not allowed in Evaluation: no people" in problems[0]
    for b in ("YES", "1", " true ", "On"):
        _, problems = factsheets.clean(schema, {"loop": b}, phase=phase)
        assert problems and "no loop" in problems[0]
