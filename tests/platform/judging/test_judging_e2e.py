"""The MATERIAL E2E judging loop (docs/assessment.md, "Judging campaigns in the
server"): items from each team's primary E2E archive, judges who see no team,
system or document id, judgments exported per system, and each team's E2E AQWV
published from its own judgments, recomputed here by hand (plan section 4,
Equation 3) from the exported file."""
from __future__ import annotations

import datetime as dt
import io
import json
import re
import tarfile

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.utils import timezone

from shareval import examples
from shareval.platform.competitions.models import Membership, Team
from shareval.platform.competitions.reminders import send_due
from shareval.platform.judging import e2e_items, e2e_publish, results, service
from shareval.platform.judging.models import Campaign, Item
from shareval.platform.submissions import queue, runs
from shareval.platform.submissions import service as subs
from shareval.platform.submissions.models import Score, Submission

from ..factories import Upload

DOCS, RELEVANT = examples.DOCS, examples.RELEVANT        # the sample pack's collection
E2E_BETA = 59.9                                          # plan Table 1, 1A, E2E
# Y lines per team (query -> document indexes); every other line is N
ALPHA = ("ALPHA", "sysA", {"query1": [0, 2]})
BETA = ("BETA", "sysB", {"query1": [0, 2], "query3": [4]})
GAMMA = ("GAMMA", "sysG", {"query1": [0]})                  # a contrastive run only
WORDS = {"ALPHA": "red", "BETA": "blue", "GAMMA": "green"}  # each team's own summaries
# the judges' votes (judge 0, judge 1) per system, query and document: the two teams'
# summaries of query1 / document 0 are judged differently
VOTES = {("ALPHA.sysA", "query1", DOCS[0]): ("Y", "Y"),
         ("ALPHA.sysA", "query1", DOCS[2]): ("Y", "N"),
         ("BETA.sysB", "query1", DOCS[0]): ("N", "N"),
         ("BETA.sysB", "query1", DOCS[2]): ("N", "N"),
         ("BETA.sysB", "query3", DOCS[4]): ("Y", "Y")}


def png() -> bytes:
    from PIL import Image
    buf = io.BytesIO()
    Image.new("RGB", (1024, 200), "white").save(buf, format="PNG")
    return buf.getvalue()


def e2e_archive(team: str, label: str, ys: dict[str, list[int]]) -> bytes:
    """A checked E2E archive (plan 8.2.2): per query <Q>/<Q>.tsv, and per Y line its
    summary JSON (plan 7.2.4.3) and image."""
    files: dict[str, bytes] = {}
    for q in ("query1", "query2", "query3"):
        lines = []
        for j, doc in enumerate(DOCS):
            if j not in ys.get(q, []):
                lines.append(f"{doc}\tN\t0.1\t")
                continue
            base = f"{team}.{label}.{q}.{doc}"
            meta = {"team_id": team, "sys_label": label, "uuid":
                    "dc91049e-d934-40d7-a175-5af32cbabbca", "query_id": q, "document_id": doc,
                    "run_name": "run1", "run_date_time": "2018-03-27T13:51:00-05:00",
                    "image_filename": f"{base}.png",
                    "content_list": [f"{WORDS[team]} words about {q}", f"summary of {doc[-2:]}"]}
            files[f"{q}/{base}.json"] = json.dumps(meta).encode()
            files[f"{q}/{base}.png"] = png()
            lines.append(f"{doc}\tY\t0.9\t{base}.json")
        files[f"{q}/{q}.tsv"] = ("\n".join(lines) + "\n").encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def e2e(db, tmp_path):
    from shareval.platform.bundles.loader import load_bundle
    root = tmp_path / "bundle"
    examples._material(root)
    # the pack's own (older, 4-column) judgments: one verdict per (query, document) for
    # every system, what the runs are scored with until the campaign publishes
    (root / "material-pack" / "e2e" / "judgments.tsv").write_text(
        "query_id\tdoc_id\tjudge\trelevant\n" + "".join(
            f"{q}\t{DOCS[j]}\tpack\tN\n" for q, j in (("query1", 0), ("query1", 2),
                                                    ("query3", 4))))
    q = (root / "material-pack" / "queries.tsv").read_text().splitlines()
    (root / "material-pack" / "queries.tsv").write_text(
        "\n".join([q[0] + "\tinstructions"] + [f"{line}\tJudge {line.split()[0]} by the "
                                                f"summary" for line in q[1:]]) + "\n")
    now = timezone.now()
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "mat", "title": "MATERIAL E2E", "tasks": [{"slug": "e2e", "task": "material-e2e"}],
        "phases": [{"slug": "eval", "title": "Evaluation week",
                    "start": (now - dt.timedelta(days=2)).isoformat(),
                    "end": (now + dt.timedelta(days=1)).isoformat(),
                    "datasets": [{"slug": "e2e-1a", "task": "e2e",
                                  "reference": "material-pack"}]}]}))
    User = get_user_model()
    org = User.objects.create_user("org", password="x-pass-123", is_staff=True)
    comp, _ = load_bundle(root, org)
    ds = comp.phases.get().datasets.get()
    users, teams, primaries = {}, {}, {}
    for name, user, (tid, label, ys) in (("Alpha", "alice", ALPHA), ("Beta", "bob", BETA),
                                        ("Gamma", "carol", GAMMA)):
        users[user] = User.objects.create_user(user, password="x-pass-123")
        teams[name] = Team.objects.create(competition=comp, name=name, lead=users[user])
        Membership.objects.create(team=teams[name], user=users[user],
                                  status=Membership.APPROVED)
        primaries[name] = subs.submit(users[user], teams[name], ds,
                                      Upload(f"{label}.tgz", e2e_archive(tid, label, ys)),
                                      primary=name != "Gamma")
    queue.drain()
    for s in primaries.values():
        s.refresh_from_db()
        assert s.state == Submission.SCORED, s.events.last().log
    judges = [User.objects.create_user(f"judge{i}", password="x-pass-123") for i in range(2)]
    camp = Campaign.objects.create(dataset=ds, slug="e2e", title="E2E summaries",
                                   design=Campaign.RELEVANCE, judges_per_item=2,
                                   config={"gold_every": 0})
    camp.judges.set(judges)
    return {"comp": comp, "ds": ds, "org": org, "teams": teams, "runs": primaries,
            "judges": judges, "camp": camp}


