"""A small competition built straight in the database, for the rule tests that
``bench/mutate.py`` runs once per mutant (``access/test_access_rules.py``,
``leaderboards/test_leaderboard_rules.py``, ``submissions/test_service_rules.py``).

The ``world`` fixture of conftest.py (``factories.make_world``) loads a bundle and scores a baseline
(about 3 s a test on a busy machine); this one makes the same shape of
competition with a handful of inserts: an open ``dev`` phase and a blind
``eval`` phase, far from the real clock (2001), an organizer, teams A
(alice, carol) and B (bob), a baseline team, and ``dave`` in no team. Runs and
scores are rows (:func:`scored`), so a leaderboard test controls every score,
timestamp and state exactly.
"""
from __future__ import annotations

import datetime as dt

import pytest

T0 = dt.datetime(2001, 1, 15, 12, tzinfo=dt.timezone.utc)   # "now" inside both phases
H = dt.timedelta(hours=1)


def build() -> dict:
    from django.contrib.auth import get_user_model

    from shareval.platform.competitions.models import (Competition, CompetitionTask, Dataset,
                                                       Membership, Phase, Quota, Team)
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    users = {n: User.objects.create_user(n, password=f"{n}-pass-123")
             for n in ("alice", "bob", "carol", "dave")}
    comp = Competition.objects.create(slug="rules", title="Rules", time_zone="Europe/Berlin")
    comp.organizers.add(org)
    task = CompetitionTask.objects.create(competition=comp, slug="labels",
                                          task_name="classification",
                                          primary_metric="accuracy")
    dev = Phase.objects.create(competition=comp, slug="dev", title="Development",
                               start=T0 - 10 * 24 * H, end=T0 + 30 * 24 * H)
    ev = Phase.objects.create(competition=comp, slug="eval", title="Evaluation", blind=True,
                              start=T0 - 24 * H, end=T0 + 7 * 24 * H)
    ds = {"dev": Dataset.objects.create(phase=dev, task=task, slug="dev"),
          "eval": Dataset.objects.create(phase=ev, task=task, slug="eval")}
    Quota.objects.create(dataset=ds["dev"], limit=200, window=Quota.WEEK)
    Quota.objects.create(dataset=ds["eval"], limit=5, window=Quota.PHASE)
    teams = {}
    for name, members in (("Team A", ["alice", "carol"]), ("Team B", ["bob"])):
        t = Team.objects.create(competition=comp, name=name, lead=users[members[0]])
        for m in members:
            Membership.objects.create(team=t, user=users[m], status=Membership.APPROVED)
        teams[name] = t
    teams["Baseline"] = Team.objects.create(competition=comp, name="Baseline", lead=org,
                                            is_baseline=True)
    return {"comp": comp, "org": org, "users": users, "teams": teams, "ds": ds,
            "task": task, "now": T0}


@pytest.fixture
def rw(db, settings, tmp_path):
    """The world, with an upload folder of the test's own: ``bench/mutate.py`` runs two
    mutants at once from one folder, and a test that checks which files an upload left
    behind must not see the other mutant's files (they turned survivors into kills)."""
    settings.UPLOAD_DIR = tmp_path / "uploads"
    return build()


def team(w, name: str, *members: str):
    """One more approved team (its pk is above the others': a name sorting first
    then tells an order by name from an order by creation)."""
    from shareval.platform.competitions.models import Membership, Team
    t = Team.objects.create(competition=w["comp"], name=name,
                            lead=w["users"][members[0]] if members else w["org"])
    for m in members:
        Membership.objects.create(team=t, user=w["users"][m], status=Membership.APPROVED)
    w["teams"][name] = t
    return t


def scored(w, team: str, ds: str, primary, at, *, kind: str = "contrastive",
           state: str = "scored", metrics: dict | None = None, private=None,
           private_metrics: dict | None = None, current: bool = True, **sub):
    """A run of ``team`` on ``ds`` created ``at`` with a score whose primary metric
    (accuracy here) is ``primary``; ``metrics`` adds or replaces metric values."""
    from shareval.platform.submissions.models import Score, Submission
    s = Submission.objects.create(team=w["teams"][team], dataset=w["ds"][ds], state=state,
                                  kind=kind, created=at, original_name=f"{team}.tsv",
                                  stored_name="", **sub)
    m = {"accuracy": primary, **(metrics or {})}
    Score.objects.create(submission=s, scorer_version="v1", reference_digest="d",
                         result={"metrics": m}, primary=primary, current=current,
                         private_primary=private,
                         private_result={"metrics": {"accuracy": private,
                                                     **(private_metrics or {})}})
    return s


def run(w, team: str, ds: str, at, state: str = "validated", kind: str = "contrastive"):
    """A run without a score (queued, failed, cancelled, rejected ...)."""
    from shareval.platform.submissions.models import Submission
    return Submission.objects.create(team=w["teams"][team], dataset=w["ds"][ds], state=state,
                                     kind=kind, created=at, original_name=f"{team}.tsv",
                                     stored_name="")
