"""Code submissions count against a run group's quota over all its datasets, as
uploaded files do, and refuse a primary where the group allows none (the check
runs before the sandbox is asked for, so no sandbox is needed here)."""
from __future__ import annotations

import pytest
from django.utils import timezone

from shareval.platform.coderuns import service as code
from shareval.platform.coderuns.models import CodeDataset
from shareval.platform.submissions import service
from shareval.platform.submissions.service import SubmissionError

from ..factories import Upload, submit, tgz
from ..submissions.test_run_groups import CONTRASTIVE_ONLY, FULL, gw  # noqa: F401 -- fixture


def test_code_runs_meet_the_group_quota_counted_like_uploads(gw):           # noqa: F811
    team = gw["teams"]["Team A"]
    for ds in ("eval", "eval-clir", "eval", "eval-clir"):
        submit(gw, ds=ds)
    assert code._quota_full(team, gw["ds"]["eval-clir"], timezone.now()) is None
    submit(gw, ds="eval")
    for ds in ("eval", "eval-clir"):
        assert code._quota_full(team, gw["ds"][ds], timezone.now()) == \
            FULL.removesuffix("; no more submissions in this phase")


def test_a_code_bundle_asking_for_a_contrastive_only_primary_is_refused(gw, monkeypatch):  # noqa: F811
    CodeDataset.objects.create(dataset=gw["ds"]["eval-clir"])
    monkeypatch.setattr(code, "sandbox_problem", lambda: "")
    with pytest.raises(SubmissionError) as e:
        code.submit_code(gw["users"]["alice"], gw["teams"]["Team A"], gw["ds"]["eval-clir"],
                         Upload("s.tgz", tgz({"shareval-system.yaml": "command: x\n"})),
                         primary=True)
    assert (e.value.status, e.value.message) == (400, CONTRASTIVE_ONLY)
    assert not code.CodeSubmission.objects.exists()


def test_pending_code_bundles_count_against_the_quota_of_file_uploads(gw):  # noqa: F811
    """A dataset taking code or files: bundles whose runs have not produced an output
    yet fill the group's quota for uploads too, or a team gets 5 bundles and 5 files."""
    CodeDataset.objects.create(dataset=gw["ds"]["eval"], mode=CodeDataset.BOTH)
    team = gw["teams"]["Team A"]
    for _ in range(5):
        code.CodeSubmission.objects.create(team=team, dataset=gw["ds"]["eval"],
                                           user=gw["users"]["alice"], stored_name="x.tgz",
                                           original_name="s.tgz")
    assert code._quota_full(team, gw["ds"]["eval"], timezone.now())
    [st] = service.quota_states(team, gw["ds"]["eval-clir"])
    assert st.used == 5 and st.left == 0
    for ds in ("eval", "eval-clir"):
        with pytest.raises(SubmissionError) as e:
            submit(gw, ds=ds)
        assert e.value.status == 429


def test_a_bundle_racing_for_the_last_slot_is_refused_under_the_team_lock(gw, monkeypatch):  # noqa: F811
    """The quota is checked again once the bundle is checked, under the team's lock:
    another run that took the last slot meanwhile (here: while the bundle was being
    unpacked) makes this one a 429, and nothing of it is stored."""
    CodeDataset.objects.create(dataset=gw["ds"]["eval"])
    team = gw["teams"]["Team A"]
    for ds in ("eval-clir",) * 4:
        submit(gw, ds=ds)
    monkeypatch.setattr(code, "sandbox_problem", lambda: "")

    def unpack_while_another_run_arrives(path, original, *a, **kw):
        submit(gw, ds="eval-clir")                    # the fifth run, meanwhile
        return {"limits": {}, "command": "x"}
    monkeypatch.setattr(code, "unpack_bundle", unpack_while_another_run_arrives)
    with pytest.raises(SubmissionError) as e:
        code.submit_code(gw["users"]["alice"], team, gw["ds"]["eval"],
                         Upload("s.tgz", tgz({"shareval-system.yaml": "command: x\n"})))
    assert e.value.status == 429
    assert not code.CodeSubmission.objects.exists()
