"""Validating a MATERIAL submission checks it without decoding it (issue 41): the same
warnings, or the same problems in the same order, as loading it; numba is not loaded;
an archive's member is not held while the next one is read."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from shareval.formats import archive
from shareval.formats.errors import InvalidInput, Problems
from shareval.tasks import get
from shareval.tasks.material import base

from ..memory import python_peak
from .test_material import DOCS, SYSTEM, folder, make_pack, output, tgz

GOOD = {f"{q}.tsv": t for q, t in SYSTEM.items()}
BAD_LINES = output([1, 0, 1, 0, 0, 0], ["0.9", "0.4", "1.5", "0.1", "x", "0.2"])
SUBMISSIONS = {
    "good": GOOD,
    "one bad file": {**GOOD, "query2.tsv": BAD_LINES},
    "bad files and names": {"query1.tsv": BAD_LINES, "extra.tsv": "x", "query2.tsv": "\n",
                            "query3.tsv": GOOD["query3.tsv"].replace("\n", "\r\n")},
    "missing, unknown and repeated documents": {
        "query1.tsv": GOOD["query1.tsv"].split("\n", 1)[1],
        "query2.tsv": GOOD["query2.tsv"] + f"{DOCS[0]}\tN\t0.5\n",
        "query3.tsv": GOOD["query3.tsv"].replace(DOCS[2], "MATERIAL_EVAL1-1A_99999999")},
    "a file missing": {"query1.tsv": GOOD["query1.tsv"]},
    "a blank line": {**GOOD, "query3.tsv": GOOD["query3.tsv"] + "\n"},
    # DomainID: no conversational speech document (the last) may be listed
    "domains": {"GOV.tsv": output([1, 0, 1, 0, 0], ["0.9", "0.1", "0.8", "0.1", "0.0"], DOCS[:5]),
                "MIL.tsv": output([0] * 6, ["0.1"] * 6)},
}


def verdict(call):
    try:
        return "ok", call()
    except InvalidInput as e:
        return "refused", e.lines()


@pytest.mark.parametrize("numpy_bytes", [0, 300, base.NUMPY_CHECK_BYTES])
@pytest.mark.parametrize("in_flight", [1, base.IN_FLIGHT_BYTES])
@pytest.mark.parametrize("as_tgz", [False, True])
@pytest.mark.parametrize("case", sorted(SUBMISSIONS))
def test_validate_gives_what_loading_gives(tmp_path, monkeypatch, case, as_tgz, in_flight,
                                           numpy_bytes):
    """Whichever files the numpy check or the scanner takes (numpy_bytes: none, the
    first, all)."""
    monkeypatch.setattr(base, "IN_FLIGHT_BYTES", in_flight)
    monkeypatch.setattr(base, "NUMPY_CHECK_BYTES", numpy_bytes)
    pack = make_pack(tmp_path / "pack")
    files = SUBMISSIONS[case]
    # a plan archive name: its fields come back as a warning (or a problem for DomainID)
    sub = tgz(tmp_path, [(n, t.encode()) for n, t in files.items()],
              "NIST_CLIR-primary-unconstrained-QUERY1-s1_EVAL1-1A-DEV_20181113_225652.tgz") \
        if as_tgz else folder(tmp_path, files)
    for task in ("material-clir", "material-domainid", "material-langid"):
        t = get(task)                            # DomainID, LangID: other file names
        loaded = verdict(lambda: t.load_submission(str(sub), t.reference(str(pack))).warnings)
        assert verdict(lambda: t.validate(str(sub), str(pack))) == loaded
        if (case, task) == ("good", "material-clir"):
            assert loaded[0] == "ok" and len(loaded[1]) == as_tgz
        if case == "domains" and task == "material-domainid":
            assert loaded[0] == "refused" and any("MIL.tsv" in p for p in loaded[1])


def test_validate_only_checks(tmp_path, monkeypatch):
    """No decoded matrices, no numba scanner, no line validator for a good file: each
    file goes to the numpy check."""
    pack = make_pack(tmp_path / "pack")
    sub = folder(tmp_path, GOOD)

    def no_scanner(*args, **kwargs):
        raise AssertionError("validate decoded a file")
    monkeypatch.setattr(base, "scan_file", no_scanner)
    monkeypatch.setattr(base, "read_output_lines", no_scanner)     # good files: the check only
    assert get("material-clir").validate(str(sub), str(pack)) == []
    with pytest.raises(AssertionError):
        get("material-clir").load_submission(str(sub), get("material-clir").reference(str(pack)))


def test_validate_does_not_load_numba(tmp_path):
    pack = make_pack(tmp_path / "pack")
    sub = folder(tmp_path, {**GOOD, "query2.tsv": BAD_LINES})
    code = ("import sys\nfrom shareval.tasks import get\nfrom shareval.formats.errors import "
            "InvalidInput\nt = get('material-clir')\nassert t.validate(sys.argv[1], sys.argv[2])"
            " == []\ntry:\n    t.validate(sys.argv[3], sys.argv[2])\nexcept InvalidInput:\n"
            "    pass\nprint('numba' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code, str(folder(tmp_path, GOOD, "good")),
                        str(pack), str(sub)], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def test_a_member_is_not_held_while_the_next_is_read(tmp_path):
    """Reading a member costs about twice its size (tarfile's chunks, then the bytes);
    the member before it, dropped by the reader, is not held as well."""
    size = 4 << 20
    rng = np.random.default_rng(0)
    members = [(f"m{k}", rng.integers(0, 256, size, dtype=np.uint8).tobytes()) for k in range(3)]
    path = tgz(tmp_path, members)
    del members

    def read_all():
        for _, data in archive.iter_tgz(path, Problems()):
            del data
    peak, _ = python_peak(read_all)
    assert peak < 2.5 * size


def test_members_read_in_place_are_the_members(tmp_path):
    """MATERIAL reads members into one buffer each: the same bytes, a member's peak
    about its size; a member over the limit is refused before it is read."""
    size = 4 << 20
    rng = np.random.default_rng(1)
    members = [(f"m{k}", rng.integers(0, 256, size - k, dtype=np.uint8).tobytes())
               for k in range(3)] + [("empty", b"")]
    path = tgz(tmp_path, members)
    got = list(archive.iter_tgz(path, Problems(), mutable=True))
    assert got == members and all(isinstance(d, bytearray) for _, d in got)
    del got

    def read_all():
        for _, data in archive.iter_tgz(path, Problems(), mutable=True):
            del data
    peak, _ = python_peak(read_all)
    assert peak < 1.3 * size
    problems = Problems()
    assert list(archive.iter_tgz(path, problems, archive.Limits(max_member_bytes=size - 1),
                                 mutable=True)) == []
    assert "larger than" in problems.items[0].message


def _which_check(monkeypatch, numpy_bytes: int) -> list[str]:
    """The list each file's check ("numpy" or "scan") is appended to, in order."""
    used = []
    real_check, real_scan = base.output_file_clean, base.scan_file
    monkeypatch.setattr(base, "output_file_clean",
                        lambda *a, **k: used.append("numpy") or real_check(*a, **k))
    monkeypatch.setattr(base, "scan_file",
                        lambda *a, **k: used.append("scan") or real_scan(*a, **k))
    monkeypatch.setattr(base, "NUMPY_CHECK_BYTES", numpy_bytes)
    return used


def test_validate_scans_past_the_numpy_bytes(tmp_path, monkeypatch):
    """The files after the first NUMPY_CHECK_BYTES are scanned by numba, not decoded
    into matrices: the first file is checked with numpy, the other two scanned."""
    pack = make_pack(tmp_path / "pack")
    sub = folder(tmp_path, GOOD)
    used = _which_check(monkeypatch, 1)
    assert get("material-clir").validate(str(sub), str(pack)) == []
    assert sorted(used) == ["numpy", "scan", "scan"]


def test_an_archive_is_weighed_by_its_packed_bytes(tmp_path, monkeypatch):
    """The switch to the scanner counts the submission's bytes as stored: a .tgz's
    packed bytes (what the upload weighs), a folder's file bytes. The same files, the
    same threshold: in the folder the third file is scanned, in the .tgz none is."""
    pack = make_pack(tmp_path / "pack")
    sub_tgz = tgz(tmp_path, [(n, t.encode()) for n, t in GOOD.items()])
    threshold = sub_tgz.stat().st_size + 1
    first_two = sum(len(t.encode()) for t in list(GOOD.values())[:2])
    assert first_two >= threshold                # else the two rules would agree here
    used = _which_check(monkeypatch, threshold)
    assert get("material-clir").validate(str(sub_tgz), str(pack)) == []
    assert used == ["numpy"] * 3
    used.clear()
    assert get("material-clir").validate(str(folder(tmp_path, GOOD)), str(pack)) == []
    assert used == ["numpy", "numpy", "scan"]


def test_stored_read_counts_packed_bytes(tmp_path):
    """``Stored.read`` before each member: the archive's bytes read so far, never more
    than the file, far fewer than the unpacked bytes before it for text that packs."""
    members = [(f"m{k}", b"MATERIAL_EVAL1-1A_00000001\tN\t0.50000\n" * 30000) for k in range(4)]
    path = tgz(tmp_path, members)
    stored, seen = archive.Stored(), []
    for _, data in archive.iter_tgz(path, Problems(), stored=stored):
        seen.append(stored.read)
    assert seen == sorted(seen) and seen[-1] <= path.stat().st_size
    assert seen[-1] < len(members[0][1]) // 10          # 3 members (3.4 MB) came before
    folder_stored, sizes = archive.Stored(), []
    sub = folder(tmp_path, {n: d for n, d in members})
    for _, data in archive.iter_folder(sub, Problems(), stored=folder_stored):
        sizes.append(folder_stored.read)
    assert sizes == [k * len(members[0][1]) for k in range(4)]
