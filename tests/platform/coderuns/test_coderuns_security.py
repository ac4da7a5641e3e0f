"""Code submissions against a real server (tests/platform/stack.py), in the mode
the environment asks for: embedded (SQLite, in-process code workers) or
PostgreSQL + Celery (a separate code worker on its own queue).

Each attack is a bundle whose program tries something from inside the sandbox
and prints what it managed; the test run's log (which the team sees) is then
checked. The tests fail if the sandbox is weakened: a network namespace shared,
a host folder mounted, the environment passed through, a limit dropped, the
output's links followed, or processes left behind. Skipped, with the reason,
when bubblewrap cannot create namespaces here (the server then refuses code),
unless SHAREVAL_REQUIRE_SANDBOX is set: then they fail.
"""
from __future__ import annotations

import io
import json
import os
import secrets
import tarfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from ..factories import gold, labels_tsv, make_bundle, tgz
from ..stack import MODE, Stack

from shareval.sandbox import bwrap

_user = bwrap.sandbox_user("pool")
_why = bwrap.probe(_user)
if _why and os.environ.get("SHAREVAL_REQUIRE_SANDBOX"):
    # a machine that must run code (CI set up for it): a broken sandbox fails here
    # instead of skipping the checks
    pytest.fail(f"SHAREVAL_REQUIRE_SANDBOX is set: {_why}", pytrace=False)
pytestmark = pytest.mark.skipif(bool(_why), reason=_why or "sandbox available")

LIMITS = {"wall_seconds": 8, "cpu_seconds": 8, "memory_mb": 512, "processes": 32,
          "output_mb": 20}


def code_bundle(root: Path) -> Path:
    make_bundle(root, slug="codecomp", baseline=False)
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "hidden").mkdir()
    (root / "hidden" / "items.txt").write_text("\n".join(gold()) + "\n")
    (root / "sample").mkdir()
    (root / "sample" / "items.txt").write_text("\n".join(gold()) + "\n")
    b["phases"][0]["datasets"].append({
        "slug": "dev-code", "task": "labels", "reference": "gold-dev.tsv",
        "submission": "code",
        "code": {"input": "hidden", "sample_input": "sample",
                 "sample_reference": "gold-dev.tsv", "limits": LIMITS}})
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


SYSTEM = """
import sys, pathlib
items = pathlib.Path(sys.argv[1], "items.txt").read_text().split()
pathlib.Path(sys.argv[2], "labels.tsv").write_text(
    "item\\tlabel\\n" + "".join(f"{i}\\tpos\\n" for i in items))
"""


# on every command line of this module's runs (bwrap's shows the command too), so
# that the processes of this module's runs are told from any other run's
TOKEN = secrets.token_hex(6)


def bundle(program: str, extra_manifest: dict | None = None) -> bytes:
    manifest = {"command": f"python main.py {{input}} {{output}} {TOKEN}",
                **(extra_manifest or {})}
    return tgz({"shareval-system.yaml": yaml.safe_dump(manifest), "main.py": program})


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    home = tmp_path_factory.mktemp("coderuns-stack")
    work = Path(f"/tmp/shareval-coderuns-{os.getpid()}")
    work.mkdir(mode=0o711, exist_ok=True)
    os.chmod(work, 0o711)
    st = Stack(home, SHAREVAL_CODERUN_DIR=str(work / "ws"), SHAREVAL_CODERUN_WORKERS="2")
    b = code_bundle(home / "bundle")
    st.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
    st.cli("server", "load-bundle", b, "--organizer", "org")
    tokens = {}
    for user, team in (("alice", "Team A"), ("bob", "Team B")):
        st.cli("server", "add-user", user, "--password", f"{user}-pass-123",
               "--competition", "codecomp", "--team", team)
    for user in ("alice", "bob", "org"):
        tokens[user] = st.cli("server", "token", user).stdout.strip().split()[-1]
    st.start()
    if MODE == "postgres+celery":
        import subprocess
        from ..stack import SHAREVAL
        for n in range(2):
            st.workers.append(subprocess.Popen(
                SHAREVAL + ["server", "worker", "--code"], env=st.env,
                stdout=open(home / f"code-worker{n}.log", "ab"), stderr=subprocess.STDOUT,
                start_new_session=True))
    yield st, tokens, home
    st.stop()
    import shutil
    shutil.rmtree(work, ignore_errors=True)


