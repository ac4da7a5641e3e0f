"""More rules of ``submissions/service.py``, for mutants that survived the serial
mutation run (``bench/mutate.py --serial``, docs/dev/mutation-survivors.md): a
demoted primary keeps what landed meanwhile, the upload folder is made with its
parents, a file of exactly the size limit is stored whole, every validation
limit is the server's setting, only the team's code runs on the dataset count,
a full quota refuses before validation, a baseline is not quota-limited under
the lock either, a crash's log names the stored file, an upload without a name
is called "upload", a refusal reads as its message, and a rescore reads each
run's dataset and task with the run. The
world and the validator stand-in are the other service rule files'
(``rules_world.py``, ``test_service_rules.py``).
"""
from __future__ import annotations

from pathlib import Path

from django.db import connection
from django.test.utils import CaptureQueriesContext

from shareval.platform.submissions import isolate, service
from shareval.platform.submissions.models import Submission

from ..factories import Upload
from ..rules_world import H, T0, rw, run, scored  # noqa: F401  (rw: fixture)
from .test_service_rules import refusal, submit, val  # noqa: F401  (val: fixture)


def test_a_demoted_primary_keeps_what_landed_meanwhile(rw, val, monkeypatch):
    """Demoting the earlier primary writes its flag only: a score or a
    disqualification stored between reading that run and writing it stays (a
    worker does not take the team's lock), whether the new primary is an upload
    or a flag change."""
    w = rw
    old = run(w, "Team A", "dev", T0 - 2 * H, state=Submission.QUEUED,
              kind=Submission.PRIMARY)
    real = Submission.save

    def landing(self, *args, **kwargs):           # what a worker stores meanwhile
        if self.pk == old.pk:
            Submission.objects.filter(pk=old.pk).update(state=Submission.SCORED,
                                                        disqualified="late")
        return real(self, *args, **kwargs)
    monkeypatch.setattr(Submission, "save", landing)
    new = submit(w, primary=True)
    got = Submission.objects.get(pk=old.pk)
    assert (got.kind, got.state, got.disqualified) == \
        (Submission.CONTRASTIVE, Submission.SCORED, "late")
    Submission.objects.filter(pk=old.pk).update(kind=Submission.CONTRASTIVE)
    Submission.objects.filter(pk=new.pk).update(kind=Submission.CONTRASTIVE)
    Submission.objects.filter(pk=old.pk).update(kind=Submission.PRIMARY, disqualified="",
                                                state=Submission.QUEUED)
    service.make_primary(new, w["users"]["alice"], now=T0)
    got = Submission.objects.get(pk=old.pk)
    assert (got.kind, got.state, got.disqualified) == \
        (Submission.CONTRASTIVE, Submission.SCORED, "late")


