"""A workbench project's agreement (workbench.agreement.project_agreement) on a small
project built with the ORM: figures worked out by hand in the comments and checked
against scikit-learn, statsmodels and the krippendorff package; which work counts
(done annotator assignments on units two or more finished); the curator's list of
disagreements; the tables of templates/workbench/_agreement.html."""

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.template.loader import render_to_string
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from shareval.metrics.agreement import token_labels, token_offsets
from shareval.platform.competitions.models import Competition
from shareval.platform.workbench.agreement import project_agreement
from shareval.platform.workbench.models import Annotation, Assignment, Project, Unit

pytestmark = pytest.mark.django_db

U1 = "We used ALLBUS 2010 and the GLES panel."      # ALLBUS 8-14, 2010 15-19, GLES 28-32
U2 = "Data come from the SOEP."                      # SOEP 19-23


def users(*names):
    User = get_user_model()
    return {n: User.objects.create_user(n, password=f"{n}-pass-123") for n in names}


def new_project(org, slug="p", **kw):
    comp = Competition.objects.create(slug=f"c-{slug}", title="C")
    kw.setdefault("schema", {"labels": ["dataset"], "link": "catalog",
                             "questions": [{"key": "is_variable", "text": "A variable?"}]})
    return Project.objects.create(competition=comp, slug=slug, title="P", kind="text",
                                  created_by=org, **kw)


def unit(project, key, text, round=1, position=0):
    return Unit.objects.create(project=project, key=key, title=key.upper(), text=text,
                               round=round, position=position)


def coded(u, user, spans=(), answers=(), status="done", role="annotator"):
    a = Assignment.objects.create(unit=u, user=user, role=role, status=status)
    for begin, end, label, target in spans:
        Annotation.objects.create(assignment=a, kind="span", begin=begin, end=end,
                                  label=label, target=target)
    for label, value, target in answers:
        Annotation.objects.create(assignment=a, kind="answer", label=label, value=value,
                                  target=target)
    return a


@pytest.fixture
def two_coders():
    u = users("org", "ann", "bob", "cur")
    p = new_project(u["org"])
    u1, u2 = unit(p, "u1", U1, position=1), unit(p, "u2", U2, position=2)
    coded(u1, u["ann"], [(8, 19, "dataset", "ZA1"), (28, 38, "dataset", "GLES")],
          [("is_variable", "yes", "")])
    coded(u1, u["bob"], [(8, 14, "dataset", "ZA1"), (28, 32, "dataset", "GLES")],
          [("is_variable", "yes", "")])
    coded(u2, u["ann"], [(19, 23, "dataset", "SOEP")], [("is_variable", "no", "")])
    coded(u2, u["bob"], [(19, 23, "dataset", "SOEP")],
          [("is_variable", "yes", ""), ("variable", "", "V1")])
    # not counted: bob has not finished u3; a curator's work; u4 is ann's alone
    u3 = unit(p, "u3", "No data here.", position=3)
    coded(u3, u["ann"], [(0, 2, "dataset", "X")])
    coded(u3, u["bob"], [(3, 7, "dataset", "Y")], status="progress")
    coded(u1, u["cur"], [(0, 2, "dataset", "Z")], role="curator")
    coded(unit(p, "u4", "Alone.", position=4), u["ann"], [(0, 5, "dataset", "Q")])
    # a regular unit (round 0) both finished the same way
    u5 = unit(p, "u5", "Nothing.", round=0, position=5)
    coded(u5, u["ann"])
    coded(u5, u["bob"])
    return p


def test_counts_only_done_annotator_work_on_shared_units(two_coders):
    r = project_agreement(two_coders, round=1)
    assert (r["units"], r["coders"], r["assignments"]) == (2, ["ann", "bob"], 4)
    assert project_agreement(two_coders)["units"] == 3
    assert project_agreement(two_coders, round=0)["units"] == 1


