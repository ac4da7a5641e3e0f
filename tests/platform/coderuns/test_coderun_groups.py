"""Code submissions count against a run group's quota over all its datasets, as
uploaded files do, and refuse a primary where the group allows none (the check
runs before the sandbox is asked for, so no sandbox is needed here)."""
from __future__ import annotations

import pytest
from django.utils import timezone

from shareval.platform.coderuns import service as code
from shareval.platform.coderuns.models import CodeDataset
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