def judge_all(camp, judges, votes=VOTES):
    """Each judge answers every item given to them, through the service."""
    for k, j in enumerate(judges):
        while (a := service.next_assignment(camp, j)) is not None:
            p = a.item.payload
            verdict = votes[(p["system"], p["query_id"], p["document_id"])][k]
            assert service.submit(a, {"relevant": verdict == "Y"})


def hand_aqwv(rows: list[dict], system: str, raw: bool = False) -> float:
    """E2E AQWV from the judgments file's rows of ``system``, by the plan's equations:
    a retrieved document's credit is 1 when the strict majority of its judges say
    relevant (raw: the share saying so); X1 = credit on relevant documents, X3 on
    non-relevant ones; P_miss = 1 - X1 / N_rel (queries with relevant documents),
    P_FA = X3 / (N_total - N_rel) (all queries); AQWV = 1 - (mean P_miss + beta mean P_FA)."""
    votes: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        if r["system"] == system:
            votes.setdefault((r["query_id"], r["doc_id"]), []).append(r["relevant"] == "Y")
    misses, fas = [], []
    for q, rel in RELEVANT.items():
        x1 = x3 = 0.0
        for (qq, doc), v in votes.items():
            if qq != q:
                continue
            share = sum(v) / len(v)
            credit = share if raw else float(share > 0.5)
            if DOCS.index(doc) in rel:
                x1 += credit
            else:
                x3 += credit
        if rel:
            misses.append(1 - x1 / len(rel))
        fas.append(x3 / (len(DOCS) - len(rel)))
    return 1 - (sum(misses) / len(misses) + E2E_BETA * sum(fas) / len(fas))


def read_rows(text: str) -> list[dict]:
    head, *lines = text.splitlines()
    return [dict(zip(head.split("\t"), line.split("\t"))) for line in lines]


