"""Code submissions against hostile or unlucky inputs, inside the test process:
archives whose members no folder can hold, a run that fails while its folder is
being filled, bundles and test-run outputs read only by the limited child
process (never here), and what a team may see of a final run's output (the
live-server memory measurements are in test_coderuns_memory.py)."""
from __future__ import annotations

import io
import json
import resource
import tarfile
import warnings
import zipfile

import pytest
from django.conf import settings

from shareval.formats.archive import Limits as ArchiveLimits
from shareval.formats.errors import Problems
from shareval.sandbox.bundle import unpack

from ..factories import Upload, gold, submit_code
from .test_coderuns_memory import zip_bomb
from .test_coderuns import SYSTEM, code_world, needs_sandbox  # noqa: F401 -- the fixture

MANIFEST = "command: python main.py {input} {output}\n"


def system(program: str = SYSTEM) -> dict[str, str]:
    return {"shareval-system.yaml": MANIFEST, "main.py": program}

# (member, bytes or None for a folder entry) in archive order; the member refused and why
CLASHES = {
    "file, then a file below it": ([("a", b"x"), ("a/b", b"y")],
                                   "a/b", "a is a file in the archive, so it cannot also be a "
                                          "folder"),
    "file below, then the file": ([("a/b", b"y"), ("a", b"x")],
                                  "a", "is a folder in the archive, so it cannot also be a file"),
    "folder entry, then a file": ([("a/", None), ("a", b"x")],
                                  "a", "is a folder in the archive, so it cannot also be a file"),
    "one path written two ways": ([("a/./b", b"x"), ("a//b", b"y")],
                                  "a//b", "appears twice in the archive"),
    "the same member twice": ([("m.py", b"x"), ("m.py", b"y")],
                              "m.py", "appears twice in the archive"),
}