def submit(st, token: str, data: bytes, name: str = "system.tgz", primary=False) -> dict:
    from shareval.client import _multipart, request
    p = Path(st.home) / name
    p.write_bytes(data)
    body, ctype = _multipart({"competition": "codecomp", "phase": "dev", "task": "dev-code",
                              "primary": "true" if primary else "false"}, "file", p)
    code, out = request(st.url, "POST", "/api/code/", token, body, ctype, 60)
    assert code == 201, out
    return out


def wait_run(st, token: str, cid: str, stage: str = "test", timeout: float = 120) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        code, body = st.api("GET", f"/api/code/{cid}/", token)
        runs = [r for r in body.get("runs", []) if r["stage"] == stage]
        if runs and runs[-1]["done"]:
            return runs[-1]
        time.sleep(0.3)
    raise AssertionError(f"{stage} run of {cid} not done: {body}\n" + "\n".join(
        p.read_text()[-3000:] for p in Path(st.home).glob("*.log")))


def attack(st, tokens, program: str) -> tuple[dict, dict]:
    out = submit(st, tokens["alice"], bundle(program))
    run = wait_run(st, tokens["alice"], out["id"])
    found = {}
    for line in run["log"].splitlines():
        if line.startswith("RESULT "):
            found.update(json.loads(line[7:]))
    return run, found


PG_PORT = int(os.environ.get("SHAREVAL_TEST_PG", "x:55432").rsplit(":", 1)[-1].split("/")[0]
              or 55432)
REDIS_PORT = int(os.environ.get("SHAREVAL_TEST_REDIS", "x:56379").rsplit(":", 1)[-1]
                 .split("/")[0] or 56379)


def test_network_is_unreachable(live):
    st, tokens, home = live
    targets = [("127.0.0.1", PG_PORT), ("127.0.0.1", REDIS_PORT), ("127.0.0.1", st.port),
               ("10.0.2.2", 80), ("1.1.1.1", 53), ("8.8.8.8", 443)]
    program = f"""
import json, socket
ok = {{}}
for host, port in {targets!r}:
    try:
        socket.create_connection((host, port), timeout=2).close()
        ok[f"{{host}}:{{port}}"] = True
    except OSError as e:
        ok[f"{{host}}:{{port}}"] = False
try:
    socket.getaddrinfo("pypi.org", 443); ok["dns"] = True
except OSError:
    ok["dns"] = False
print("RESULT " + json.dumps(ok))
""" + SYSTEM
    run, found = attack(st, tokens, program)
    assert run["state"] == "ok", run
    assert len(found) == len(targets) + 1
    assert not any(found.values()), found


def test_server_files_and_credentials_are_out_of_reach(live):
    st, tokens, home = live
    other = submit(st, tokens["bob"], bundle(SYSTEM))           # another team's bundle
    wait_run(st, tokens["bob"], other["id"])
    secret = st.env["SHAREVAL_SECRET_KEY"]
    paths = [str(home / "private"), str(home / "uploads"), str(home / "shareval.sqlite3"),
             str(home / "server.log"), str(Path(bwrap.__file__).parents[1] / "platform" /
                                               "settings.py"), "/etc/shadow",
             *[str(p) for p in _host_home_entries()], "/work", "/proc/1/environ", str(Path(st.env.get("SHAREVAL_CODERUN_DIR")) /
                                             "runs")]
    # keyed by position: the team's view of the log shows server folders as <server>
    program = f"""
import json, os, glob
seen = {{}}
for i, p in enumerate({paths!r}):
    try:
        if os.path.isdir(p):
            seen[str(i)] = bool(os.listdir(p))
        else:
            seen[str(i)] = bool(open(p, "rb").read())
    except OSError:
        seen[str(i)] = False
env = " ".join(f"{{k}}={{v}}" for k, v in os.environ.items())
seen["env"] = any(s in env for s in ("SHAREVAL_SECRET", "DATABASE", "BROKER", "REDIS", "PG",
                                      {secret!r}))
leak = False
for f in glob.glob("/proc/*/environ"):
    try:
        leak |= {secret!r}.encode() in open(f, "rb").read()
    except OSError:
        pass
seen["proc_environ"] = leak
seen["other_procs"] = len([p for p in os.listdir("/proc") if p.isdigit()]) > 4
print("RESULT " + json.dumps(seen))
""" + SYSTEM
    run, found = attack(st, tokens, program)
    found = {paths[int(k)] if k.isdigit() else k: v for k, v in found.items()}
    assert run["state"] == "ok", run
    assert set(found) >= set(paths) | {"env", "proc_environ"}
    assert not any(found.values()), {k: v for k, v in found.items() if v}


