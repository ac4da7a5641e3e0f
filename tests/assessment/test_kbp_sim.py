"""Simulated KBP teams, judges and annotators (assessment.kbp_sim, kbp_judges): exact tests on the
two-document reference of tests/tasks/kbp_tiny.py, and on Re-DocRED when it is there."""
from __future__ import annotations

import itertools
import math

import pytest

from shareval import tasks
from shareval.assessment import kbp_judges as kj
from shareval.assessment import kbp_sim as ks
from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgments
from shareval.assessment.sample import draw_sample
from shareval.formats.errors import Problems
from shareval.formats.kbp import read_reference
from shareval.formats.kbp_runs import item_key
from shareval.metrics.relations import relation_counts
from shareval.platform.judging import designs
from tests.conftest import SHARED_DATA
from tests.tasks.kbp_tiny import write_reference

TASK = tasks.get("kbp-relations")
KBP = SHARED_DATA / "kbp"
# items of the tiny reference, by hand (text in kbp_tiny.py)
RIGHT = item_key("Anna Berg", (0, 9), "P19", (22, 26))         # Anna Berg born in Oslo
OBJECT_WRONG = item_key("Anna Berg", (29, 33), "P551", (22, 26))   # Oslo is no residence
SUBJECT_WRONG = item_key("Oslo", (12, 19), "P17", (23, 29))    # "capital" is no entity
REVERSED = item_key("Oslo", (23, 29), "P17", (0, 4))   # Norway in Oslo: all three wrong
GOLD = {item_key("Anna Berg", s, r, (22, 26)) for s in ((0, 9), (29, 33)) for r in ("P19",)} | \
    {item_key("Anna Berg", s, "P551", (43, 48)) for s in ((0, 9), (29, 33))}


@pytest.fixture()
def tiny(tmp_path):
    folder = write_reference(tmp_path / "ref")
    return folder, read_reference(folder, Problems())


@pytest.fixture(scope="module")
def redocred():
    if not (KBP / "re-docred-dev.json").exists():
        pytest.skip(f"Re-DocRED data not found at {KBP} (set SHAREVAL_SHARED_DATA)")
    return read_reference(KBP, Problems())


def _written(tmp_path, run, name="run.tsv"):
    path = tmp_path / name
    ks.write_tsv(run.predictions, path)
    return path


# team runs --------------------------------------------------------------------------

def test_a_profile_gives_exactly_its_shares_of_the_mention_pairs(tiny):
    _, ref = tiny
    # all 6 gold mention pairs: 3 kept, 1 relabelled, 1 moved, 1 dropped; 2 documents x 1
    prof = ks.TeamProfile("T", keep=0.5, wrong_relation=1 / 6, wrong_span=1 / 6,
                          spurious_per_doc=1, pairs=0)
    run, = ks.make_runs(ref, [prof], seed=3)
    assert run.counts() == {"kept": 3, "wrong_relation": 1, "wrong_span": 1, "spurious": 2,
                            "dropped": 1}
    assert run.planned == {"kept": 3, "wrong_relation": 1, "wrong_span": 1, "dropped": 1,
                           "spurious": 2}
    oracle = ks.Oracle(ref)
    true = {k for d in ref.documents for k in oracle.true_items(d)}
    for key, origin in run.origin.items():
        assert (key in true) == (origin == "kept"), (key, origin)
    doc, s, r, o = next((p.doc, p.subject, p.relation, p.object) for p in run.predictions
                        if run.origin[item_key(*p.key)] == "wrong_relation")
    # a wrong relation keeps a gold pair's spans
    assert any(item_key(doc, s, r2, o) in true for r2 in ref.relations if r2 != r)


def test_the_shares_are_exact_on_redocred(redocred):
    profs = [ks.TeamProfile("A", 0.7, 0.1, 0.05, 2.0, pairs=0),
             ks.TeamProfile("B", 0.45, 0.15, 0.1, 5.0, pairs=1)]
    oracle = ks.Oracle(redocred)
    for run in ks.make_runs(oracle, profs, seed=1):
        assert run.counts() == run.planned
        slots = sum(run.planned[k] for k in ("kept", "wrong_relation", "wrong_span", "dropped"))
        assert run.planned["kept"] == round(run.profile.keep * slots)
        assert run.planned["spurious"] == round(run.profile.spurious_per_doc * 500)


