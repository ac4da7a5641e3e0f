"""Judging campaigns: assignment rules, timeouts, gold, agreement, adjudication,
exports read back by `assess estimate`, and estimates on the leaderboard."""
from __future__ import annotations

import datetime as dt
import json

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import read_judgments
from shareval.formats.errors import InvalidInput, Problems
from shareval.platform.judging import build, designs, results, service
from shareval.platform.judging.models import Adjudication, Assignment, Campaign
from shareval.platform.submissions import queue
from shareval.platform.submissions import service as subs

from ..factories import Upload, run_with_accuracy

CHAINS = {"chains": {"default": [
    {"id": "relation", "text": "Is the label of {text} right?"},
    {"id": "subject", "text": "Is the item id well-formed?"},
    {"id": "object", "text": "Is the label a known one?"}]}, "gold_every": 0}


@pytest.fixture
def judged(world):
    w = world
    subs.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["dev"],
                Upload("a.tsv", run_with_accuracy(15)))
    subs.submit(w["users"]["bob"], w["teams"]["Team B"], w["ds"]["dev"],
                Upload("b.tsv", run_with_accuracy(8)))
    queue.drain()
    User = get_user_model()
    judges = [User.objects.create_user(f"judge{i}", password="x-pass-123") for i in range(3)]
    camp = Campaign.objects.create(dataset=w["ds"]["dev"], slug="chains", title="Chains",
                                   design=Campaign.CHAIN, judges_per_item=2, config=CHAINS)
    camp.judges.set(judges)
    n = build.build_from_runs(camp, n=6, docs=2, seed=1)
    return {**w, "camp": camp, "judges": judges, "n": n}


def _truthful(item):
    """Answer from the gold labels: the run line 'iNN<TAB>label' is right or not."""
    from ..factories import gold
    item_id, label = item.key.split("|")
    ok = gold()[item_id] == label
    return {"answers": {"relation": "yes" if ok else "no", "subject": "yes", "object": "yes"}
            if ok else {"relation": "no"}}


def _run_all(camp, judges, flip=None):
    for j in judges:
        while (a := service.next_assignment(camp, j)) is not None:
            ans = _truthful(a.item)
            if flip and flip(j, a.item):
                ans = {"answers": {"relation": "no"}} if ans["answers"]["relation"] == "yes" \
                    else {"answers": {"relation": "yes", "subject": "yes", "object": "yes"}}
            assert service.submit(a, ans)


def test_items_from_runs_carry_the_joint_design(judged):
    camp = judged["camp"]
    items = list(camp.items.all())
    assert judged["n"] == len(items) > 6
    assert set(camp.config["sizes"]) == {"Team A", "Team B", "Baseline"}
    for it in items:
        if it.drawn_for == "precision":
            fr = {s: min(6, n) / n for s, n in camp.config["sizes"].items()}
            assert it.inclusion == pytest.approx(1 - np.prod([1 - fr[s] for s in it.submissions]))


def test_assignment_k_judges_never_twice_and_expiry(judged):
    camp, (j0, j1, j2) = judged["camp"], judged["judges"]
    a = service.next_assignment(camp, j0)
    assert service.next_assignment(camp, j0).pk == a.pk          # the open one again
    # expire it: the item goes back to the pool, never to j0 again
    Assignment.objects.filter(pk=a.pk).update(deadline=timezone.now() - dt.timedelta(seconds=1))
    assert not service.submit(a, _truthful(a.item))
    b = service.next_assignment(camp, j0)
    assert b.item_id != a.item_id and Assignment.objects.get(pk=a.pk).status == "expired"
    _run_all(camp, [j0, j1, j2])
    per_item = {}
    for it_id, judge in Assignment.objects.filter(item__campaign=camp, status="done") \
            .values_list("item_id", "judge_id"):
        per_item.setdefault(it_id, []).append(judge)
    assert all(len(v) == 2 and len(set(v)) == 2 for v in per_item.values())
    assert len(per_item) == camp.items.count()
    prog = service.progress(camp)
    assert prog["complete"] == prog["items"]
    assert prog["judges"]["judge0"]["expired"] == 1