def test_span_agreement_by_hand(two_coders):
    s = project_agreement(two_coders, round=1)["spans"]
    # exact: u1 none of 2 + 2 (bob's spans are shorter), u2 1 of 1 + 1: (1 + 1) / (3 + 3)
    assert s["exact_f1"] == pytest.approx(1 / 3)
    # partial: every span overlaps its partner with the same label and link
    assert s["partial_f1"] == 1.0
    (pair,) = s["pairs"]
    assert (pair["a"], pair["b"], pair["units"], pair["n_a"], pair["n_b"]) == (
        "ann", "bob", 2, 3, 3)
    assert pair["exact"] == {"tp": 1, "precision": pytest.approx(1 / 3),
                             "recall": pytest.approx(1 / 3), "f1": pytest.approx(1 / 3)}
    assert pair["partial"]["tp"] == 3


def test_token_agreement_by_hand_and_by_the_reference_packages(two_coders):
    t = project_agreement(two_coders, round=1)["tokens"]
    # 15 tokens; ann:  O O D/ZA1 D/ZA1 O O D/GLES D/GLES O | O O O O D/SOEP O
    #            bob:  O O D/ZA1 O     O O D/GLES O      O | O O O O D/SOEP O
    ann = (token_labels(token_offsets(U1), [(8, 19, "dataset", "ZA1"),
                                            (28, 38, "dataset", "GLES")])
           + token_labels(token_offsets(U2), [(19, 23, "dataset", "SOEP")]))
    bob = (token_labels(token_offsets(U1), [(8, 14, "dataset", "ZA1"),
                                            (28, 32, "dataset", "GLES")])
           + token_labels(token_offsets(U2), [(19, 23, "dataset", "SOEP")]))
    assert ann[:4] == ["O", "O", "dataset/ZA1", "dataset/ZA1"]
    assert (t["items"], t["labels"]) == (15, 4)
    # Cohen: p_o = 13/15, p_e = (10*12 + 2*1 + 2*1 + 1*1) / 225 = 5/9 -> 0.7
    assert t["cohen"] == pytest.approx(0.7)
    assert t["cohen"] == pytest.approx(cohen_kappa_score(ann, bob))
    assert t["cohen_pairs"] == [{"a": "ann", "b": "bob", "items": 15,
                                 "kappa": pytest.approx(0.7)}]
    # Fleiss: P = 13/15, P_e = (22^2 + 3^2 + 3^2 + 2^2) / 30^2 -> 274/394
    assert t["fleiss"] == pytest.approx(274 / 394)
    assert (t["fleiss_items"], t["fleiss_raters"]) == (15, 2)
    # alpha: D_o = 4/30, D_e = (900 - 506) / (30 * 29) -> 278/394
    assert t["alpha"] == pytest.approx(278 / 394)
    codes = {x: k for k, x in enumerate(sorted(set(ann + bob)))}
    data = np.array([[codes[x] for x in ann], [codes[x] for x in bob]], dtype=float)
    assert t["alpha"] == pytest.approx(krippendorff.alpha(
        reliability_data=data, level_of_measurement="nominal"))


def test_answer_agreement_per_question_by_hand(two_coders):
    (q,) = project_agreement(two_coders, round=1)["questions"]   # "variable" is a link
    assert (q["key"], q["text"], q["items"]) == ("is_variable", "A variable?", 2)
    # u1 yes/yes, u2 no/yes: p_o = 1/2 = p_e -> Cohen 0; alpha: D_o = 2/4, D_e = 6/12 -> 0
    assert q["cohen"] == pytest.approx(0.0)
    assert q["alpha"] == pytest.approx(0.0)
    # Fleiss: P = 1/2, P_e = (3^2 + 1^2) / 4^2 -> (8/16 - 10/16) / (6/16)
    assert q["fleiss"] == pytest.approx(-1 / 3)


def test_link_sets_by_hand(two_coders):
    links = project_agreement(two_coders, round=1)["links"]
    # u1 {ZA1, GLES} twice; u2 ann {SOEP}, bob {SOEP, V1} (span links and the answer)
    # MASI d({SOEP}, {SOEP, V1}) = 1 - 1/2 * 2/3 = 2/3:
    #   D_o = 2 * 2/3 / 4 = 1/3, D_e = 2 * (2 + 2 + 2/3) / 12 = 7/9 -> 1 - 3/7
    assert links["alpha_masi"] == pytest.approx(4 / 7)
    # Jaccard d = 1/2: D_o = 1/4, D_e = 2 * (2 + 2 + 1/2) / 12 = 3/4 -> 2/3
    assert links["alpha_jaccard"] == pytest.approx(2 / 3)
    assert links["units"] == 2


