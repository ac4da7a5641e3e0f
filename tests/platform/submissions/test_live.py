"""End to end against a real server process: CLI upload, 50 concurrent uploads, a
worker killed mid-scoring. Runs in SQLite/in-process mode, and in PostgreSQL +
Celery mode when .ci/run provides the servers (see tests/platform/stack.py)."""
from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import time
import urllib.request

import pytest

from shareval.client import submit as client_submit

from ..factories import labels_tsv, make_bundle, run_with_accuracy
from ..stack import MODE, Stack


def setup_world(stack, tmp_path, **bundle_kw):
    return stack.seed(make_bundle(tmp_path / "b", **bundle_kw), "tiny")


def test_cli_submit_validates_scores_and_reports(stack, tmp_path):
    tokens = setup_world(stack, tmp_path)
    stack.start()
    good = tmp_path / "good.tsv"
    good.write_text(run_with_accuracy(16))
    bad = tmp_path / "bad.tsv"
    bad.write_text("item\tlabel\ni00\tpos\ni00\tneg\n")
    env = {"SHAREVAL_SERVER": stack.url, "SHAREVAL_TOKEN": tokens["alice"]}
    r = stack.cli("submit", "-c", "tiny", "-p", "dev", "-t", "labels", bad, check=False,
                  extra_env=env)
    assert r.returncode == 2 and "bad.tsv:3" in r.stdout, r.stdout
    r = stack.cli("submit", "-c", "tiny", "-p", "dev", "-t", "classification", "--primary",
                  "--wait", good, extra_env=env)
    assert "accepted" in r.stdout and "accuracy\t0.8000" in r.stdout, r.stdout
    sid = r.stdout.split("submission ")[1].split()[0]
    assert f"result page: {stack.url}/s/{sid}/" in r.stdout, r.stdout
    page = urllib.request.urlopen(f"{stack.url}/s/{sid}/")    # the page exists (login form)
    assert page.status == 200
    # -t also takes the dataset name the pages show ('dev' here), not only the task's
    r = stack.cli("submit", "-c", "tiny", "-p", "dev", "-t", "dev", good, extra_env=env)
    assert "accepted" in r.stdout, r.stdout
    r = stack.cli("submit", "-c", "tiny", "-p", "dev", "-t", "nope", good, check=False,
                  extra_env=env)
    assert r.returncode == 1 and "refused (404)" in r.stdout, r.stdout
    code, board = stack.api("GET", "/api/competitions/tiny/leaderboard/dev/dev/")
    assert code == 200
    assert [row["team"] for row in board["rows"]] == ["Team A", "Baseline"]
    assert board["rows"][1]["baseline"] is True


def test_fifty_concurrent_uploads_accept_exactly_the_quota(stack, tmp_path):
    tokens = setup_world(stack, tmp_path, eval_quota=5)
    stack.start()
    files = []
    for k in range(50):
        f = tmp_path / f"run{k}.tsv"
        f.write_text(run_with_accuracy(k % 21))
        files.append(f)
    # a few invalid uploads mixed in: they must not use up the quota
    bad = tmp_path / "bad.tsv"
    bad.write_text(labels_tsv({"nope": "pos"}))

    def one(f):
        return client_submit(stack.url, tokens["alice"], f, "tiny", "eval", "labels")[0]
    with cf.ThreadPoolExecutor(50) as ex:
        codes = list(ex.map(one, files + [bad] * 5))
    assert codes[:50].count(201) == 5, (codes, stack.logs())
    assert codes[:50].count(429) == 45, (codes, stack.logs())
    # invalid files are refused as invalid (400), or as over quota (429) once it is full
    assert set(codes[50:]) <= {400, 429}, codes
    code, subs = stack.api("GET", "/api/submissions/?competition=tiny", tokens["alice"])
    counted = [s for s in subs if s["state"] != "rejected" and s["dataset"] == "eval"]
    assert len(counted) == 5
    # team B's quota is untouched
    assert client_submit(stack.url, tokens["bob"], files[0], "tiny", "eval",
                                          "labels")[0] == 201


def test_worker_killed_mid_scoring_is_requeued_and_scored_once(stack, tmp_path):
    stack.env["SHAREVAL_LEASE_SECONDS"] = "3"
    stack.env["SHAREVAL_HEARTBEAT_SECONDS"] = "0.5"
    tokens = setup_world(stack, tmp_path, baseline=False)
    stack.start(worker_env={"SHAREVAL_SCORING_DELAY": "60"})
    f = tmp_path / "run.tsv"
    f.write_text(run_with_accuracy(12))
    code, body = client_submit(stack.url, tokens["alice"], f, "tiny", "dev", "labels")
    assert code == 201
    sid = body["id"]
    stack.wait_state(sid, tokens["alice"], states=("running",), timeout=60)
    stack.kill_worker(stack.workers[0])
    stack.start_worker({})                          # a healthy worker takes over
    done = stack.wait_state(sid, tokens["alice"], timeout=120)
    assert done["state"] == "scored"
    assert done["score"]["metrics"]["accuracy"] == pytest.approx(0.6)
    msgs = [e["message"] for e in done["events"]]
    assert any("re-queued" in m for m in msgs), msgs
    assert [e["state"] for e in done["events"]].count("scored") == 1
    code, org_view = stack.api("GET", f"/api/submissions/{sid}/", tokens["org"])
    assert len(org_view["history"]) == 1             # scored exactly once
    time.sleep(1)