def test_agreement_matches_krippendorff_and_gold_accuracy(judged):
    camp, judges = judged["camp"], judged["judges"]
    gold_item = camp.items.first()
    gold_item.gold = designs.clean_answer(camp, gold_item, _truthful(gold_item))
    gold_item.save()
    _run_all(camp, judges, flip=lambda j, it: j.username == "judge1" and it.pk % 2 == 0)
    st = service.agreement_stats(camp)
    rows = {}
    for a in Assignment.objects.filter(item__campaign=camp, status="done", item__gold__isnull=True):
        rows.setdefault(a.item_id, {})[a.judge.username] = int(a.answer["correct"])
    names = sorted({n for r in rows.values() for n in r})
    m = np.array([[r.get(n, np.nan) for r in rows.values()] for n in names], dtype=float)
    ref = krippendorff.alpha(reliability_data=m, level_of_measurement="nominal")
    assert st["krippendorff_alpha"] == pytest.approx(ref, abs=1e-9)
    acc = service.gold_accuracy(camp)
    assert all(v["gold_units"] == 1 for v in acc.values())


def _hajek_from_export(text):
    """The design estimator written from its definition, on the exported CSV: a judge
    calls an item correct when every question they answered is yes; an item's value
    is the mean over its judges; precision = sum(y / pi) / sum(1 / pi) over the
    precision items a team's run contains."""
    import csv
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    items = {}
    for r in rows:
        if r["drawn_for"] != "precision":
            continue
        it = items.setdefault(r["item"], {"pi": float(r["inclusion_probability"]),
                                          "teams": r["submissions"].split(","), "votes": {}})
        votes = it["votes"]
        votes[r["judge"]] = votes.get(r["judge"], True) and r["answer"] == "yes"
    num, den = {}, {}
    for it in items.values():
        y = sum(it["votes"].values()) / len(it["votes"])
        for team in it["teams"]:
            num[team] = num.get(team, 0.0) + y / it["pi"]
            den[team] = den.get(team, 0.0) + 1 / it["pi"]
    return {t: num[t] / den[t] for t in num}


def test_adjudication_audit_trail_and_exports(judged):
    camp, judges, org = judged["camp"], judged["judges"], judged["org"]
    _run_all(camp, judges[:2], flip=lambda j, it: j.username == "judge1" and it.pk % 3 == 0)
    dis = service.disagreements(camp)
    assert dis, "the flipped answers must disagree"
    item = dis[0]["item"]
    service.adjudicate(item, org, {"answers": {"relation": "no"}}, "first look")
    service.adjudicate(item, org, _truthful(item), "checked the gold")
    trail = list(Adjudication.objects.filter(item=item))
    assert [t.note for t in trail] == ["first look", "checked the gold"]
    final = service.final_answers(camp)[item.pk]
    assert final["adjudication"].note == "checked the gold"
    text = results.estimate_csv(camp)
    assert text.startswith("# sizes: ")
    # an item drawn both for precision and for recall has one key twice: the rows of the
    # adjudicated one are those with its key and its drawn_for
    import csv
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    adjudicated = [r for r in rows if r["item"] == item.key and r["drawn_for"] == item.drawn_for]
    assert adjudicated and all(r["judge"] == "adjudication:org" for r in adjudicated)
    path = judged["comp"].slug + "-judgments.csv"
    from pathlib import Path
    p = Path(judged["ds"]["dev"].reference_file).parent / path
    p.write_text(text)
    problems = Problems()
    j = read_judgments(p, problems)
    assert not problems.items
    table, _ = estimate_all(j, bootstrap=0)
    # the export carries sizes and overlaps, so the importance estimator's default
    # (heuristic) weights work on it too
    assert j.overlaps == {tuple(sorted(k.split("+"))): v
                          for k, v in camp.config["overlaps"].items()}
    imp, _ = estimate_all(j, "importance", bootstrap=0)
    assert all(np.isfinite(imp[t]["precision"]) for t in ("Team A", "Team B"))
    res = results.team_results(camp)
    oracle = _hajek_from_export(text)
    for team in ("Team A", "Team B"):
        # team_results and estimate_all share code: the oracle reads the CSV by hand
        # (the CSV rounds inclusion probabilities to 10 significant digits)
        assert res[team]["estimate"] == pytest.approx(oracle[team], rel=1e-8)
        assert table[team]["precision"] == pytest.approx(oracle[team], abs=1e-12)
        assert res[team]["low"] <= res[team]["estimate"] <= res[team]["high"]
        assert "entity_precision" in table[team]
    qrels, unresolved = results.qrels(camp)
    assert qrels.count("\n") + len(unresolved) == len(
        [i for i in camp.items.all() if i.assignments.filter(status="done").exists()])