def archive(kind: str, members: list[tuple[str, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buf, "w") as z, warnings.catch_warnings():
            warnings.simplefilter("ignore")             # zipfile warns of duplicate names
            for name, data in members:
                z.writestr(zipfile.ZipInfo(name), data or b"")
        return buf.getvalue()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize("case", list(CLASHES))
@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_members_no_folder_can_hold_are_refused_by_name(tmp_path, kind, case):
    members, refused, why = CLASHES[case]
    path = tmp_path / f"b.{kind}"
    path.write_bytes(archive(kind, [("shareval-system.yaml", MANIFEST.encode()), *members]))
    problems = Problems()
    unpack(path, problems, ArchiveLimits())
    assert [str(p) for p in problems.items] == [f"{path}!{refused}: member: {why}"]


@needs_sandbox
def test_a_bundle_with_a_and_a_slash_b_is_refused_at_upload(code_world):
    from shareval.platform.coderuns import service
    from shareval.platform.coderuns.models import CodeSubmission
    data = archive("zip", [("shareval-system.yaml", MANIFEST.encode()), ("main.py", b"x"),
                           ("a", b"file"), ("a/b", b"a file in a folder named like a file")])
    with pytest.raises(service.subs.SubmissionError) as e:
        service.submit_code(code_world["alice"], code_world["team"], code_world["ds"],
                            Upload("system.zip", data))
    assert e.value.status == 400
    assert e.value.problems == ["system.zip!a/b: member: a is a file in the archive, so it "
                                "cannot also be a folder"]
    assert not CodeSubmission.objects.exists()
    assert not any(settings.UPLOAD_DIR.glob("*.zip"))          # the refused file is gone


def _run_folders() -> list:
    runs = settings.CODERUN_DIR / "runs"
    return sorted(runs.iterdir()) if runs.is_dir() else []


@needs_sandbox
def test_a_failure_while_filling_the_run_folder_removes_it_and_tells_the_team_nothing(
        code_world, monkeypatch, client):
    from shareval.platform.coderuns import queue, runner
    from shareval.platform.coderuns.service import run_view
    cs = submit_code(code_world, system())
    before = _run_folders()

    def half_written(path, original, dest, limits):
        (dest / "model.bin").write_bytes(bytes(1 << 20))
        raise OSError(f"No space left on device: {settings.PRIVATE_DIR / 'x'}")
    monkeypatch.setattr(runner, "unpack_bundle", half_written)
    assert queue.drain() == 1
    run = cs.runs.get()
    assert run.state == "error"
    assert _run_folders() == before                      # nothing left behind
    team = json.dumps(run_view(run, organizer=False))
    assert run.message == runner.INTERNAL_ERROR and runner.INTERNAL_ERROR in team
    assert "Traceback" not in team and str(settings.HOME) not in team
    assert "No space left" not in team
    client.force_login(code_world["alice"])
    page = client.get(f"/code/{cs.pk}/").content.decode()
    assert "Traceback" not in page and str(settings.HOME) not in page
    organizer = run_view(run, organizer=True)["internal_error"]
    assert "Traceback" in organizer and "No space left on device" in organizer


@needs_sandbox
def test_bundles_and_test_outputs_are_read_by_the_child_only(code_world, monkeypatch):
    """Unpacking, the manifest and the test run's validation and scoring all happen
    in the limited child: here they would fail, and the flow still succeeds."""
    from shareval.platform.coderuns import queue
    from shareval.sandbox import bundle
    from shareval.tasks.base import Task

    def not_here(*a, **k):
        raise AssertionError("participants' data read in the server process")
    for name in ("unpack", "read_manifest", "write_tree", "_iter_zip", "iter_tgz"):
        monkeypatch.setattr(bundle, name, not_here)
    for name in ("validate", "score"):
        monkeypatch.setattr(Task, name, not_here)
    cs = submit_code(code_world, system())
    assert queue.drain() == 2
    test, final = cs.runs.get(stage="test"), cs.runs.get(stage="final")
    assert test.state == final.state == "ok", (test.message, test.internal_error,
                                               final.message, final.internal_error)
    share = sum(v == "pos" for v in gold().values()) / len(gold())
    assert test.score["metrics"]["accuracy"] == pytest.approx(share)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """Zips of zeros in one member: over the unpacked limit (1,025 MB), and under it
    but past 200 times its packed size (300 MB)."""
    made = {}
    for name, mb in (("over", 1025), ("ratio", 300)):
        path = tmp_path_factory.mktemp("bombs") / f"{name}.zip"
        path.write_bytes(zip_bomb(mb))
        made[name] = path
    return made


@needs_sandbox
@pytest.mark.parametrize("bomb,message", [
    ("over", "system.zip: archive: unpacks to more than 1024 MB (the server's limit)"),
    ("ratio", "system.zip: archive: unpacks to more than 200 times its packed size (the "
              "server's limit for archives over 256 MB unpacked)")])
def test_a_zip_bomb_bundle_is_refused_without_unpacking_it_here(code_world, bombs, bomb,
                                                                message):
    from shareval.platform.coderuns import service
    assert bombs[bomb].stat().st_size < 2 * 2 ** 20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(service.subs.SubmissionError) as e:
        service.submit_code(code_world["alice"], code_world["team"], code_world["ds"],
                            Upload("system.zip", bombs[bomb].read_bytes()))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
    assert e.value.status == 400 and e.value.problems == [message]
    assert grown_mb < 100, grown_mb


@needs_sandbox
def test_a_final_runs_output_shows_its_team_no_size_warnings_or_chosen_name(code_world, client):
    from shareval.platform.coderuns import queue
    program = SYSTEM.replace('"labels.tsv"', '"labels.x41x42x43"')   # a suffix as a message
    cs = submit_code(code_world, system(program))
    queue.drain()
    final = cs.runs.get(stage="final")
    assert final.state == "ok", final.message
    sub = final.output_submission
    assert sub.size > 0 and "x41" not in sub.original_name and "x41" not in sub.stored_name
    client.force_login(code_world["alice"])
    for url in (f"/api/submissions/{sub.pk}/", "/api/submissions/?competition=cb"):
        body = client.get(url).json()
        row = body if isinstance(body, dict) else next(r for r in body if r["id"] == str(sub.pk))
        assert row["size"] is None and row["warnings"] == [], row
    client.force_login(code_world["org"])
    assert client.get(f"/api/submissions/{sub.pk}/").json()["size"] == sub.size


@needs_sandbox
def test_a_final_runs_output_shows_its_team_no_problem_or_event_text(code_world, client):
    """A scorer's message about the output (which is made from hidden data) may
    quote it: the team sees the states, the organizers the words."""
    from shareval.platform.coderuns import queue
    from shareval.platform.submissions.models import SubmissionEvent
    cs = submit_code(code_world, system())
    queue.drain()
    sub = cs.runs.get(stage="final").output_submission
    secret = "hidden line 17: 'the secret gold label'"
    sub.problems = [f"output: {secret}"]
    sub.save(update_fields=["problems"])
    SubmissionEvent.objects.create(submission=sub, state="failed",
                                   message=f"could not be scored: {secret}")
    client.force_login(code_world["alice"])
    api = client.get(f"/api/submissions/{sub.pk}/").content.decode()
    page = client.get(f"/s/{sub.pk}/").content.decode()
    for body in (api, page):
        assert "secret gold label" not in body
    assert "failed" in api and "details are shown to the organizers" in page
    client.force_login(code_world["org"])
    assert "secret gold label" in client.get(f"/api/submissions/{sub.pk}/").content.decode()


@needs_sandbox
def test_a_final_output_over_the_upload_limit_ends_as_output_not_internal_error(
        code_world, monkeypatch):
    """The output is scored like an upload, so the upload limit holds: here 100 bytes
    against a 250-byte output, the limit lowered after the bundle was accepted."""
    from shareval.platform.coderuns import queue, runner
    from shareval.platform.coderuns.service import run_view
    cs = submit_code(code_world, system())
    queue.drain(limit=1)                        # the test run, under the old limit
    final = cs.runs.get(stage="final")
    path = settings.CODERUN_DIR / "output-250.tsv"
    path.write_text("item\tlabel\n" + "".join(f"{i}\tpos\n" for i in gold()))
    monkeypatch.setattr(settings, "MAX_UPLOAD_BYTES", 100)
    stored = set(settings.UPLOAD_DIR.iterdir())
    runner._finish_final(final, path, {})
    final.refresh_from_db()
    assert final.state == "output", final.message
    assert "larger than the 0 MB the server scores" in final.message
    assert run_view(final, organizer=False)["state"] == "failed"
    assert final.output_submission is None and set(settings.UPLOAD_DIR.iterdir()) == stored