def test_the_upload_folder_is_made_with_its_parents(rw, val, settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "new" / "data" / "uploads"
    sub = submit(rw)
    assert (settings.UPLOAD_DIR / sub.stored_name).read_text() == "item\tlabel\ni00\tpos\n"


def test_a_file_of_exactly_the_size_limit_is_stored_whole(rw, val, settings):
    body = "item\tlabel\ni00\tpos\n"
    settings.MAX_UPLOAD_BYTES = len(body)
    sub = submit(rw, upload=Upload("run.tsv", body))
    assert sub.size == len(body)
    assert (settings.UPLOAD_DIR / sub.stored_name).read_text() == body
    assert val.calls[-1]["data"] == body.encode()


def test_the_unpacked_size_limit_is_the_servers_setting(rw, val, settings):
    settings.MAX_UNPACKED_MB = 7                  # not the Limits default (1024)
    submit(rw)
    assert val.calls[-1]["limits"].unpacked_mb == 7


def test_another_teams_code_runs_do_not_count_as_running(rw, val):
    from shareval.platform.coderuns.models import CodeRun, CodeSubmission
    w = rw
    ds = w["ds"]["dev"]
    ds.concurrent = 1
    ds.save()
    code = CodeSubmission.objects.create(team=w["teams"]["Team B"], dataset=ds,
                                         original_name="c.tar.gz", stored_name="c")
    CodeRun.objects.create(code_submission=code, stage=CodeRun.FINAL, state=CodeRun.RUNNING)
    assert submit(w).state == Submission.QUEUED             # Team B's run: not Team A's
    assert refusal(submit, w, user="bob", team="Team B").status == 429


def test_a_baseline_beyond_the_quota_is_accepted_under_the_lock_too(rw, val):
    """The eval quota is 5 per team; the Baseline team already has 5 runs there."""
    w = rw
    for k in range(5):
        scored(w, "Baseline", "eval", 0.5, T0 - (k + 1) * H)
    sub = submit(w, user="org", team="Baseline", ds="eval")
    assert sub.state == Submission.QUEUED
    assert Submission.objects.filter(team=w["teams"]["Baseline"]).count() == 6


def test_a_validator_crash_is_logged_with_the_stored_file(rw, val, caplog, settings):
    val.verdict = isolate.Verdict(crash="Traceback ...")
    with caplog.at_level("ERROR", logger="shareval.submissions"):
        refusal(submit, rw)
    (record,) = caplog.records
    (path,) = [c["path"] for c in val.calls]
    assert record.getMessage() == f"validator crashed on {path}:\nTraceback ..."
    assert Path(path).parent == Path(settings.UPLOAD_DIR)


def test_rescore_reads_each_runs_dataset_and_task_with_the_run(rw):
    """One query for the runs (joined with their dataset and task), not one more per
    run for each: a rescore after a scorer update may touch thousands of runs."""
    w = rw
    for k in range(4):
        scored(w, "Team A", "dev", 0.5, T0 - k * H)
    with CaptureQueriesContext(connection) as ctx:
        assert service.rescore(w["task"]) == 4
    alone = [q["sql"] for q in ctx.captured_queries
             if 'FROM "competitions_dataset"' in q["sql"]
             or 'FROM "competitions_competitiontask"' in q["sql"]]
    assert alone == []


def test_only_the_teams_code_runs_on_the_dataset_count(rw, val):
    from shareval.platform.coderuns.models import CodeRun, CodeSubmission
    w = rw
    ds = w["ds"]["dev"]
    ds.concurrent = 1
    ds.save()
    code = CodeSubmission.objects.create(team=w["teams"]["Team A"], dataset=w["ds"]["eval"],
                                         original_name="c.tar.gz", stored_name="c")
    CodeRun.objects.create(code_submission=code, stage=CodeRun.FINAL, state=CodeRun.QUEUED)
    assert submit(w).state == Submission.QUEUED             # its run on eval: not on dev


def test_a_full_quota_refuses_before_validation(rw, val):
    w = rw
    for k in range(5):
        scored(w, "Team A", "eval", 0.5, T0 - (k + 1) * H)
    e = refusal(submit, w, ds="eval")
    assert e.status == 429 and e.message.startswith("quota reached: 5 of ")
    assert val.calls == []                                  # the validator was not asked


def test_an_upload_without_a_name_is_called_upload(rw, val):
    class Nameless:
        def chunks(self):
            yield b"item\tlabel\ni00\tpos\n"
    assert submit(rw, upload=Nameless()).original_name == "upload"


def test_a_refusal_reads_as_its_message():
    e = service.SubmissionError(429, "quota reached", ["p"])
    assert (str(e), e.args) == ("quota reached", ("quota reached",))


def test_a_validation_under_a_lower_inherited_cpu_limit_still_runs(tmp_path):
    """A server run under a hard CPU limit below the validation's own (systemd's
    LimitCPU; mutmut's limit per mutant) cannot raise it: the child keeps the lower
    one instead of crashing on every upload."""
    import json
    import os
    import subprocess
    import sys

    import shareval
    sub = tmp_path / "run.tsv"
    sub.write_text("item\tlabel\ni00\tpos\n")
    code = ("import json, resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_CPU, (100, 101))\n"
            "from shareval.platform.submissions import isolate\n"
            "v = isolate.validate('classification', sys.argv[1], None, isolate.Limits())\n"
            "print(json.dumps([v.problems, v.crash, v.limit]))\n")
    env = dict(os.environ, PYTHONPATH=str(Path(shareval.__file__).parents[1]))
    out = subprocess.run([sys.executable, "-c", code, str(sub)], env=env, text=True,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == [[], "", ""]
