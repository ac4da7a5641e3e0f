"""RCC phase-2 study in the server: sampling from an rcc-citations dataset, the
coder, topic judges, reviewer and designer through the pages, the audit
trail, access for every role, F1 on the leaderboard and phase-1 consensus."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
from pathlib import Path

import pytest
import yaml

from shareval.assessment import rcc_phase2 as r2

from ..factories import Upload

TOPIC_TITLES = {"Finance": "Bank lending and credit {}", "Education": "School outcomes {}",
                "Health care": "Hospital care quality {}"}


def rcc_bundle(root: Path) -> Path:
    """36 publications, 12 per topic: ids 0-5 of a topic cite a catalog data set
    (titled), the rest cite none."""
    root.mkdir(parents=True, exist_ok=True)
    ref = root / "ref"
    ref.mkdir()
    pubs, cits = [], []
    for k, (topic, title) in enumerate(TOPIC_TITLES.items()):
        for i in range(12):
            pid = str(100 * k + i)
            pubs.append({"publication_id": int(pid), "title": title.format(i)})
            if i < 6:
                cits.append({"publication_id": int(pid), "data_set_id": 1000 + i,
                             "mention_list": [], "score": 1.0})
    (ref / "publications.json").write_text(json.dumps(pubs))
    (ref / "data_set_citations.json").write_text(json.dumps(cits))
    now = dt.datetime.now(dt.timezone.utc)
    iso = lambda t: t.replace(microsecond=0).isoformat()       # noqa: E731
    b = {"slug": "rccdemo", "title": "RCC mini",
         "tasks": [{"slug": "cit", "task": "rcc-citations"}],
         "phases": [{"slug": "dev", "title": "Dev", "start": iso(now - dt.timedelta(days=1)),
                     "end": iso(now + dt.timedelta(days=9)), "leaderboard": "public",
                     "datasets": [{"slug": "rcc", "task": "cit", "reference": "ref"}]}]}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b))
    return root


def run(pairs) -> str:
    return json.dumps([{"publication_id": int(p), "data_set_id": int(d), "score": 0.9,
                        "mention_list": []} for p, d in pairs])


@pytest.fixture
def rcc(db, tmp_path):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions import queue, service
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    users = {n: User.objects.create_user(n, password=f"{n}-pass-123")
             for n in ("alice", "bob", "coder", "judge1", "judge2", "rev", "outsider")}
    comp, _ = load_bundle(rcc_bundle(tmp_path / "b"), org)
    ds = comp.phases.get(slug="dev").datasets.get()
    teams = {}
    for name, lead in (("Team A", "alice"), ("Team B", "bob")):
        teams[name] = Team.objects.create(competition=comp, name=name, lead=users[lead])
        Membership.objects.create(team=teams[name], user=users[lead], status=Membership.APPROVED)
    # Team A finds the right data set in every titled publication plus a wrong one in
    # publication *00; Team B finds data set 999 everywhere in topic 0 (Finance)
    a = [(100 * k + i, 1000 + i) for k in range(3) for i in range(6)] + [(0, 5), (100, 5)]
    b = [(i, 999) for i in range(12)]
    service.submit(users["alice"], teams["Team A"], ds, Upload("a.json", run(a)))
    service.submit(users["bob"], teams["Team B"], ds, Upload("b.json", run(b)))
    assert queue.drain() == 2
    return {"comp": comp, "ds": ds, "org": org, "users": users, "teams": teams}


def make_study(rcc, **kw):
    from shareval.platform.annotation import service
    from shareval.platform.annotation.models import Member
    st = service.create_study(rcc["ds"], "p2", "Phase 2", rcc["org"],
                              **{"per_topic": 10, "qualitative": 2, "seed": 1, **kw})
    u = rcc["users"]
    service.add_member(st, rcc["org"], u["coder"], Member.CODER)
    service.add_member(st, rcc["org"], u["rev"], Member.REVIEWER)
    for j in ("judge1", "judge2"):
        service.add_member(st, rcc["org"], u[j], Member.JUDGE)
    return st


def url(st, name="", pub=None):
    base = f"/c/{st.competition.slug}/annotation/{st.pk}/"
    return base + (f"{name}/" if name else "") + (f"{pub.pk}/" if pub else "")


def test_sample_follows_the_mix_per_topic_and_snapshots_runs(rcc):
    st = make_study(rcc)
    sample = st.config["sample"]
    # guessed strata: 6 titled per topic; untitled = no catalog citation but a team
    # found data (Team B, all of Finance); none = neither
    assert sample["got"]["Finance"] == {"titled": 5, "untitled": 5, "none": 0}
    assert "Finance: 1 none short" in sample["shortfall"]
    edu = sample["got"]["Education"]      # 4 untitled missing, filled in walk order
    assert edu["untitled"] == 0 and edu["titled"] >= 5 and edu["none"] >= 2
    assert sum(edu.values()) == 10
    assert any("Education: 4 untitled short" in s for s in sample["shortfall"])
    refs = st.publications.filter(purpose="references")
    assert refs.count() == 30 and st.publications.filter(purpose="qualitative").count() == 2
    assert st.teams == ["Team A", "Team B"]
    p = refs.get(publication_id="0")
    assert {o["id"] for o in p.outputs["Team A"]} == {"1000", "5"}
    assert [o["id"] for o in p.outputs["Team B"]] == ["999"]
    assert st.decisions.filter(stage="sample", action="sample").count() == 1


def test_explicit_strata_and_where_teams_agree(rcc):
    from shareval.platform.annotation import service, sources
    strata = sources.read_strata("publication_id,topic,stratum\n0,Finance,titled\n"
                                 "1,Finance,none\n200,Health care,untitled\n")
    st = service.create_study(rcc["ds"], "given", "Given", rcc["org"], per_topic=2,
                              strata=strata, mix={"titled": 1, "untitled": 0, "none": 1})
    assert sorted(st.publications.values_list("publication_id", flat=True)) == ["0", "1", "200"]
    agree = service.create_study(rcc["ds"], "agree", "Agree", rcc["org"], agree=50)
    levels = r2.agreement_levels({"A": {str(100 * k + i) for k in range(3) for i in range(6)},
                                  "B": {str(i) for i in range(12)}},
                                 [str(100 * k + i) for k in range(3) for i in range(12)])
    expect = sorted(p for p, v in levels.items() if v in (0.0, 1.0))
    assert sorted(agree.publications.values_list("publication_id", flat=True)) == expect
    from shareval.formats.errors import InvalidInput
    with pytest.raises(InvalidInput):
        sources.read_strata("publication_id,topic,stratum\n0,Finance,maybe\n")


def post(client, user, path, data):
    client.force_login(user)
    r = client.post(path, data)
    assert r.status_code in (200, 302), (path, r.status_code)
    return r


def capture_all(client, st, rcc, refs_for):
    from shareval.platform.annotation.models import Publication
    coder = rcc["users"]["coder"]
    for p in st.publications.filter(purpose=Publication.REFERENCES):
        for kind, name in refs_for(p):
            post(client, coder, url(st, "capture", p),
                 {"action": "add", "kind": kind, "name": name, "context": f"… {name} …"})
        post(client, coder, url(st, "capture", p), {"action": "finish"})


def test_the_whole_flow_through_the_pages_to_f1_on_the_leaderboard(rcc, client):
    from shareval.platform.annotation import results, service
    from shareval.platform.annotation.models import Coding, Publication, Reference
    st = make_study(rcc)
    u = rcc["users"]
    # capture: titled publications get their catalog data set as a reference, every
    # publication a reference to the authors' own data
    capture_all(client, st, rcc, lambda p: (
        [("titled", f"catalog {1000 + int(p.publication_id) % 100}")]
        if int(p.publication_id) % 100 < 6 else []) + [("own", "own survey")])
    n_titled = sum(int(p) % 100 < 6 for p in st.publications.filter(
        purpose="references").values_list("publication_id", flat=True))
    assert Reference.objects.filter(publication__study=st).count() == 30 + n_titled
    # topic routing: no topics declared -> nothing; Finance -> only Finance
    client.force_login(u["judge1"])
    assert service.work_for(st, u["judge1"])["related"] == []
    post(client, u["judge1"], url(st, "work"), {"topics": ["Finance"]})
    post(client, u["judge2"], url(st, "work"), {"topics": ["Education", "Health care"]})
    mine = service.work_for(st, u["judge1"])["related"]
    assert mine and {p.topic for p in mine} == {"Finance"}
    edu = st.publications.filter(purpose="references", topic="Education").first()
    r = post(client, u["judge1"], url(st, "related", edu), {})
    assert not Coding.objects.filter(publication=edu).exists()       # not in judge1's topics
    # coding: each judge ticks the catalog output under the titled reference
    for p in st.publications.filter(purpose=Publication.REFERENCES):
        judge = u["judge1"] if p.topic == "Finance" else u["judge2"]
        client.force_login(judge)
        page = client.get(url(st, "related", p))
        assert page.status_code == 200
        data = {}
        systems = service.systems(p)
        for ref in p.references.all():
            for i, s in enumerate(systems):
                want = str(1000 + int(p.publication_id) % 100)
                ids = [o["id"] for o in s["output"] if ref.kind == "titled" and o["id"] == want]
                if ids:
                    data[f"rel-{ref.pk}-{i}"] = ids
        post(client, judge, url(st, "related", p), data)
    assert st.publications.filter(purpose="references", coded=None).count() == 0
    # review: remove one own-data reference, mark one unsure, revise one
    pubs = list(st.publications.filter(purpose="references").order_by("pk"))
    own = [p.references.get(kind="own") for p in pubs[:3]]
    rev = u["rev"]
    r = post(client, rev, url(st, "review", pubs[0]), {"ref": own[0].pk, "action": "remove",
                                                       "note": ""})
    assert b"needs a note" in r.content            # kept on the page with the error
    post(client, rev, url(st, "review", pubs[0]), {"ref": own[0].pk, "action": "remove",
                                                   "note": "not data: a method"})
    post(client, rev, url(st, "review", pubs[1]), {"ref": own[1].pk, "action": "unsure",
                                                   "note": "maybe secondary"})
    post(client, rev, url(st, "review", pubs[2]), {"ref": own[2].pk, "action": "revise",
                                                   "kind": "untitled", "name": "a panel",
                                                   "context": "new context", "note": ""})
    for p in pubs:
        post(client, rev, url(st, "review", p), {"action": "finish"})
    # designer: closing is refused while one is unsure; keep it, then close
    post(client, rcc["org"], url(st, "final"), {"action": "close"})
    st.refresh_from_db()
    assert st.closed is None
    page = client.get(url(st, "final"))
    assert b"maybe secondary" in page.content and b"not data: a method" in page.content
    post(client, rcc["org"], url(st, "final"), {"ref": own[1].pk, "keep": "1", "note": "ok"})
    post(client, rcc["org"], url(st, "final"), {"action": "close"})
    st.refresh_from_db()
    assert st.closed is not None
    # scores: computed independently from the capture rule above
    pubs = list(st.publications.filter(purpose="references"))
    titled = [p for p in pubs if int(p.publication_id) % 100 < 6]
    refs = len(titled) + len(pubs) - 1                           # one own-data ref removed
    a_tp = len(titled)
    a_fp = sum(1 for p in pubs if p.publication_id in ("0", "100"))       # data set 5
    b_fp = sum(1 for p in pubs if p.topic == "Finance")                     # 999 everywhere
    scores = results.team_scores(st)
    assert (scores["Team A"]["tp"], scores["Team A"]["fn"], scores["Team A"]["fp"]) == \
        (a_tp, refs - a_tp, a_fp)
    assert (scores["Team B"]["tp"], scores["Team B"]["fn"], scores["Team B"]["fp"]) == \
        (0, refs, b_fp)
    f1_a = 2 * a_tp / (2 * a_tp + a_fp + refs - a_tp)
    assert scores["Team A"]["f1"] == pytest.approx(f1_a)
    assert scores["Team A"]["low"] <= f1_a <= scores["Team A"]["high"]
    page = client.get(url(st, "results"))
    assert page.status_code == 200 and f"{f1_a:.4f}".rstrip("0").encode() in page.content
    board = client.get(f"/api/competitions/{st.competition.slug}/leaderboard/dev/rcc/").json()
    assert board["human"][-1] == {"campaign": "Phase 2", "measure": "related-to F1"}
    row = next(r for r in board["rows"] if r["team"] == "Team A")
    assert row["human"][-1]["estimate"] == pytest.approx(f1_a)
    # the audit trail: every step, in order, as CSV
    rows = list(csv.DictReader(io.StringIO(client.get(url(st, "audit.csv")[:-1]).content.decode())))
    steps = [(r["stage"], r["action"]) for r in rows]
    assert steps[0] == ("sample", "sample") and steps[-1] == ("final", "close")
    assert ("review", "remove") in steps and ("review", "unsure") in steps
    assert ("review", "revise") in steps and ("final", "keep") in steps
    assert sum(s == ("related", "code") for s in steps) == len(pubs)
    revised = next(r for r in rows if r["action"] == "revise")
    assert json.loads(revised["before"])["kind"] == "own"
    assert json.loads(revised["after"])["name"] == "a panel"


def test_decisions_are_append_only(rcc):
    from shareval.platform.annotation.models import Decision
    st = make_study(rcc)
    d = st.decisions.first()
    d.note = "edited"
    with pytest.raises(PermissionError):
        d.save()
    with pytest.raises(PermissionError):
        d.delete()
    with pytest.raises(PermissionError):
        Decision.objects.filter(study=st).update(note="x")
    with pytest.raises(PermissionError):
        Decision.objects.filter(study=st).delete()
    assert Decision.objects.get(pk=d.pk).note == ""


def test_roles_and_access(rcc, client):
    """Every route: 404 for anonymous (login), team members, outsiders; each role
    only its pages; a member who joins a team loses access."""
    from shareval.platform.annotation.models import Member
    from shareval.platform.competitions.models import Membership
    st = make_study(rcc)
    u = rcc["users"]
    p = st.publications.filter(purpose="references").first()
    q = st.publications.filter(purpose="qualitative").first()
    pages = {"study": url(st), "work": url(st, "work"), "capture": url(st, "capture", p),
             "related": url(st, "related", p), "review": url(st, "review", p),
             "rank": url(st, "rank", q), "final": url(st, "final"),
             "results": url(st, "results"), "audit": url(st) + "audit.csv"}
    allowed = {"org": {"study", "work", "final", "results", "audit"},
               "coder": {"work", "capture"}, "judge1": {"work", "related", "rank"},
               "rev": {"work", "related", "review"}, "alice": set(), "outsider": set()}
    for who, ok in allowed.items():
        client.force_login(rcc["org"] if who == "org" else u[who])
        for name, path in pages.items():
            r = client.get(path)
            assert (r.status_code == 200) == (name in ok), (who, name, r.status_code)
    client.logout()
    assert client.get(url(st, "work")).status_code == 302          # to the login page
    with pytest.raises(Exception, match="in a team"):
        from shareval.platform.annotation import service
        service.add_member(st, rcc["org"], u["alice"], Member.JUDGE)
    Membership.objects.create(team=rcc["teams"]["Team A"], user=u["judge1"],
                              status=Membership.PENDING)
    client.force_login(u["judge1"])
    assert client.get(url(st, "work")).status_code == 404


def test_phase1_rankings_consensus_and_kendall_w(rcc, client):
    from shareval.platform.annotation import results, service
    st = make_study(rcc, qualitative=3)
    u = rcc["users"]
    for j in ("judge1", "judge2"):
        service.declare_topics(st, u[j], service.study_topics(st))
    pubs = list(st.publications.filter(purpose="qualitative"))
    # judge1 prefers Team A everywhere; judge2 too except on the first publication
    for k, p in enumerate(pubs):
        for j in ("judge1", "judge2"):
            systems = service.systems(p)
            best = "Team B" if (j == "judge2" and k == 0) else "Team A"
            data = {f"rank-{i}": "1" if s["team"] == best else "2" for i, s in enumerate(systems)}
            data.update({f"good-{i}": f"good {s['team']}" for i, s in enumerate(systems)})
            post(client, u[j], url(st, "rank", p), data)
    # a bad form keeps what was typed
    r = post(client, u["judge1"], url(st, "rank", pubs[0]),
             {"rank-0": "1", "rank-1": "1", "good-0": "KEEP-ME"})
    assert b"different rank" in r.content and b"KEEP-ME" in r.content
    # a third judge finds the publications ranked by their k = 2 judges already
    from django.contrib.auth import get_user_model
    j3 = get_user_model().objects.create_user("judge3", password="judge3-pass-123")
    service.add_member(st, rcc["org"], j3, "judge", service.study_topics(st))
    assert service.work_for(st, j3)["rank"] == []
    with pytest.raises(service.NotAllowed, match="already has its 2 rankings"):
        service.rank(pubs[0], j3, ["Team A", "Team B"], {})
    cons = results.consensus(st)
    rankings = [["Team A", "Team B"]] * 5 + [["Team B", "Team A"]]
    assert cons["order"] == r2.borda(rankings)[0] == ["Team A", "Team B"]
    assert cons["points"] == {"Team A": 5.0, "Team B": 1.0}
    # W over six raters of two teams, and W = 1 / 0 per publication
    assert cons["w"] == pytest.approx(r2.kendall_w(r2.ranks_table(rankings, ["Team A", "Team B"])))
    assert sorted(x["w"] for x in cons["publications"]) == pytest.approx([0.0, 1.0, 1.0])
    assert cons["kemeny"] == ["Team A", "Team B"]
    client.force_login(rcc["org"])
    page = client.get(url(st, "results"))
    assert b"Borda" in page.content and b"Kendall" in page.content


def test_cli_creates_a_study_with_members(rcc, tmp_path, capsys):
    import argparse

    from rich.console import Console

    from shareval.platform.annotation import cli
    from shareval.platform.annotation.models import Study
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "0.json").write_text(json.dumps({"abstract": "We use the survey data of the "
                                              "Bundesbank. " * 5, "reduced_content": ""}))
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["rcc-study", "rccdemo", "dev", "rcc", "--designer", "org",
                              "--per-topic", "10", "--coder", "coder", "--reviewer", "rev",
                              "--judge", "judge1:Finance", "--texts", str(texts),
                              "--qualitative", "2"])
    out = io.StringIO()
    assert cli.run(args, Console(file=out, width=200)) == 0
    assert re.search(r"Finance +titled \d+/5 +untitled \d+/4 +none 0/1", out.getvalue())
    assert "short: Finance: 1 none short" in out.getvalue()
    again = io.StringIO()
    assert cli.run(args, Console(file=again, width=200)) == 1          # the slug is taken
    assert "already has a study 'phase2'" in again.getvalue()
    st = Study.objects.get(slug="phase2")
    assert st.members.get(role="judge").topics == ["Finance"]
    p = st.publications.get(publication_id="0")
    assert "Bundesbank" in p.payload["opening"] and p.payload["passages"]


TEMPLATES = Path(__file__).resolve().parents[3] / "src/shareval/platform/annotation/templates"


def test_annotation_templates_are_csp_clean():
    files = list(TEMPLATES.rglob("*.html"))
    assert len(files) >= 8
    for t in files:
        text = t.read_text()
        for tag in re.findall(r"<(?:script|style)\b[^>]*>", text):
            assert 'nonce="{{ CSP_NONCE }}"' in tag, (t.name, tag)
        assert not re.search(r"\s(?:on[a-z]+|style)\s*=", text), t.name


def test_results_without_reviewed_publications_are_empty(rcc, client):
    from shareval.platform.annotation import results
    st = make_study(rcc)
    assert results.team_scores(st) == {}
    board = client.get(f"/api/competitions/{st.competition.slug}/leaderboard/dev/rcc/").json()
    assert all(h["measure"] != "related-to F1" for h in board["human"])
    assert math.isnan(results.consensus(st)["w"])


def test_saving_no_topic_area_is_refused_and_keeps_the_earlier_choice(rcc, client):
    """Unticking every box would silently leave the judge without work."""
    from shareval.platform.annotation.models import Member
    st = make_study(rcc)
    judge = rcc["users"]["judge1"]
    client.force_login(judge)
    r = client.post(url(st, "work"), {"topics": ["Finance"]}, follow=True)
    assert "Your topic areas are saved." in r.content.decode()
    r = client.post(url(st, "work"), {}, follow=True)
    page = r.content.decode()
    assert "Choose at least one topic area" in page and "are saved" not in page
    assert Member.objects.get(study=st, user=judge, role=Member.JUDGE).topics == ["Finance"]
