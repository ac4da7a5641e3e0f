"""The kbp-demo competition of `make demo` (platform/demo_kbp), built from Re-DocRED
in ../shared/data/kbp (skipped without it): runs with known errors judged by a
simulated crowd, estimates stored as scores and ranked by judged F1, the work left
to the demo's judge and annotator accounts."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from shareval.assessment.kbp_sim import Oracle, truth
from shareval.formats.errors import Problems
from shareval.formats.kbp import read_reference
from shareval.formats.kbp_runs import item_key, read_run


@pytest.fixture
def kbp(db, tmp_path, shared_data):
    from django.contrib.auth import get_user_model

    from shareval.platform.demo import ACCOUNTS
    from shareval.platform.demo_kbp import server
    kbp = shared_data / "kbp"
    if not (kbp / "re-docred-dev.json").is_file():
        pytest.skip(f"Re-DocRED is not in {kbp}")
    User = get_user_model()
    users = {n: User.objects.create_user(n, password="x", is_staff=o) for n, o, _ in ACCOUNTS}

    class Quiet:
        def print(self, *a, **k):
            pass
    built = server.build_competition(tmp_path, kbp, users, dt.datetime.now(dt.timezone.utc),
                                     Quiet())
    return {**built, "users": users, "home": tmp_path}


@pytest.mark.realdata
def test_the_kbp_demo_ranks_judged_runs_whose_truth_is_known(kbp, client):
    from shareval.platform.demo_kbp import bundle
    from shareval.platform.demo_kbp.server import JUDGE_ERROR
    from shareval.platform.judging.estimates import dataset_estimates
    comp = kbp["competition"]
    ds = comp.phases.get(slug=bundle.PHASE).datasets.get(slug=bundle.DATASET)
    board = client.get(f"/api/competitions/{comp.slug}/leaderboard/{bundle.PHASE}/"
                       f"{bundle.DATASET}/").json()
    rows = {r["team"]: r for r in board["rows"]}
    assert set(rows) == {"Team Alpha", "Team Beta", "Team Gamma"}
    ref = read_reference(kbp["home"] / bundle.SLUG / "reference", Problems())
    oracle = Oracle(ref)
    est = {row["team"]: row for row in dataset_estimates(ds).values()}
    for team, file in (("Team Alpha", "alpha.tsv"), ("Team Beta", "beta.tsv"),
                       ("Team Gamma", "gamma.tsv")):
        run = read_run(kbp["runs"][team], Problems(), ref)
        t = truth(ref, run.predictions)
        m = rows[team]["metrics"]
        # the automatic score is the truth; the judged estimate's interval is near it
        assert m["mention_precision"] == pytest.approx(t.precision)
        e = est[team]
        assert e["precision"] is not None and e["precision_low"] <= e["precision_high"]
        # the judges err: the estimate targets what they would say of every mention (a
        # mention counts when each chain question comes out right, each wrong with
        # JUDGE_ERROR), lower than the truth; the draws (seeded with the evaluation's id,
        # which PostgreSQL's sequences make vary between test orders) add +-0.05
        said = np.mean([np.prod([1 - JUDGE_ERROR if v else JUDGE_ERROR
                                 for v in oracle.questions(item_key(
                                     p.doc, p.subject, p.relation, p.object)).values()])
                        for p in run.predictions])
        assert said < t.precision and abs(e["precision"] - said) < 0.1, \
            (team, e["precision"], said, t.precision)
        assert e["recall"] is not None and 0 <= e["recall"] <= 1
    # the board ranks by judged F1: Alpha (fewer errors) above Beta
    order = [r["team"] for r in board["rows"]]
    assert order.index("Team Alpha") < order.index("Team Beta")
    assert all(r["metrics"].get("judged_f1") is not None for r in board["rows"])


@pytest.mark.realdata
def test_the_demo_leaves_work_to_its_judge_and_annotator_and_gamma_reused(kbp, client):
    from shareval.platform.judging.models import Draw
    precision, recall = kbp["campaigns"]
    client.force_login(kbp["users"]["judge"])
    assert "Relation mentions (precision)" in client.get("/work/").content.decode()
    client.force_login(kbp["users"]["annotator"])
    assert "Recall documents" in client.get("/work/").content.decode()
    gamma = Draw.objects.filter(evaluation__output__submission__team__name="Team Gamma")
    assert gamma.filter(reused=True).exists() and gamma.filter(reused=False).exists()
