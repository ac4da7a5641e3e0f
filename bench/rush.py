"""A deadline rush against a real server on 127.0.0.1 (issue 41).

    PYTHONPATH=src python bench/rush.py [--mode celery|embedded] [--teams 50]
        [--window 300] [--readers 20] [--trec-mb 20] [--workers 2] [--no-kill]

``--mode celery`` (default): PostgreSQL (a fresh database on ``--pg``, dropped at
the end) and Celery on Redis (``--broker``, a queue of its own):
``shareval server run --no-worker`` and ``--workers`` separate
``shareval server worker`` processes. ``--mode embedded``: SQLite in a fresh data
folder, scoring in the server process.

One competition (a bundle written here, seeded): a TREC dataset (qrels of
``--trec-mb``-sized runs: 1000 documents for each of the queries that fit),
an SV-Ident detection dataset (``--sentences`` sentences in both languages) and
an RCC citations dataset (``--publications`` publications). ``--teams`` teams of
one member each (created through the ORM, as bench/server.py does; an API token
each) upload 4 runs each through the REST API (``shareval.client.submit``): two
TREC runs (picked from a pool of ``--trec-pool`` distinct seeded runs: 2 GB of
distinct files would only fill the disk), one SV-Ident detection TSV and one RCC
citations JSON made for that team; each upload starts at a seeded random time in
the ``--window`` seconds. Meanwhile ``--readers`` participants (team members,
logged in) load, with a think time of about ``--think`` seconds, a leaderboard
(HTML), their runs page (HTML) and their runs in the API, until every accepted
run is scored (or failed). In celery mode, at ``--kill-at`` of the window the
first worker is killed (SIGKILL of its process group) while it scores a run, and
a replacement starts ``--restart-after`` seconds later, as a supervisor would.

Reported: uploads accepted / refused / lost (accepted but never scored) / failed;
upload start to score p50/p95 (the SCORED event's time in the database); the
pages' p50/p95/max during the rush; CPU seconds of the server, the workers and the
database over the rush and CPU per page request; peak resident memory of the
server, each worker and the database (PostgreSQL backends of this database plus
the shared memory once; SQLite lives in the server process); and, from the
database, that each run has one job, one current score, one score and one
SCORED event (scored exactly once), with the job attempts (the killed run: 2).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from _pages import session_for  # noqa: E402
from _timing import pct  # noqa: E402

SHAREVAL = [sys.executable, "-m", "shareval.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------
# Inputs (seeded)

def trec_inputs(root: Path, mb: float, pool: int, seed: int) -> tuple[Path, list[Path]]:
    """Qrels (graded, ~15 judged per query, some judged documents no run retrieves)
    and ``pool`` runs of about ``mb`` MB: 1000 documents per query, ids of varying
    width, six-decimal scores."""
    rng = random.Random(seed)
    line = len("301 Q0 doc1234567 100 12.345678 run0\n")      # a typical line
    queries = max(1, int(mb * 2 ** 20 / (line * 1000)))
    judged = {}
    with open(root / "qrels.txt", "w") as f:
        for q in range(queries):
            docs = rng.sample(range(1, 3_000_000), 15)
            judged[q] = docs
            f.write("".join(f"{q + 301} 0 doc{d} {rng.choice((0, 0, 1, 2))}\n" for d in docs))
    runs = []
    for k in range(pool):
        r = random.Random(seed * 1000 + k)
        p = root / f"trec-{k}.txt"
        with open(p, "w") as f:
            for q in range(queries):
                hits = r.sample(judged[q], r.randint(3, 12))
                docs = set(hits)
                while len(docs) < 1000:           # distinct ids, as a valid run has
                    docs.add(r.randrange(1, 3_000_000))
                docs = hits + sorted(docs - set(hits))
                r.shuffle(docs)
                s = 30 * r.random() + 5
                f.write("".join(f"{q + 301} Q0 doc{d} {i + 1} {s - i * 0.0123:.6f} run{k}\n"
                                for i, d in enumerate(docs)))
        runs.append(p)
    return root / "qrels.txt", runs


def svident_inputs(root: Path, sentences: int, seed: int) -> Path:
    rng = random.Random(seed)
    rows = ["sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"]
    for k in range(sentences):
        var = rng.random() < 0.3
        ids = ";".join(f"v{rng.randint(1, 900)}" for _ in range(rng.randint(1, 2))) if var else ""
        words = " ".join(rng.choice(("survey", "panel", "income", "respondents", "share",
                                     "employment", "wave", "the", "of", "health"))
                         for _ in range(rng.randint(8, 30)))
        rows.append(f"{words}\t{int(var)}\t{ids}\t\tdoc{k // 20}\t{uuid.UUID(int=rng.getrandbits(128))}"
                    f"\t{rng.choice(('en', 'de'))}\n")
    (root / "svident-ref.tsv").write_text("".join(rows))
    return root / "svident-ref.tsv"


def svident_run(ref: Path, out: Path, seed: int) -> Path:
    rng = random.Random(seed)
    lines = ref.read_text().splitlines()[1:]
    out.write_text("".join(f"{ln.split(chr(9))[5]}\t{int(rng.random() < 0.35)}\n" for ln in lines))
    return out


def rcc_inputs(root: Path, publications: int, seed: int) -> Path:
    rng = random.Random(seed)
    ref = root / "rcc-ref"
    ref.mkdir()
    gold = []
    for p in range(publications):
        for ds in rng.sample(range(1, 1200), rng.choice((0, 0, 1, 1, 2, 3))):
            gold.append({"publication_id": p, "data_set_id": ds,
                         "mention_list": [f"survey {ds} wave {rng.randint(1, 3)}"]})
    (ref / "data_set_citations.json").write_text(json.dumps(gold))
    (ref / "publications.json").write_text(json.dumps([{"publication_id": p}
                                                       for p in range(publications)]))
    return ref


def rcc_run(ref: Path, out: Path, seed: int) -> Path:
    rng = random.Random(seed)
    gold = json.loads((ref / "data_set_citations.json").read_text())
    n = len(json.loads((ref / "publications.json").read_text()))
    cites = [{"publication_id": g["publication_id"], "data_set_id": g["data_set_id"],
              "score": round(rng.random(), 6), "mention_list": g["mention_list"]}
             for g in gold if rng.random() < 0.6]
    cites += [{"publication_id": rng.randrange(n), "data_set_id": rng.randint(1, 1200),
               "score": round(rng.random(), 6), "mention_list": []} for _ in range(n // 2)]
    out.write_text(json.dumps(cites))
    return out


def write_bundle(root: Path, qrels: Path, sv: Path, rcc: Path) -> Path:
    import yaml
    now = dt.datetime.now(dt.timezone.utc)
    big = [{"limit": 100000, "window": "week"}]
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "rush", "title": "Deadline rush", "time_zone": "UTC",
        "tasks": [{"slug": "trec", "task": "trec"},
                  {"slug": "detect", "task": "svident-detection"},
                  {"slug": "cites", "task": "rcc-citations"}],
        "phases": [{"slug": "test", "title": "Test", "leaderboard": "public",
                    "start": (now - dt.timedelta(days=1)).replace(microsecond=0).isoformat(),
                    "end": (now + dt.timedelta(days=2)).replace(microsecond=0).isoformat(),
                    "datasets": [
                        {"slug": "trec", "task": "trec", "reference": qrels.name, "quotas": big},
                        {"slug": "detect", "task": "detect", "reference": sv.name,
                         "quotas": big},
                        {"slug": "cites", "task": "cites", "reference": rcc.name,
                         "quotas": big}]}]}, sort_keys=False))
    return root


# ---------------------------------------------------------------------------
# Processes and their memory

def _status(pid: int) -> dict[str, int]:
    out = {}
    try:
        for line in open(f"/proc/{pid}/status"):
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssShmem"):
                out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                todo += [int(k) for k in open(f"/proc/{p}/task/{t}/children").read().split()]
        except OSError:
            continue
    return out


def _cpu(pid: int) -> tuple[float, float]:
    """(CPU seconds of ``pid`` itself, of its children it has waited for)."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return (int(f[11]) + int(f[12])) / tick, (int(f[13]) + int(f[14])) / tick