def test_leaderboard_shows_estimates_with_intervals(judged, client):
    camp, judges = judged["camp"], judged["judges"]
    _run_all(camp, judges[:2])
    board = client.get(f"/api/competitions/{judged['comp'].slug}/leaderboard/dev/dev/").json()
    assert board["human"] == [{"campaign": "Chains", "measure": "precision"}]
    row = next(r for r in board["rows"] if r["team"] == "Team A")
    h = row["human"][0]
    assert h["low"] <= h["estimate"] <= h["high"] and h["n"] > 0
    html = client.get(f"/c/{judged['comp'].slug}/leaderboard/dev/dev/").content.decode()
    assert "judged: Chains" in html and f"[{h['low']:.3f}, {h['high']:.3f}]" in html


def test_side_by_side_and_related_to_scoring(judged):
    camp = Campaign.objects.create(dataset=judged["ds"]["dev"], slug="rel", title="Rel",
                                   design=Campaign.RELATED, judges_per_item=1)
    lines = [json.dumps({"key": f"p{i}", "payload": {"systems": [
        {"team": "Team A", "output": ["ALLBUS 2010", "a survey"]},
        {"team": "Team B", "output": ["noise"]}]}}) for i in range(3)]
    assert build.load_items(camp, "\n".join(lines)) == 3
    camp.judges.set(judged["judges"][:1])
    j = judged["judges"][0]
    while (a := service.next_assignment(camp, j)) is not None:
        # one reference; A's first output related to it, B found nothing related
        assert service.submit(a, {"references": ["ALLBUS"],
                                  "related": {"ALLBUS": {"Team A": [0]}}})
    res = results.team_results(camp)
    # A: tp 3, fn 0, fp 3 (one unrelated output per publication); B: tp 0, fn 3, fp 3
    assert res["Team A"]["precision"] == pytest.approx(0.5)
    assert res["Team A"]["recall"] == pytest.approx(1.0)
    assert res["Team A"]["estimate"] == pytest.approx(2 / 3)
    assert res["Team B"]["estimate"] == 0
    sbs = Campaign.objects.create(dataset=judged["ds"]["dev"], slug="sbs", title="SbS",
                                  design=Campaign.SIDE_BY_SIDE, judges_per_item=2)
    build.load_items(sbs, "\n".join(lines))
    sbs.judges.set(judged["judges"][:2])
    for jj, delta in zip(judged["judges"][:2], (1, 0)):
        while (a := service.next_assignment(sbs, jj)) is not None:
            assert service.submit(a, {"scores": {"Team A": delta, "Team B": -1}})
    res = results.team_results(sbs)
    assert res["Team A"]["estimate"] == pytest.approx(1.5)     # mean 0.5 per publication x 3
    assert res["Team B"]["estimate"] == pytest.approx(-3)


def test_bad_items_file_lists_every_problem(judged):
    camp = Campaign.objects.create(dataset=judged["ds"]["dev"], slug="rv", title="Rv",
                                   design=Campaign.RELEVANCE)
    text = "\n".join([
        json.dumps({"key": "q1|d1", "payload": {"query": "x", "summary": ["a"]}}),
        "nope",
        json.dumps({"key": "q1|d2", "payload": {"query": "x", "image": "data:image/png;base64,AAAA"}}),
        json.dumps({"key": "q1|d3", "payload": {"summary": ["a"]}, "inclusion_probability": 2}),
        json.dumps({"key": "q1|d1", "payload": {"query": "x", "summary": ["a"]}}),
    ])
    with pytest.raises(InvalidInput) as e:
        build.load_items(camp, text, "items.jsonl")
    got = [(p.line, p.field) for p in e.value.problems]
    assert got == [(2, "json"), (3, "payload.image"), (4, "payload.query"),
                   (4, "inclusion_probability"), (5, "key")]
    assert camp.items.count() == 0


