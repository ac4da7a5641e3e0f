"""Code submissions inside the test process: the bundle's code block, manifests,
limits, refusals, and the test -> final -> scored flow with the queues drained
here (the live-server and attack tests are in test_coderuns_security.py)."""
from __future__ import annotations

import zipfile

import pytest
import yaml

from shareval.formats.archive import Limits as ArchiveLimits
from shareval.formats.errors import InvalidInput, Problems
from shareval.sandbox import bwrap
from shareval.sandbox.bundle import pack, read_manifest, unpack
from shareval.sandbox.run import Limits

from ..factories import Upload, gold, make_bundle, tgz

_why = bwrap.probe(bwrap.sandbox_user("pool"))
needs_sandbox = pytest.mark.skipif(bool(_why), reason=_why or "sandbox available")

SYSTEM = """
import sys, pathlib
print("items:", len(pathlib.Path(sys.argv[1], "items.txt").read_text().split()))
items = pathlib.Path(sys.argv[1], "items.txt").read_text().split()
pathlib.Path(sys.argv[2], "labels.tsv").write_text(
    "item\\tlabel\\n" + "".join(f"{i}\\tpos\\n" for i in items))
"""


def code_bundle(root, code: dict | None = None, submission="code"):
    make_bundle(root, slug="cb", baseline=False)
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "hidden").mkdir()
    (root / "hidden" / "items.txt").write_text("\n".join(gold()) + "\n")
    ds = {"slug": "dev-code", "task": "labels", "reference": "gold-dev.tsv",
          "submission": submission,
          "code": code if code is not None else {"input": "hidden", "sample_input": "hidden",
                                                 "sample_reference": "gold-dev.tsv",
                                                 "limits": {"wall_seconds": 20}}}
    b["phases"][0]["datasets"].append(ds)
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


def test_bundle_code_block_problems_are_all_listed(tmp_path):
    from shareval.platform.bundles.loader import read_bundle
    root = code_bundle(tmp_path / "b", {"input": "missing/", "limits": {"wall_secs": 5,
                                                                       "memory_mb": -1}},
                       submission="code")
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    text = e.value.render()
    assert "missing/ not found" in text
    assert "limits.wall_secs: unknown" in text
    assert "limits.memory_mb: a positive number" in text
    root2 = code_bundle(tmp_path / "c", submission="sometimes")
    with pytest.raises(InvalidInput, match="output, code or both"):
        read_bundle(root2)


def test_manifest_checks():
    p = Problems()
    m = read_manifest({"shareval-system.yaml": b"command: python -m s {input} {output}\n"
                                               b"limits: {wall_seconds: 30}\n",
                       "requirements.txt": b"six==1.16.0\n"}, p)
    assert not p and m.argv() == ["python", "-m", "s", "/input", "/output"]
    assert m.requirements == "six==1.16.0\n" and m.limits == {"wall_seconds": 30}
    p = Problems()
    read_manifest({"shareval-system.yaml": b"command: run {input}\nlimits: {gpus: 1}\n",
                   "requirements.txt": b"--index-url http://evil/\n"}, p)
    text = "\n".join(str(x) for x in p.items)
    assert "must name {output}" in text and "limits.gpus" in text
    assert "pip options are not allowed" in text


def test_limits_requested_are_capped_by_the_dataset():
    from shareval.platform.coderuns.models import CodeDataset
    from shareval.platform.coderuns.service import run_limits
    cd = CodeDataset(limits={"wall_seconds": 60}, max_limits={"wall_seconds": 120,
                                                              "memory_mb": 1024})
    got = run_limits(cd, {"wall_seconds": 1000, "memory_mb": 512})
    assert got.wall_seconds == 120 and got.memory_mb == 512
    assert run_limits(cd, None).wall_seconds == 60
    assert Limits.from_dict({"wall_seconds": -5, "bogus": 1}).wall_seconds == 600