def test_pairs_takes_each_labels_nearest_mention_pairs(tiny):
    _, ref = tiny
    run, = ks.make_runs(ref, [ks.TeamProfile("T", 1, 0, 0, 0, pairs=1)])
    # "Anna Berg" (sentence 0) is nearer Oslo (sentence 0) than "Berg" (sentence 1);
    # "Berg" is nearer Paris (sentence 1)
    assert run.keys() == {RIGHT, item_key("Anna Berg", (29, 33), "P551", (43, 48)),
                          item_key("Oslo", (0, 4), "P17", (23, 29)),
                          item_key("Oslo", (23, 29), "P36", (0, 4))}


def test_wrong_relations_prefer_ones_seen_with_the_same_entity_types(redocred):
    oracle = ks.Oracle(redocred)
    run, = ks.make_runs(oracle, [ks.TeamProfile("T", 0, 1, 0, 0)], seed=2)
    seen = {k: {r for r, _ in v} for k, v in oracle.signature.items()}
    plausible = 0
    for p in run.predictions:
        d = redocred.documents[p.doc]
        types = (d.mention_type(p.subject), d.mention_type(p.object))
        plausible += p.relation in seen.get(types, ())
    assert plausible / len(run.predictions) > 0.95


def test_the_same_seed_makes_the_same_runs_another_seed_others(tiny):
    _, ref = tiny
    prof = [ks.TeamProfile("T", 0.5, 0.2, 0.2, 1.5, pairs=0)]
    first = [ks.make_runs(ref, prof, seed=s)[0].origin for s in (5, 5, 6, 7, 8)]
    assert first[0] == first[1]
    assert any(f != first[0] for f in first[2:])


# truth ------------------------------------------------------------------------------

def test_truth_equals_the_tasks_score_of_the_written_tsv(tiny, tmp_path):
    folder, ref = tiny
    run, = ks.make_runs(ref, [ks.TeamProfile("T", 0.5, 1 / 6, 1 / 6, 1, pairs=0)], seed=3)
    t = ks.truth(ref, run.predictions)
    assert (t.tp, t.predicted, t.gold) == (3, 7, 6)
    m = TASK.score(folder, _written(tmp_path, run)).metrics
    assert (m["mention_precision"], m["mention_recall"], m["mention_f1"]) == \
        (t.precision, t.recall, t.f1) == (3 / 7, 3 / 6, 6 / 13)


def test_truth_equals_the_tasks_score_on_redocred(redocred, tmp_path):
    runs = ks.make_runs(redocred, [ks.TeamProfile("B", 0.6, 0.12, 0.08, 4, pairs=2)], seed=4)
    t = ks.truth(redocred, runs[0].predictions)
    m = TASK.score(KBP, _written(tmp_path, runs[0])).metrics
    assert (m["mention_precision"], m["mention_recall"], m["mention_f1"]) == \
        (t.precision, t.recall, t.f1)
    assert t.tp == runs[0].counts()["kept"]


def test_the_oracles_answers_are_the_scorers_subject_object_and_relation_counts(redocred):
    oracle = ks.Oracle(redocred)
    run, = ks.make_runs(oracle, [ks.TeamProfile("C", 0.4, 0.2, 0.2, 6)], seed=5)
    gold = {t: (d.entities, d.labels) for t, d in redocred.documents.items()}
    c = relation_counts(gold, [(p.doc, p.subject, p.relation, p.object, p.subject_text,
                                p.object_text) for p in run.predictions])
    answers = [oracle.questions(item_key(*p.key)) for p in run.predictions]
    assert sum(a["subject"] for a in answers) == c.subject_correct
    assert sum(a["object"] for a in answers) == c.object_correct
    assert sum(a["relation"] for a in answers) == c.mention.tp