def test_chain_skip_rules():
    chain = [{"id": "person", "text": "Is X a person?", "no": "incorrect"},
             {"id": "kind", "text": "Is it computational?", "yes": "age", "no": "next"},
             {"id": "manual", "text": "Manually checked?", "no": "incorrect", "yes": "correct"},
             {"id": "age", "text": "Was X 50?"}]
    assert designs.walk(chain, {"person": "no"}) == (["person"], False)
    assert designs.walk(chain, {"person": "yes", "kind": "yes", "age": "yes"}) == \
        (["person", "kind", "age"], True)
    assert designs.walk(chain, {"person": "yes", "kind": "no", "manual": "yes"}) == \
        (["person", "kind", "manual"], True)
    assert designs.walk(chain, {"person": "yes"})[1] is None
    assert designs.check_chains({"chains": {"x": [{"id": "a", "text": "t", "yes": "a"}]}})


def test_summary_relevance_exports_e2e_judgments(judged, tmp_path):
    from shareval.formats.summary import read_judgments as read_e2e
    camp = Campaign.objects.create(dataset=judged["ds"]["dev"], slug="e2e", title="E2E",
                                   design=Campaign.RELEVANCE, judges_per_item=2)
    items = [json.dumps({"key": f"q1|d{i}", "submissions": ["Team A"],
                         "payload": {"query": "elections", "summary": ["vote", "count"],
                                     "query_id": "query1", "document_id": f"doc{i}"}})
             for i in range(3)]
    build.load_items(camp, "\n".join(items))
    camp.judges.set(judged["judges"][:2])
    for j, verdict in zip(judged["judges"][:2], (True, False)):
        while (a := service.next_assignment(camp, j)) is not None:
            assert service.submit(a, {"relevant": verdict or a.item.key.endswith("d0")})
    f = tmp_path / "e2e.tsv"
    f.write_text(results.e2e_judgments(camp))
    problems = Problems()
    votes = read_e2e(f, problems)
    assert not problems.items
    assert votes == {("query1", "doc0"): [True, True], ("query1", "doc1"): [True, False],
                     ("query1", "doc2"): [True, False]}
    res = results.team_results(camp)["Team A"]
    assert res["estimate"] == pytest.approx(4 / 6) and res["n"] == 3