def postgres_pids(db: str | None) -> tuple[list[int], list[int]]:
    """(this database's backends, every postgres process)."""
    mine, every = [], []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode()
            comm = open(f"/proc/{p}/comm").read().strip()
        except OSError:
            continue
        if comm.startswith("postgres") or cmd.startswith("postgres"):
            every.append(int(p))
            if db and f" {db} " in cmd + " ":
                mine.append(int(p))
    return mine, every


class Monitor(threading.Thread):
    """Peak RSS of named process trees and of the database, polled every 0.25 s."""

    def __init__(self, db: str | None):
        super().__init__(daemon=True)
        self.roots: dict[str, int] = {}
        self.peak: dict[str, float] = {}
        self.db, self.stop = db, threading.Event()
        self._cpu: dict[str, float] = {}        # CPU seconds so far, by what
        self._base: dict[str, float] = {}

    def mark(self) -> None:
        """CPU counts from now on."""
        self.sample()
        self._base = dict(self._cpu)

    def _add(self, key: str, v: float) -> None:
        self._cpu[key] = max(self._cpu.get(key, 0), v)

    def run(self):
        while not self.stop.wait(0.25):
            self.sample()

    def sample(self):
        for name, root in list(self.roots.items()):
            pids = _tree(root)
            mb = sum(_status(p).get("VmRSS", 0) for p in pids) / 1024
            self.peak[name] = max(self.peak.get(name, 0), mb)
            own, reaped = _cpu(root)
            live = sum(_cpu(p)[0] for p in pids if p != root)
            if name == "server":
                self._add("server", own)
                self._add("server's children (upload validation)", reaped + live)
            else:
                self._add(name, own + reaped + live)
        if self.db is not None:
            mine, every = postgres_pids(self.db)
            st = {p: _status(p) for p in every}
            shm = max((s.get("RssShmem", 0) for s in st.values()), default=0)
            anon_mine = sum(st[p].get("RssAnon", 0) for p in mine if p in st)
            anon_all = sum(s.get("RssAnon", 0) for s in st.values())
            self.peak["database: this database's backends (private)"] = max(
                self.peak.get("database: this database's backends (private)", 0), anon_mine / 1024)
            self.peak["database: every postgres process (private + shared once)"] = max(
                self.peak.get("database: every postgres process (private + shared once)", 0),
                (anon_all + shm) / 1024)
            for p in every:                # exited backends' last moments are not counted
                self._add(f"database {p}", _cpu(p)[0])

    def cpu_by_name(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for k, v in self._cpu.items():
            key = k.split()[0] if k.startswith(("worker", "database")) else k
            out[key] = out.get(key, 0) + v - self._base.get(k, 0)
        return out


# ---------------------------------------------------------------------------
# The rush

def seed_server(home: Path, bundle: Path, teams: int):
    """Migrate, load the bundle, and make ``teams`` teams (one member, a token each)."""
    import shareval.platform as platform
    platform.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from shareval.platform.accounts.models import ApiToken
    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    call_command("migrate", verbosity=0)
    User = get_user_model()
    org = User.objects.create_user("org", password="x", is_staff=True)
    load_bundle(bundle, org)
    from shareval.platform.competitions.models import Competition
    comp = Competition.objects.get(slug="rush")
    hashed = make_password("x")
    users = User.objects.bulk_create([User(username=f"user{t:03d}", password=hashed)
                                      for t in range(teams)])
    rows = Team.objects.bulk_create([Team(competition=comp, name=f"Team {t:03d}", lead=u)
                                     for t, u in enumerate(users)])
    Membership.objects.bulk_create([Membership(team=tm, user=u, status=Membership.APPROVED)
                                    for tm, u in zip(rows, users)])
    users = list(User.objects.filter(username__startswith="user").order_by("username"))
    return users, [ApiToken.issue(u, "rush")[1] for u in users]


def get(url: str, cookie: str | None) -> float:
    headers = {"Cookie": f"sessionid={cookie}"} if cookie else {}
    t = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as r:
        r.read()
        if r.status != 200:
            raise OSError(f"{url}: {r.status}")
    return time.perf_counter() - t


def reader(base: str, cookie: str, think: float, seed: int, stop: threading.Event,
           out: list, errors: list) -> None:
    rng = random.Random(seed)
    pages = [("leaderboard (HTML)", lambda: f"/c/rush/leaderboard/test/"
              f"{rng.choice(('trec', 'detect', 'cites'))}/"),
             ("my runs (HTML)", lambda: "/c/rush/submissions/"),
             ("my runs (API)", lambda: "/api/submissions/?competition=rush")]
    while not stop.is_set():
        label, path = rng.choice(pages)
        try:
            out.append((label, time.time(), get(base + path(), cookie)))
        except Exception as e:                                  # noqa: BLE001
            errors.append(f"{label}: {e}")
        stop.wait(rng.expovariate(1 / think) if think > 0 else 0)


def uploader(base: str, token: str, files: list[tuple[str, Path, float]], t0: float,
             results: list) -> None:
    from shareval.client import submit
    for task, path, at in sorted(files, key=lambda f: f[2]):
        delay = t0 + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        start = time.time()
        try:
            code, body = submit(base, token, path, "rush", "test", task, timeout=900)
        except Exception as e:                                  # noqa: BLE001
            code, body = -1, {"error": repr(e)}
        results.append({"task": task, "file": path.name, "bytes": path.stat().st_size,
                        "start": start, "answered": time.time(), "code": code,
                        "id": body.get("id") if isinstance(body, dict) else None,
                        "body": body if code != 201 else None})


def outcome(results: list) -> dict:
    """Per accepted run, from the database: state, jobs, scores, events, scored time."""
    from shareval.platform.submissions.models import Job, Score, Submission, SubmissionEvent
    ids = [r["id"] for r in results if r["code"] == 201]
    subs = {str(s.pk): s for s in Submission.objects.filter(pk__in=ids)}
    out = {}
    for sid in ids:
        s = subs.get(str(sid))
        if s is None:
            out[sid] = {"state": "missing"}
            continue
        events = list(SubmissionEvent.objects.filter(submission=s).order_by("at", "pk")
                      .values_list("state", "at", "message"))
        scored = [at for st, at, _ in events if st == Submission.SCORED]
        out[sid] = {"state": s.state,
                    "jobs": list(Job.objects.filter(submission=s).values_list("attempts", "status")),
                    "scores": Score.objects.filter(submission=s).count(),
                    "current": Score.objects.filter(submission=s, current=True).count(),
                    "scored_events": len(scored),
                    "requeued": sum("re-queued" in m for _, _, m in events),
                    "scored_at": scored[0].timestamp() if scored else None,
                    "failure": [m for st, _, m in events if st == Submission.FAILED][:1]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("celery", "embedded"), default="celery")
    ap.add_argument("--teams", type=int, default=50)
    ap.add_argument("--window", type=float, default=300, help="seconds the uploads spread over")
    ap.add_argument("--readers", type=int, default=20)
    ap.add_argument("--think", type=float, default=1.0, help="a reader's mean pause, seconds")
    ap.add_argument("--idle", type=float, default=20,
                    help="seconds the readers run before the rush (the pages' idle cost)")
    ap.add_argument("--trec-mb", type=float, default=20)
    ap.add_argument("--trec-pool", type=int, default=8, help="distinct TREC runs generated")
    ap.add_argument("--sentences", type=int, default=4000, help="SV-Ident sentences")
    ap.add_argument("--publications", type=int, default=5000, help="RCC publications")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, help="the server's threads (default: its own)")
    ap.add_argument("--kill-at", type=float, default=0.5, help="fraction of the window")
    ap.add_argument("--restart-after", type=float, default=5.0)
    ap.add_argument("--no-kill", action="store_true")
    ap.add_argument("--drain-timeout", type=float, default=3600)
    ap.add_argument("--pg", default=os.environ.get("SHAREVAL_TEST_PG",
                                                   "postgres://shareval:shareval@127.0.0.1:55432"))
    ap.add_argument("--broker", default=os.environ.get("SHAREVAL_TEST_REDIS",
                                                       "redis://127.0.0.1:56379") + "/0")
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--json", type=Path, help="write the raw results here")
    ap.add_argument("--keep", action="store_true", help="keep the data folder and database")
    a = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="shareval-rush-"))
    inputs = home / "inputs"
    inputs.mkdir()
    t = time.perf_counter()
    qrels, pool = trec_inputs(inputs, a.trec_mb, a.trec_pool, a.seed)
    sv = svident_inputs(inputs, a.sentences, a.seed)
    rcc = rcc_inputs(inputs, a.publications, a.seed)
    bundle = write_bundle(inputs, qrels, sv, rcc)
    plan, rng = [], random.Random(a.seed)
    for team in range(a.teams):
        files = [("trec", pool[(2 * team) % len(pool)]), ("trec", pool[(2 * team + 1) % len(pool)]),
                 ("detect", svident_run(sv, inputs / f"det-{team}.tsv", a.seed + team)),
                 ("cites", rcc_run(rcc, inputs / f"cites-{team}.json", a.seed + team))]
        plan.append([(task, p, rng.uniform(0, a.window)) for task, p in files])
    sizes = {k: statistics.median(p.stat().st_size for task, p, _at in sum(plan, []) if task == k)
             for k in ("trec", "detect", "cites")}
    print(f"inputs in {time.perf_counter() - t:.0f} s ({home}): TREC runs "
          f"{sizes['trec'] / 2**20:.1f} MB, SV-Ident detection {sizes['detect'] / 1024:.0f} KB, "
          f"RCC citations {sizes['cites'] / 1024:.0f} KB", flush=True)

    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(SHAREVAL_HOME=str(home), SHAREVAL_LOG="WARNING", PYTHONUNBUFFERED="1",
               SHAREVAL_SECRET_KEY="rush-" + uuid.uuid4().hex)
    db = None
    if a.mode == "celery":
        import psycopg
        db = "shareval_rush_" + uuid.uuid4().hex[:8]
        with psycopg.connect(a.pg + "/postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{db}"')
        env.update(SHAREVAL_DATABASE_URL=f"{a.pg}/{db}", SHAREVAL_BROKER_URL=a.broker,
                   SHAREVAL_QUEUE="q-" + db)
    os.environ.update({k: v for k, v in env.items() if k.startswith("SHAREVAL_")})
    os.environ.pop("SHAREVAL_BROKER_URL", None)      # this process sends nothing
    users, tokens = seed_server(home, bundle, a.teams)
    cookies = [session_for(u) for u in users]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    procs, workers = [], []
    mon = Monitor(db)
    server = subprocess.Popen(SHAREVAL + ["server", "run", "--port", str(port)]
                              + (["--threads", str(a.threads)] if a.threads else [])
                              + (["--no-worker"] if a.mode == "celery" else []),
                              env=env, stdout=open(home / "server.log", "ab"),
                              stderr=subprocess.STDOUT)
    procs.append(server)
    mon.roots["server"] = server.pid

    def start_worker() -> subprocess.Popen:
        n = len(workers)
        p = subprocess.Popen(SHAREVAL + ["server", "worker"], env=env,
                             stdout=open(home / f"worker{n}.log", "ab"),
                             stderr=subprocess.STDOUT, start_new_session=True)
        workers.append(p)
        mon.roots[f"worker {n}"] = p.pid
        return p

    killed: dict = {}
    try:
        if a.mode == "celery":
            for _ in range(a.workers):
                start_worker()
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/api/competitions/", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None:
                    raise SystemExit((home / "server.log").read_text())
                time.sleep(0.2)
        time.sleep(3 if a.mode == "celery" else 0)       # workers connected
        mon.start()
        results: list = []
        reads: list = []
        read_errors: list = []
        stop = threading.Event()
        readers = [threading.Thread(target=reader, daemon=True, args=(
            base, cookies[i % len(cookies)], a.think, a.seed + i, stop, reads, read_errors))
            for i in range(a.readers)]
        for r in readers:
            r.start()
        mon.mark()
        time.sleep(a.idle)                 # the same readers, no uploads: the pages' own cost
        idle = {"cpu": mon.cpu_by_name(), "reads": list(reads), "seconds": a.idle}
        mon.mark()
        rush_start, t0 = time.time(), time.monotonic()
        ups = [threading.Thread(target=uploader, daemon=True,
                                args=(base, tokens[i], plan[i], t0, results))
               for i in range(a.teams)]
        for u in ups:
            u.start()
        if a.mode == "celery" and not a.no_kill and workers:
            killed = kill_one(workers[0], db, t0 + a.kill_at * a.window, a.window)
            if killed:
                mon.sample()
                time.sleep(a.restart_after)
                start_worker()
        for u in ups:
            u.join()
        uploads_done = time.time()
        import django.db
        accepted = [r["id"] for r in results if r["code"] == 201]
        from shareval.platform.submissions.models import Submission
        end = time.monotonic() + a.drain_timeout
        while time.monotonic() < end:
            left = Submission.objects.filter(pk__in=accepted).exclude(
                state__in=(Submission.SCORED, Submission.FAILED)).count()
            django.db.close_old_connections()
            if not left:
                break
            time.sleep(1)
        rush_end = time.time()
        stop.set()
        for r in readers:
            r.join(150)
        mon.stop.set()
        mon.join()
        mon.sample()
        cpu = mon.cpu_by_name()
        res = outcome(results)
        report(a, db, results, res, reads, read_errors, mon.peak, cpu, rush_start,
               uploads_done, rush_end, killed, sizes, idle)
        if a.json:
            a.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(a).items()},
                                          "uploads": results, "runs": res, "killed": killed,
                                          "peak_mb": mon.peak, "cpu_s": cpu,
                                          "reads": reads[:100000]}, indent=1, default=str))
        bad = [s for s, o in res.items() if o.get("state") != Submission.SCORED]
        return 0 if not bad and all(r["code"] == 201 for r in results) else 1
    finally:
        for p in workers:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.terminate()
        for p in procs + workers:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        print(f"logs: {home}/*.log")
        if db and not a.keep:
            import django.db
            django.db.connections.close_all()
            import psycopg
            with psycopg.connect(a.pg + "/postgres", autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def kill_one(worker: subprocess.Popen, db: str, at: float, window: float) -> dict:
    """SIGKILL ``worker`` (its process group) once after ``at`` while it holds a
    running job; returns which job and when."""
    from django.db import close_old_connections

    from shareval.platform.submissions.models import Job
    while time.monotonic() < at:
        time.sleep(0.5)
    deadline = at + window
    while time.monotonic() < deadline:
        running = list(Job.objects.filter(status=Job.RUNNING, worker__endswith=f":{worker.pid}")
                       .values_list("pk", "submission_id", "submission__size"))
        close_old_connections()
        if running:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
            return {"at": time.time(), "jobs": [{"job": j, "submission": str(s), "bytes": b}
                                                for j, s, b in running]}
        time.sleep(0.2)
    return {}


def report(a, db, results, res, reads, read_errors, peak, cpu, rush_start, uploads_done,
           rush_end, killed, sizes, idle) -> None:
    n = len(results)
    accepted = [r for r in results if r["code"] == 201]
    refused = [r for r in results if r["code"] != 201]
    lost = [s for s, o in res.items() if o.get("state") not in ("scored", "failed")]
    failed = [s for s, o in res.items() if o.get("state") == "failed"]
    wall = rush_end - rush_start
    print(f"\nDeadline rush, {a.mode} mode ({'PostgreSQL + Celery, ' + str(a.workers) + ' workers' if a.mode == 'celery' else 'SQLite, scoring in the server process'}); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{a.teams} teams x 4 runs = {n} uploads over {a.window:.0f} s (TREC "
          f"{sizes['trec'] / 2**20:.1f} MB x2, SV-Ident {sizes['detect'] / 1024:.0f} KB, RCC "
          f"{sizes['cites'] / 1024:.0f} KB); {a.readers} readers, think {a.think} s")
    print(f"  uploads: {len(accepted)} accepted, {len(refused)} refused "
          f"{sorted({r['code'] for r in refused})}, {len(lost)} lost (accepted, never scored), "
          f"{len(failed)} failed")
    for r in refused[:5]:
        print(f"    refused: {r['task']} {r['file']} -> {r['code']} {str(r['body'])[:200]}")
    for s in failed[:5]:
        print(f"    failed: {s} {res[s]['failure']}")
    up = [r["answered"] - r["start"] for r in accepted]
    by_id = {r["id"]: r for r in accepted}
    lat = {}
    for s, o in res.items():
        if o.get("scored_at"):
            lat.setdefault(by_id[s]["task"], []).append(o["scored_at"] - by_id[s]["start"])
    allx = sum(lat.values(), [])
    if up:
        print(f"  upload request (start to answer): p50 {statistics.median(up):.2f} s, "
              f"p95 {pct(up, 0.95):.2f} s, max {max(up):.2f} s")
    if allx:
        print(f"  upload start to score: p50 {statistics.median(allx):.1f} s, "
              f"p95 {pct(allx, 0.95):.1f} s, max {max(allx):.1f} s; "
              + ", ".join(f"{k} p50 {statistics.median(v):.1f} / p95 {pct(v, 0.95):.1f} s"
                          for k, v in sorted(lat.items())))
    print(f"  last upload answered {uploads_done - rush_start:.0f} s, last run scored "
          f"{wall:.0f} s after the rush began")
    quiet = idle["reads"]
    if quiet:
        xs = [x[2] for x in quiet]
        per = idle["cpu"].get("server", 0) / len(quiet)
        print(f"  pages before the rush ({len(quiet)} requests in {idle['seconds']:.0f} s, no "
              f"uploads): p50 {statistics.median(xs) * 1e3:.0f} ms, p95 {pct(xs, 0.95) * 1e3:.0f} "
              f"ms; server CPU {per * 1e3:.0f} ms and database CPU "
              f"{idle['cpu'].get('database', 0) / len(quiet) * 1e3:.0f} ms per page")
    during = [x for x in reads if rush_start <= x[1] <= rush_end]
    print(f"  pages during the rush ({len(during)} requests, {len(read_errors)} errors):")
    for label in sorted({x[0] for x in during}):
        xs = [x[2] for x in during if x[0] == label]
        print(f"    {label:<22} p50 {statistics.median(xs) * 1e3:7.0f} ms  p95 "
              f"{pct(xs, 0.95) * 1e3:7.0f} ms  max {max(xs) * 1e3:7.0f} ms  (n={len(xs)})")
    allp = [x[2] for x in during]
    if allp:
        p95 = pct(allp, 0.95) * 1e3
        print(f"    all pages p95 {p95:.0f} ms (goal <= 300 ms: {'met' if p95 <= 300 else 'NOT met'})")
    for e in read_errors[:3]:
        print(f"    error: {e[:200]}")
    busy = sum(cpu.values())
    print(f"  CPU seconds over the rush ({wall:.0f} s): " + ", ".join(
        f"{k} {v:.0f}" for k, v in sorted(cpu.items())) + f"; together {busy / wall:.2f} cores busy")
    if during and quiet:
        page = (idle["cpu"].get("server", 0) + idle["cpu"].get("database", 0)) / len(quiet)
        other = busy - page * len(during)
        print(f"  of which pages (at their idle cost) {page * len(during):.0f} s; uploads, "
              f"validation and scoring {other:.0f} s = {other / wall:.2f} cores over the rush")
    print("  peak resident memory: " + "; ".join(f"{k} {v:.0f} MB" for k, v in peak.items()))
    if a.mode == "celery":
        if killed:
            print(f"  worker 0 killed at {killed['at'] - rush_start:.0f} s while scoring "
                  + ", ".join(f"{j['submission']} ({j['bytes'] / 2**20:.1f} MB)" for j in killed["jobs"]))
            for j in killed["jobs"]:
                o = res.get(j["submission"]) or res.get(int(j["submission"])) or {}
                print(f"    that run: state {o.get('state')}, jobs (attempts, status) "
                      f"{o.get('jobs')}, scores {o.get('scores')}, SCORED events "
                      f"{o.get('scored_events')}, re-queued events {o.get('requeued')}")
        else:
            print("  no worker killed (--no-kill, or none was scoring)")
    once = [s for s, o in res.items() if o.get("state") == "scored" and o.get("scores") == 1
            and o.get("current") == 1 and o.get("scored_events") == 1 and len(o.get("jobs", [])) == 1]
    retried = [s for s, o in res.items() if any(at > 1 for at, _ in o.get("jobs", []))]
    print(f"  scored exactly once (1 job, 1 score, 1 current, 1 SCORED event): {len(once)} of "
          f"{len(accepted)}; runs with more than one attempt: {len(retried)}")


if __name__ == "__main__":
    sys.exit(main())
