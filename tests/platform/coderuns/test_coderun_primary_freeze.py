"""A code run's final output offered as primary (i37 security review): its run
group's primary flag follows the same rules as a team's own change. Once the
phase's results are out (blind phase released, or the phase over) the runs are
final, so an output finishing later must not demote the team's primary."""
from __future__ import annotations

from django.conf import settings

from shareval.platform.coderuns import runner
from shareval.platform.coderuns.models import CodeDataset, CodeRun, CodeSubmission
from shareval.platform.competitions.models import Phase
from shareval.platform.submissions.models import Submission
from shareval.platform.submissions.queue import drain

from ..factories import run_with_accuracy, submit
from ..submissions.test_run_groups import gw  # noqa: F401 -- fixture


def _final_run(gw, ds="eval"):
    CodeDataset.objects.get_or_create(dataset=gw["ds"][ds])
    cs = CodeSubmission.objects.create(team=gw["teams"]["Team A"], dataset=gw["ds"][ds],
                                       user=gw["users"]["alice"], stored_name="x.tgz",
                                       original_name="s.tgz", primary=True)
    return CodeRun.objects.create(code_submission=cs, stage=CodeRun.FINAL)


def _output(tmp_path):
    path = tmp_path / "output.tsv"
    path.write_text(run_with_accuracy(20))
    return path


def test_a_code_output_finishing_after_release_leaves_the_primary_alone(gw, tmp_path):  # noqa: F811
    primary = submit(gw, "alice", "Team A", "eval", 12, primary=True)
    drain()
    run = _final_run(gw)                      # queued while the phase was open
    phase = gw["comp"].phases.get(slug="eval")
    phase.released = Phase.TOP                # results out: runs are final
    phase.save()
    settings.CODERUN_DIR.mkdir(parents=True, exist_ok=True)
    runner._finish_final(run, _output(tmp_path), {})
    primary.refresh_from_db()
    assert primary.kind == Submission.PRIMARY
    out = CodeRun.objects.get(pk=run.pk).output_submission
    assert out is not None and out.kind == Submission.CONTRASTIVE
    assert Submission.objects.filter(team=gw["teams"]["Team A"],
                                     kind=Submission.PRIMARY).count() == 1


def test_a_code_output_while_open_still_becomes_the_groups_primary(gw, tmp_path):  # noqa: F811
    old = submit(gw, "alice", "Team A", "eval", 12, primary=True)
    drain()
    run = _final_run(gw)
    runner._finish_final(run, _output(tmp_path), {})
    old.refresh_from_db()
    out = CodeRun.objects.get(pk=run.pk).output_submission
    assert old.kind == Submission.CONTRASTIVE and out.kind == Submission.PRIMARY