def test_zip_and_tgz_bundles_unpack_alike_and_links_are_refused(tmp_path):
    files = {"shareval-system.yaml": "command: python m.py {input} {output}\n",
             "pkg/m.py": "print(1)\n"}
    (tmp_path / "a.tgz").write_bytes(tgz({f"top/{k}": v for k, v in files.items()}))
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
        info = zipfile.ZipInfo("evil")
        info.external_attr = 0o120777 << 16
        z.writestr(info, "/etc/passwd")
    p = Problems()
    got = unpack(tmp_path / "a.tgz", p, ArchiveLimits())
    assert not p and set(got) == set(files)
    p = Problems()
    unpack(tmp_path / "a.zip", p, ArchiveLimits())
    assert "links are not allowed" in "\n".join(str(x) for x in p.items)
    d = tmp_path / "sys"
    d.mkdir()
    with pytest.raises(ValueError, match="shareval-system.yaml"):
        pack(d)
    (d / "shareval-system.yaml").write_text(files["shareval-system.yaml"])
    (d / "m.py").write_text("x")
    (tmp_path / "packed.tgz").write_bytes(pack(d))
    p = Problems()
    assert set(unpack(tmp_path / "packed.tgz", p, ArchiveLimits())) == \
        {"shareval-system.yaml", "m.py"}


@pytest.fixture
def code_world(db, tmp_path):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    alice = User.objects.create_user("alice", password="alice-pass-123")
    comp, _ = load_bundle(code_bundle(tmp_path / "bundle"), org)
    team = Team.objects.create(competition=comp, name="Team A", lead=alice)
    Membership.objects.create(team=team, user=alice, status=Membership.APPROVED)
    ds = comp.phases.get(slug="dev").datasets.get(slug="dev-code")
    return {"comp": comp, "org": org, "alice": alice, "team": team, "ds": ds}


def test_hidden_input_is_private_and_code_datasets_refuse_files(code_world, settings):
    from shareval.platform.submissions.service import SubmissionError, submit
    cd = code_world["ds"].code
    assert (settings.PRIVATE_DIR / cd.input_path / "items.txt").is_file()
    assert not (settings.PUBLIC_DIR / cd.input_path).exists()
    with pytest.raises(SubmissionError, match="takes code"):
        submit(code_world["alice"], code_world["team"], code_world["ds"],
               Upload("run.tsv", "item\tlabel\n"))


def test_no_sandbox_means_refused_with_the_reason(code_world, monkeypatch):
    from shareval.platform.coderuns import service
    from shareval.platform.coderuns.models import CodeSubmission
    monkeypatch.setattr(service, "sandbox_problem",
                        lambda: "bubblewrap cannot create its namespaces on this server")
    with pytest.raises(service.subs.SubmissionError) as e:
        service.submit_code(code_world["alice"], code_world["team"], code_world["ds"],
                            Upload("s.tgz", tgz({"shareval-system.yaml": "command: x {output}"})))
    assert e.value.status == 503 and "namespaces" in e.value.message
    assert not CodeSubmission.objects.exists()


@needs_sandbox
def test_test_run_then_final_run_then_scored(code_world):
    from shareval.platform.coderuns import queue as code_queue, service
    from shareval.platform.coderuns.models import CodeRun
    from shareval.platform.submissions.queue import drain
    cs = service.submit_code(code_world["alice"], code_world["team"], code_world["ds"],
                             Upload("s.tgz", tgz({"shareval-system.yaml":
                                                  "command: python main.py {input} {output}\n"
                                                  "limits: {wall_seconds: 9999}\n",
                                                  "main.py": SYSTEM})), primary=True)
    assert cs.runs.get().limits["wall_seconds"] == 3600     # asked 9999, capped
    assert code_queue.drain() == 2
    test, final = cs.runs.order_by("created")
    assert test.stage == CodeRun.TEST and test.state == CodeRun.OK, test.message
    assert "items: 20" in test.log
    share = sum(v == "pos" for v in gold().values()) / len(gold())
    assert test.score["metrics"]["accuracy"] == pytest.approx(share)
    assert final.stage == CodeRun.FINAL and final.state == CodeRun.OK, final.message
    sub = final.output_submission
    assert sub.kind == "primary" and sub.team == code_world["team"]
    drain()
    sub.refresh_from_db()
    assert sub.state == "scored"
    assert sub.current_score.result["metrics"]["accuracy"] == pytest.approx(share)
    team_view = service.run_view(final, organizer=False)
    assert team_view["state"] == "succeeded" and "log" not in team_view
    assert "log" in service.run_view(final, organizer=True)
    again = service.rerun(cs, code_world["org"], "final", {"memory_mb": 2048})
    assert again.attempt == 2 and again.limits["memory_mb"] == 2048
    with pytest.raises(service.subs.SubmissionError):
        service.rerun(cs, code_world["alice"], "final")


