"""What participants' data costs the server's own processes, measured on a real
server in the mode the environment asks for (embedded: one process serves and
runs code; PostgreSQL + Celery: a separate code worker runs it). A 1 MB zip bomb
of a bundle and a test run writing a 100 MB output are read by the limited
child process only: the peak resident memory (VmHWM) of the process that
receives the upload, and of the one that runs the code, grows by less than
100 MB. Each measurement is printed (``pytest -s``)."""
from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest

from ..stack import MODE
from .test_coderuns_security import (_why, bundle, code_bundle, live as _live,  # noqa: F401
                                     submit, wait_run)

pytestmark = pytest.mark.skipif(bool(_why), reason=_why or "sandbox available")
live = _live                    # the module's own server (one per test module)
GROWTH_MB = 100


def peak_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for {pid}")


def runner_pids(st) -> list[int]:
    """The processes that run code, once ready: the server itself, or its Celery
    code workers (a worker still starting would count its start-up as growth)."""
    if MODE != "postgres+celery":
        return [st.procs[0].pid]
    logs = sorted(Path(st.home).glob("code-worker*.log"))
    end = time.monotonic() + 120
    while not all(" ready." in p.read_text(errors="replace") for p in logs):
        assert time.monotonic() < end, "code workers not ready:\n" + st.logs()
        time.sleep(0.5)
    return [p.pid for p in st.workers if "--code" in p.args]


def zip_bomb(mb: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("shareval-system.yaml", "command: python main.py {input} {output}\n")
        info = zipfile.ZipInfo("weights.bin")
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as f:
            block = bytes(1 << 20)
            for _ in range(mb):
                f.write(block)
    return buf.getvalue()


def test_a_zip_bomb_bundle_costs_the_web_process_nothing(live):
    from shareval.client import _multipart, request
    st, tokens, home = live
    data = zip_bomb(1100)
    path = Path(home) / "bomb.zip"
    path.write_bytes(data)
    before = peak_mb(st.procs[0].pid)
    body, ctype = _multipart({"competition": "codecomp", "phase": "dev", "task": "dev-code"},
                             "file", path)
    code, out = request(st.url, "POST", "/api/code/", tokens["alice"], body, ctype, 300)
    grown = peak_mb(st.procs[0].pid) - before
    print(f"\nMEASURE {MODE} zip bomb ({len(data) / 2**20:.1f} MB packed, 1100 MB unpacked): "
          f"web process peak {before:.0f} -> {before + grown:.0f} MB (+{grown:.0f})")
    assert code == 400 and out["problems"] == [
        "bomb.zip: archive: unpacks to more than 1024 MB (the server's limit)"], out
    assert grown < GROWTH_MB, grown


OUTPUT = """
import sys, pathlib
items = pathlib.Path(sys.argv[1], "items.txt").read_text().split()
with open(pathlib.Path(sys.argv[2], "labels.tsv"), "w") as f:
    f.write("item\\tlabel\\n" + "".join(f"{i}\\tpos\\n" for i in items))
    line = "unknown-item-%09d\\tpos\\n"
    for n in range(100 * 2 ** 20 // len(line % 0)):
        f.write(line % n)
"""


def test_a_100_mb_test_output_costs_the_process_running_the_code_nothing(live):
    st, tokens, home = live
    before = {pid: peak_mb(pid) for pid in runner_pids(st)}
    out = submit(st, tokens["alice"], bundle(OUTPUT, {"limits": {
        "output_mb": 150, "wall_seconds": 120, "cpu_seconds": 120}}))
    run = wait_run(st, tokens["alice"], out["id"], timeout=600)
    pid, grown = max(((p, peak_mb(p) - b) for p, b in before.items()), key=lambda x: x[1])
    print(f"\nMEASURE {MODE} 100 MB test output: process running the code "
          f"(pid {pid}) peak {before[pid]:.0f} -> {before[pid] + grown:.0f} MB (+{grown:.0f})")
    assert run["state"] == "invalid", (run["message"], run["log"][-2000:])
    assert "not in the reference" in run["message"] or "unknown" in run["message"], run
    assert run["output_bytes"] > 100 * 10 ** 6
    assert grown < GROWTH_MB, grown
