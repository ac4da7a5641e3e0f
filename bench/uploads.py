"""Hostile and large uploads against a real server on 127.0.0.1 (issue 20.4).

    python bench/uploads.py [--run-mb 199] [--bombs 1] [--bomb-members 3] [--member-mb 500]
                            [--format-mb 50] [--mat-docs 15000] [--formats-only]

One run measures, against ``shareval server run --no-worker`` (SQLite; the
upload path alone, nothing is scored) started in a fresh data folder:

1. a tar bomb (a .tgz of ``--bomb-members`` members of ``--member-mb`` MB of
   zeros, about 1.5 MB packed) uploaded to a MATERIAL CLIR dataset
   ``--bombs`` times at once: time to the answer, and the peak resident memory
   of the server process and of every process it started (polled from /proc
   every 20 ms);
2. a valid ~199 MB TREC run: ``shareval validate trec`` on the command line
   (wall time, peak RSS from wait4), then the same file uploaded (time to the
   answer, peak RSS of every server process);
3. three such uploads at once while one client GETs a trivial endpoint
   (``/api/competitions/``) in a loop: p50/p95/max latency of that endpoint
   while the uploads are in flight, against the same loop on an idle server;
4. memory per byte (issue 41), for each task's format: a valid file of about
   ``--format-mb`` MB (TREC run, RCC citations JSON, SV-Ident detection TSV,
   MATERIAL CLIR .tgz) and a one-record file of the same format are uploaded;
   MATERIAL twice: as an evaluation sends it (a ``--mat-docs`` collection, every
   document listed for each of as many queries as make ``--format-mb`` MB packed)
   and as 3 queries over a collection grown to ``--format-mb`` MB unpacked;
   the table gives the file's size, the peak RSS of the validating child
   (polled, and as the child reports it) and of the server, the ratio of the
   child's peak to the file's size, and the ratio of what the file adds (the
   peak above the one-record file's, which holds the interpreter, the imports
   and the reference) to its size. The large TREC run of step 2 gets a row too.

Loopback only; every loop is bounded in count and time. Run it with
``PYTHONPATH=<a checkout>/src`` to measure another version of the code.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import io
import os
import random
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from _timing import pct

SHAREVAL = [sys.executable, "-m", "shareval.cli"]
DOCS = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, 7)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------
# Inputs

def material_pack(root: Path, docs: int = 6, queries: int = 3) -> Path:
    root.mkdir(parents=True)
    (root / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    every = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, docs + 1)]
    (root / "documents.tsv").write_text("doc_id\tgenre\n" + "".join(f"{d}\ttext\n" for d in every))
    (root / "queries.tsv").write_text("query_id\tquery\ttype\n" + "".join(
        f"query{q}\tword{q}:Lifestyle\tlexical\n" for q in range(1, queries + 1)))
    for sub in ("clir", "domainid", "langid"):
        (root / sub).mkdir()
    for q in range(1, queries + 1):
        (root / "clir" / f"query{q}.tsv").write_text("".join(f"{d}\tN\n" for d in DOCS))
    return root


class _Zeros(io.RawIOBase):
    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def readinto(self, b):
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


def tar_bomb(path: Path, members: int, member_mb: int) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=9) as tar:
        for q in range(1, members + 1):
            info = tarfile.TarInfo(f"query{q}.tsv")
            info.size = member_mb * 2 ** 20
            tar.addfile(info, io.BufferedReader(_Zeros(info.size), 2 ** 20))
    return path


def trec_files(root: Path, run_mb: int, seed: int = 0) -> tuple[Path, Path]:
    """A qrels and a valid run of about ``run_mb`` MB (1000 documents per query)."""
    rng = random.Random(seed)
    line = len("q0000 Q0 d0000000 1000 0.123456 bench\n")
    queries = max(1, int(run_mb * 2 ** 20 // (line * 1000)))
    root.mkdir(parents=True, exist_ok=True)
    qrels, run = root / "qrels.txt", root / "run.txt"
    with open(qrels, "w") as f:
        for q in range(queries):
            for d in rng.sample(range(100000), 20):
                f.write(f"q{q:04d} 0 d{d:07d} {rng.randint(0, 2)}\n")
    with open(run, "w") as f:
        for q in range(queries):
            docs = rng.sample(range(10_000_000), 1000)
            f.write("".join(f"q{q:04d} Q0 d{d:07d} {r + 1} {1 - r / 1000:.6f} bench\n"
                            for r, d in enumerate(docs)))
    return qrels, run


def _uuid(rng) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def format_files(root: Path, mb: float, docs: int, mat_docs: int = 15000,
                 seed: int = 0) -> dict:
    """References (for the bundle) and, per format, a valid submission of about ``mb``
    MB and a one-record one: {"refs": {...}, "files": {fmt: (big, tiny, task slug)}}."""
    import json
    rng = random.Random(seed)
    root.mkdir(parents=True)
    target = int(mb * 2 ** 20)
    # RCC citations: indented JSON (as json.dump(indent=2) writes it), ids as integers
    pubs = max(1, target // 900)
    ref = [{"publication_id": p, "data_set_id": rng.randrange(1, 2000)} for p in range(pubs)]
    (root / "rcc_ref.json").write_text(json.dumps(ref))

    def citation(i):
        return {"publication_id": i % pubs, "data_set_id": i // pubs + 1,
                "score": round(rng.random(), 4),
                "mention_list": [f"Survey of {rng.choice(WORDS)} {rng.choice(WORDS)}",
                                 f"{rng.choice(WORDS).title()} Panel Study"]}
    with open(root / "rcc.json", "w") as f:
        f.write("[\n")
        i = 0
        while f.tell() < target:
            f.write((",\n" if i else "") + json.dumps(citation(i), indent=2))
            i += 1
        f.write("\n]\n")
    (root / "rcc_tiny.json").write_text(json.dumps([citation(0)], indent=2))
    # SV-Ident detection TSV (uuid<TAB>0|1) and its reference, one sentence per line
    n = max(1, target // 39)
    uuids = [_uuid(rng) for _ in range(n)]
    with open(root / "sv_ref.tsv", "w") as f:
        f.write("sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n")
        for i, u in enumerate(uuids):
            v = i % 3 == 0
            f.write(f"The {rng.choice(WORDS)} of respondents in wave {i % 7}.\t{int(v)}\t"
                    f"{f'v{i % 500}' if v else ''}\t{'rd1' if v else ''}\tdoc{i // 20}\t{u}\ten\n")
    with open(root / "sv.tsv", "w") as f:
        f.write("".join(f"{u}\t{rng.randint(0, 1)}\n" for u in uuids))
    (root / "sv_tiny.tsv").write_text(f"{uuids[0]}\t1\n")
    # MATERIAL CLIR: a .tgz of one DocID<TAB>Y|N<TAB>confidence file per query
    mat = root / "mat"
    mat.mkdir()
    doc_ids = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, docs + 1)]
    for q in range(1, 4):
        (mat / f"query{q}.tsv").write_text("".join(
            f"{d}\t{'Y' if rng.random() < .01 else 'N'}\t{rng.random():.5f}\n" for d in doc_ids))
    with tarfile.open(root / "mat.tgz", "w:gz") as tar:
        for q in range(1, 4):
            tar.add(mat / f"query{q}.tsv", f"query{q}.tsv")
    shutil.rmtree(mat)
    with tarfile.open(root / "mat_tiny.tgz", "w:gz") as tar:
        for q in range(1, 4):
            data = f"{doc_ids[0]}\tN\t0.5\n".encode()
            info = tarfile.TarInfo(f"query{q}.tsv")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    # the same format as a real evaluation sends it: a collection of ``mat_docs``
    # documents (the plan's evaluation packs: three epochs of ~5,000), one file per
    # query listing every document, as many queries as make ``mb`` MB packed
    mat_q, mat_q_tiny, queries = material_queries_tgz(root, mb, mat_docs, rng)
    tiny_run = root / "trec_tiny.txt"
    tiny_run.write_text("q0000 Q0 d0000001 1 1.0 bench\n")
    return {"refs": {"rcc": root / "rcc_ref.json", "sv": root / "sv_ref.tsv"},
            "files": {"SV-Ident detection TSV": (root / "sv.tsv", root / "sv_tiny.tsv", "sv"),
                      "RCC citations JSON": (root / "rcc.json", root / "rcc_tiny.json", "rcc"),
                      f"MATERIAL CLIR .tgz, {queries} queries": (mat_q, mat_q_tiny, "clirq"),
                      "MATERIAL CLIR .tgz, 3 queries": (root / "mat.tgz", root / "mat_tiny.tgz",
                                                        "clir")},
            "tiny_run": tiny_run, "mat_docs": mat_docs, "mat_queries": queries}


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def material_queries_tgz(root: Path, mb: float, docs: int, rng) -> tuple[Path, Path, int]:
    """A .tgz of about ``mb`` MB packed (gzip's default level, as ``tar czf`` writes it):
    query files of ``docs`` lines each; and its one-line-per-query twin."""
    doc_ids = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, docs + 1)]

    def member():
        return "".join(f"{d}\t{'Y' if rng.random() < .01 else 'N'}\t{rng.random():.5f}\n"
                       for d in doc_ids).encode()
    import zlib
    packed = len(zlib.compress(member(), 6))
    queries = max(1, round(mb * 2 ** 20 / packed))
    path, tiny = root / "mat_q.tgz", root / "mat_q_tiny.tgz"
    with tarfile.open(path, "w:gz", compresslevel=6) as tar:
        for q in range(1, queries + 1):
            _add(tar, f"query{q}.tsv", member())
    with tarfile.open(tiny, "w:gz") as tar:
        for q in range(1, queries + 1):
            _add(tar, f"query{q}.tsv", f"{doc_ids[0]}\tN\t0.5\n".encode())
    return path, tiny, queries


CHILD_PEAK = """
import sys
from shareval.platform.submissions import isolate
task, path, ref, name = sys.argv[1:]
v = isolate.validate(task, path, ref, isolate.Limits(memory_mb=16000), name=name)
print(v.max_rss_kb, "ok" if not (v.problems or v.limit or v.crash) else "refused")
"""

WORDS = ["income", "health", "education", "labour", "household", "migration", "voting",
         "trust", "religion", "housing", "pension", "media", "climate", "employment"]


def bundle(root: Path, qrels: Path, formats: dict | None = None, docs: int = 6) -> Path:
    import yaml
    root.mkdir(parents=True)
    material_pack(root / "pack", docs)
    shutil.copy(qrels, root / "qrels.txt")
    now = dt.datetime.now(dt.timezone.utc)
    tasks = [{"slug": "runs", "task": "trec"}, {"slug": "clir", "task": "material-clir"}]
    sets = [("runs", "qrels.txt"), ("clir", "pack")]
    if formats:
        shutil.copy(formats["refs"]["rcc"], root / "rcc_ref.json")
        shutil.copy(formats["refs"]["sv"], root / "sv_ref.tsv")
        material_pack(root / "pack_q", formats["mat_docs"], formats["mat_queries"])
        tasks += [{"slug": "rcc", "task": "rcc-citations"},
                  {"slug": "sv", "task": "svident-detection"},
                  {"slug": "clirq", "task": "material-clir"}]
        sets += [("rcc", "rcc_ref.json"), ("sv", "sv_ref.tsv"), ("clirq", "pack_q")]
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "bench", "title": "Uploads", "tasks": tasks,
        "phases": [{"slug": "dev", "title": "Dev",
                    "start": (now - dt.timedelta(days=1)).isoformat(),
                    "end": (now + dt.timedelta(days=30)).isoformat(), "datasets": [
                        {"slug": slug, "task": slug, "reference": ref,
                         "quotas": [{"limit": 1000, "window": "week"}]}
                        for slug, ref in sets]}]}))
    return root


# ---------------------------------------------------------------------------
# Measuring

def _rss_kb(pid: int) -> int:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = []
        try:
            for t in os.listdir(f"/proc/{p}/task"):        # children of every thread
                kids += open(f"/proc/{p}/task/{t}/children").read().split()
        except OSError:
            continue
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


class Peaks:
    """Peak RSS of a process and each of its descendants, polled while in use."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, {}, threading.Event()
        self.base = _rss_kb(pid)
        self.t = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.t.join()

    def _poll(self):
        while not self.stop.wait(0.02):
            for p in [self.pid] + _children(self.pid):
                self.peak[p] = max(self.peak.get(p, 0), _rss_kb(p))

    def server_mb(self) -> float:
        return self.peak.get(self.pid, self.base) / 1024

    def server_growth_mb(self) -> float:
        return (self.peak.get(self.pid, self.base) - self.base) / 1024

    def child_mb(self) -> float:
        return max([v for p, v in self.peak.items() if p != self.pid] or [0]) / 1024


def cli_validate(qrels: Path, run: Path, env) -> tuple[float, float, int]:
    t = time.perf_counter()
    p = subprocess.Popen(SHAREVAL + ["validate", "trec", "-s", str(run), "-r", str(qrels), "-q"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t, usage.ru_maxrss / 1024, p.returncode


def latencies(url: str, stop: threading.Event, limit: int = 5000) -> list[float]:
    out = []
    while not stop.is_set() and len(out) < limit:
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as r:
            r.read()
        out.append(time.perf_counter() - t)
        time.sleep(0.05)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run-mb", type=int, default=199)
    ap.add_argument("--bombs", type=int, default=1)
    ap.add_argument("--bomb-members", type=int, default=3)
    ap.add_argument("--member-mb", type=int, default=500)
    ap.add_argument("--at-once", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the data folder")
    ap.add_argument("--bombs-only", action="store_true", help="step 1 only")
    ap.add_argument("--format-mb", type=float, default=50,
                    help="size of each format's file in step 4 (the 3-query MATERIAL "
                         "archive: unpacked)")
    ap.add_argument("--mat-docs", type=int, default=15000,
                    help="documents in the many-query MATERIAL archive's collection")
    ap.add_argument("--formats-only", action="store_true", help="step 4 only")
    a = ap.parse_args()
    from shareval.client import submit
    home = Path(tempfile.mkdtemp(prefix="shareval-bench-uploads-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHAREVAL_")}
    env.update(SHAREVAL_HOME=str(home / "home"), SHAREVAL_LOG="WARNING",
               SHAREVAL_SECRET_KEY="bench-uploads")
    t0 = time.perf_counter()
    qrels, run = trec_files(home, 1 if a.bombs_only or a.formats_only else a.run_mb)
    bomb = tar_bomb(home / "bomb.tgz", a.bomb_members, a.member_mb)
    docs = max(1, int(a.format_mb * 2 ** 20 / (3 * 36)))
    formats = format_files(home / "formats", a.format_mb, docs, a.mat_docs)
    formats["files"] = {"TREC run": (trec_files(home / "fmt_trec", a.format_mb)[1],
                                     formats["tiny_run"], "runs"), **formats["files"]}
    print(f"inputs in {time.perf_counter() - t0:.0f} s: run {run.stat().st_size / 2**20:.0f} MB, "
          f"tar bomb {bomb.stat().st_size / 2**20:.1f} MB packed, "
          f"{a.bomb_members} x {a.member_mb} MB unpacked; formats: " + ", ".join(
              f"{k} {v[0].stat().st_size / 2**20:.1f} MB" for k, v in formats["files"].items()))

    def cli(*args):
        r = subprocess.run(SHAREVAL + list(args), env=env, capture_output=True, text=True,
                           timeout=300)
        if r.returncode:
            raise SystemExit(f"shareval {' '.join(args)}: {r.stdout}{r.stderr}")
        return r.stdout.strip()
    cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
    cli("server", "load-bundle", str(bundle(home / "bundle", qrels, formats, docs)),
        "--organizer", "org")
    cli("server", "add-user", "alice", "--password", "alice-pass-123", "--competition",
        "bench", "--team", "Team A")
    token = cli("server", "token", "alice")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # --no-worker: the upload path alone; scoring belongs to the worker (bench/server.py)
    server = subprocess.Popen(SHAREVAL + ["server", "run", "--port", str(port), "--no-worker"],
                              env=env,
                              stdout=open(home / "server.log", "w"), stderr=subprocess.STDOUT)
    rows = []
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/api/competitions/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)

        def up(path, task, ds):
            t = time.perf_counter()
            code, body = submit(base, token, path, "bench", "dev", task, dataset=ds)
            return code, time.perf_counter() - t, body

        mem = []                # (format, file MB, child peak, tiny's child peak, server peak)

        task_of = {"runs": "trec", "clir": "material-clir", "clirq": "material-clir",
                   "rcc": "rcc-citations", "sv": "svident-detection"}
        ref_of = {"runs": "qrels.txt", "clir": "pack", "clirq": "pack_q", "rcc": "rcc_ref.json",
                  "sv": "sv_ref.tsv"}

        def child_peak(path, ds) -> tuple[float, str]:
            """The validating child's own peak, run as the server runs it (isolate.validate)
            from a small helper process: a child's ru_maxrss starts at its parent's (execve
            keeps it), and this process holds every generated input."""
            r = subprocess.run([sys.executable, "-c", CHILD_PEAK, task_of[ds], str(path),
                                str(home / "bundle" / ref_of[ds]), path.name],
                               env=env, capture_output=True, text=True, timeout=900)
            kb, verdict = r.stdout.split()
            return int(kb) / 1024, verdict

        def memory_row(fmt, path, tiny, ds, polled=None):
            base_mb, base_verdict = child_peak(tiny, ds)
            if base_verdict != "ok":        # a refused file is no baseline (SV-Ident's
                base_mb = None              # one-record file lacks every other sentence)
            child, verdict = child_peak(path, ds)
            if polled is None:
                with Peaks(server.pid) as pk:
                    code, took, body = up(path, ds, ds)
                if code >= 300:
                    print(f"{fmt}: answer {code} {body.get('error', '')} "
                          f"{(body.get('problems') or [''])[0][:200]}")
                polled = pk, code, took
            pk, code, took = polled
            size = path.stat().st_size / 2 ** 20
            if path.suffix == ".tgz":
                with tarfile.open(path) as tar:
                    fmt += f" ({sum(m.size for m in tar) / 2**20:.0f} MB unpacked)"
            mem.append((fmt, size, child, pk.child_mb(), base_mb, pk.server_mb(),
                        pk.server_growth_mb(), f"{code}/{verdict}", took))

        def memory_table():
            w = max(40, *(len(m[0]) + 2 for m in mem))
            print(f"\n{'format':<{w}}{'file MB':>8}{'answer':>11}{'upload s':>9}{'child MB':>9}"
                  f"{'polled':>7}{'1-rec MB':>9}{'server MB (+)':>15}{'child/file':>11}"
                  f"{'added/file':>11}")
            for fmt, size, child, polled, base_mb, srv, growth, code, took in mem:
                base = "-" if base_mb is None else f"{base_mb:.0f}"
                added = "-" if base_mb is None else f"{(child - base_mb) / size:.2f}x"
                print(f"{fmt:<{w}}{size:>8.1f}{code:>11}{took:>9.1f}{child:>9.0f}{polled:>7.0f}"
                      f"{base:>9}{f'{srv:.0f} (+{growth:.0f})':>15}{child / size:>10.2f}x"
                      f"{added:>11}")
            print("child MB: the validating child's peak RSS (its ru_maxrss, validated as the "
                  "server does); polled: the child's peak seen from /proc during the upload; "
                  "1-rec: the child's peak for a one-record file of the format (interpreter, "
                  "imports, reference; '-' when that file is refused); added/file = (child - 1-rec) / file")

        # 4. memory per byte, per format (first: nothing else has grown the server yet)
        for fmt, (path, tiny, ds) in formats["files"].items():
            memory_row(fmt, path, tiny, ds)
        memory_table()
        if a.formats_only:
            return 0

        # 1. the tar bomb
        with Peaks(server.pid) as pk, cf.ThreadPoolExecutor(a.bombs) as ex:
            res = list(ex.map(lambda _: up(bomb, "clir", "clir"), range(a.bombs)))
        codes = sorted({c for c, _, _ in res})
        print(f"\ntar bomb x{a.bombs}: answers {codes} in {max(t for _, t, _ in res):.1f} s; "
              f"first problem: {(res[0][2].get('problems') or [''])[0][:120]!r}")
        rows.append((f"tar bomb x{a.bombs}: server peak RSS (growth)",
                     f"{pk.server_mb():.0f} MB (+{pk.server_growth_mb():.0f})"))
        rows.append((f"tar bomb x{a.bombs}: largest child peak RSS", f"{pk.child_mb():.0f} MB"))
        rows.append((f"tar bomb x{a.bombs}: time to the answer",
                     f"{max(t for _, t, _ in res):.1f} s"))

        if a.bombs_only:
            for k, v in rows:
                print(f"{k:<62}{v}")
            return 0

        # 2. one large valid run: the CLI, then the server
        cli_s, cli_mb, rc = cli_validate(qrels, run, env)
        with Peaks(server.pid) as pk:
            code, took, body = up(run, "runs", "runs")
        print(f"\n{run.stat().st_size / 2**20:.0f} MB TREC run: CLI exit {rc}; upload answer {code} "
              f"{body.get('error', '')} {(body.get('problems') or [''])[0][:120]}")
        rows.append(("CLI validate, large run: wall / peak RSS", f"{cli_s:.1f} s / {cli_mb:.0f} MB"))
        rows.append(("upload, large run: time to the answer", f"{took:.1f} s "
                                                              f"({took / cli_s:.2f} x CLI)"))
        rows.append(("upload, large run: server peak RSS (growth)",
                     f"{pk.server_mb():.0f} MB (+{pk.server_growth_mb():.0f})"))
        rows.append(("upload, large run: largest child peak RSS", f"{pk.child_mb():.0f} MB"))
        memory_row("TREC run (step 2)", run, formats["tiny_run"], "runs", (pk, code, took))

        # 3. a trivial endpoint, idle and while uploads are processed
        stop = threading.Event()
        threading.Timer(10, stop.set).start()
        idle = latencies(base + "/api/competitions/", stop)
        stop = threading.Event()
        with Peaks(server.pid) as pk, cf.ThreadPoolExecutor(a.at_once + 1) as ex:
            probe = ex.submit(latencies, base + "/api/competitions/", stop)
            res = list(ex.map(lambda _: up(run, "runs", "runs"), range(a.at_once)))
            stop.set()
            busy = probe.result()
        rows.append(("trivial GET, idle: p50 / p95 / max",
                     f"{pct(idle, .5) * 1e3:.0f} / {pct(idle, .95) * 1e3:.0f} / "
                     f"{max(idle) * 1e3:.0f} ms (n={len(idle)})"))
        rows.append((f"trivial GET, {a.at_once} large uploads in flight: p50 / p95 / max",
                     f"{pct(busy, .5) * 1e3:.0f} / {pct(busy, .95) * 1e3:.0f} / "
                     f"{max(busy) * 1e3:.0f} ms (n={len(busy)})"))
        rows.append((f"{a.at_once} large uploads at once: answers / slowest",
                     f"{sorted(c for c, _, _ in res)} / {max(t for _, t, _ in res):.1f} s"))
        rows.append((f"{a.at_once} large uploads at once: server peak RSS (growth)",
                     f"{pk.server_mb():.0f} MB (+{pk.server_growth_mb():.0f})"))
        rows.append((f"{a.at_once} large uploads at once: largest child peak RSS",
                     f"{pk.child_mb():.0f} MB"))
        print(f"\n{'measure':<62}value")
        for k, v in rows:
            print(f"{k:<62}{v}")
        memory_table()
        return 0
    finally:
        server.terminate()
        server.wait(30)
        if not a.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
