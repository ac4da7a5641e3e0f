"""Combined boards (leaderboards/combined.py): each team's primary run per dataset,
combined by mean and by mean rank (recomputed here by hand and with scipy), a team
missing a dataset gets no value and a note, ties share a rank; a board never shows a
viewer more than its datasets' boards do; the results page shows it."""
from __future__ import annotations

import pytest
import yaml
from scipy.stats import rankdata

from shareval.platform.bundles.loader import load_bundle
from shareval.platform.competitions.models import Membership, Phase, Team
from shareval.platform.leaderboards.combined import average_ranks, combined_boards
from shareval.platform.submissions.queue import drain

from ..factories import make_bundle, submit

COLUMNS = [{"metric": "accuracy", "combine": "mean_rank", "label": "Mean rank"},
           {"metric": "accuracy", "combine": "mean", "label": "Mean accuracy"}]


def _bundle(tmp_path, split=None):
    root = make_bundle(tmp_path / "bundle", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    for ph, gold in ((doc["phases"][0], "gold-dev.tsv"), (doc["phases"][1], "gold-eval.tsv")):
        slug = ph["datasets"][0]["slug"]
        ph["datasets"].append({"slug": f"{slug}-b", "task": "labels", "reference": gold,
                               "board": {"team_visibility": True}, **(split or {})})
        ph["boards"] = [
            {"slug": "both", "title": "Both packs", "datasets": [slug, f"{slug}-b"],
             "columns": COLUMNS},
            {"slug": "by-mean", "title": "By mean", "datasets": [slug, f"{slug}-b"],
             "columns": [COLUMNS[1], {"metric": "no_such_metric", "combine": "mean"}]}]
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


@pytest.fixture
def world(db, tmp_path):
    return _world(tmp_path)


def _world(tmp_path, split=None):
    from django.contrib.auth import get_user_model
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    users = {n: User.objects.create_user(n, password=f"{n}-pass-123")
             for n in ("alice", "bob", "carol", "dave", "erin")}
    comp, _ = load_bundle(_bundle(tmp_path, split), org)
    teams = {}
    for name, lead in (("Team A", "alice"), ("Team B", "bob"), ("Team C", "carol"),
                       ("Team D", "dave")):
        t = Team.objects.create(competition=comp, name=name, lead=users[lead])
        Membership.objects.create(team=t, user=users[lead], status=Membership.APPROVED)
        teams[name] = t
    ds = {d.slug: d for d in comp.phases.get(slug="dev").datasets.all()}
    ds.update({d.slug: d for d in comp.phases.get(slug="eval").datasets.all()})
    return {"comp": comp, "org": org, "users": users, "teams": teams, "ds": ds}


# correct of 20 items per (team, dataset): accuracy = correct / 20
DEV = {("Team A", "dev"): 16, ("Team A", "dev-b"): 10,
       ("Team B", "dev"): 12, ("Team B", "dev-b"): 18,
       ("Team C", "dev"): 12, ("Team C", "dev-b"): 14,
       ("Team D", "dev"): 20}                          # Team D: nothing on dev-b


def _runs(w, runs, lead=None):
    lead = lead or {"Team A": "alice", "Team B": "bob", "Team C": "carol", "Team D": "dave"}
    for (team, d), correct in runs.items():
        submit(w, lead[team], team, d, correct, primary=True)
        submit(w, lead[team], team, d, 20)            # contrastive and perfect: never read
    drain()


def _board(boards, slug):
    return next(b for b in boards if b["slug"] == slug)


def test_mean_and_mean_rank_recomputed_by_hand(world):
    _runs(world, DEV)
    b = _board(combined_boards(world["comp"].phases.get(slug="dev")), "both")
    assert b["columns"] == [{"key": "mean_rank:accuracy", "label": "Mean rank"},
                            {"key": "mean:accuracy", "label": "Mean accuracy"}]
    got = {r["team"]: r for r in b["rows"]}
    # dev: D 1.0 (rank 1), A 0.8 (2), B 0.6 and C 0.6 (tied: 3.5 each)
    # dev-b: B 0.9 (1), C 0.7 (2), A 0.5 (3); D has no primary there
    assert got["Team A"]["values"] == pytest.approx({"mean_rank:accuracy": (2 + 3) / 2,
                                                     "mean:accuracy": (0.8 + 0.5) / 2})
    assert got["Team B"]["values"] == pytest.approx({"mean_rank:accuracy": (3.5 + 1) / 2,
                                                     "mean:accuracy": (0.6 + 0.9) / 2})
    assert got["Team C"]["values"] == pytest.approx({"mean_rank:accuracy": (3.5 + 2) / 2,
                                                     "mean:accuracy": (0.6 + 0.7) / 2})
    assert got["Team D"]["values"] == {"mean_rank:accuracy": None, "mean:accuracy": None}
    assert got["Team D"]["notes"] == ["no scored primary run on dev-b"]
    assert got["Team D"]["per_dataset"] == {"dev": {"accuracy": 1.0}, "dev-b": None}
    # ranked by the first column (a mean rank: lower first); no value, no rank, last
    assert [(r["team"], r["rank"]) for r in b["rows"]] == \
        [("Team B", 1), ("Team A", 2), ("Team C", 3), ("Team D", None)]
    assert any("Mean rank:" in n for n in b["notes"])
    # by mean: A 0.65 and C 0.65 tie (0.8 + 0.5 and 0.6 + 0.7 differ in the last bit)
    m = _board(combined_boards(world["comp"].phases.get(slug="dev")), "by-mean")
    assert [(r["team"], r["rank"]) for r in m["rows"]] == \
        [("Team B", 1), ("Team A", 2), ("Team C", 2), ("Team D", None)]
    # a metric no run has: no values, a note on each row and on the board
    assert all(r["values"]["mean:no_such_metric"] is None for r in m["rows"])
    assert "no value of no_such_metric on dev" in m["rows"][0]["notes"]
    assert any("no_such_metric" in n for n in m["notes"])


def test_mean_rank_agrees_with_scipy_average_ranks():
    scores = {"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.1, "e": 0.9, "f": 0.5}
    keys = sorted(scores)
    ours = average_ranks({k: -scores[k] for k in keys})          # higher is better
    theirs = rankdata([-scores[k] for k in keys], method="average")
    assert [ours[k] for k in keys] == list(theirs)
    assert ours == {"b": 1.5, "e": 1.5, "a": 4.0, "c": 4.0, "f": 4.0, "d": 6.0}


def _eval_runs(w):
    _runs(w, {("Team A", "eval"): 16, ("Team A", "eval-b"): 10,
              ("Team B", "eval"): 12, ("Team B", "eval-b"): 18})


def _values(boards):
    return {r["team"]: r["values"] for b in boards for r in b["rows"]}


def test_never_more_than_the_datasets_boards_show(world, client):
    """Blind phase before release: participants and the public see no value; hidden
    leaderboard: nothing; one dataset without feedback hides the whole board; a
    primary its team took off the board is not read for others."""
    w = world
    _eval_runs(w)
    phase = w["comp"].phases.get(slug="eval")
    alice, erin = w["users"]["alice"], w["users"]["erin"]
    for viewer in (alice, erin):
        boards = combined_boards(phase, viewer)
        assert [b["shown"] for b in boards] == [False, False]
        assert all(b["rows"] == [] for b in boards) and "release" in boards[0]["notes"][-1]
    assert _values(combined_boards(phase, w["org"]))["Team A"]["mean:accuracy"] == \
        pytest.approx(0.65)
    url = "/c/tiny/results/eval/"
    client.force_login(alice)
    body = client.get(url).content.decode()
    assert "Both packs" in body and "0.6500" not in body and "Team B" not in body
    phase.released = Phase.TOP
    phase.save()
    assert _values(combined_boards(phase, erin))["Team A"]["mean:accuracy"] == \
        pytest.approx(0.65)
    phase.leaderboard_public = False                 # hidden leaderboard: nothing at all
    phase.save()
    assert combined_boards(phase, alice) == []
    assert client.get(url).status_code == 404
    assert len(combined_boards(phase, w["org"])) == 2

    # a non-blind phase: one dataset without feedback hides the board from participants
    _runs(w, {k: v for k, v in DEV.items() if k[0] != "Team D"})
    dev = w["comp"].phases.get(slug="dev")
    assert all(b["shown"] for b in combined_boards(dev, erin))
    devb = w["ds"]["dev-b"]
    devb.feedback = False
    devb.save()
    assert [b["shown"] for b in combined_boards(dev, erin)] == [False, False]
    assert [b["shown"] for b in combined_boards(dev, w["org"])] == [True, True]
    devb.feedback = True
    devb.save()

    # Team B takes its dev-b primary off the board (team_visibility): others no longer
    # see a combined value for Team B; the organizers still do
    from shareval.platform.submissions.models import Submission
    Submission.objects.filter(team=w["teams"]["Team B"], dataset=devb,
                              kind=Submission.PRIMARY).update(on_board=False)
    seen = {r["team"]: r for r in _board(combined_boards(dev, erin), "both")["rows"]}
    assert seen["Team B"]["values"]["mean:accuracy"] is None
    assert seen["Team B"]["notes"] == ["no scored primary run on dev-b"]
    org = {r["team"]: r for r in _board(combined_boards(dev, w["org"]), "both")["rows"]}
    assert org["Team B"]["values"]["mean:accuracy"] == pytest.approx(0.75)


def test_the_results_page_shows_the_boards(world, client):
    _runs(world, DEV)
    body = client.get("/c/tiny/results/dev/").content.decode()
    assert 'id="board-both"' in body and "Both packs" in body and "Mean rank" in body
    both = body.split('id="board-both"')[1].split('id="board-by-mean"')[0]
    rows = [r for r in both.split("<tr")[2:]]
    assert "Team B" in rows[0] and "2.2500" in rows[0] and "0.7500" in rows[0]
    assert "Team D" in rows[3] and "no scored primary run on dev-b" in rows[3]
    assert "–" in rows[3]


def test_a_split_dataset_counts_with_the_part_its_board_shows(db, tmp_path):
    """Before the phase's results are released everyone's board shows the public part
    of dev-b (and so does the combined board); after it, the private part."""
    from shareval.platform.submissions.models import Score, Submission
    w = _world(tmp_path, {"split": {"fraction": 0.5, "seed": 3}})
    _runs(w, {k: v for k, v in DEV.items() if k[0] != "Team D"})
    dev = w["comp"].phases.get(slug="dev")

    def part(field):
        s = Score.objects.get(current=True, submission__team=w["teams"]["Team A"],
                              submission__dataset=w["ds"]["dev-b"],
                              submission__kind=Submission.PRIMARY)
        return getattr(s, field)["metrics"]["accuracy"]

    public, private = part("result"), part("private_result")
    assert public != private
    for viewer in (w["users"]["erin"], w["org"], None):
        b = _board(combined_boards(dev, viewer), "both")
        a = next(r for r in b["rows"] if r["team"] == "Team A")
        assert a["per_dataset"]["dev-b"]["accuracy"] == pytest.approx(public)
        assert a["values"]["mean:accuracy"] == pytest.approx((0.8 + public) / 2)
        assert "dev-b: the public part of the reference." in b["notes"]
    dev.released = Phase.TOP
    dev.save()
    b = _board(combined_boards(dev, w["users"]["erin"]), "both")
    a = next(r for r in b["rows"] if r["team"] == "Team A")
    assert a["values"]["mean:accuracy"] == pytest.approx((0.8 + private) / 2)
    assert "dev-b: the private part of the reference." in b["notes"]
