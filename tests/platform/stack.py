"""A real server on 127.0.0.1 in subprocesses, for end-to-end, browser and load tests.

Embedded mode (default): SQLite in a fresh folder, scoring in the server process.
PostgreSQL + Celery mode: when SHAREVAL_TEST_DATABASE_URL (a maintenance
connection, e.g. postgres://u:p@127.0.0.1:5432/postgres) and
SHAREVAL_TEST_BROKER_URL (redis://127.0.0.1:6379/0) are set, each stack gets a
fresh database and its own Celery queue, and scoring runs in Celery workers.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

SHAREVAL = [sys.executable, "-m", "shareval.cli"]
PG = os.environ.get("SHAREVAL_TEST_DATABASE_URL")
BROKER = os.environ.get("SHAREVAL_TEST_BROKER_URL")
MODE = "postgres+celery" if PG and BROKER else "sqlite+in-process"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stack:
    def __init__(self, home: Path, **env):
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
        self.env.update(SHAREVAL_HOME=str(home), SHAREVAL_LOG="WARNING",
                        SHAREVAL_SECRET_KEY="test-" + uuid.uuid4().hex,
                        PYTHONUNBUFFERED="1", **{k: str(v) for k, v in env.items()})
        self.db = None
        if MODE == "postgres+celery":
            self.db = "shareval_e2e_" + uuid.uuid4().hex[:10]
            self._pg(f'CREATE DATABASE "{self.db}"')
            base = PG.rsplit("/", 1)[0]
            self.env.update(SHAREVAL_DATABASE_URL=f"{base}/{self.db}", SHAREVAL_BROKER_URL=BROKER,
                            SHAREVAL_QUEUE="q-" + self.db)

    def _pg(self, sql: str) -> None:
        import psycopg
        with psycopg.connect(PG, autocommit=True) as c:
            c.execute(sql)

    def cli(self, *args, check=True, extra_env=None, timeout=300) -> subprocess.CompletedProcess:
        env = dict(self.env, **(extra_env or {}))
        r = subprocess.run(SHAREVAL + [str(a) for a in args], env=env, capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"shareval {' '.join(map(str, args))} -> {r.returncode}\n"
                                 f"{r.stdout}\n{r.stderr}")
        return r

    def start(self, worker_env: dict | None = None, workers: int = 1) -> "Stack":
        separate = MODE == "postgres+celery" or worker_env is not None
        args = ["server", "run", "--port", str(self.port)] + (["--no-worker"] if separate else [])
        self.procs.append(subprocess.Popen(SHAREVAL + args, env=self.env,
                                           stdout=open(self.home / "server.log", "ab"),
                                           stderr=subprocess.STDOUT))
        if separate:
            for _ in range(workers):
                self.start_worker(worker_env or {})
        self.wait_up()
        return self

    def start_worker(self, extra_env: dict) -> subprocess.Popen:
        n = len(self.workers)
        p = subprocess.Popen(SHAREVAL + ["server", "worker"], env=dict(self.env, **extra_env),
                             stdout=open(self.home / f"worker{n}.log", "ab"),
                             stderr=subprocess.STDOUT, start_new_session=True)
        self.workers.append(p)
        return p

    def kill_worker(self, p: subprocess.Popen) -> None:
        os.killpg(p.pid, signal.SIGKILL)         # the whole process group: Celery's children too
        p.wait(10)

    def wait_up(self, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                urllib.request.urlopen(self.url + "/api/competitions/", timeout=2).read()
                return
            except OSError:
                if self.procs[0].poll() is not None:
                    raise AssertionError("server exited:\n" +
                                         (self.home / "server.log").read_text())
                time.sleep(0.2)
        raise AssertionError("server did not start:\n" + (self.home / "server.log").read_text())

    def seed(self, bundle: Path, competition: str, tokens=("alice", "bob", "org")) -> dict:
        """The organizer ``org`` loads ``bundle``; alice and bob join ``competition`` as
        Team A and Team B; returns the API tokens of ``tokens``."""
        self.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
        self.cli("server", "load-bundle", bundle, "--organizer", "org")
        for user, team in (("alice", "Team A"), ("bob", "Team B")):
            self.cli("server", "add-user", user, "--password", f"{user}-pass-123",
                     "--competition", competition, "--team", team)
        return {u: self.cli("server", "token", u).stdout.strip() for u in tokens}

    def api(self, method: str, path: str, token: str | None = None, data: dict | None = None):
        from shareval.client import request
        body = json.dumps(data).encode() if data is not None else None
        return request(self.url, method, path, token, body,
                       "application/json" if body else None, timeout=60)

    def wait_state(self, sid: str, token: str, states=("scored", "failed"), timeout=120) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            code, body = self.api("GET", f"/api/submissions/{sid}/", token)
            if code == 200 and body["state"] in states:
                return body
            time.sleep(0.3)
        raise AssertionError(f"submission {sid} still {body.get('state')} after {timeout}s; "
                             f"logs:\n{self.logs()}")

    def logs(self, tail: int = 3000) -> str:
        """The end of the server's and workers' logs, for a failing assertion."""
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-tail:]}"
                         for p in sorted(self.home.glob("*.log")))

    def stop(self) -> None:
        for p in self.workers:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            p.terminate()
        for p in self.procs + self.workers:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.db:
            try:
                self._pg(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
            except Exception:
                pass