def test_disagreements_for_the_curator(two_coders):
    d = project_agreement(two_coders, round=1)["disagreements"]
    assert [x["key"] for x in d] == ["u1", "u2"]
    u1, u2 = d
    ann, bob = u1["coders"]
    assert ann["coder"] == "ann" and bob["coder"] == "bob"
    assert [(s["text"], s["agreed"]) for s in ann["spans"]] == [
        ("ALLBUS 2010", False), ("GLES panel", False)]
    assert u1["answer_keys"] == []
    # u2: the same span, different answers
    assert [(s["text"], s["agreed"]) for s in u2["coders"][0]["spans"]] == [("SOEP", True)]
    assert u2["answer_keys"] == ["is_variable"]
    assert [c["answers"] for c in u2["coders"]] == [[("is_variable", "no")],
                                                    [("is_variable", "yes")]]
    # ... and different links: bob's answer "variable" links V1
    assert u2["links_differ"] and not u1["links_differ"]
    assert [c["links"] for c in u2["coders"]] == [["SOEP"], ["SOEP", "V1"]]
    # u5 (round 0): both marked nothing -> no disagreement
    assert [x["key"] for x in project_agreement(two_coders, round=0)["disagreements"]] == []


def test_a_unit_whose_links_alone_differ_is_a_disagreement():
    u = users("org", "ann", "bob")
    p = new_project(u["org"], schema={"link": "vocabulary",
                                      "questions": [{"key": "is_variable"}]})
    s1 = unit(p, "s1", "How satisfied are you with your life?")
    coded(s1, u["ann"], answers=[("is_variable", "yes", ""), ("variable", "", "V1")])
    coded(s1, u["bob"], answers=[("is_variable", "yes", ""), ("variable", "", "V2")])
    r = project_agreement(p)
    assert r["spans"] is None and r["tokens"] is None     # no span labels, none marked
    (d,) = r["disagreements"]
    assert d["links_differ"] and d["answer_keys"] == []
    html = render_to_string("workbench/_agreement.html", {"agreement": r})
    assert "<td>V1</td>" in html and "<td>V2</td>" in html