def test_two_teams_judged_apart_get_each_its_own_published_e2e_aqwv(e2e, client, settings):
    camp, runs_ = e2e["camp"], e2e["runs"]
    built = e2e_items.build_from_primaries(camp)
    assert built.added == 5 and sorted(built.teams) == ["Alpha", "Beta"]
    assert built.skipped == {"Gamma": "no primary run"}
    judge_all(camp, e2e["judges"])
    client.force_login(e2e["org"])
    resp = client.get(f"/c/mat/organize/campaigns/{camp.pk}/e2e-judgments.tsv")
    text = resp.content.decode()
    assert text == results.e2e_judgments(camp)
    assert text.splitlines()[0] == "query_id\tdoc_id\tsystem\tjudge\trelevant"
    rows = read_rows(text)
    assert len(rows) == 10 and {r["judge"] for r in rows} == {"judge0", "judge1"}
    assert {(r["system"], r["query_id"], r["doc_id"]): r["relevant"] for r in rows
            if r["judge"] == "judge0"} == {k: v[0] for k, v in VOTES.items()}

    before = {t: s.current_score.pk for t, s in runs_.items()}
    done = e2e_publish.publish(camp, "org")
    assert sorted(done.scored) == ["Alpha", "Beta"] and not done.failed
    # the file the server scored with is the exported one, kept under PRIVATE_DIR
    from pathlib import Path
    assert (Path(settings.PRIVATE_DIR) / done.file).read_text() == text
    for team, system in (("Alpha", "ALPHA.sysA"), ("Beta", "BETA.sysB")):
        sub = Submission.objects.get(pk=runs_[team].pk)
        score = sub.current_score
        assert score.pk != before[team] and Score.objects.filter(pk=before[team]).exists()
        assert score.primary == pytest.approx(hand_aqwv(rows, system))
        assert score.result["metrics"]["aqwv_raw"] == pytest.approx(
            hand_aqwv(rows, system, raw=True))
        assert score.result["conventions"]["official"] not in score.result["warnings"]
        assert score.result["conventions"]["official"] == (
            "E2E AQWV from %d judgments (strict majority of 2 judges) of campaign 'E2E "
            "summaries'; aqwv_raw counts the judges' raw votes" % (
                sum(r["system"] == system for r in rows)))
        page = client.get(f"/s/{sub.pk}/").content.decode()
        assert 'id="official-score">E2E AQWV from' in page and "strict majority of 2" in page
    # the worked example: Alpha's query1 summary of DOCS[0] convinced both judges, Beta's
    # did not; Alpha's DOCS[2] split 1:1 (no majority: no false alarm, raw: half of one)
    alpha = Submission.objects.get(pk=runs_["Alpha"].pk).current_score
    beta = Submission.objects.get(pk=runs_["Beta"].pk).current_score
    assert alpha.primary == pytest.approx(1 - (0.5 + 1.0) / 2)                # 0.25
    assert alpha.result["metrics"]["aqwv_raw"] == pytest.approx(
        1 - ((0.5 + 1.0) / 2 + E2E_BETA * (0.5 / 4) / 3))
    assert beta.primary == pytest.approx(1 - (1.0 + 0.0) / 2)                 # 0.5
    # judged as Alpha's was, Beta's summary would have found 1 of query1's 2 documents
    same = [dict(r, relevant="Y") if (r["system"], r["doc_id"]) == ("BETA.sysB", DOCS[0])
            else r for r in rows]
    assert hand_aqwv(same, "BETA.sysB") == pytest.approx(1 - (0.5 + 0.0) / 2)    # 0.75