def test_mode_is_the_one_asked_for():
    """`make test-postgres` sets SHAREVAL_EXPECT_MODE, so a misconfigured run cannot
    silently fall back to SQLite."""
    import os
    from django.conf import settings
    # unset means `make test`: the embedded default, whatever else the shell exports
    expected = os.environ.get("SHAREVAL_EXPECT_MODE", "sqlite+in-process")
    assert expected in ("sqlite+in-process", "postgres+celery")
    assert MODE == expected
    engine = settings.DATABASES["default"]["ENGINE"]
    assert ("postgresql" in engine) == (MODE == "postgres+celery")


@pytest.mark.parametrize("command", ["run", "demo"])
def test_busy_port_is_one_plain_line_not_an_internal_error(stack, command):
    import socket
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = stack.cli("server", command, "--port", port, check=False)
    assert r.returncode == 1, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot listen on 127.0.0.1:{port}" in lines[0], r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert "make demo PORT=N" in lines[0]


def _post_headers(url: str, path: str, length: int, sent: int = 65536) -> tuple[int, float]:
    """POST ``path`` declaring ``length`` bytes, send only ``sent`` of them, and read
    the status line: a server that refuses from the headers answers at once."""
    import socket
    from urllib.parse import urlparse
    u = urlparse(url)
    t = time.monotonic()
    with socket.create_connection((u.hostname, u.port), timeout=30) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: {u.hostname}\r\nContent-Type: "
                  f"application/octet-stream\r\nContent-Length: {length}\r\n\r\n".encode())
        try:
            s.sendall(b"x" * sent)
        except OSError:
            pass                                   # the server may close early: fine
        status = s.makefile("rb").readline().split()[1]
    return int(status), time.monotonic() - t


def test_request_bodies_are_refused_from_the_headers(tmp_path):
    # issue 20.5: an anonymous 2 GB POST was spooled to /tmp before a 405
    home = tmp_path / "home"
    home.mkdir()
    s = Stack(home, SHAREVAL_MAX_UPLOAD_MB="1")
    try:
        s.start()
        code, took = _post_headers(s.url, "/api/competitions/", 2 * 2 ** 30)
        assert code == 413 and took < 10
        # non-upload routes: at most DATA_UPLOAD_MAX_MEMORY_SIZE (5 MB)
        assert _post_headers(s.url, "/accounts/login/", 6 * 2 ** 20)[0] == 413
        # the upload route: the upload limit (1 MB) plus the 1 MB envelope margin
        assert _post_headers(s.url, "/api/submissions/", 2 * 2 ** 20 + 1)[0] == 413
        small = _post_headers(s.url, "/api/submissions/", 1000, sent=1000)[0]
        assert small in (401, 403)                  # read, then refused as anonymous
        assert not [p for p in (home / "tmp").iterdir() if p.stat().st_size > 2 ** 20]
    finally:
        s.stop()


def test_one_teams_pile_of_runs_does_not_starve_another_team(stack, tmp_path):
    # issue 20.6: 5 large runs of one team made another team's tiny run wait 303 s
    # long enough that A's runs are still queued when B's arrives, even when uploads
    # are slow on a loaded machine (each is validated in a child process)
    stack.env["SHAREVAL_SCORING_DELAY"] = "10"
    tokens = setup_world(stack, tmp_path, baseline=False)
    stack.start()
    f = tmp_path / "run.tsv"
    f.write_text(run_with_accuracy(12))
    with cf.ThreadPoolExecutor(5) as ex:           # all of A's runs queued before B's
        a = list(ex.map(lambda _: client_submit(stack.url, tokens["alice"], f, "tiny", "dev",
                                                "labels")[1]["id"], range(5)))
    b = client_submit(stack.url, tokens["bob"], f, "tiny", "dev", "labels")[1]["id"]
    # B's job is committed (visible to every worker) before its upload is answered; its
    # "queued" event is written earlier, in the transaction, which a loaded database may
    # take over 0.5 s to commit (CI, PostgreSQL: two of A's runs were claimed 0.53 s after
    # B's "queued" event, before B's job could be seen)
    b_visible = dt.datetime.now(dt.timezone.utc)
    done = {sid: stack.wait_state(sid, tok, timeout=300)
            for sid, tok in [(s, tokens["alice"]) for s in a] + [(b, tokens["bob"])]}

    def at(sid, state):
        return dt.datetime.fromisoformat(next(e["at"] for e in done[sid]["events"]
                                              if e["state"] == state))
    b_started = at(b, "running")
    waiting = [at(s, "running") for s in a if at(s, "running") > b_visible]
    assert waiting, ("no run of team A was still waiting: the test proves nothing",
                     b_visible, [at(s, "running") for s in a])
    # no run of A started between B's job becoming visible and B's start. Margins of 2 s,
    # far below a lane's 10 s: each "running" event is written after its claim (an A
    # claimed just before B became visible may record its start later), and two lanes
    # that free up together take B and one of A's runs in the same round, A's possibly
    # recorded first. A served before B would start a whole lane's turn (10 s) earlier.
    cut = b_visible + dt.timedelta(seconds=2)
    before_b = b_started - dt.timedelta(seconds=2)
    assert not [t for t in waiting if cut < t < before_b], (b_visible, b_started, waiting)