# the judge --------------------------------------------------------------------------

def test_a_judge_without_error_answers_from_the_annotations_and_stops_at_no(tiny):
    judge = kj.Judge(ks.Oracle(tiny[1]), error=0.0)
    assert judge.answer(RIGHT) == ({"subject": "yes", "object": "yes", "relation": "yes"},
                                   True)
    assert judge.answer(SUBJECT_WRONG) == ({"subject": "no"}, False)
    assert judge.answer(OBJECT_WRONG) == ({"subject": "yes", "object": "no"}, False)
    assert judge.answer(REVERSED) == ({"subject": "no"}, False)
    assert judge(RIGHT) == 1.0 and judge(OBJECT_WRONG) == 0.0


def test_a_judge_follows_the_chains_own_skip_rules(tiny):
    chain = [{"id": "subject", "no": "relation"}, {"id": "object", "yes": "correct"},
             {"id": "relation"}]
    judge = kj.Judge(ks.Oracle(tiny[1]), chain=chain)
    # subject no -> relation (skipping object); relation no -> incorrect
    assert judge.answer(SUBJECT_WRONG) == ({"subject": "no", "relation": "no"}, False)
    # object yes -> correct at once
    assert judge.answer(RIGHT) == ({"subject": "yes", "object": "yes"}, True)


@pytest.mark.parametrize("chain", [
    kj.CHAIN,
    [{"id": "subject", "no": "relation"}, {"id": "object", "yes": "correct"},
     {"id": "relation"}],
    [{"id": "subject", "yes": "relation", "no": "object"}, {"id": "object", "no": "correct"},
     {"id": "relation", "yes": "incorrect", "no": "correct"}],
])
def test_the_chain_walk_is_the_servers(chain):
    for combo in itertools.product(("yes", "no"), repeat=3):
        answers = dict(zip(kj.QUESTIONS, combo))
        given, verdict = kj.walk(chain, answers.__getitem__)
        visited, server_verdict = designs.walk(chain, answers)
        assert (list(given), verdict) == (visited, server_verdict)


def test_a_judge_always_wrong_flips_every_answer(tiny):
    judge = kj.Judge(ks.Oracle(tiny[1]), error=1.0)
    assert judge.answer(RIGHT) == ({"subject": "no"}, False)
    assert judge.answer(SUBJECT_WRONG) == ({"subject": "yes", "object": "no"}, False)
    assert judge.answer(REVERSED) == ({"subject": "yes", "object": "yes", "relation": "yes"},
                                      True)


def test_a_judges_expected_verdict_is_the_chance_of_answering_correct(tiny):
    judge = kj.Judge(ks.Oracle(tiny[1]), error=0.1, seed=0)
    assert judge.expected(RIGHT) == pytest.approx(0.9 ** 3)
    # subject right (yes kept), object and relation wrong (both yes by error)
    assert judge.expected(OBJECT_WRONG) == pytest.approx(0.9 * 0.1 * 0.1)
    assert judge.expected(REVERSED) == pytest.approx(0.1 ** 3)
    n = 20000
    freq = sum(judge(OBJECT_WRONG) for _ in range(n)) / n
    assert abs(freq - 0.009) < 4 * math.sqrt(0.009 * 0.991 / n)


def test_an_item_on_several_rows_is_judged_once(tiny):
    _, ref = tiny
    oracle = ks.Oracle(ref)
    runs = ks.make_runs(oracle, [ks.TeamProfile(n, 1, 0, 0, 0, pairs=0) for n in "AB"])
    rows = draw_sample([r.output() for r in runs], 100, "uniform")   # each item twice
    judge = kj.Judge(oracle, error=0.5, seed=1)
    asked = []
    answer = judge.answer
    judge.answer = lambda key: asked.append(key) or answer(key)
    recs = judge.judgments(rows)
    assert len(rows) == 12 and sorted(asked) == sorted(set(asked)) and len(asked) == 6
    assert len({r.line for r in recs}) == 12