def test_writable_places_are_sized_and_what_they_hold_is_memory(live):
    """The probe wrote 1.8 GB to /var/tmp, /big-b and /dev/shm with memory_mb 512
    and the run ended ok: now the root is read-only, /tmp (also /var/tmp) and
    /dev/shm have their sizes (256 and 64 MB by default), and together they
    count as memory."""
    st, tokens, home = live
    program = """
import json, os
MB = b"\\0" * (1 << 20)
wrote = {}
for path in ("/var/tmp/a", "/big-b", "/etc/c", "/dev/d", "/dev/shm/e", "/tmp/f"):
    n = 0
    try:        # files of 10 MB: RLIMIT_FSIZE (output_mb, 20 MB here) stops one file
        for i in range(70):
            with open(f"{path}{i}", "wb") as f:
                for _ in range(10):
                    f.write(MB); f.flush(); n += 1
    except OSError:
        pass
    wrote[path] = n
print("RESULT " + json.dumps(wrote))
""" + SYSTEM
    run, wrote = attack(st, tokens, program)
    assert run["state"] == "ok", run
    assert wrote["/big-b"] == wrote["/etc/c"] == wrote["/dev/d"] == 0, wrote
    assert wrote["/var/tmp/a"] + wrote["/tmp/f"] <= 256 and wrote["/dev/shm/e"] <= 64, wrote
    # the same files under a lower memory limit (LIMITS: 512 MB) than they add up to
    program += "\nimport time; time.sleep(2)\n"
    out = submit(st, tokens["alice"], bundle(program, {"limits": {"tmp_mb": 400,
                                                                   "shm_mb": 200}}))
    run = wait_run(st, tokens["alice"], out["id"])
    assert run["state"] == "memory", (run["message"], run["log"][-1500:])