def _ctx(html: str) -> dict:
    import re
    m = re.search(r'<script id="ctx" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


@pytest.mark.parametrize("action", ["create", "join"])
def test_a_judge_who_creates_or_joins_a_team_loses_judge_access(judged, client, action):
    camp, j0 = judged["camp"], judged["judges"][0]
    client.force_login(j0)
    assert client.get(f"/judging/{camp.pk}/").status_code == 200
    assert client.post(f"/judging/{camp.pk}/").status_code == 302     # "Start judging"
    a = Assignment.objects.get(item__campaign=camp, judge=j0)
    assert f'id="campaign-{camp.pk}"' in client.get("/judging/").content.decode()
    name = "Judges United" if action == "create" else "Team A"     # join: a pending request
    r = client.post(f"/c/{judged['comp'].slug}/team/", {"action": action, "name": name})
    assert r.status_code == 302
    assert client.get(f"/judging/{camp.pk}/").status_code == 404
    r = client.post(f"/judging/{camp.pk}/", {"assignment": a.pk, "answer": json.dumps(
        _truthful(a.item)), "started": "0"})
    assert r.status_code == 404
    assert f'id="campaign-{camp.pk}"' not in client.get("/judging/").content.decode()
    assert not camp.judges.filter(pk=j0.pk).exists()
    assert Assignment.objects.get(pk=a.pk).status == Assignment.EXPIRED    # back to the pool
    assert service.next_assignment(camp, judged["judges"][1]).item_id == a.item_id


def test_judge_eligibility_is_checked_on_every_request(judged, client):
    from shareval.platform.competitions.models import Membership
    camp, j1 = judged["camp"], judged["judges"][1]
    client.force_login(j1)
    assert client.get(f"/judging/{camp.pk}/").status_code == 200
    # a membership written without signals (bulk, raw SQL, an older release's data)
    Membership.objects.bulk_create([Membership(team=judged["teams"]["Team B"], user=j1,
                                               status=Membership.APPROVED)])
    assert camp.judges.filter(pk=j1.pk).exists()
    assert client.get(f"/judging/{camp.pk}/").status_code == 404
    assert not service.may_judge(camp, j1) and service.may_judge(camp, judged["judges"][2])


def test_membership_in_another_competition_or_a_baseline_team_keeps_access(judged, client):
    from shareval.platform.competitions.models import Membership, Team
    camp, j2 = judged["camp"], judged["judges"][2]
    baseline = Team.objects.get(competition=judged["comp"], is_baseline=True)
    Membership.objects.create(team=baseline, user=j2, status=Membership.APPROVED)
    assert camp.judges.filter(pk=j2.pk).exists() and service.may_judge(camp, j2)


@pytest.mark.parametrize("design", [Campaign.CHAIN, Campaign.SIDE_BY_SIDE])
def test_the_judging_page_sends_only_the_item_being_judged(world, client, design):
    w = world
    runs = [subs.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["eval"],
                        Upload("a.tsv", run_with_accuracy(15))),
            subs.submit(w["users"]["bob"], w["teams"]["Team B"], w["ds"]["eval"],
                        Upload("b.tsv", run_with_accuracy(9)))]
    queue.drain()
    judge = get_user_model().objects.create_user("j", password="x-pass-123")
    camp = Campaign.objects.create(dataset=w["ds"]["eval"], slug="blind", title="Blind",
                                   design=design, judges_per_item=1, config=CHAINS)
    camp.judges.set([judge])
    build.build_from_runs(camp, n=4, seed=3)
    client.force_login(judge)
    client.post(f"/judging/{camp.pk}/")
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    a = Assignment.objects.get(item__campaign=camp, judge=judge)
    from shareval.platform.judging.views import judge_context
    assert _ctx(html) == json.loads(json.dumps(judge_context(camp, a.item)))
    assert set(_ctx(html)) <= {"text", "doc", "doc_url", "systems", "chain", "view",
                               "instructions", "full_text_url"}
    for s in runs:                                   # no run file, no team name
        text = s.path.read_text()
        assert text not in html and s.team.name not in html and s.original_name not in html
        lines = [ln.replace("\t", " ") for ln in text.splitlines()[1:]]
        shown = [ln for ln in lines if ln in html]
        assert len(shown) <= 1, shown                # at most this item's own line
    for other in camp.items.exclude(pk=a.item_id):
        assert f"Publication {other.doc}" not in html
        assert not other.payload.get("text") or json.dumps(other.payload["text"]) not in html


def test_runs_that_are_not_one_item_per_line_cannot_fill_a_campaign(tmp_path):
    doc = tmp_path / "run.json"
    doc.write_text(json.dumps({f"u{i}": i % 2 for i in range(50)}))
    with pytest.raises(ValueError, match="items file"):
        build.run_units("classification", doc)
    # a task whose runs are documents has its own units: SV-Ident's positive sentences
    units = build.run_units("svident-detection", doc)
    assert set(units) == {f"u{i}" for i in range(1, 50, 2)}
    assert units["u1"] == ("u1", "mentions a survey variable")
    long = tmp_path / "run.tsv"
    long.write_text("i01\t" + "x" * 600 + "\n")
    with pytest.raises(ValueError, match="at most 500"):
        build.run_units("classification", long)
    ok = tmp_path / "ok.tsv"
    ok.write_text("item\tlabel\ni01\tpos\n")
    assert build.run_units("classification", ok)["i01|pos"] == ("i01", "i01 pos")


