"""Code submissions against hostile or unlucky inputs, inside the test process:
archives whose members no folder can hold, a run that fails while its folder is
being filled, bundles and test-run outputs read only by the limited child
process (never here), and what a team may see of a final run's output (the
live-server memory measurements are in test_coderuns_memory.py)."""
from __future__ import annotations

import io
import tarfile
import warnings
import zipfile

import pytest
from django.conf import settings

from shareval.formats.archive import Limits as ArchiveLimits
from shareval.formats.errors import Problems
from shareval.sandbox.bundle import unpack

from .conftest import Upload
from .test_coderuns import code_world, needs_sandbox  # noqa: F401 -- the fixture

MANIFEST = "command: python main.py {input} {output}\n"

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