def test_requirements_can_never_make_the_server_fetch_an_address(live):
    """Each bundle is refused at upload, every problem naming requirements.txt:LINE,
    and the listener gets no request: neither the upload nor an environment build
    ever fetched it."""
    import http.server
    from shareval.client import _multipart, request
    st, tokens, home = live
    hits = []

    class Listener(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    lines = [f"evilpkg @ {url}/evilpkg-1.0.tar.gz", f"-r {url}/api/competitions/",
             f"--index-url {url}/simple", f"six --index-url={url}/simple",
             f"-e git+{url}/x.git#egg=x", f"--find-links {url}/links", f"{url}/e.whl",
             "six==${SHAREVAL_SECRET_KEY}", "x===/../../../runs/R/output/evil-1.0.tar.gz",
             "x==1.0+evil.tar.gz", "evil.tbz"]
    try:
        for line in lines:
            data = tgz({"shareval-system.yaml": yaml.safe_dump(
                {"command": "python main.py {input} {output}"}),
                "main.py": SYSTEM, "requirements.txt": f"six\n{line}\n"})
            p = Path(st.home) / "evil.tgz"
            p.write_bytes(data)
            body, ctype = _multipart({"competition": "codecomp", "phase": "dev",
                                      "task": "dev-code"}, "file", p)
            code, out = request(st.url, "POST", "/api/code/", tokens["alice"], body, ctype, 60)
            assert code == 400, (line, code, out)
            problems = out.get("problems") or []
            assert len(problems) == 1 and problems[0].startswith(
                "requirements.txt:2: requirement: "), (line, out)
        time.sleep(1)
    finally:
        srv.shutdown()
    assert hits == []


def test_the_sandbox_sees_no_path_of_the_server(live):
    """/proc/self/mountinfo shows each mount's source path, /proc/1/cmdline
    bwrap's command line: neither names the server's home (its private data,
    uploads, database) nor anything outside the sandbox's workspace."""
    st, tokens, home = live
    program = """
import json
print("RESULT " + json.dumps({"mountinfo": open("/proc/self/mountinfo").read(),
                              "init": open("/proc/1/cmdline").read()}))
""" + SYSTEM
    run, seen = attack(st, tokens, program)
    assert run["state"] == "ok", run
    assert seen["mountinfo"] and seen["init"]
    for text in seen.values():
        assert str(home) not in text and str(st.home) not in text, text
    assert st.env["SHAREVAL_CODERUN_DIR"] not in seen["init"], seen["init"]


def _host_home_entries() -> list[Path]:
    """A few entries of the host's home folder (the sandbox shows, under /root,
    only the Python runtime's mount point when the platform's Python lives there)."""
    home = Path.home()
    try:
        return [p for p in sorted(home.iterdir()) if p.name != ".pyenv"][:5]
    except OSError:
        return []


BOMBS = {
    "fork bomb": ("import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n",
                  "processes"),
    "memory bomb": ("x = []\nwhile True: x.append(bytearray(10**7))\n", "memory"),
    "infinite loop": ("while True: pass\n", ("time", "cpu")),
    "10 GB output": ("import sys\nb = bytes(1 << 20)\nwith open(sys.argv[2] + '/big', 'wb') as f:"
                     "\n    for _ in range(10240): f.write(b)\n", "output"),
    "many output files": ("import sys\nb = bytes(1 << 20) * 4\nfor i in range(2560):\n"
                          "    open(sys.argv[2] + f'/f{i}', 'wb').write(b)\n", "output"),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_bombs_stop_at_their_limit_while_others_stay_served(live, name):
    st, tokens, home = live
    program, expected = BOMBS[name]
    expected = expected if isinstance(expected, tuple) else (expected,)
    out = submit(st, tokens["alice"], bundle(program))
    fine = submit(st, tokens["bob"], bundle(SYSTEM))          # the second team's run
    latencies = []
    done = threading.Event()

    def probe():
        while not done.is_set():
            t = time.monotonic()
            urllib.request.urlopen(st.url + "/api/competitions/", timeout=10).read()
            latencies.append(time.monotonic() - t)
            time.sleep(0.2)
    t = threading.Thread(target=probe, daemon=True)
    t.start()
    run = wait_run(st, tokens["alice"], out["id"])
    other = wait_run(st, tokens["bob"], fine["id"])
    done.set()
    t.join(15)
    assert run["state"] in expected, (run["message"], run.get("log", "")[-1500:])
    assert "stopped" in run["message"] and "limit" in run["message"], run["message"]
    assert other["state"] == "ok", other
    assert latencies and max(latencies) < 3.0, latencies
    wait_run(st, tokens["bob"], fine["id"], "final")     # nothing else runs now
    assert _leftovers() == []


def _leftovers(marker: str = TOKEN, wait: float = 5.0) -> list[str]:
    """Processes still running after ``wait`` seconds (the kernel kills a
    namespace's processes when its init exits; under load that takes a moment)
    whose command line holds ``marker``: by default this module's bundles'
    command (on their own command line and on their ``bwrap``'s). None may
    outlive its run."""
    end = time.monotonic() + wait
    me = str(os.getpid())
    while True:
        out = []
        for p in os.listdir("/proc"):
            if not p.isdigit() or p == me:
                continue
            try:
                state = open(f"/proc/{p}/stat").read().rpartition(")")[2].split()[0]
                cmd = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
            except (OSError, IndexError):
                continue
            if state != "Z" and marker in cmd.split("\0"):
                out.append(cmd)
        if not out or time.monotonic() > end:
            return out
        time.sleep(0.2)


def test_no_process_survives_its_run(live):
    st, tokens, home = live
    n = 100_000 + secrets.randbelow(800_000)      # told from any other test's sleeps
    program = f"""
import subprocess
subprocess.Popen(["/bin/sh", "-c", "sleep {n} & sleep {n + 1} &"], start_new_session=True)
subprocess.Popen(["sleep", "{n + 2}"])
""" + SYSTEM
    run, _ = attack(st, tokens, program)
    assert run["state"] == "ok", run
    for k in (n, n + 1, n + 2):
        assert _leftovers(str(k)) == []


def test_links_in_the_output_are_not_followed(live):
    st, tokens, home = live
    target = home / "private"
    program = f"""
import os, sys
os.symlink({str(target)!r}, sys.argv[2] + "/labels.tsv")
os.symlink("/etc/passwd", sys.argv[2] + "/passwd.tsv")
"""
    run, _ = attack(st, tokens, program)
    assert run["state"] == "failed", run
    assert "wrote no output file" in run["message"]
    assert "a link; ignored" in run["log"]


def test_flow_test_run_then_final_run_and_what_each_party_sees(live):
    st, tokens, home = live
    out = submit(st, tokens["alice"], bundle("print('hello from the test run')\n" + SYSTEM),
                 primary=True)
    test = wait_run(st, tokens["alice"], out["id"], "test")
    assert test["state"] == "ok" and "hello from the test run" in test["log"]
    assert test["score"]["metrics"]["accuracy"] == pytest.approx(
        sum(v == "pos" for v in gold().values()) / len(gold()))
    assert test["wall_seconds"] > 0 and test["peak_mb"] > 0
    final = wait_run(st, tokens["alice"], out["id"], "final")
    assert final["state"] == "succeeded"
    assert "log" not in final and "message" not in final       # the team sees only this
    code, org = st.api("GET", f"/api/code/{out['id']}/", tokens["org"])
    org_final = [r for r in org["runs"] if r["stage"] == "final"][-1]
    assert org_final["state"] == "ok" and "log" in org_final and org_final["submission"]
    sub = st.wait_state(org_final["submission"], tokens["org"])
    assert sub["state"] == "scored"
    # the leaderboard shows the final run's resources beside the score (the row is
    # the team's primary run: this one)
    code, board = st.api("GET", "/api/competitions/codecomp/leaderboard/dev/dev-code/",
                         tokens["alice"])
    row = next(r for r in board["rows"] if r["team"] == "Team A")
    assert row["efficiency"]["runtime_s"] == pytest.approx(org_final["wall_seconds"])
    assert row["efficiency"]["peak_mb"] > 0
    # an organizer re-runs the final stage with a larger limit: a second attempt
    code, rr = st.api("POST", f"/api/code/{out['id']}/rerun/", tokens["org"],
                      {"stage": "final", "limits": {"wall_seconds": 30}})
    assert code == 201, rr
    again = wait_run(st, tokens["org"], out["id"], "final")
    assert again["attempt"] == 2 and again["limits"]["wall_seconds"] == 30
    code, body = st.api("POST", f"/api/code/{out['id']}/rerun/", tokens["alice"],
                        {"stage": "final"})
    assert code == 403
    # code datasets refuse output files
    from shareval.client import submit as client_submit
    f = home / "labels.tsv"
    f.write_text(labels_tsv(gold()))
    code, body = client_submit(st.url, tokens["alice"], f, "codecomp", "dev", "dev-code")
    assert code == 400 and "takes code" in body["error"]


def test_hostile_bundles_are_refused_before_running(live):
    st, tokens, home = live
    from shareval.client import _multipart, request
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("shareval-system.yaml")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    for data, needle in ((buf.getvalue(), "links are not allowed"),
                         (tgz({"main.py": "print(1)"}), "no shareval-system.yaml"),
                         (tgz({"shareval-system.yaml": "command: python main.py\n"}),
                          "must name {output}")):
        p = home / "bad.tgz"
        p.write_bytes(data)
        body, ctype = _multipart({"competition": "codecomp", "phase": "dev",
                                  "task": "dev-code"}, "file", p)
        code, out = request(st.url, "POST", "/api/code/", tokens["alice"], body, ctype, 60)
        assert code == 400 and any(needle in x for x in out["problems"]), out


def test_cli_submit_code_packs_a_folder(live, tmp_path):
    st, tokens, home = live
    folder = tmp_path / "mysystem"
    folder.mkdir()
    (folder / "main.py").write_text(SYSTEM)
    args = ["submit", "--code", folder, "-c", "codecomp", "-p", "dev", "-t", "dev-code",
            "--server", st.url, "--token", tokens["alice"]]
    r = st.cli(*args, check=False)
    assert r.returncode == 2 and "no shareval-system.yaml" in r.stdout + r.stderr
    (folder / "shareval-system.yaml").write_text("command: python main.py {input} {output}\n")
    r = st.cli(*args)
    assert "accepted: code submission" in r.stdout, r.stdout
    assert "runs: test queued" in r.stdout or "runs: test running" in r.stdout, r.stdout
    cid = r.stdout.split("code submission ")[1].split(";")[0]
    assert wait_run(st, tokens["alice"], cid)["state"] == "ok"