def test_judgments_csv_escapes_formulas_and_assess_estimate_reads_the_names_back(
        world, tmp_path):
    import csv
    import io

    from shareval.platform.competitions.models import Membership, Team
    w = world
    # a formula, a comma (the list separator), '+' (the overlaps pair separator), '%'
    evil = '=HYPERLINK("http://evil.example", "Smith, Jones + 100%")'
    from shareval.assessment.judgments import quote_name
    team = Team.objects.create(competition=w["comp"], name=evil, lead=w["users"]["dave"])
    Membership.objects.create(team=team, user=w["users"]["dave"], status=Membership.APPROVED)
    subs.submit(w["users"]["dave"], team, w["ds"]["dev"], Upload("e.tsv", run_with_accuracy(11)))
    queue.drain()
    judge = get_user_model().objects.create_user("j", password="x-pass-123")
    camp = Campaign.objects.create(dataset=w["ds"]["dev"], slug="c", title="C",
                                   design=Campaign.CHAIN, judges_per_item=1, config=CHAINS)
    camp.judges.set([judge])
    build.build_from_runs(camp, n=20, seed=0)
    while (a := service.next_assignment(camp, judge)) is not None:
        assert service.submit(a, {"answers": {"relation": "no"}})
    text = results.estimate_csv(camp)
    sizes_line, body = text.split("\n", 1)
    assert not any(part.startswith("=") for part in sizes_line.split(","))
    cells = [c for row in csv.reader(io.StringIO(body)) for c in row]
    assert any(quote_name(evil) in c for c in cells)
    assert not any(c.startswith(("=", "+", "@", "-")) for c in cells)
    p = tmp_path / "judgments.csv"
    p.write_text(text)
    problems = Problems()
    j = read_judgments(p, problems)
    assert not problems.items
    assert j.sizes[evil] == camp.config["sizes"][evil]
    assert any(evil in r.submissions for r in j.records)
    assert all(set(r.submissions) <= set(j.sizes) for r in j.records)
    assert evil in results.team_results(camp)


def test_opening_the_judging_page_takes_no_item(judged, client):
    """GET is safe (link previews, prefetching, reloads): only POST takes an item."""
    camp, judge = judged["camp"], judged["judges"][0]
    client.force_login(judge)
    before = Assignment.objects.filter(item__campaign=camp).count()
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    assert Assignment.objects.filter(item__campaign=camp).count() == before
    assert 'id="start"' in html and "Start judging" in html and 'id="ctx"' not in html
    left = service.items_left(camp, judge)
    assert f"{left} items waiting" in html
    assert client.post(f"/judging/{camp.pk}/").status_code == 302
    a = Assignment.objects.get(item__campaign=camp, judge=judge)
    assert a.status == Assignment.STARTED
    for _ in range(3):                      # reloading shows the same item, takes no other
        html = client.get(f"/judging/{camp.pk}/").content.decode()
        assert _ctx(html)
    assert Assignment.objects.filter(item__campaign=camp, judge=judge).count() == 1
    # answering takes the next one in the same request
    r = client.post(f"/judging/{camp.pk}/", {"assignment": a.pk, "answer": json.dumps(
        _truthful(a.item)), "started": "0"})
    assert r.status_code == 302
    mine = Assignment.objects.filter(item__campaign=camp, judge=judge)
    assert mine.count() == 2 and mine.filter(status=Assignment.DONE).count() == 1
    assert left == camp.items.count()             # nobody had judged: every item
    assert service.items_left(camp, judge) == left - 2
    # an item held by two other judges is not offered; once their hold expires, it is
    other = camp.items.exclude(assignments__judge=judge).first()
    for j in judged["judges"][1:]:
        Assignment.objects.create(item=other, judge=j, deadline=timezone.now()
                                  + dt.timedelta(minutes=5))
    assert service.items_left(camp, judge) == left - 3
    Assignment.objects.filter(item=other).update(deadline=timezone.now()
                                                 - dt.timedelta(minutes=1))
    assert service.items_left(camp, judge) == left - 2


def test_a_gold_item_comes_every_tenth_assignment_by_default(judged):
    """docs/kbp-assessment.md: controls are mixed in "one every gold_every assignments,
    10 by default"; before the tenth, a judge gets real items."""
    camp, judge = judged["camp"], judged["judges"][0]
    camp.config = {k: v for k, v in camp.config.items() if k != "gold_every"}
    camp.save()
    items = list(camp.items.order_by("pk"))
    assert len(items) >= 10, len(items)
    gold = items[-1]
    gold.gold = designs.clean_answer(camp, gold, _truthful(gold))
    gold.save()
    got = []
    while len(got) < 10 and (a := service.next_assignment(camp, judge)) is not None:
        got.append(a.item.gold is not None)
        assert service.submit(a, _truthful(a.item))
    assert got == [False] * 9 + [True]