SCORER = """
import json, sys, pathlib
ref = dict(l.split("\\t") for l in pathlib.Path(sys.argv[1]).read_text().split("\\n")[1:] if l)
sub_lines = pathlib.Path(sys.argv[2]).read_text().split("\\n")[1:]
sub = dict(l.split("\\t") for l in sub_lines if l)
if set(sub) - set(ref):
    print(f"unknown items: {sorted(set(sub) - set(ref))[:3]}", file=sys.stderr)
    sys.exit(2)
hits = sum(sub.get(k) == v for k, v in ref.items())
try:
    open("/proc/1/environ").read(); seen = 1
except OSError:
    seen = 0
pathlib.Path(sys.argv[3], "result.json").write_text(json.dumps(
    {"metrics": {"hits": hits, "share": hits / len(ref)}, "counts": {"items": len(ref)},
     "conventions": {"what": "exact label matches"}}))
"""


def program_bundle(root):
    from ..factories import run_with_accuracy
    make_bundle(root, slug="prog", baseline=False)
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "scorer").mkdir()
    (root / "scorer" / "shareval-system.yaml").write_text(
        "command: python score.py {reference} {submission} {output}\n")
    (root / "scorer" / "score.py").write_text(SCORER)
    b["tasks"].append({"slug": "custom", "task": "program", "primary_metric": "share",
                       "options": {"scorer": "scorer"}})
    b["phases"][0]["datasets"].append({"slug": "dev-custom", "task": "custom",
                                       "reference": "gold-dev.tsv"})
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root, run_with_accuracy


def test_program_task_needs_its_scorer_and_metric(tmp_path):
    from shareval.platform.bundles.loader import read_bundle
    root, _ = program_bundle(tmp_path / "b")
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["tasks"][-1] = {"slug": "custom", "task": "program", "options": {"scorer": "nowhere"}}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    text = e.value.render()
    assert "nowhere not found" in text and "primary_metric: required" in text


@needs_sandbox
def test_organizer_scoring_program_scores_in_the_sandbox(db, tmp_path):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions.queue import drain
    from shareval.platform.submissions.service import submit
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    alice = User.objects.create_user("alice", password="alice-pass-123")
    root, run_with_accuracy = program_bundle(tmp_path / "b")
    comp, _ = load_bundle(root, org)
    team = Team.objects.create(competition=comp, name="Team A", lead=alice)
    Membership.objects.create(team=team, user=alice, status=Membership.APPROVED)
    ds = comp.phases.get(slug="dev").datasets.get(slug="dev-custom")
    digest = ds.reference_digest
    sub = submit(alice, team, ds, Upload("run.tsv", run_with_accuracy(13)))
    drain()
    sub.refresh_from_db()
    assert sub.state == "scored", list(sub.events.values_list("message", "log"))
    score = sub.current_score
    assert score.result["metrics"] == {"hits": 13, "share": 0.65}
    assert score.primary == pytest.approx(0.65)
    assert score.result["conventions"]["what"] == "exact label matches"
    # the program's own rejection (exit 2) reaches the team as problems
    bad = submit(alice, team, ds, Upload("bad.tsv", "item\tlabel\nzzz\tpos\n"))
    drain()
    bad.refresh_from_db()
    assert bad.state == "failed"
    assert "unknown items: ['zzz']" in bad.events.last().message
    # a changed program is a changed scorer: the datasets' digests change
    (root / "scorer" / "score.py").write_text(SCORER.replace("exact label", "label"))
    load_bundle(root, org)
    ds.refresh_from_db()
    assert ds.reference_digest != digest


@pytest.mark.parametrize("code,state", [(-24, "cpu"), (128 + 24, "cpu"), (-25, "output"),
                                        (128 + 25, "output"), (1, "failed"), (0, "ok")])
def test_limit_signals_are_named_whoever_reports_them(code, state):
    """SIGXCPU/SIGXFSZ kill the command under bubblewrap, which then exits with
    128 + the signal: that is the limit too, not "exited with status 152"."""
    from shareval.sandbox.run import _state

    class Usage:                    # no CPU time seen by the parent (it was bwrap's)
        ru_utime = ru_stime = 0.0
    assert _state(code, "", None, Limits(cpu_seconds=5), Usage()) == state