def test_publishing_the_same_judgments_twice_stores_nothing_new(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    judge_all(camp, e2e["judges"])
    e2e_publish.publish(camp, "org")
    n = Score.objects.count()
    again = e2e_publish.publish(camp, "org")
    assert sorted(again.unchanged) == ["Alpha", "Beta"] and not again.scored
    assert Score.objects.count() == n


def test_building_again_adds_nothing_and_names_the_team_without_a_primary(e2e):
    camp = e2e["camp"]
    first = e2e_items.build_from_primaries(camp)
    keys = set(camp.items.values_list("key", flat=True))
    assert keys == {f"{e2e['teams'][t].pk}|{s}|{q}|{d}" for (s, q, d) in VOTES
                    for t in ("Alpha", "Beta") if s.startswith(t.upper())}
    second = e2e_items.build_from_primaries(camp)
    assert first.added == 5 and second.added == 0 and second.teams == []
    assert set(camp.items.values_list("key", flat=True)) == keys
    assert e2e_items.report(second) == ["0 items added from the primary runs of no team",
                                        "skipped Gamma: no primary run"]


def test_items_carry_the_query_summary_image_and_instructions(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    item = camp.items.get(key__contains="|BETA.sysB|query3|")
    p = item.payload
    assert p["query"] == "music" and p["domain"] == "Lifestyle"
    assert p["summary"] == ["blue words about query3", f"summary of {DOCS[4][-2:]}"]
    assert p["instructions"] == "Judge query3 by the summary"       # queries.tsv's column
    assert p["image"].startswith("data:image/png;base64,")
    assert item.doc == DOCS[4] and item.submissions == ["Beta"]


def _ctx(html: str) -> dict:
    m = re.search(r'<script id="ctx" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def test_judges_see_no_team_system_or_document_id(e2e, client):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    judge = e2e["judges"][0]
    client.force_login(judge)
    seen = 0
    while True:
        client.post(f"/judging/{camp.pk}/")
        a = service.open_assignment(camp, judge)
        if a is None:
            break
        html = client.get(f"/judging/{camp.pk}/").content.decode()
        p = a.item.payload
        assert p["summary"][1] in html and p["instructions"] in html     # what they judge
        for secret in (p["team"], p["team"].upper(), p["system"], p["document_id"],
                       str(a.item.key), "sysA", "sysB"):
            assert secret not in html
        assert set(_ctx(html)) == {"text", "doc_url", "view", "instructions", "query", "image",
                                   "summary"}
        assert service.submit(a, {"relevant": True})
        seen += 1
    assert seen == 5


def test_publishing_an_incomplete_campaign_needs_a_reason(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    scores = Score.objects.count()
    with pytest.raises(e2e_publish.PublishError, match="5 of 5 items do not have their 2 "
                                                       "judgments yet"):
        e2e_publish.publish(camp, "org")
    assert Score.objects.count() == scores
    # forced with only judge 0's answers: every retrieved document has a judgment
    judge_all(camp, e2e["judges"][:1])
    done = e2e_publish.publish(camp, "org", force="judge1 left the project")
    assert sorted(done.scored) == ["Alpha", "Beta"]
    assert camp.config["published"]["forced"] == "judge1 left the project"
    sub = Submission.objects.get(pk=e2e["runs"]["Beta"].pk)
    assert "forced: judge1 left the project" in sub.events.filter(state="scored").last().log


def test_a_run_with_unjudged_summaries_gets_the_scorers_error_and_nothing_stored(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    # only Alpha's summaries are judged; Beta's have no judgment at all
    for j in e2e["judges"]:
        while (a := service.next_assignment(camp, j)) is not None:
            if a.item.payload["system"] == "ALPHA.sysA":
                service.submit(a, {"relevant": True})
            else:
                a.status = "expired"
                a.save()
    beta = Submission.objects.get(pk=e2e["runs"]["Beta"].pk)
    before = beta.current_score.pk
    done = e2e_publish.publish(camp, "org", force="Beta's judges did not finish")
    assert list(done.scored) == ["Alpha"]
    assert "no judgment for system BETA.sysB" in done.failed["Beta"]
    beta.refresh_from_db()
    assert beta.current_score.pk == before and beta.score_options == {}


def test_a_system_that_submitted_no_judged_run_is_refused_and_nothing_changes(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    # an item of a system with no primary run in the campaign (loaded by hand)
    Item.objects.create(campaign=camp, key="x|ZED.sysZ|query1|" + DOCS[1], doc=DOCS[1],
                        payload={"query": "ebola", "summary": ["w"], "query_id": "query1",
                                 "document_id": DOCS[1], "system": "ZED.sysZ"})
    votes = {**VOTES, ("ZED.sysZ", "query1", DOCS[1]): ("Y", "Y")}
    judge_all(camp, e2e["judges"], votes)
    scores = list(Score.objects.values_list("pk", "current"))
    with pytest.raises(e2e_publish.PublishError) as e:
        e2e_publish.publish(camp, "org")
    assert str(e.value) == ("system 'ZED.sysZ' did not submit a primary run judged in this "
                            "campaign (each team's E2E AQWV comes from its own system's "
                            "judgments); nothing was published")
    assert list(Score.objects.values_list("pk", "current")) == scores
    assert "published" not in Campaign.objects.get(pk=camp.pk).config
    assert all(not s.score_options for s in Submission.objects.all())


def test_later_re_scores_keep_the_published_judgments(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    judge_all(camp, e2e["judges"])
    e2e_publish.publish(camp, "org")
    alpha = Submission.objects.get(pk=e2e["runs"]["Alpha"].pk)
    published = alpha.current_score
    # a dataset-wide re-score finds the judged scoring done and queues nothing for it
    assert subs.rescore(e2e["ds"].task) == 0
    # the organizer's re-score of the run scores it again from the same judgments
    runs.rescore(alpha, e2e["org"])
    assert queue.drain() == 1
    alpha.refresh_from_db()
    again = alpha.current_score
    assert again.pk != published.pk
    assert (again.reference_digest, again.primary) == (published.reference_digest,
                                                       published.primary)
    assert again.reference_digest.startswith(e2e["ds"].reference_digest + "+j")
    assert again.result["conventions"]["official"] == published.result["conventions"]["official"]


def test_send_reminders_builds_a_due_campaign_once_after_the_phase_end(e2e):
    ds = e2e["ds"]
    camp = service.create_campaign(ds, "After the week", Campaign.RELEVANCE, 3, 30,
                                   {"build": "primary-e2e"}, e2e["judges"])
    assert camp.items.count() == 0                     # the week is still open
    assert "campaigns_built" not in send_due()
    ph = ds.phase
    ph.end = timezone.now() - dt.timedelta(minutes=1)
    ph.save()
    n = send_due()
    assert n["campaigns_built"] == 1
    assert camp.items.count() == 5
    assert "campaign 'After the week': skipped Gamma: no primary run" in n["lines"]
    assert "campaigns_built" not in send_due()          # once
    assert camp.items.count() == 5


def test_the_organizers_buttons_build_and_publish(e2e, client):
    camp = e2e["camp"]
    client.force_login(e2e["org"])
    page = client.get(f"/c/mat/organize/campaigns/{camp.pk}/").content.decode()
    assert "Build from primary E2E runs" in page and "Score E2E from judgments" in page
    resp = client.post(f"/c/mat/organize/campaigns/{camp.pk}/build-e2e/", follow=True)
    text = resp.content.decode()
    assert "5 items added from the primary runs of Alpha, Beta" in text
    assert "skipped Gamma: no primary run" in text
    resp = client.post(f"/c/mat/organize/campaigns/{camp.pk}/publish-e2e/", follow=True)
    assert "Not published: 5 of 5 items do not have their 2 judgments yet" in \
        resp.content.decode()
    judge_all(camp, e2e["judges"])
    resp = client.post(f"/c/mat/organize/campaigns/{camp.pk}/publish-e2e/", follow=True)
    text = resp.content.decode()
    assert "Alpha: E2E AQWV 0.25 from its judgments" in text
    assert "Beta: E2E AQWV 0.5 from its judgments" in text
    # when, in the competition's zone to the minute (not an ISO stamp with microseconds)
    stamp = re.search(r'Last published <span id="published-at">([^<]*)</span>', text).group(1)
    at = dt.datetime.fromisoformat(camp.__class__.objects.get(pk=camp.pk)
                                   .config["published"]["at"])
    tz = camp.dataset.phase.competition.tz
    assert stamp == at.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")
    # a judge (or a team member) may not press them
    client.force_login(e2e["judges"][0])
    assert client.post(f"/c/mat/organize/campaigns/{camp.pk}/publish-e2e/").status_code in \
        (403, 404)


def test_the_command_line_builds_exports_and_publishes(e2e, tmp_path, capsys):
    import argparse

    from rich.console import Console

    from shareval.platform.judging import cli
    console = Console(width=200)

    def run(action, **kw):
        args = argparse.Namespace(action=action, competition="mat", campaign="e2e",
                                  **{"out": None, "force": "", **kw})
        code = cli.run(args, console)
        return code, capsys.readouterr().out

    code, out = run("build")
    assert code == 0 and "5 items added from the primary runs of Alpha, Beta" in out
    code, out = run("publish")
    assert code == 2 and "5 of 5 items do not have their 2 judgments yet" in out
    judge_all(e2e["camp"], e2e["judges"])
    code, out = run("export", out=str(tmp_path / "j.tsv"))
    assert code == 0 and (tmp_path / "j.tsv").read_text() == \
        results.e2e_judgments(e2e["camp"])
    code, out = run("publish")
    assert code == 0 and "Alpha: E2E AQWV 0.25" in out and "Beta: E2E AQWV 0.5" in out


def test_export_rows_adjudications_gold_and_the_campaigns_threshold(e2e):
    camp = e2e["camp"]
    e2e_items.build_from_primaries(camp)
    judge_all(camp, e2e["judges"])
    split = camp.items.get(key__contains="|ALPHA.sysA|query1|" + DOCS[2])   # judged Y, N
    service.adjudicate(split, e2e["org"], {"relevant": False}, "the summary is off topic")
    Item.objects.create(campaign=camp, key="gold-1", doc=DOCS[3], gold={"relevant": True},
                        payload={"query": "ebola", "summary": ["w"], "query_id": "query1",
                                 "document_id": DOCS[3], "system": "ALPHA.sysA"})
    rows = read_rows(results.e2e_judgments(camp))
    assert [r for r in rows if r["doc_id"] == DOCS[2] and r["system"] == "ALPHA.sysA"] == [
        {"query_id": "query1", "doc_id": DOCS[2], "system": "ALPHA.sysA",
         "judge": "adjudication:org", "relevant": "N"}]
    assert DOCS[3] not in {r["doc_id"] for r in rows}              # gold items left out
    assert len(rows) == 9


def test_the_campaigns_judge_threshold_is_the_binary_rule(e2e):
    camp = e2e["camp"]
    camp.config = {**camp.config, "judge_threshold": 0.4}
    camp.save()
    e2e_items.build_from_primaries(camp)
    judge_all(camp, e2e["judges"])
    e2e_publish.publish(camp, "org")
    rows = read_rows(results.e2e_judgments(camp))
    alpha = Submission.objects.get(pk=e2e["runs"]["Alpha"].pk).current_score
    # Alpha's DOCS[2] (1 of 2 judges) now counts: a false alarm, 1 of 4 non-relevant
    assert alpha.primary == pytest.approx(1 - ((0.5 + 1.0) / 2 + E2E_BETA * (1 / 4) / 3))
    assert alpha.primary != pytest.approx(hand_aqwv(rows, "ALPHA.sysA"))   # 0.5 would not
    assert "relevant when more than 0.4 of 2 judges say so" in \
        alpha.result["conventions"]["official"]


def test_a_team_claiming_another_teams_system_is_skipped(e2e):
    from shareval.platform.submissions import service as subs_service
    g = e2e["runs"]["Gamma"]
    fake = subs_service.submit(g.user, e2e["teams"]["Gamma"], e2e["ds"],
                               Upload("sysG2.tgz", e2e_archive("ALPHA", "sysA", {"query1": [0]})),
                               primary=True)
    queue.drain()
    fake.refresh_from_db()
    assert fake.state == Submission.SCORED
    camp = e2e["camp"]
    built = e2e_items.build_from_primaries(camp)
    # neither claimant is built, whichever name sorts first: the organizer decides
    assert built.teams == ["Beta"]
    why = " (a system is one team's: disqualify the impostor's primary, then build again)"
    assert built.skipped == {"Gamma": "system ALPHA.sysA is also claimed by Alpha" + why,
                             "Alpha": "system ALPHA.sysA is also claimed by Gamma" + why}
    assert not camp.items.filter(key__startswith=f"{e2e['teams']['Gamma'].pk}|").exists()
    fake.disqualified = "claimed another team's system"
    fake.save(update_fields=["disqualified"])
    again = e2e_items.build_from_primaries(camp)
    assert again.teams == ["Alpha"] and "Gamma" in again.skipped


def test_instructions_come_from_queries_tsv_else_the_campaign(e2e, client):
    camp = e2e["camp"]
    ds = e2e["ds"]
    pack = ds.task.registry_task.load_reference(str(ds.reference_file))
    assert e2e_items.instructions_for(camp, pack, "query2") == "Judge query2 by the summary"
    for q in ("query2", "query3"):
        pack.queries[q].attributes.pop("instructions")
    camp.config = {"instructions": {"query2": "Names count as relevant."}}
    assert e2e_items.instructions_for(camp, pack, "query2") == "Names count as relevant."
    assert e2e_items.instructions_for(camp, pack, "query3") == ""
    assert e2e_items.instructions_for(camp, pack, "query1") == "Judge query1 by the summary"
    camp.config = {"instructions": "Read the whole summary."}
    assert e2e_items.instructions_for(camp, pack, "query2") == "Read the whole summary."
    # one campaign text is shown once, not again as the item's
    camp.save()
    Item.objects.create(campaign=camp, key="k", doc=DOCS[0], payload={
        "query": "ebola", "summary": ["w"], "instructions": "Read the whole summary."})
    client.force_login(e2e["judges"][0])
    client.post(f"/judging/{camp.pk}/")
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    assert html.count("Read the whole summary.") == 1 and 'id="item-instructions"' not in html