def test_same_seed_same_answers_and_annotations(tiny):
    oracle = ks.Oracle(tiny[1])
    judges = [kj.Judge(oracle, 0.3, seed=s) for s in (1, 1, 2)]
    runs = [[j(RIGHT) for _ in range(40)] for j in judges]
    assert runs[0] == runs[1] != runs[2]
    anns = [kj.Annotator(oracle, miss=0.5, error=0.5, seed=s) for s in (1, 1, 2)]
    marked = [[sorted(a.annotate("Anna Berg", {RIGHT, OBJECT_WRONG})) for _ in range(10)]
              for a in anns]
    assert marked[0] == marked[1] != marked[2]


def test_judgments_of_every_item_estimate_the_true_precision(tiny):
    _, ref = tiny
    oracle = ks.Oracle(ref)
    run, = ks.make_runs(oracle, [ks.TeamProfile("T", 0.5, 1 / 6, 1 / 6, 1, pairs=0)], seed=3)
    rows = draw_sample([run.output()], 100, "uniform")       # all 7 items, inclusion 1
    recs = kj.Judge(oracle).judgments(rows)
    assert {r.question for r in recs} == {"correct", "subject", "object", "relation"}
    table, _ = estimate_all(Judgments(recs), bootstrap=0)
    assert table["T"]["precision"] == ks.truth(ref, run.predictions).precision == 3 / 7


# the annotator ----------------------------------------------------------------------

def test_an_annotator_who_misses_nothing_marks_exactly_the_true_items(tiny):
    oracle = ks.Oracle(tiny[1])
    ann = kj.Annotator(oracle, miss=0.0, error=0.0)
    assert ann.annotate("Anna Berg") == GOLD
    # false suggestions are rejected, true ones accepted
    assert ann.annotate("Anna Berg", {RIGHT, OBJECT_WRONG}) == GOLD
    assert len(GOLD) == 4


def test_an_annotator_who_misses_everything_keeps_only_true_suggestions(tiny):
    ann = kj.Annotator(ks.Oracle(tiny[1]), miss=1.0)
    assert ann.annotate("Anna Berg", {RIGHT, OBJECT_WRONG}) == {RIGHT}
    assert kj.Annotator(ks.Oracle(tiny[1]), error=1.0).annotate(
        "Anna Berg", {RIGHT, OBJECT_WRONG}) == (GOLD - {RIGHT}) | {OBJECT_WRONG}


def test_an_annotator_invents_only_false_items(tiny):
    oracle = ks.Oracle(tiny[1])
    marked = kj.Annotator(oracle, invent=3.0, seed=1).annotate("Oslo")
    true = oracle.true_items("Oslo")
    assert true < marked and len(marked) > len(true)
    assert not any(oracle.is_true(k) for k in marked - true)


def test_an_annotators_miss_rate_is_its_share_of_unsuggested_true_items(redocred):
    oracle = ks.Oracle(redocred)
    ann = kj.Annotator(oracle, miss=0.2, seed=4)
    docs = sorted(redocred.documents)[:100]
    true = sum(len(oracle.true_items(d)) for d in docs)
    found = sum(len(ann.annotate(d)) for d in docs)
    assert abs(found / true - 0.8) < 4 * math.sqrt(0.16 / true)


def test_suggestions_pool_the_outputs_of_each_document():
    outs = {"A": {RIGHT, SUBJECT_WRONG}, "B": {RIGHT, OBJECT_WRONG}}
    assert kj.suggestions_by_doc(outs, ["Anna Berg"]) == {"Anna Berg": {RIGHT, OBJECT_WRONG}}


def test_bad_profiles_and_rates_are_refused():
    with pytest.raises(ValueError, match="sum <= 1"):
        ks.TeamProfile("T", keep=0.8, wrong_relation=0.3)
    with pytest.raises(ValueError):
        kj.Judge(None, error=1.5)
    with pytest.raises(ValueError):
        kj.Annotator(None, miss=-0.1)