def test_three_coders_pairwise_means_and_the_fleiss_rule():
    u = users("org", "ann", "bob", "cy")
    p = new_project(u["org"], schema={"labels": ["D"]})
    long = "one two three four five six seven eight"     # 8 tokens, 3 annotators
    short = "alpha beta"                                  # 2 tokens, 2 annotators
    u1, u2 = unit(p, "u1", long), unit(p, "u2", short)
    spans = {"ann": [(0, 7, "D", "")], "bob": [(4, 13, "D", "")], "cy": [(8, 18, "D", "")]}
    for name, s in spans.items():
        coded(u1, u[name], s)
    coded(u2, u["ann"], [(0, 5, "D", "")])
    coded(u2, u["bob"], [])
    r = project_agreement(p)
    t = r["tokens"]
    labels = {n: token_labels(token_offsets(long), s) for n, s in spans.items()}
    labels["ann"] += token_labels(token_offsets(short), [(0, 5, "D", "")])
    labels["bob"] += token_labels(token_offsets(short), [])
    kappas = {("ann", "bob"): cohen_kappa_score(labels["ann"], labels["bob"]),
              ("ann", "cy"): cohen_kappa_score(labels["ann"][:8], labels["cy"]),
              ("bob", "cy"): cohen_kappa_score(labels["bob"][:8], labels["cy"])}
    assert [(x["a"], x["b"], x["items"]) for x in t["cohen_pairs"]] == [
        ("ann", "bob", 10), ("ann", "cy", 8), ("bob", "cy", 8)]
    for x in t["cohen_pairs"]:
        assert x["kappa"] == pytest.approx(kappas[(x["a"], x["b"])])
    assert t["cohen"] == pytest.approx(sum(kappas.values()) / 3)
    # Fleiss over the tokens with the most common number of judgments: u1's 8, 3 each
    assert (t["fleiss_items"], t["fleiss_raters"]) == (8, 3)
    table, _ = aggregate_raters(np.array([labels[n][:8] for n in ("ann", "bob", "cy")]).T)
    assert t["fleiss"] == pytest.approx(fleiss_kappa(table, method="fleiss"))
    codes = {"O": 0, "D": 1}
    data = np.full((3, 10), np.nan)
    for row, n in enumerate(("ann", "bob", "cy")):
        data[row, :len(labels[n])] = [codes[x] for x in labels[n]]
    assert t["alpha"] == pytest.approx(krippendorff.alpha(
        reliability_data=data, level_of_measurement="nominal"))
    # spans: ann-bob share u1 and u2, the others u1 only; the mean is over the 3 pairs
    pairs = {(x["a"], x["b"]): x for x in r["spans"]["pairs"]}
    assert pairs[("ann", "bob")]["units"] == 2 and pairs[("ann", "cy")]["units"] == 1
    # partial: ann-bob 1 of 2 + 1, ann-cy 0 of 1 + 1, bob-cy 1 of 1 + 1
    assert [pairs[k]["partial"]["f1"] for k in pairs] == [pytest.approx(2 / 3), 0.0, 1.0]
    assert r["spans"]["partial_f1"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert r["links"] is None and r["questions"] == []


def test_undefined_figures_are_none():
    u = users("org", "ann", "bob")
    p = new_project(u["org"])
    r = project_agreement(p)
    assert r["units"] == 0 and r["disagreements"] == []
    assert r["spans"]["exact_f1"] is None and r["spans"]["pairs"] == []
    assert r["tokens"]["cohen"] is None and r["tokens"]["alpha"] is None
    assert r["tokens"]["fleiss"] is None and r["links"]["alpha_masi"] is None
    assert r["questions"][0]["items"] == 0 and r["questions"][0]["cohen"] is None
    # two annotators who both marked nothing on one unit: nothing to agree on
    u1 = unit(p, "u1", "Some text.")
    coded(u1, u["ann"])
    coded(u1, u["bob"])
    r = project_agreement(p)
    assert r["units"] == 1 and r["spans"]["exact_f1"] is None
    assert r["spans"]["pairs"][0]["exact"]["f1"] is None
    assert r["tokens"]["items"] == 3 and r["tokens"]["cohen"] is None   # O throughout
    assert r["links"]["alpha_masi"] is None                            # {} throughout
    assert r["questions"][0]["items"] == 0
    html = render_to_string("workbench/_agreement.html", {"agreement": r})
    assert "n/a (no span marked)" in html and "n/a (one label throughout)" in html
    assert "n/a (one link set throughout)" in html
    assert "n/a (needs 2 annotators on the same unit)" in html           # no answer given
    assert "marked the same spans and gave the same answers" in html


def test_the_tables_show_three_decimals_and_say_why_a_figure_is_missing(two_coders):
    html = render_to_string("workbench/_agreement.html",
                            {"agreement": project_agreement(two_coders, round=1)})
    assert "(round 1)" in html and "2 units done by two or more annotators" in html
    assert ">0.333<" in html and ">1.000<" in html          # exact and partial F1
    assert ">0.700<" in html                                 # token Cohen
    assert f">{274 / 394:.3f}<" in html and f">{4 / 7:.3f}<" in html
    assert "is_variable" in html and "A variable?" in html
    assert "<s>ALLBUS 2010</s>" in html and "SOEP <small>" in html
    assert "is_variable: no" in html and "<td>SOEP, V1</td>" in html
    empty = new_project(get_user_model().objects.get(username="org"), slug="empty")
    html = render_to_string("workbench/_agreement.html",
                            {"agreement": project_agreement(empty)})
    assert "n/a (needs 2 annotators on the same unit)" in html
    assert "<table" not in html
